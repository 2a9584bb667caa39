//! `for i in start .. end { ... }`: bounds that make every loop finite and
//! the same in every invocation of a block, the loop variable, and the
//! body's scope. The IR keeps the body between `Stmt::For` and
//! `Stmt::EndFor` (`ir/mod.rs`).

use super::check::{Binding, Checker, IotaCtx};
use super::literal::{Ty, Val};
use crate::diag::{Diagnostic, code};
use crate::ir::{LocalKind, Stmt};
use crate::syntax::ast::{self, BinOp, ExprKind as AK, UnOp};
use crate::types::Scalar;

impl Checker<'_> {
    pub(super) fn for_loop(
        &mut self,
        var: &ast::Ident,
        start: &ast::Expr,
        end: &ast::Expr,
        body: &[ast::Stmt],
    ) {
        let bounds = [start, end].map(|b| {
            if self.finite_bound(b) {
                self.bound_value(b)
            } else {
                None
            }
        });
        let [Some(start), Some(end)] = bounds else {
            // Check the body anyway, with the variable poisoned, so that
            // its own errors are reported too.
            self.scopes.push(Default::default());
            self.bind(&var.name, Binding::Poisoned);
            self.loop_body(body);
            self.scopes.pop();
            return;
        };
        let local = self.new_local(
            &var.name,
            LocalKind::Loop,
            Scalar::I32,
            Vec::new(),
            var.span,
        );
        self.k.body.push(Stmt::For {
            local,
            start: start.id,
            end: end.id,
        });
        self.scopes.push(Default::default());
        self.bind(&var.name, Binding::Local(local));
        self.loop_body(body);
        self.scopes.pop();
        self.k.body.push(Stmt::EndFor);
    }

    fn loop_body(&mut self, body: &[ast::Stmt]) {
        self.loop_depth += 1;
        for s in body {
            self.stmt(s);
        }
        self.loop_depth -= 1;
    }

    /// Whether a bound is built only from integer literals, `@autotune`
    /// parameters, symbolic dims and the variables of enclosing loops with
    /// `+ - * / %` and negation; reports the first part that is not.
    fn finite_bound(&mut self, e: &ast::Expr) -> bool {
        let bad = match &e.kind {
            AK::Int(_) => None,
            AK::Name(n) => match self.lookup(n) {
                _ if self.tune_index(n).is_some() => None,
                Some(Binding::Dim(_) | Binding::Poisoned) => None,
                Some(Binding::Local(l)) if self.k.locals[l].kind == LocalKind::Loop => None,
                Some(Binding::Local(l)) if self.k.locals[l].kind == LocalKind::Let => {
                    Some(format!(
                        "`{n}` is a `let`, computed as the kernel runs; write its definition here"
                    ))
                }
                _ => Some(format!("`{n}` is not known before the kernel runs")),
            },
            AK::Unary(UnOp::Neg, a) => return self.finite_bound(a),
            AK::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem, a, b) => {
                return self.finite_bound(a) && self.finite_bound(b);
            }
            AK::Field(..) => Some("this differs from block to block".to_string()),
            _ => Some("this is computed from the kernel's data".to_string()),
        };
        let Some(why) = bad else { return true };
        self.error(
            Diagnostic::error(
                code::LOOP_BOUND,
                "a loop bound must be known before the kernel runs",
            )
            .label(e.span, why)
            .note("so that every loop is finite and every invocation of a block runs it the same number of times")
            .help("build bounds from integer literals, @autotune parameters, symbolic dims (such as `N / 256`) and enclosing loop variables"),
        );
        false
    }

    /// A bound's value: a scalar i32 (an integer literal becomes one).
    fn bound_value(&mut self, e: &ast::Expr) -> Option<Val> {
        let saved = std::mem::replace(&mut self.iota, IotaCtx::Elsewhere);
        let v = self.expr(e);
        self.iota = saved;
        let v = v?;
        let v = match v.ty {
            Ty::AbsInt => self.concretize(&v, Scalar::I32)?,
            _ => v,
        };
        if v.ty != Ty::S(Scalar::I32) || !v.shape.is_empty() {
            self.error(
                Diagnostic::error(
                    code::TYPE_MISMATCH,
                    format!("a loop bound is a scalar i32, not {}", v.ty.name()),
                )
                .label(v.span, format!("this is {}", v.ty.name()))
                .help("loop over i32 values: `for i in 0 .. N / 256`"),
            );
            return None;
        }
        Some(v)
    }
}
