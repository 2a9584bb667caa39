//! The row cache that the plan chose (`plan::rows`): each kept value is a
//! function-local array of the lane's `segments x 4` elements, written
//! where a reduction's leaf computes it (with the subgroup path or, where
//! the block's subgroups are not laid out for it, by a loop over the same
//! leaves beside the workgroup-array path) and read from then on. A store
//! over the same tile runs over the same leaves (`Lower::row_store`) and
//! reads what it shares with the reductions from there too. Only where a
//! value is computed changes, never how, so the bits are the
//! interpreter's.

use super::coop_reduce::Plan;
use super::coop_warp::LEAF;
use super::{H, Lower};
use crate::LowerError;
use crate::plan::rows::{self, Geom};
use naga::{
    ArraySize, BinaryOperator as B, Expression, Handle, LocalVariable, Span, Type, TypeInner,
};
use phobos_core::ir::{ExprId, IdVec, Index, Place, analysis};
use std::collections::{HashMap, HashSet};
use std::num::NonZeroU32;

/// The registers (32-bit words) a lane may keep for a row's values unless
/// `GpuOptions::knobs` says otherwise (0 turns the cache off).
pub(crate) const WORDS: u32 = 64;

/// The kept values of a kernel as the emitter holds them.
pub(super) struct RowCache {
    pub geom: Geom,
    numbers: IdVec<ExprId, ExprId>,
    /// By value number: the lane's array of the node's values.
    slots: HashMap<ExprId, Handle<LocalVariable>>,
    filled: HashSet<ExprId>,
    /// Written by the region being lowered, readable after it.
    pending: HashSet<ExprId>,
    /// Set while a region computes an element of a leaf.
    pub at: Option<At>,
}

/// The leaf element a region computes: segment `seg` of the lane (`fixed`
/// where the loop over segments is unrolled), element `j`; `keep` where
/// its values are kept (a reduction's leaves, computed unconditionally),
/// not only read (a store's, under its masks).
#[derive(Clone, Copy)]
pub(super) struct At {
    pub seg: H,
    pub fixed: Option<u32>,
    pub j: u32,
    pub keep: bool,
}

impl Lower<'_> {
    /// The row geometry of a reduction that can keep values
    /// ([`rows::geometry`]).
    pub(super) fn row_geom(&self, plan: &Plan) -> Option<Geom> {
        rows::geometry(self.k, plan)
    }

    /// Whether reduction `plan` is a region of the kept rows.
    pub(super) fn row_region(&self, plan: &Plan) -> bool {
        match (&self.rows, self.row_geom(plan)) {
            (Some(c), Some(g)) => c.geom == g,
            _ => false,
        }
    }

    /// Whether a store of `value` to `place` at `index` runs over the kept
    /// rows' leaves ([`rows::store_ok`]).
    pub(super) fn row_store_ok(
        &self,
        geom: &Geom,
        place: Place,
        index: &[Index],
        value: ExprId,
    ) -> bool {
        let room = self.plan.upfront.row_room(&self.options);
        rows::store_ok(
            self.k,
            (&self.plan.stores, &self.options, room),
            geom,
            (place, index, value),
        )
    }

    /// The plan's kept values, each given its lane's array, or `None`
    /// where the plan keeps none (then nothing changes). Called once
    /// `subgroup_ok` is known.
    pub(super) fn plan_row_cache(&mut self) -> Option<RowCache> {
        let rows = self.plan.rows.as_ref()?;
        let per_slot = rows.geom.segments() * LEAF;
        let mut slots = HashMap::new();
        for &n in &rows.kept {
            let elem = self.k.exprs[n].ty;
            let ty = self.m.types.insert(
                Type {
                    name: None,
                    inner: TypeInner::Array {
                        base: self.types[&elem],
                        size: ArraySize::Constant(NonZeroU32::new(per_slot).expect("positive")),
                        stride: 4,
                    },
                },
                Span::UNDEFINED,
            );
            let v = self.f.local_variables.append(
                LocalVariable {
                    name: Some(format!("row{n}")),
                    ty,
                    init: None,
                },
                Span::UNDEFINED,
            );
            slots.insert(n, v);
        }
        self.tandem.notes.push(format!(
            "rows: {} value(s) kept in registers across statements, {} words a lane",
            slots.len(),
            rows.words
        ));
        Some(RowCache {
            geom: rows.geom.clone(),
            numbers: analysis::value_numbers(self.k),
            slots,
            filled: HashSet::new(),
            pending: HashSet::new(),
            at: None,
        })
    }

    /// The kept value of `id` at the current leaf element, where it has
    /// been computed.
    pub(super) fn row_load(&mut self, id: ExprId) -> Option<H> {
        let c = self.rows.as_ref()?;
        let at = c.at?;
        let n = c.numbers[id];
        if !c.filled.contains(&n) {
            return None;
        }
        let slot = c.slots[&n];
        let ptr = self.slot_ptr(slot, at);
        Some(self.var_load(ptr))
    }

    /// Keeps `v`, the value of `id` at the current leaf element, where it
    /// is wanted and not kept yet.
    pub(super) fn row_keep(&mut self, id: ExprId, v: H) {
        let Some(c) = self.rows.as_mut() else {
            return;
        };
        let Some(at) = c.at.filter(|a| a.keep) else {
            return;
        };
        let n = c.numbers[id];
        if c.filled.contains(&n) {
            return;
        }
        let Some(&slot) = c.slots.get(&n) else {
            return;
        };
        c.pending.insert(n);
        let ptr = self.slot_ptr(slot, at);
        self.var_store(ptr, v);
    }

    /// After a region's loops: what it kept is readable from here on.
    pub(super) fn row_done(&mut self) {
        if let Some(c) = self.rows.as_mut() {
            let p = std::mem::take(&mut c.pending);
            c.filled.extend(p);
        }
    }

    fn slot_ptr(&mut self, slot: Handle<LocalVariable>, at: At) -> H {
        let At { seg, fixed, j, .. } = at;
        let base = self.expr(Expression::LocalVariable(slot));
        match fixed {
            Some(k) => self.expr(Expression::AccessIndex {
                base,
                index: k * LEAF + j,
            }),
            None => {
                let lc = self.u32c(LEAF);
                let at = self.binary(B::Multiply, seg, lc);
                let jc = self.u32c(j);
                let index = self.binary(B::Add, at, jc);
                self.access(base, index)
            }
        }
    }

    /// A loop over a lane's `segments` leaves: unrolled where `unroll` (a
    /// region of the kept rows, so their arrays are indexed by constants),
    /// else a loop.
    pub(super) fn seg_loop(
        &mut self,
        segments: u32,
        unroll: bool,
        mut body: impl FnMut(&mut Self, H, Option<u32>) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        if unroll {
            for k in 0..segments {
                let kc = self.u32c(k);
                body(self, kc, Some(k))?;
            }
            Ok(())
        } else {
            let n = self.u32c(segments);
            self.count_loop(n, |lw, k| body(lw, k, None))
        }
    }

    /// The leaf of segment `k` (from 0) of invocation `item` of a row: lane
    /// `l` of subgroup `w` takes leaf `(w segments + k) G + l`.
    pub(super) fn leaf_of(&mut self, item: H, segments: u32, k: H) -> H {
        let g = self.options.subgroup_width;
        let gm = self.u32c(g - 1);
        let lane = self.binary(B::And, item, gm);
        let gs = self.u32c(g.trailing_zeros());
        let warp = self.binary(B::ShiftRight, item, gs);
        let segs = self.u32c(segments);
        let first = self.binary(B::Multiply, warp, segs);
        let seg = self.binary(B::Add, first, k);
        let gc = self.u32c(g);
        let at = self.binary(B::Multiply, seg, gc);
        self.binary(B::Add, at, lane)
    }

    /// Where the block's subgroups do not suit the shuffles: the region's
    /// leaves computed over the same leaves as `warp_reduce` would, only to
    /// keep their values (the reduction itself goes through the workgroup
    /// array).
    pub(super) fn row_fill(
        &mut self,
        plan: &Plan,
        pre: &HashMap<ExprId, H>,
        pos: &[H],
        item: H,
    ) -> Result<(), LowerError> {
        let segments = plan.block / LEAF;
        self.seg_loop(segments, true, |lw, k, fixed| {
            let leaf = lw.leaf_of(item, segments, k);
            lw.leaf(plan, pre, pos, leaf, (k, fixed))?;
            Ok(())
        })
    }

    /// A store over the kept rows' tile, each lane taking the leaves it
    /// reduced (`row_store_ok` holds): groups of 4 stored with one 16-byte
    /// store, the shared values read from the lane's arrays.
    pub(super) fn row_store(
        &mut self,
        place: Place,
        index: &[Index],
        value: ExprId,
        pre: &HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        let geom = self.rows.as_ref().expect("kept rows").geom.clone();
        let len = *geom.shape.last().expect("a row axis");
        let per_row = geom.per_row;
        let segments = geom.segments();
        let rows: u32 = geom.shape[..geom.shape.len() - 1].iter().product();
        let t_shift = self.u32c(per_row.trailing_zeros());
        let inv = self.local;
        let row = self.binary(B::ShiftRight, inv, t_shift);
        let t_mask = self.u32c(per_row - 1);
        let item = self.binary(B::And, inv, t_mask);
        let rows_c = self.u32c(rows);
        let active = self.binary(B::Less, row, rows_c);
        let last = geom.shape.len() - 1;
        let mut pos = vec![row; geom.shape.len()];
        let mut rest = row;
        for a in (0..last).rev() {
            let e = self.u32c(geom.shape[a]);
            pos[a] = self.binary(B::Modulo, rest, e);
            rest = self.binary(B::Divide, rest, e);
        }
        let elem = self.place_elem(place);
        let ty = super::bindings::vec4_type(&mut self.m, elem);
        self.seg_loop(segments, true, |lw, k, fixed| {
            let leaf = lw.leaf_of(item, segments, k);
            let lc = lw.u32c(LEAF);
            let start = lw.binary(B::Multiply, leaf, lc);
            let len_c = lw.u32c(len);
            let in_row = lw.binary(B::Less, start, len_c);
            let go = lw.binary(B::LogicalAnd, active, in_row);
            let mut p0 = pos.clone();
            p0[last] = start;
            let accept = lw.nested(|lw| {
                let mut cache = pre.clone();
                lw.store_group(
                    (place, index, value),
                    &p0,
                    &mut cache,
                    (ty, HashMap::new()),
                    |lw, j| {
                        lw.rows.as_mut().expect("kept rows").at = j.map(|j| At {
                            seg: k,
                            fixed,
                            j,
                            keep: false,
                        });
                    },
                )
            })?;
            lw.if_then(go, accept);
            Ok(())
        })?;
        self.tandem.notes.push(format!(
            "statement {}: stored over the kept rows' leaves",
            self.tandem.stmt + 1
        ));
        Ok(())
    }
}
