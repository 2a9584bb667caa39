//! A store that takes a product's tiles as the subgroups finish them
//! (`plan::dots::Product::from_tiles`): `C[i :+ BM, j :+ BN] = f(dot(a,
//! b))` with no `[BM, BN]` array of the result in workgroup memory.
//!
//! Each subgroup's accumulators start at 0, or from the accumulator's tile
//! (`acc = dot(p, V, acc)`, `plan::dots::accumulator_tile`), and take the whole of K
//! (`dot_direct.rs`). Then, one tile at a time, the subgroup stores the
//! accumulator into its own 16 x 16 slot of workgroup memory
//! (`CooperativeStore`), and after a barrier its lanes compute the
//! statement at the tile's 256 positions, reading the product's element
//! from the slot where the element-by-element store would read it from
//! the result array. The values and the operations on them are those of
//! the store through the array; only where the product's elements wait
//! changes. The slot is the subgroup's own, so a barrier of the subgroup
//! orders its store and its lanes' reads; a subgroup that keeps no tile
//! (tiles that do not split evenly) skips it.

use super::dot_coop::CoopTiles;
use super::{H, LocalHome, Lower};
use crate::LowerError;
use naga::{BinaryOperator as B, CooperativeData, GlobalVariable, Handle, Statement};
use phobos_core::ir::{ExprId, Index, LocalId, Place};
use phobos_core::types::Scalar;
use std::collections::HashMap;

/// The elements of a cooperative tile.
const TILE_ELEMENTS: u32 = 16 * 16;

impl Lower<'_> {
    /// `let local = value` (or a `var`) where the plan stores a product
    /// under `value` from its tiles: the store over the whole of the
    /// local's tile in workgroup memory.
    pub(super) fn dot_tiles_let(
        &mut self,
        local: LocalId,
        value: ExprId,
        pre: &HashMap<ExprId, H>,
    ) -> Result<bool, LowerError> {
        if !matches!(self.locals[local], LocalHome::Workgroup(_)) {
            return Ok(false);
        }
        let index = crate::plan::dots::whole_index(&self.k.locals[local].shape);
        self.dot_tiles_store(Place::Local(local), &index, value, pre)
    }

    /// `place[index] = value` where the plan stores a product under
    /// `value` from its tiles; `false` (nothing emitted) where it does not,
    /// or where the arrays do not fit.
    pub(super) fn dot_tiles_store(
        &mut self,
        place: Place,
        index: &[Index],
        value: ExprId,
        pre: &HashMap<ExprId, H>,
    ) -> Result<bool, LowerError> {
        let under = self.k.reachable(value);
        let Some(id) = self
            .plan
            .products
            .iter()
            .find(|p| p.from_tiles && under.contains(&p.expr))
            .map(|p| p.expr)
        else {
            return Ok(false);
        };
        let plan = self.dot_plan(id).expect("the plan has the product");
        let width = self.options.subgroup_width;
        // One slot for each subgroup that keeps a tile of some product
        // stored this way.
        let subgroups = self.block_invocations / width;
        let keeping = crate::plan::dots::tile_slots(&self.plan.products, subgroups);
        let slots = keeping * TILE_ELEMENTS;
        // The arrays of products, the slots among them, are made once.
        let key = ("dot_tile", slots);
        let new = match self.dot_buffers.contains_key(&key) {
            true => 0,
            false => slots,
        };
        if !self.dot_staging_fits(&plan, 4 * u64::from(new)) {
            return Ok(false);
        }
        let staged = self.dot_staging(&plan);
        let slots = match self.dot_buffers.get(&key) {
            Some(g) => *g,
            None => {
                let g = self
                    .workgroup_array("dot_tile", Scalar::F32, slots)
                    .expect("checked to fit");
                self.dot_buffers.insert(key, g);
                g
            }
        };
        let a = self.k.exprs[id].kind.operands()[0];
        let len = self.extent(self.k.exprs[a].shape[1]);
        // The accumulators start from the accumulator's tile where there
        // is one (`acc = dot(p, V, acc)`; the statement's barrier ordered
        // its last writes), else at 0.
        let start = match plan
            .acc
            .and_then(|c| crate::plan::dots::accumulator_tile(self.k, c))
        {
            Some(l) => match self.locals[l] {
                LocalHome::Workgroup(g) => Some(g),
                LocalHome::Private(_) => unreachable!("the plan took a tile"),
            },
            None => None,
        };
        let tiles = self.coop_begin(&plan, start);
        self.coop_loop(&plan, pre, &tiles, staged, len, false)?;
        self.store_tiles(&tiles, slots, (place, index, value, id), pre)?;
        let note = self.coop_note(&plan);
        self.tandem.notes.push(format!(
            "statement {}: `dot` of [{}, K] by [K, {}] by the workgroup, {note}; stored \
             from each subgroup's tiles as they finish (no array of the whole result)",
            self.tandem.stmt + 1,
            plan.m,
            plan.n
        ));
        Ok(true)
    }

    /// The statement at every position of this subgroup's tiles, one tile
    /// at a time through the subgroup's slot.
    fn store_tiles(
        &mut self,
        tiles: &CoopTiles,
        slots: Handle<GlobalVariable>,
        (place, index, value, product): (Place, &[Index], ExprId, ExprId),
        pre: &HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        let sg = self.subgroup_id();
        let elements = self.u32c(TILE_ELEMENTS);
        let slot = self.binary(B::Multiply, sg, elements);
        let sixteen = self.u32c(16);
        // The slot is the subgroup's own: its store and its lanes' reads
        // are ordered by a barrier of the subgroup, not of the workgroup.
        let barrier =
            Statement::ControlBarrier(naga::Barrier::SUB_GROUP | naga::Barrier::WORK_GROUP);
        for t in &tiles.tiles {
            // A subgroup past the last tile (tiles that do not split
            // evenly, `coop_begin`) skips it; the condition is uniform over
            // the subgroup, as its barriers and matrix operations need.
            let body = self.nested(|lw| {
                let acc = lw.var_load(t.acc);
                let ptr = lw.array_ptr(slots, slot);
                lw.cur.push(Statement::CooperativeStore {
                    target: acc,
                    data: CooperativeData {
                        pointer: ptr,
                        stride: sixteen,
                        row_major: true,
                    },
                });
                lw.cur.push(barrier.clone());
                lw.tile_positions(t, slots, slot, (place, index, value, product), pre)?;
                // The slot is read before the next tile overwrites it.
                lw.cur.push(barrier.clone());
                Ok(())
            })?;
            self.if_inside(t.inside, body);
        }
        Ok(())
    }

    /// `block` where `inside` holds (always where it is `None`).
    fn if_inside(&mut self, inside: Option<H>, block: naga::Block) {
        match inside {
            None => self.cur.push(Statement::Block(block)),
            Some(c) => self.if_then(c, block),
        }
    }

    /// The statement at the 256 positions of tile `t`, this subgroup's
    /// lanes each taking every `width`-th, the product's element read from
    /// the subgroup's slot.
    fn tile_positions(
        &mut self,
        t: &super::dot_coop::CoopTile,
        slots: Handle<GlobalVariable>,
        slot: H,
        (place, index, value, product): (Place, &[Index], ExprId, ExprId),
        pre: &HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        let width = self.options.subgroup_width;
        let lane = self.builtin_argument(naga::BuiltIn::SubgroupInvocationId, "subgroup_lane");
        let sixteen = self.u32c(16);
        {
            for e in 0..TILE_ELEMENTS / width {
                let step = self.u32c(e * width);
                let q = self.binary(B::Add, lane, step);
                let r = self.binary(B::Divide, q, sixteen);
                let c = self.binary(B::Modulo, q, sixteen);
                let pos = [
                    self.binary(B::Add, t.row0, r),
                    self.binary(B::Add, t.col0, c),
                ];
                let at = self.binary(B::Add, slot, q);
                let ptr = self.array_ptr(slots, at);
                let element = self.var_load(ptr);
                let mut cache = pre.clone();
                cache.insert(product, element);
                let (inside, flat) = self.locate(place, index, &pos, &mut cache)?;
                let accept = self.nested(|lw| {
                    let v = lw.node(value, &pos, &mut cache)?;
                    let v = lw.stored(place, value, v);
                    lw.store_at(place, flat, v);
                    Ok(())
                })?;
                self.if_then(inside, accept);
            }
        }
        Ok(())
    }
}
