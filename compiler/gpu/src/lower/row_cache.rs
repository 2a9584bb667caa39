//! Values of a row kept in registers across statements: where a kernel's
//! whole-row reductions all take `coop_warp.rs`'s path with one geometry,
//! every lane reduces the same leaves of the row in each of them, so a
//! value computed at a leaf in one statement (`X`, or `exp(X - m)`) can be
//! kept in that lane's registers and read back by the next statement
//! instead of being loaded and computed again. A store over the same tile
//! then runs over the same leaves (`Lower::row_store`) and reads what it
//! shares with the reductions from there too.
//!
//! What is kept: the nodes of the row's full shape that more than one of
//! those regions (a reduction's operand, or a store's value) computes, by
//! value number (`ir::analysis::value_numbers`), that read memory, read
//! only tensors the kernel never writes and `let` locals, and draw no
//! Tandem words; the costliest first, while the registers a lane keeps
//! stay within [`words_budget`]. Each is a function-local array of the
//! lane's `segments x 4` elements, written where a reduction's leaf
//! computes it (with the subgroup path or, where the block's subgroups are
//! not laid out for it, by a loop over the same leaves beside the
//! workgroup-array path) and read from then on. Only where a value is
//! computed changes, never how, so the bits are the interpreter's.

use super::coop_reduce::Plan;
use super::coop_warp::LEAF;
use super::{H, Lower};
use crate::LowerError;
use naga::{
    ArraySize, BinaryOperator as B, Expression, Handle, LocalVariable, Span, Type, TypeInner,
};
use phobos_core::ir::{ExprId, ExprKind, IdVec, Index, LocalKind, Place, Stmt, analysis};
use phobos_core::types::{Dim, Scalar};
use std::collections::{HashMap, HashSet};
use std::num::NonZeroU32;

/// The registers (32-bit words) a lane may keep for a row's values unless
/// `GpuOptions::knobs` says otherwise (0 turns the cache off).
pub(crate) const WORDS: u32 = 64;

/// The leaves every region of the kernel reduces or stores.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Geom {
    /// The row's full shape (the reduced axis last).
    pub shape: Vec<u32>,
    pub per_row: u32,
    pub block: u32,
}

impl Geom {
    fn of(plan: &Plan, shape: Vec<u32>) -> Geom {
        Geom {
            shape,
            per_row: plan.per_row,
            block: plan.block,
        }
    }

    pub fn segments(&self) -> u32 {
        self.block / LEAF
    }
}

/// The kept values of a kernel (module doc).
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
    /// The row geometry of a reduction that can keep values: the subgroup
    /// path with 16-byte leaves along the last axis.
    pub(super) fn row_geom(&self, plan: &Plan) -> Option<Geom> {
        let shape = const_shape(&self.k.exprs[plan.arg].shape)?;
        (self.warp_path(plan) && self.quad_leaves(plan) && plan.axis + 1 == shape.len())
            .then(|| Geom::of(plan, shape))
    }

    /// Whether reduction `plan` is a region of the kept rows.
    pub(super) fn row_region(&self, plan: &Plan) -> bool {
        match (&self.rows, self.row_geom(plan)) {
            (Some(c), Some(g)) => c.geom == g,
            _ => false,
        }
    }

    /// Whether a store of `value` to `place` at `index` runs over the kept
    /// rows' leaves (`row_store`).
    pub(super) fn row_store_ok(
        &self,
        geom: &Geom,
        place: Place,
        index: &[Index],
        value: ExprId,
    ) -> bool {
        let tile = const_shape(&analysis::slice_tile(index));
        matches!(place, Place::Param(_))
            && tile.as_deref() == Some(&geom.shape[..])
            && super::stmt::quad_slice(self.k, place, index)
            && !self.stored_elementwise(value)
            && self.row_words_fit(value, &analysis::slice_tile(index))
            && !analysis::reads_place(self.k, value, place)
    }

    /// The kept values of this kernel, or `None` where nothing is shared
    /// (then nothing changes). Called once `subgroup_ok` is known.
    pub(super) fn plan_row_cache(&mut self) -> Option<RowCache> {
        let budget = self.options.knobs.row_cache_words;
        if budget == 0 || self.subgroup_ok.is_none() {
            return None;
        }
        self.plan_row_words();
        // The geometry every whole-row reduction shares, and the regions in
        // statement order: each reduction's operand (inner ones first),
        // and each store over the same leaves; `true` for a reduction.
        let mut geom: Option<Geom> = None;
        let mut per_stmt: Vec<Vec<ExprId>> = Vec::new();
        for s in &self.k.body {
            let value = s.value()?;
            let mut here: Vec<ExprId> = self
                .k
                .reachable(value)
                .into_iter()
                .filter(|id| matches!(self.k.exprs[*id].kind, ExprKind::Reduce { .. }))
                .collect();
            here.sort_unstable();
            let mut args = Vec::new();
            for id in here {
                let Some(plan) = self.coop_plan(id) else {
                    continue;
                };
                let Some(g) = self.row_geom(&plan) else {
                    continue;
                };
                match &geom {
                    Some(have) if *have != g => return None,
                    _ => geom = Some(g),
                }
                args.push(plan.arg);
            }
            per_stmt.push(args);
        }
        let geom = geom?;
        let mut regions: Vec<(ExprId, bool)> = Vec::new();
        for (s, args) in self.k.body.iter().zip(per_stmt) {
            regions.extend(args.into_iter().map(|a| (a, true)));
            if let Stmt::Store {
                place,
                index,
                value,
            } = s
                && self.row_store_ok(&geom, *place, index, *value)
            {
                regions.push((*value, false));
            }
        }
        let numbers = analysis::value_numbers(self.k);
        let full: Vec<Dim> = geom.shape.iter().map(|&e| Dim::Const(e.into())).collect();
        // The value numbers a region computes, given the values kept so far
        // (by number: the region that first computes it): it reads a kept
        // value that an earlier region computed instead of computing it.
        let computes = |r: usize, kept: &HashMap<ExprId, usize>| -> HashSet<ExprId> {
            let mut here = HashSet::new();
            let mut stack = vec![regions[r].0];
            while let Some(id) = stack.pop() {
                let e = &self.k.exprs[id];
                if e.shape != full || matches!(e.kind, ExprKind::Reduce { .. }) {
                    continue;
                }
                let n = numbers[id];
                if !here.insert(n) || kept.get(&n).is_some_and(|&first| first < r) {
                    continue;
                }
                stack.extend(e.kind.operands());
            }
            here
        };
        // The candidates: every node some region computes, the costliest
        // first (ties by value number, so the choice is deterministic). A
        // value is kept where a reduction computes it first (a store's
        // leaves are computed under masks, so a store only reads) and a
        // later region would compute it again; its operands are then
        // computed by the first region alone, so a node is judged after
        // those above it.
        let mut candidates: Vec<(usize, ExprId)> = (0..regions.len())
            .flat_map(|r| computes(r, &HashMap::new()))
            .collect::<HashSet<_>>()
            .into_iter()
            .filter(|&n| self.keepable(n))
            .map(|n| (self.k.reachable(n).len(), n))
            .collect();
        candidates.sort_unstable_by(|a, b| b.cmp(a));
        let mut kept: HashMap<ExprId, usize> = HashMap::new();
        let mut order = Vec::new();
        for (_, n) in candidates {
            let by: Vec<usize> = (0..regions.len())
                .filter(|&r| computes(r, &kept).contains(&n))
                .collect();
            if by.len() > 1 && regions[by[0]].1 {
                kept.insert(n, by[0]);
                order.push(n);
            }
        }
        let per_slot = geom.segments() * LEAF;
        let mut slots = HashMap::new();
        let mut used = 0;
        for n in order {
            if used + per_slot > budget {
                break;
            }
            used += per_slot;
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
        if slots.is_empty() {
            return None;
        }
        self.tandem.notes.push(format!(
            "rows: {} value(s) kept in registers across statements, {} words a lane",
            slots.len(),
            used
        ));
        Some(RowCache {
            geom,
            numbers,
            slots,
            filled: HashSet::new(),
            pending: HashSet::new(),
            at: None,
        })
    }

    /// Whether node `id` may be kept: a 32-bit value that reads memory,
    /// whose reads no statement changes after it is first computed, and
    /// that draws no Tandem words.
    fn keepable(&self, id: ExprId) -> bool {
        let e = &self.k.exprs[id];
        if !matches!(e.ty, Scalar::F32 | Scalar::I32 | Scalar::U32)
            || super::tandem_draw::has_words(self.k, id)
        {
            return false;
        }
        let nodes = self.k.reachable(id);
        let loads = nodes
            .iter()
            .any(|&n| matches!(self.k.exprs[n].kind, ExprKind::Load { .. }));
        let unchanged = analysis::reads(self.k, id).iter().all(|p| match *p {
            Place::Param(i) => !self
                .k
                .body
                .iter()
                .any(|s| matches!(s, Stmt::Store { place: Place::Param(j), .. } if *j == i)),
            Place::Local(l) => self.k.locals[l].kind == LocalKind::Let,
        });
        loads && unchanged
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

fn const_shape(s: &[Dim]) -> Option<Vec<u32>> {
    s.iter()
        .map(|d| match d {
            Dim::Const(v) => u32::try_from(*v).ok(),
            Dim::Sym(_) => None,
        })
        .collect()
}
