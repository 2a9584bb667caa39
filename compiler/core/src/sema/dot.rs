//! `dot(a, b)`, `dot(a, b, acc)` and `trans(x)`: matrix products of 2-D
//! f32 tiles and the transpose. Their meaning is `ir::ExprKind::Dot`'s
//! (a fixed order over `K`, each operation rounded) and `Transpose`'s.

use super::check::{Checker, IotaCtx};
use super::literal::{Ty, Val};
use crate::diag::{Diagnostic, code};
use crate::ir::ExprKind;
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;

impl Checker<'_> {
    /// An operand of `dot` or `trans` as an f32 tile of rank 2.
    fn matrix(&mut self, what: &str, v: Val) -> Option<Val> {
        let v = match v.ty {
            Ty::AbsInt | Ty::AbsFloat => self.concretize(&v, Scalar::F32)?,
            _ => self.default_type(v)?,
        };
        if v.ty != Ty::S(Scalar::F32) {
            let t = match v.ty {
                Ty::S(t) => t.name(),
                _ => "a literal",
            };
            self.error(
                Diagnostic::error(
                    code::TYPE_MISMATCH,
                    format!("{what} takes f32 tiles, not {t}"),
                )
                .label(v.span, format!("this is {t}"))
                .help("convert it with `f32(...)`; a load from a tensor<f16> or tensor<bf16> is already f32"),
            );
            return None;
        }
        if v.shape.len() != 2 {
            self.error(
                Diagnostic::error(code::SHAPE_MISMATCH, format!("{what} takes 2-D tiles"))
                    .label(
                        v.span,
                        format!("this has shape {}", self.shape_text(&v.shape)),
                    )
                    .help("slice a matrix, such as `A[i :+ BM, :]`"),
            );
            return None;
        }
        Some(v)
    }

    pub(super) fn dot(&mut self, args: &[ast::Expr], span: Span) -> Option<Val> {
        if !(2..=3).contains(&args.len()) {
            self.error(
                Diagnostic::error(
                    code::ARITY,
                    format!("`dot` takes 2 or 3 arguments but {} were given", args.len()),
                )
                .label(span, format!("{} given", args.len()))
                .help("write `dot(a, b)` or `dot(a, b, acc)`"),
            );
            return None;
        }
        // `iota` inside an operand would be a position in two tiles at once.
        let saved = std::mem::replace(&mut self.iota, IotaCtx::Reduction);
        let a = self.expr(&args[0]);
        let b = self.expr(&args[1]);
        self.iota = saved;
        let acc = args.get(2).map(|c| self.expr(c));
        let a = self.matrix("`dot`", a?)?;
        let b = self.matrix("`dot`", b?)?;
        if a.shape[1] != b.shape[0] {
            let (ka, kb) = (self.shape_text(&a.shape), self.shape_text(&b.shape));
            self.error(
                Diagnostic::error(
                    code::SHAPE_MISMATCH,
                    "`dot`'s operands do not share their inner extent",
                )
                .label(a.span, format!("this is {ka}"))
                .label(b.span, format!("this is {kb}"))
                .help("`dot(a, b)` multiplies [M, K] by [K, N]; transpose one with `trans(x)` if it is [N, K]"),
            );
            return None;
        }
        let shape = vec![a.shape[0], b.shape[1]];
        let acc = match acc {
            None => None,
            Some(c) => {
                let c = self.matrix("`dot`'s accumulator", c?)?;
                self.check_broadcasts_to(&c, &shape, span)?;
                Some(c.id)
            }
        };
        let kind = ExprKind::Dot {
            a: a.id,
            b: b.id,
            acc,
        };
        Some(self.concrete(kind, Scalar::F32, shape, span))
    }

    pub(super) fn transpose(&mut self, x: &ast::Expr, span: Span) -> Option<Val> {
        let v = self.expr(x)?;
        let v = self.default_type(v)?;
        if v.shape.len() != 2 {
            self.error(
                Diagnostic::error(code::SHAPE_MISMATCH, "`trans` takes a 2-D tile")
                    .label(
                        v.span,
                        format!("this has shape {}", self.shape_text(&v.shape)),
                    )
                    .help("transpose a matrix tile, such as `trans(K[j :+ BN, :])`"),
            );
            return None;
        }
        let Ty::S(ty) = v.ty else { return None };
        let shape = vec![v.shape[1], v.shape[0]];
        Some(self.concrete(ExprKind::Transpose(v.id), ty, shape, span))
    }
}
