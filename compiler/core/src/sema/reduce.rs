//! Reductions: `sum(x, axis = k)`, `max(x, axis = k)`, `min(x, axis = k)`,
//! `argmax(x, axis = k)`, `argmin(x, axis = k)`. The axis is always written as a keyword, so
//! `max(a, b)` stays the elementwise builtin and `max(x, axis = 1)` is the
//! reduction, whatever the types. Their meaning is `ir/reduce.rs`.

use super::check::{Checker, IotaCtx};
use super::literal::{Ty, Val};
use crate::diag::{Diagnostic, code};
use crate::ir::{ExprId, ExprKind, LocalKind, ReduceOp, Stmt};
use std::collections::HashSet;

/// The largest reduction moved into a `let` of its own before its
/// statement ([`Checker::hoist_reductions`]): 1 KiB, 256 rows of f32, small
/// beside the 16 KiB of workgroup memory WebGPU guarantees.
pub const HOIST_BYTES: u64 = 1024;
use crate::span::Span;
use crate::syntax::ast::{self, ExprKind as AK};
use crate::types::{Dim, Scalar};

/// Whether a call of `min` or `max` is the reduction: its second argument
/// is a keyword argument.
pub fn is_reduction_call(args: &[ast::Expr]) -> bool {
    args.len() == 2 && matches!(args[1].kind, AK::Keyword(..))
}

impl Checker<'_> {
    pub(super) fn reduction(
        &mut self,
        op: ReduceOp,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Val> {
        let name = op.name();
        let [x, axis_arg] = args else {
            self.error(
                Diagnostic::error(
                    code::ARITY,
                    format!(
                        "`{name}` takes a tile and an axis but {} argument{} were given",
                        args.len(),
                        if args.len() == 1 { "" } else { "s" }
                    ),
                )
                .label(span, "the axis is missing")
                .help(format!("write `{name}(x, axis = 1)`")),
            );
            return None;
        };
        let axis_expr = match &axis_arg.kind {
            AK::Keyword(k, e) if k.name == "axis" => e,
            _ => {
                self.error(
                    Diagnostic::error(
                        code::BAD_AXIS,
                        format!("the axis of `{name}` is written `axis = k`"),
                    )
                    .label(axis_arg.span, "not `axis = k`")
                    .help(match op {
                        ReduceOp::Min | ReduceOp::Max => format!(
                            "write `{name}(x, axis = 1)`; `{name}(a, b)` of two values is elementwise"
                        ),
                        _ => format!("write `{name}(x, axis = 1)`: a reduction names its axis"),
                    }),
                );
                return None;
            }
        };
        // `iota` inside the operand would be a position in two tiles at
        // once (the statement's and the operand's): refused.
        let saved = std::mem::replace(&mut self.iota, IotaCtx::Reduction);
        let v = self.expr(x);
        self.iota = IotaCtx::Elsewhere;
        let axis = self.const_int(axis_expr);
        self.iota = saved;
        let v = self.default_type(v?)?;
        let axis = axis?;
        let Ty::S(elem) = v.ty else { return None };
        if elem == Scalar::Bool {
            self.error(
                Diagnostic::error(
                    code::BAD_OPERAND,
                    format!("`{name}` is not defined on bool"),
                )
                .label(v.span, "this is bool")
                .help("convert it first: `i32(x)` counts the true elements with `sum`"),
            );
            return None;
        }
        let rank = v.shape.len();
        if axis < 0 || axis as usize >= rank {
            let has = if rank == 0 {
                "a scalar has no axis to reduce".to_string()
            } else {
                format!(
                    "this has shape {}, with axes 0 to {}",
                    self.shape_text(&v.shape),
                    rank - 1
                )
            };
            self.error(
                Diagnostic::error(
                    code::BAD_AXIS,
                    format!("`{name}` over axis {axis}, which its operand does not have"),
                )
                .label(axis_expr.span, format!("axis {axis}"))
                .label(v.span, has)
                .help(if rank == 0 {
                    "reduce a tile, such as `X[r :+ R, :]`".to_string()
                } else {
                    format!("name an axis from 0 to {}", rank - 1)
                }),
            );
            return None;
        }
        let axis = axis as usize;
        if op.is_index() && v.shape[axis] == Dim::Const(0) {
            self.error(
                Diagnostic::error(
                    code::EMPTY_REDUCTION,
                    format!(
                        "`{}` of an empty axis has no element to point at",
                        op.name()
                    ),
                )
                .label(axis_expr.span, format!("axis {axis} has extent 0"))
                .label(
                    v.span,
                    format!("this has shape {}", self.shape_text(&v.shape)),
                )
                .help("reduce an axis with at least one element"),
            );
            return None;
        }
        let mut shape = v.shape.clone();
        shape[axis] = Dim::Const(1);
        let ty = if op.is_index() { Scalar::I32 } else { elem };
        let kind = ExprKind::Reduce {
            op,
            arg: v.id,
            axis: axis as u8,
        };
        Some(self.concrete(kind, ty, shape, span))
    }

    /// Computes each small reduction of a statement's value once, before
    /// the statement, instead of once per element that reads it: the node
    /// becomes a read of a new `let` tile (named `_sum`, `_max`, ...) that a
    /// copy of the reduction fills. Nothing changes but the work: a
    /// reduction's operand has no `iota`, so its value at an element depends
    /// only on the element's position in the reduction's own shape, which
    /// is what the `let` holds; and the tree is the same.
    ///
    /// Only reductions of constant shape no larger than [`HOIST_BYTES`] are
    /// moved (a `let` tile of constant shape lives in a GPU workgroup's
    /// memory), and not one that is the statement's whole value. One of the
    /// statement's own shape saves no work on a CPU, but as a `let` the GPU
    /// computes it with the whole workgroup straight into the tile
    /// (`phobos-gpu`'s `coop_reduce.rs`), as in an accumulator's `s = s + sum(x, axis = 1)`.
    /// Inner reductions come first (they have lower ids), so an outer one
    /// reads the inner one's tile.
    pub(super) fn hoist_reductions(&mut self, value: ExprId, span: Span) {
        let mut found = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = vec![value];
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            let kind = &self.k.exprs[id].kind;
            if let ExprKind::Reduce { .. } = kind {
                found.push(id);
            }
            stack.extend(kind.operands());
        }
        found.sort_unstable();
        for id in found {
            let e = self.k.exprs[id].clone();
            let ExprKind::Reduce { op, .. } = e.kind else {
                unreachable!("collected as a reduction")
            };
            let Some(elements) = e.shape.iter().try_fold(1u64, |n, d| match d {
                Dim::Const(v) => n.checked_mul(*v),
                Dim::Sym(_) => None,
            }) else {
                continue;
            };
            let bytes = elements.saturating_mul(e.ty.size().max(4) as u64);
            if id == value || bytes > HOIST_BYTES {
                continue;
            }
            let copy = self.push(e.kind.clone(), e.ty, e.shape.clone());
            let name = format!("_{}", op.name());
            let local = self.new_local(&name, LocalKind::Let, e.ty, e.shape, span);
            self.k.exprs[id].kind = ExprKind::Local(local);
            self.k.body.push(Stmt::Let { local, value: copy });
        }
    }

    /// A `name = value` argument anywhere but a reduction's axis.
    pub(super) fn stray_keyword(&mut self, name: &ast::Ident, span: Span) {
        self.error(
            Diagnostic::error(
                code::BAD_AXIS,
                format!("`{} = ...` is not an argument here", name.name),
            )
            .label(span, "a keyword argument")
            .help("only reductions take one: `sum(x, axis = 1)`, `max`, `min`, `argmax`, `argmin`"),
        );
    }
}
