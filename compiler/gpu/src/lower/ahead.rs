//! Loads issued one iteration ahead (`plan/ahead.rs` decides which): a
//! reduction's leaf that reads such a load keeps it in a function variable
//! that the previous iteration filled, and fills it for the next iteration
//! before it reduces:
//!
//! ```text
//! if !ready { next = load(at j) }      // the loop's first iteration
//! this = next
//! next = j + 1 < end ? load(at j + 1) : 0
//! ready = true
//! ```
//!
//! `ready` is cleared before the loop starts, so a loop entered again (in
//! an outer loop) loads its first iteration afresh. The address at `j + 1`
//! is the slice's starts moved by the plan's steps, with the same bounds
//! test a load at `j + 1` makes, so each iteration reads what it would
//! have read.
//!
//! Only a leaf computed once an iteration, in straight-line code, reads
//! ahead ([`Lower::leaves_ahead`]): a load inside a loop over a block's
//! elements would see its variable once for each element.

use super::{H, Lower};
use crate::LowerError;
use naga::{BinaryOperator, Expression, Handle, Type, UnaryOperator};
use phobos_core::ir::{ExprId, Index, Place};
use phobos_core::types::Value;
use std::collections::HashMap;

/// A `for` loop being emitted, as loads ahead need it.
pub(super) struct OpenLoop {
    /// Its plan, by index in `plan.loops`.
    plan: usize,
    /// Its variable's pointer and the end of its range.
    var: H,
    end: H,
    /// The `ready` flags of its loads ahead, cleared before it starts.
    ready: Vec<H>,
}

impl<'k> Lower<'k> {
    /// Opens loop `plan` (after its variable holds the first value).
    pub(super) fn ahead_open(&mut self, plan: usize, var: H, end: H) {
        self.open_loops.push(OpenLoop {
            plan,
            var,
            end,
            ready: Vec::new(),
        });
    }

    /// Closes the innermost loop: in the block that holds it (the current
    /// one, before the loop is pushed), its loads start unready.
    pub(super) fn ahead_close(&mut self) {
        let open = self.open_loops.pop().expect("a loop is open");
        if open.ready.is_empty() {
            return;
        }
        let no = self.lit(Value::Bool(false));
        for r in open.ready {
            self.var_store(r, no);
        }
    }

    /// Runs `build` with the leaves it computes reading ahead where `on`.
    pub(super) fn leaves_ahead<T>(
        &mut self,
        on: bool,
        build: impl FnOnce(&mut Self) -> Result<T, LowerError>,
    ) -> Result<T, LowerError> {
        let was = std::mem::replace(&mut self.ahead_leaf, on);
        let r = build(self);
        self.ahead_leaf = was;
        r
    }

    /// Load `id`'s steps, where the current leaf reads it ahead in the
    /// innermost open loop.
    fn ahead_step(&self, id: ExprId) -> Option<Vec<i64>> {
        if !self.ahead_leaf {
            return None;
        }
        let open = self.open_loops.last()?;
        let plan = &self.plan.loops[open.plan];
        plan.ahead
            .iter()
            .find(|a| a.load == id)
            .map(|a| a.step.clone())
    }

    /// The value of load `id` of `place` at tile position `q`, read ahead
    /// (module doc), or `None` where it is not read ahead. `ty` is the
    /// value's type, `zero` its value outside the place, and `load` the
    /// load at a flat index.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ahead_load(
        &mut self,
        id: ExprId,
        (place, index, q): (Place, &[Index], &[H]),
        cache: &mut HashMap<ExprId, H>,
        ty: Handle<Type>,
        zero: H,
        load: &dyn Fn(&mut Self, H) -> H,
    ) -> Result<Option<H>, LowerError> {
        let Some(step) = self.ahead_step(id) else {
            return Ok(None);
        };
        let next = self.local_var(ty, "ahead");
        let ready = self.local_var(self.types[&phobos_core::types::Scalar::Bool], "ahead_ready");
        let open = self.open_loops.last_mut().expect("ahead_step found it");
        open.ready.push(ready);
        let (var, end) = (open.var, open.end);
        // The first iteration loads its own.
        let (inside, flat) = self.locate_moved(place, index, q, cache, None)?;
        let unready = self.var_load(ready);
        let unready = self.expr(Expression::Unary {
            op: UnaryOperator::LogicalNot,
            expr: unready,
        });
        let first = self.nested(|lw| lw.guarded(next, zero, inside, |lw| load(lw, flat)))?;
        self.if_then(unready, first);
        let this = self.var_load(next);
        // The next iteration's, where there is one.
        let (inside, flat) = self.locate_moved(place, index, q, cache, Some(&step))?;
        let j = self.var_load(var);
        let one = self.lit(Value::I32(1));
        let j1 = self.binary(BinaryOperator::Add, j, one);
        let more = self.binary(BinaryOperator::Less, j1, end);
        let inside = self.binary(BinaryOperator::LogicalAnd, more, inside);
        self.guarded(next, zero, inside, |lw| load(lw, flat))?;
        let yes = self.lit(Value::Bool(true));
        self.var_store(ready, yes);
        Ok(Some(this))
    }

    /// `*to = zero; if inside { *to = load }`.
    fn guarded(
        &mut self,
        to: H,
        zero: H,
        inside: H,
        load: impl FnOnce(&mut Self) -> H,
    ) -> Result<(), LowerError> {
        self.var_store(to, zero);
        let accept = self.nested(|lw| {
            let v = load(lw);
            lw.var_store(to, v);
            Ok(())
        })?;
        self.if_then(inside, accept);
        Ok(())
    }

    /// A fresh function-local variable of naga type `ty`, named `name`
    /// where it has one (the WGSL's readers, and tests, see it).
    pub(super) fn local_var(&mut self, ty: Handle<Type>, name: &str) -> H {
        let v = self.f.local_variables.append(
            naga::LocalVariable {
                name: (!name.is_empty()).then(|| name.to_string()),
                ty,
                init: None,
            },
            naga::Span::UNDEFINED,
        );
        self.expr(Expression::LocalVariable(v))
    }
}
