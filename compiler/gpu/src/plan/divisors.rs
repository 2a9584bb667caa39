//! Exact divisions whose divisor has one value at every element of their
//! statement: softmax's `e / s` by a row's sum (a `[1, 1]` tile at one row
//! a block), dropout's `x / (1 - p)`, layer norm's `/ f32(N)`.
//!
//! Where exact `/` goes through a checked reciprocal
//! (`exact::div_recip`), the divisor's share of the work (the reciprocal
//! in f64 and its check) depends on the divisor alone. For each divisor
//! planned here the emitter computes that share once, before the
//! statement's loop (`exact_recip`), and each quotient pays only the
//! dividend's share (`exact_div_by`): one widening, one f64 multiply and
//! a few integer operations. The bits are those of `div_recip`, which is
//! the two shares in sequence.

use crate::{DivCheck, GpuOptions, Precision};
use phobos_core::ir::{BinOp, ExprId, ExprKind, Kernel};
use phobos_core::types::{Dim, Scalar};

/// A divisor whose reciprocal a statement computes once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedDivisor {
    /// The statement, by index in the plan's kernel.
    pub stmt: usize,
    /// The divisor's node.
    pub divisor: ExprId,
}

/// The shared divisors of `k`'s statements, where `options` divide
/// through a reciprocal; none otherwise.
pub fn plan(k: &Kernel, options: &GpuOptions) -> Vec<SharedDivisor> {
    let recip = options.precision == Precision::Exact
        && options.wide_div
        && options.int64
        && options.knobs.div_check == DivCheck::Recip
        && !options.knobs.ablate_div;
    if !recip {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (stmt, s) in k.body.iter().enumerate() {
        let Some(value) = s.value() else { continue };
        let mut divisors: Vec<ExprId> = k
            .reachable(value)
            .into_iter()
            .filter_map(|id| match k.exprs[id].kind {
                ExprKind::Binary(BinOp::Div, _, b)
                    if k.exprs[id].ty == Scalar::F32 && same_everywhere(k, b) =>
                {
                    Some(b)
                }
                _ => None,
            })
            .collect();
        divisors.sort();
        divisors.dedup();
        out.extend(
            divisors
                .into_iter()
                .map(|divisor| SharedDivisor { stmt, divisor }),
        );
    }
    out
}

/// Whether node `id` has one value at every position of any statement
/// that reads it: every node below it has extents of 1 only, and none is
/// computed by the workgroup (a reduction, product or transpose) or taken
/// as the statement's draw strategy says (a Tandem word).
pub fn same_everywhere(k: &Kernel, id: ExprId) -> bool {
    k.reachable(id).into_iter().all(|n| {
        let e = &k.exprs[n];
        e.shape.iter().all(|d| *d == Dim::Const(1))
            && match &e.kind {
                ExprKind::Reduce { .. } | ExprKind::Dot { .. } | ExprKind::Transpose(_) => false,
                ExprKind::Builtin(b, _) => !b.is_tandem(),
                ExprKind::Const(_)
                | ExprKind::Param(_)
                | ExprKind::DimValue(_)
                | ExprKind::BlockId(_)
                | ExprKind::GridSize(_)
                | ExprKind::Iota(_)
                | ExprKind::Local(_)
                | ExprKind::Load { .. }
                | ExprKind::Unary(..)
                | ExprKind::Binary(..)
                | ExprKind::Cast(_)
                | ExprKind::Bitcast(_)
                | ExprKind::Select(..) => true,
            }
    })
}
