//! Triton's loop over K, `for kb { acc = dot(a, b, acc) }`, with the
//! accumulator tile kept in the subgroups' cooperative matrices from
//! before the loop to after it (`plan::dots::Product::carried`).
//!
//! Before the loop the subgroups load their tiles of `acc` (its workgroup
//! tile, after the barrier that orders its first values); each iteration
//! adds its chunk of K to them (`dot_direct.rs`), with no load or store of
//! the tile and no barrier of its own where the operands come straight
//! from their tensors; after the loop the tiles are stored back once. The
//! products are added in the same order of K as through the tile, so the
//! values are those of the loop that reads and writes the tile.

use super::dot_coop::CoopTiles;
use super::{H, LocalHome, Lower};
use crate::LowerError;
use naga::{GlobalVariable, Handle, Statement};
use phobos_core::ir::{ExprId, ExprKind};
use std::collections::HashMap;

/// A product whose accumulators a loop carries.
pub(super) struct Carried {
    /// The loop's `for` statement.
    start: usize,
    product: ExprId,
    tiles: CoopTiles,
    staged: Option<[Handle<GlobalVariable>; 2]>,
    tile: Handle<GlobalVariable>,
}

impl Lower<'_> {
    /// At the `for` of statement `start`: where the plan has the loop carry
    /// a product's accumulators (and its staging arrays fit), loads them.
    pub(super) fn carry_begin(&mut self, start: usize) {
        let Some(product) = self
            .plan
            .products
            .iter()
            .find(|p| p.carried == Some(start))
            .map(|p| p.expr)
        else {
            return;
        };
        let plan = self.dot_plan(product).expect("the plan has the product");
        let ExprKind::Dot { acc: Some(acc), .. } = self.k.exprs[product].kind else {
            unreachable!("a carried product has an accumulator")
        };
        let ExprKind::Local(local) = self.k.exprs[acc].kind else {
            unreachable!("a carried accumulator is a tile")
        };
        let LocalHome::Workgroup(tile) = self.locals[local] else {
            return;
        };
        if !self.dot_staging_fits(&plan, 0) {
            return;
        }
        let staged = self.dot_staging(&plan);
        let tiles = self.coop_begin(&plan, Some(tile));
        self.tandem.notes.push(format!(
            "the loop at statement {}: `dot` of [{}, K] by [K, {}] into `{}`, {}; the \
             accumulators stay in the subgroups' cooperative matrices for the whole loop, \
             loaded before it and stored after it",
            self.tandem.stmt + 1,
            plan.m,
            plan.n,
            self.k.locals[local].name,
            self.coop_note(&plan)
        ));
        self.carried = Some(Carried {
            start,
            product,
            tiles,
            staged,
            tile,
        });
    }

    /// `acc = value` inside a loop that carries `value`'s accumulators: the
    /// iteration's chunk of K added to them. `false` (nothing emitted)
    /// for any other store.
    pub(super) fn carried_store(
        &mut self,
        value: ExprId,
        pre: &HashMap<ExprId, H>,
    ) -> Result<bool, LowerError> {
        let Some(c) = self.carried.take() else {
            return Ok(false);
        };
        if c.product != value {
            self.carried = Some(c);
            return Ok(false);
        }
        let plan = self.dot_plan(value).expect("the plan has the product");
        let a = self.k.exprs[value].kind.operands()[0];
        let len = self.extent(self.k.exprs[a].shape[1]);
        // Where the operands are staged, the next iteration's staging waits
        // for this one's reads at the end of the staged path: the loop has
        // no barrier of its own.
        let r = self.coop_loop(&plan, pre, &c.tiles, c.staged, len, true);
        self.carried = Some(c);
        r.map(|()| true)
    }

    /// Whether the loop of statement `start` carries a product's
    /// accumulators.
    pub(super) fn carries(&self, start: usize) -> bool {
        self.carried.as_ref().is_some_and(|c| c.start == start)
    }

    /// After the loop of statement `start`: the carried accumulators stored
    /// back into their tile, for the statements after the loop.
    pub(super) fn carry_end(&mut self, start: usize) {
        if self.carried.as_ref().is_none_or(|c| c.start != start) {
            return;
        }
        let c = self.carried.take().expect("checked");
        let plan = self.dot_plan(c.product).expect("the plan has the product");
        self.coop_end(&plan, &c.tiles, c.tile);
        self.cur
            .push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
    }
}
