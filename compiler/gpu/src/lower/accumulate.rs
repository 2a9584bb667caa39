//! Accumulator updates planned as folds (`plan::folds`): the reduction
//! computed by the workgroup with item 0 of each row writing the
//! accumulator's element itself ([`ResultTo::Fold`]), else element by
//! element; either way one invocation owns each element at every iteration.

use super::coop_reduce::ResultTo;
use super::{H, Lower};
use crate::LowerError;
use naga::BinaryOperator as B;
use phobos_core::ir::{ExprId, ExprKind, LocalId, Place, Stmt};
use phobos_core::types::Dim;
use std::collections::HashMap;

impl Lower<'_> {
    /// The accumulator update `plan.folds[fold]` with its reduction computed
    /// by the workgroup where it qualifies, else element by element, each
    /// element by one invocation (`plan::folds`). Gives the invocations a
    /// row of the workgroup's reduction where it took that path (the owner
    /// of a row's element is then item 0 of the row), else `None`.
    pub(super) fn accumulate(&mut self, fold: usize) -> Result<Option<u32>, LowerError> {
        let f = self.plan.folds[fold].clone();
        let Stmt::Let { value: red, .. } = self.k.body[f.stmt] else {
            unreachable!("the plan folds a `let`")
        };
        let ExprKind::Reduce { arg, .. } = self.k.exprs[red].kind else {
            unreachable!("the plan folds a reduction")
        };
        let mut pre = HashMap::new();
        self.hoist(red, &mut pre)?;
        self.hoist(f.value, &mut pre)?;
        if let Some(plan) = self.coop_plan(red) {
            self.compute_ahead(arg, &pre)?;
            if self.coop_one(red, &pre, Some(ResultTo::Fold(fold, pre.clone())))? {
                return Ok(Some(plan.per_row));
            }
        }
        let place = Place::Local(f.acc);
        let shape = self.k.locals[f.acc].shape.clone();
        let ext: Vec<H> = shape.iter().map(|d| self.extent(*d)).collect();
        let uses = self.uses_of(f.value, f.result);
        self.draw_tile_loop(&shape, &ext, 1, f.value, &pre, |lw, flat, pos| {
            let mut cache = pre.clone();
            let r = lw.node(red, pos, &mut cache)?;
            for &id in &uses {
                cache.insert(id, r);
            }
            let v = lw.node(f.value, pos, &mut cache)?;
            let ptr = lw.element_ptr(place, Some(flat));
            lw.store_element(place, ptr, v);
            Ok(())
        })?;
        Ok(None)
    }

    /// The nodes under `root` that read local `l`.
    fn uses_of(&self, root: ExprId, l: LocalId) -> Vec<ExprId> {
        self.k
            .reachable(root)
            .into_iter()
            .filter(|&id| matches!(self.k.exprs[id].kind, ExprKind::Local(x) if x == l))
            .collect()
    }

    /// Item 0 of row `row` puts the reduction's `value` where `to` says.
    pub(super) fn put_result(&mut self, to: &ResultTo, row: H, value: H) -> Result<(), LowerError> {
        match to {
            ResultTo::Array(g) => {
                let ptr = self.array_ptr(*g, row);
                self.var_store(ptr, value);
            }
            ResultTo::Fold(fold, pre) => {
                let f = self.plan.folds[*fold].clone();
                let place = Place::Local(f.acc);
                // The row's position in the accumulator's shape.
                let shape = self.k.locals[f.acc].shape.clone();
                let mut pos = vec![row; shape.len()];
                let mut rest = row;
                for k in (0..shape.len()).rev() {
                    let Dim::Const(e) = shape[k] else {
                        unreachable!("the plan folds tiles of constant shape")
                    };
                    let e = self.u32c(e as u32);
                    pos[k] = self.binary(B::Modulo, rest, e);
                    rest = self.binary(B::Divide, rest, e);
                }
                let mut cache = pre.clone();
                for id in self.uses_of(f.value, f.result) {
                    cache.insert(id, value);
                }
                let v = self.node(f.value, &pos, &mut cache)?;
                let ptr = self.element_ptr(place, Some(row));
                self.store_element(place, ptr, v);
            }
        }
        Ok(())
    }
}
