//! Constant nodes computed at compile time, so that the WGSL holds no
//! constant expression that a WebGPU implementation could refuse.
//!
//! WGSL evaluates a constant expression (one built only from literals) when
//! the shader is created, and makes it a shader-creation error for the
//! result to be a NaN or an infinity, for a left shift to lose bits or flip
//! the sign, for an integer division by zero, and for `sqrt` or `log` of a
//! value outside their domain. naga does not evaluate `bitcast` and accepts
//! all of these; Tint (Chromium, Dawn) refuses the module. Phobos gives each
//! of them a meaning (`interp/ops.rs`), and the stdlib needs some of them
//! (`_nan()` is `bitcast<f32>(2143289344)`). So:
//! - an IR node whose operands are all constants is lowered as its value,
//!   computed here with `interp::ops`, the interpreter's own operations, so
//!   its bits are the reference's by construction;
//! - a non-finite f32 (from a constant or from folding) is written as a
//!   bitcast of a `let`-bound u32 (`builder.rs`'s `lit`): WGSL says a
//!   `let` is not a constant expression, so nothing is evaluated at shader
//!   creation, and the value keeps its exact bits at no run-time cost.
//!
//! What remains constant in the WGSL is single literals and the lowering's
//! own combinations of them (shift masks, `select`s of 1 for a divisor),
//! which are valid for every value. `tests/wgsl_valid.rs` checks every
//! example and fixture with Tint and with naga's parser.

use phobos_core::interp::ops;
use phobos_core::ir::{ExprId, ExprKind, IdVec, Kernel};
use phobos_core::types::Value;

/// The value of every node of `kernel` whose leaves are all constants (none
/// for the others), in arena order: operands precede their users.
pub(super) fn constants(kernel: &Kernel) -> IdVec<ExprId, Option<Value>> {
    let mut out: IdVec<ExprId, Option<Value>> = IdVec::with_capacity(kernel.exprs.len());
    for e in &kernel.exprs {
        let c = |id: ExprId| out[id];
        let v = match &e.kind {
            ExprKind::Const(v) => Some(*v),
            ExprKind::Unary(op, a) => c(*a).map(|a| ops::unary(*op, a)),
            ExprKind::Binary(op, a, b) => match (c(*a), c(*b)) {
                (Some(a), Some(b)) => Some(ops::binary(*op, a, b)),
                _ => None,
            },
            ExprKind::Cast(a) => c(*a).map(|a| ops::cast(a, e.ty)),
            ExprKind::Bitcast(a) => c(*a).map(|a| ops::bitcast(a, e.ty)),
            ExprKind::Select(s, a, b) => match (c(*s), c(*a), c(*b)) {
                (Some(s), Some(a), Some(b)) => Some(ops::select(s, a, b)),
                _ => None,
            },
            // Tandem draws with constant arguments are `tandem_draw`'s.
            ExprKind::Builtin(f, xs) if !f.is_tandem() => {
                let args: Option<Vec<Value>> = xs.iter().map(|x| c(*x)).collect();
                args.map(|args| ops::builtin(*f, &args))
            }
            // Values of the launch or of memory, Tandem draws, reductions.
            ExprKind::Builtin(..)
            | ExprKind::Param(_)
            | ExprKind::DimValue(_)
            | ExprKind::BlockId(_)
            | ExprKind::GridSize(_)
            | ExprKind::Iota(_)
            | ExprKind::Local(_)
            | ExprKind::Load { .. }
            | ExprKind::Reduce { .. }
            | ExprKind::Dot { .. }
            | ExprKind::Transpose(_) => None,
        };
        out.push(v);
    }
    out
}
