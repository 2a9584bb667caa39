//! `dot` and `trans` in naga (`phobos_core::ir::ExprKind::{Dot, Transpose}`),
//! as the Cranelift backend does them (`phobos-cpu/src/dot.rs`): the
//! invocation that computes an element of a product loops over `K` itself,
//! in order, one multiply and one add a step, each rounded (exact mode's
//! SPIR-V marks every float operation `NoContraction`). Portable and
//! correct, not fast: every element reads its row of `a` and column of `b`.

use super::{H, Lower};
use crate::LowerError;
use phobos_core::ir::{BinOp, ExprId};
use phobos_core::types::{Scalar, Value};
use std::collections::HashMap;

impl Lower<'_> {
    /// The values computed so far that do not depend on the position.
    pub(super) fn position_free(&self, cache: &HashMap<ExprId, H>) -> HashMap<ExprId, H> {
        cache
            .iter()
            .filter(|(k, _)| self.k.exprs[**k].shape.is_empty())
            .map(|(k, v)| (*k, *v))
            .collect()
    }

    /// The product `id` at tile position `pos`.
    pub(super) fn dot(
        &mut self,
        id: ExprId,
        (a, b, acc): (ExprId, ExprId, Option<ExprId>),
        pos: &[H],
        cache: &HashMap<ExprId, H>,
    ) -> Result<H, LowerError> {
        let shape = self.k.exprs[id].shape.clone();
        let text = |s: &[phobos_core::types::Dim]| self.k.shape_text(s);
        let note = format!(
            "statement {}: `dot` of {} by {}: each element loops over K in order (the portable path: no workgroup tiling, no cooperative matrices)",
            self.tandem.stmt + 1,
            text(&self.k.exprs[a].shape),
            text(&self.k.exprs[b].shape)
        );
        if !self.tandem.notes.contains(&note) {
            self.tandem.notes.push(note);
        }
        let q = self.aligned(&shape, pos);
        let n = pos.len();
        let outer = self.position_free(cache);
        // The operands are computed element by element, never in groups of 4.
        let lane = self.lane.take();
        let init = match acc {
            Some(c) => self.node(c, pos, &mut outer.clone())?,
            None => self.lit(Value::F32(0.0)),
        };
        let sum = self.temp(Scalar::F32);
        self.var_store(sum, init);
        let len = self.extent(self.k.exprs[a].shape[1]);
        let pos = pos.to_vec();
        self.count_loop(len, |lw, k| {
            let mut p = pos.clone();
            (p[n - 2], p[n - 1]) = (q[0], k);
            let x = lw.node(a, &p, &mut outer.clone())?;
            (p[n - 2], p[n - 1]) = (k, q[1]);
            let y = lw.node(b, &p, &mut outer.clone())?;
            let m = lw.binop(BinOp::Mul, Scalar::F32, x, y);
            let c = lw.var_load(sum);
            let c = lw.binop(BinOp::Add, Scalar::F32, c, m);
            lw.var_store(sum, c);
            Ok(())
        })?;
        self.lane = lane;
        Ok(self.var_load(sum))
    }

    /// `trans(x)` at tile position `pos`: `x` at the last two axes swapped.
    pub(super) fn transpose(
        &mut self,
        id: ExprId,
        x: ExprId,
        pos: &[H],
        cache: &HashMap<ExprId, H>,
    ) -> Result<H, LowerError> {
        let shape = self.k.exprs[id].shape.clone();
        let q = self.aligned(&shape, pos);
        let n = pos.len();
        let mut p = pos.to_vec();
        (p[n - 2], p[n - 1]) = (q[1], q[0]);
        let mut inner = self.position_free(cache);
        let lane = self.lane.take();
        let v = self.node(x, &p, &mut inner);
        self.lane = lane;
        v
    }
}
