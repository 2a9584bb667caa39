//! Reductions computed by the whole workgroup: every reduction of constant
//! shape whose result has at most half as many elements as the block has
//! invocations, before the statement that reads it.
//!
//! The pairwise tree of `phobos_core::ir::reduce` has a property that lets
//! any invocation compute any node: the node over an aligned block
//! `[i 2^m, min((i + 1) 2^m, L))` of a row of `L` elements is the tree of
//! that block alone, however it is computed, and an odd last item is
//! carried up unchanged. So each row gets `T` invocations (a power of two,
//! `T B >= L`), invocation `t` of a row reduces the block of `B = 2^m`
//! elements starting at `t B` in its own registers (unrolled for small `B`,
//! else `reduce.rs`'s loops over the block), and the levels above it pair
//! invocations `t` and `t + s` for `s = 1, 2, 4, ..`: the one with bit `s`
//! clear is the left operand, exactly the tree's adjacent pair, and a
//! partner whose block starts at or past `L` is absent (the odd last item
//! carried up). Only which invocation computes which node changes; every
//! combine is [`Lower::pair_step`], whose meaning is
//! `interp::ops::reduce_combine`'s (`max`/`min` keep the left item on ties
//! and NaN, `argmax`/`argmin` carry the index of the item kept), so the
//! bits are the interpreter's.
//!
//! The levels with `s` below the subgroup width `G` of
//! `GpuOptions::subgroup_width` go through `subgroupShuffleXor(v, s)`, no
//! memory and no barrier. Where a row has whole subgroups, at most `G` of
//! them, the levels above take one barrier (`coop_warp.rs`'s
//! `across_warps`: each subgroup's node through a workgroup array, then a
//! last butterfly); otherwise they go through a workgroup array, one
//! barrier a level. Item 0 of each row writes the result to a workgroup
//! array of the reduction's shape, which the statement reads after one more
//! barrier. With `G = 32` and 64 to 1024 invocations a row, that is 2
//! barriers a reduction.
//! Subgroups are used only where every one of the block's is `G` lanes
//! wide in invocation order: the block checks that once at its start
//! ([`Lower::subgroup_check`], a vote per subgroup made uniform over the
//! workgroup), and takes the workgroup array for every level otherwise.
//! The bits are the same either way.
//!
//! A reduction that does not qualify (a dim-dependent extent, a 64-bit
//! type, more rows than half the invocations, or arrays that would not fit
//! in the device's workgroup memory) keeps `reduce.rs`'s loop per element.

use super::{H, LocalHome, Lower};
use crate::LowerError;
use crate::plan::reductions::LEAF;
use naga::{
    AddressSpace, BinaryOperator as B, Block, Expression, GatherMode, GlobalVariable, Handle, Span,
    Statement,
};
use phobos_core::ir::{ExprId, ExprKind, LocalId, ReduceOp};
use phobos_core::types::{Dim, Scalar};
use std::collections::HashMap;
use std::num::NonZeroU32;

/// The largest block an invocation reduces in straight-line code; larger
/// ones loop (`reduce.rs`).
const UNROLL: u32 = 8;

/// How a reduction is spread over the block: the plan's geometry.
pub(super) type Plan = crate::plan::Reduction;

/// Where item 0 of each row puts a reduction's value.
pub(super) enum ResultTo {
    /// Stored in this workgroup array, which the statement reads after the
    /// barrier that ends the reduction.
    Array(Handle<GlobalVariable>),
    /// Folded into an accumulator (`plan::folds`, by index in the plan's
    /// folds): the row's element of the accumulator becomes the fold's
    /// value, computed with the reduction's value for its `let` (`pre`: the
    /// values hoisted for it). No barrier follows: the element is this
    /// invocation's at every iteration.
    Fold(usize, HashMap<ExprId, H>),
}

/// A reduction computed ahead of its statement: where its result lies.
#[derive(Clone, Copy)]
pub(super) struct Computed {
    pub result: Handle<GlobalVariable>,
}

impl Lower<'_> {
    /// The plan for reduction `id` here, or `None` where it keeps the loop
    /// per element.
    pub(super) fn coop_plan(&self, id: ExprId) -> Option<Plan> {
        self.plan.reductions.iter().find(|r| r.expr == id).cloned()
    }

    /// Computes every qualifying reduction and product (`dot_ahead.rs`)
    /// under `value` ahead of the statement (inner ones first), each ending
    /// at a barrier, and records where its result lies for [`Lower::node`].
    pub(super) fn compute_ahead(
        &mut self,
        value: ExprId,
        pre: &HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        let mut ids: Vec<ExprId> = self
            .k
            .reachable(value)
            .into_iter()
            .filter(|id| {
                matches!(
                    self.k.exprs[*id].kind,
                    ExprKind::Reduce { .. } | ExprKind::Dot { .. }
                )
            })
            .collect();
        // Operands are built before the nodes that use them.
        ids.sort_unstable();
        for id in ids {
            if self.coop.contains_key(&id) {
                continue;
            }
            match self.k.exprs[id].kind {
                ExprKind::Dot { .. } => self.dot_one(id, pre, None)?,
                _ => self.coop_one(id, pre, None)?,
            };
        }
        Ok(())
    }

    /// `let local = value` (or a `var`) where `value` is a qualifying
    /// reduction of the local's own shape and type: computed straight into
    /// the local's workgroup tile. `false` (nothing emitted) otherwise.
    pub(super) fn coop_let(
        &mut self,
        local: LocalId,
        value: ExprId,
        pre: &HashMap<ExprId, H>,
    ) -> Result<bool, LowerError> {
        let ExprKind::Reduce { arg, .. } = self.k.exprs[value].kind else {
            return Ok(false);
        };
        let l = &self.k.locals[local];
        let e = &self.k.exprs[value];
        let LocalHome::Workgroup(g) = self.locals[local] else {
            return Ok(false);
        };
        if l.shape != e.shape || l.elem != e.ty || self.coop_plan(value).is_none() {
            return Ok(false);
        }
        self.compute_ahead(arg, pre)?;
        self.coop_one(value, pre, Some(ResultTo::Array(g)))
    }

    /// Computes reduction `id` ahead into `into` (else a new array) where
    /// it qualifies and its arrays fit; whether it did.
    pub(super) fn coop_one(
        &mut self,
        id: ExprId,
        pre: &HashMap<ExprId, H>,
        into: Option<ResultTo>,
    ) -> Result<bool, LowerError> {
        let Some(plan) = self.coop_plan(id) else {
            return Ok(false);
        };
        let out_ty = self.k.exprs[id].ty;
        let index = plan.op.is_index();
        let w = self.block_invocations;
        let Some(scratch) = self.scratch((plan.elem, false, false), w) else {
            return Ok(false);
        };
        let scratch_index = if index {
            match self.scratch((Scalar::I32, true, false), w) {
                Some(s) => Some(s),
                None => return Ok(false),
            }
        } else {
            None
        };
        let made = into.is_none();
        let result = match into {
            Some(to) => to,
            None => match self.workgroup_array("reduce_result", out_ty, plan.rows) {
                Some(g) => ResultTo::Array(g),
                None => return Ok(false),
            },
        };
        self.coop_reduce(&plan, pre, &result, (scratch, scratch_index))?;
        let g = self.options.subgroup_width.min(plan.per_row);
        let levels = if g > 1 && self.subgroup_ok.is_some() {
            let layout = match self.options.subgroup_layout_known {
                true => "layout probed on the device",
                false => "layout checked at run time",
            };
            format!("subgroup shuffles below {g} lanes ({layout}), workgroup memory above")
        } else {
            "workgroup memory".to_string()
        };
        self.tandem.notes.push(format!(
            "statement {}: `{}` over {} elements in {} rows by the workgroup: {} invocations a row, blocks of {}, {levels}",
            self.tandem.stmt + 1,
            plan.op.name(),
            plan.len,
            plan.rows,
            plan.per_row,
            plan.block
        ));
        if let (true, ResultTo::Array(result)) = (made, result) {
            self.coop.insert(id, Computed { result });
        }
        Ok(true)
    }

    /// The value of a reduction computed ahead ([`Lower::compute_ahead`]) at
    /// tile position `pos`.
    pub(super) fn coop_value(&mut self, id: ExprId, c: Computed, pos: &[H]) -> H {
        let shape = self.k.exprs[id].shape.clone();
        let q = self.aligned(&shape, pos);
        let mut flat = self.u32c(0);
        for (p, d) in q.iter().zip(&shape) {
            let Dim::Const(e) = d else {
                unreachable!("coop_plan takes constant shapes")
            };
            let e = self.u32c(*e as u32);
            let scaled = self.binary(B::Multiply, flat, e);
            flat = self.binary(B::Add, scaled, *p);
        }
        let ptr = self.array_ptr(c.result, flat);
        self.var_load(ptr)
    }

    fn coop_reduce(
        &mut self,
        plan: &Plan,
        pre: &HashMap<ExprId, H>,
        result: &ResultTo,
        scratch: (Handle<GlobalVariable>, Option<Handle<GlobalVariable>>),
    ) -> Result<(), LowerError> {
        let t_shift = self.u32c(plan.per_row.trailing_zeros());
        let inv = self.local;
        let row = self.binary(B::ShiftRight, inv, t_shift);
        let t_mask = self.u32c(plan.per_row - 1);
        let item = self.binary(B::And, inv, t_mask);
        let rows = self.u32c(plan.rows);
        let active = self.binary(B::Less, row, rows);
        // Invocations past the rows read row `rows - 1` (inside every
        // tile) and keep nothing.
        let last_row = self.u32c(plan.rows - 1);
        let safe_row = self.min_u32(row, last_row);
        let mut pos = vec![safe_row; plan.ext_out.len()];
        let mut rest = safe_row;
        for k in (0..plan.ext_out.len()).rev() {
            let e = self.u32c(plan.ext_out[k]);
            pos[k] = self.binary(B::Modulo, rest, e);
            rest = self.binary(B::Divide, rest, e);
        }
        let items = plan.len.div_ceil(plan.block);
        let g = self.options.subgroup_width.min(plan.per_row);
        let level = |lw: &mut Self, shuffled: u32| -> Result<(), LowerError> {
            // A region of the kept rows whose invocations take one leaf
            // each computes it as the subgroup path's leaves are computed,
            // keeping its values (`plan::rows`): the same tree.
            let (mut v, mut iv) = if plan.block == LEAF && lw.row_region(plan) {
                let zero = lw.u32c(0);
                lw.leaf(plan, pre, &pos, item, (zero, Some(0)))?
            } else {
                let block = lw.u32c(plan.block);
                let start = lw.binary(B::Multiply, item, block);
                lw.own_block(plan, pre, &pos, start)?
            };
            let mut s = 1;
            while s < shuffled {
                let (pv, piv) = lw.shuffle_pair(plan, v, iv, s);
                let present = lw.partner_present(item, s, items, true);
                (v, iv) = lw.pair_step(plan.op, plan.elem, (v, iv), (pv, piv), present);
                s *= 2;
            }
            let width = lw.options.subgroup_width;
            if shuffled == width && plan.per_row > width {
                // Whole subgroups a row: the levels above them take one
                // barrier (`coop_warp.rs`).
                let wm = lw.u32c(width - 1);
                let lane = lw.binary(B::And, item, wm);
                return lw.across_warps(plan, (v, iv), (item, lane, row, active), result, scratch);
            }
            lw.finish(plan, (v, iv), (item, row, active), s, result, scratch)
        };
        let fold = matches!(result, ResultTo::Fold(..));
        match self.subgroup_ok {
            Some(_) if g > 1 && self.options.subgroup_layout_known => {
                let accept = if self.warp_path(plan) {
                    self.nested(|lw| {
                        lw.warp_reduce(plan, pre, &pos, (item, row, active), result, scratch)
                    })?
                } else {
                    self.nested(|lw| level(lw, g))?
                };
                self.cur.push(Statement::Block(accept));
            }
            Some(ok) if g > 1 => {
                let mut accept = if self.warp_path(plan) {
                    self.nested(|lw| {
                        lw.warp_reduce(plan, pre, &pos, (item, row, active), result, scratch)
                    })?
                } else {
                    self.nested(|lw| level(lw, g))?
                };
                let mut reject = self.nested(|lw| {
                    if lw.row_region(plan) {
                        lw.row_fill(plan, pre, &pos, item)?;
                    }
                    level(lw, 1)
                })?;
                // A fold waits only where a path leaves the compiler's
                // arrays touched since its last barrier.
                for b in [&mut accept, &mut reject] {
                    if fold && self.scratch_after_barrier(b).0 {
                        b.push(
                            Statement::ControlBarrier(naga::Barrier::WORK_GROUP),
                            Span::UNDEFINED,
                        );
                    }
                }
                self.cur.push(Statement::If {
                    condition: ok,
                    accept,
                    reject,
                });
            }
            _ => level(self, 1)?,
        }
        self.row_done();
        if !fold || self.scratch_after_barrier(&self.cur).0 {
            self.cur
                .push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
        }
        Ok(())
    }

    /// This invocation's node: the reduction of elements `start ..
    /// min(start + B, L)` of its row (value, and index for `argmax`/`argmin`;
    /// anything where the block is empty, which no level reads).
    pub(super) fn own_block(
        &mut self,
        plan: &Plan,
        pre: &HashMap<ExprId, H>,
        pos: &[H],
        start: H,
    ) -> Result<(H, H), LowerError> {
        let outer: HashMap<ExprId, H> = pre
            .iter()
            .filter(|(k, _)| self.k.exprs[**k].shape.is_empty())
            .map(|(k, v)| (*k, *v))
            .collect();
        let (arg, axis) = (plan.arg, plan.axis);
        let last = self.u32c(plan.len - 1);
        let element = |lw: &mut Self, k: H| -> Result<H, LowerError> {
            let at = lw.binary(B::Add, start, k);
            let mut p = pos.to_vec();
            p[axis] = at;
            lw.node(arg, &p, &mut outer.clone())
        };
        let start_i = self.bitcast(start, naga::ScalarKind::Sint);
        if plan.block <= UNROLL {
            // Straight-line: the block's tree over its present elements
            // (positions past the row read its last element instead). Where
            // the row and the block are whole groups of 4 along the last
            // axis, each group is computed lane by lane from one 16-byte
            // load a load node, as `coop_warp.rs`'s leaves are: a group is
            // inside the row or past it as a whole, and one past it reads
            // the row's last group instead.
            let quads = plan.block.is_multiple_of(LEAF) && self.quad_leaves(plan);
            let last_quad = self.u32c(plan.len.saturating_sub(LEAF));
            let mut items = Vec::new();
            for k in 0..plan.block {
                let kc = self.u32c(k);
                let at = self.binary(B::Add, start, kc);
                let present = self.binary(B::LessEqual, at, last);
                let mut p = pos.to_vec();
                let (x, safe) = if quads {
                    let q0 = self.u32c(k - k % LEAF);
                    let q0 = self.binary(B::Add, start, q0);
                    let q0 = self.min_u32(q0, last_quad);
                    if k % LEAF == 0 {
                        let mut p0 = pos.to_vec();
                        p0[axis] = q0;
                        self.lane = Some(super::Lane {
                            lane: 0,
                            pos0: p0,
                            loads: HashMap::new(),
                        });
                    }
                    self.lane.as_mut().expect("set at the group's first").lane = k % LEAF;
                    let d = self.u32c(k % LEAF);
                    p[axis] = self.binary(B::Add, q0, d);
                    let x = self.node(arg, &p, &mut outer.clone());
                    if k % LEAF == LEAF - 1 || x.is_err() {
                        self.lane = None;
                    }
                    (x?, p[axis])
                } else {
                    let safe = self.min_u32(at, last);
                    p[axis] = safe;
                    (self.node(arg, &p, &mut outer.clone())?, safe)
                };
                let i = self.bitcast(safe, naga::ScalarKind::Sint);
                items.push(((x, i), present));
            }
            while items.len() > 1 {
                let mut next = Vec::new();
                for pair in items.chunks(2) {
                    match pair {
                        [(l, lp), (r, rp)] => {
                            next.push((self.pair_step(plan.op, plan.elem, *l, *r, *rp), *lp))
                        }
                        [one] => next.push(*one),
                        _ => unreachable!(),
                    }
                }
                items = next;
            }
            return Ok(items[0].0);
        }
        // A loop over the block: `len = clamp(L - start, 0, B)`.
        let len_c = self.u32c(plan.len);
        let inside = self.binary(B::Less, start, len_c);
        let left = self.binary(B::Subtract, len_c, start);
        let block = self.u32c(plan.block);
        let n = self.min_u32(left, block);
        let zero = self.u32c(0);
        let n = self.select(inside, n, zero);
        let v = if plan.op == ReduceOp::Sum {
            self.tree_sum(plan.elem, n, element)?
        } else {
            self.fold(plan.op, plan.elem, n, element)?
        };
        let iv = if plan.op.is_index() {
            // `fold` gives the index in the block.
            self.binary(B::Add, v, start_i)
        } else {
            start_i
        };
        let v = if plan.op.is_index() {
            // The value `argmax` keeps is needed too: fold again for it.
            let value_op = plan.op.value_op();
            let element = |lw: &mut Self, k: H| -> Result<H, LowerError> {
                let at = lw.binary(B::Add, start, k);
                let mut p = pos.to_vec();
                p[axis] = at;
                lw.node(arg, &p, &mut outer.clone())
            };
            self.fold(value_op, plan.elem, n, element)?
        } else {
            v
        };
        Ok((v, iv))
    }

    pub(super) fn min_u32(&mut self, a: H, b: H) -> H {
        self.expr(Expression::Math {
            fun: naga::MathFunction::Min,
            arg: a,
            arg1: Some(b),
            arg2: None,
            arg3: None,
        })
    }

    /// Whether the partner `item + s` of an invocation with bit `s` clear
    /// holds a node (its block starts before the row's end); false for
    /// invocations with the bit set when `bit_clear_only`.
    fn partner_present(&mut self, item: H, s: u32, items: u32, bit_clear_only: bool) -> H {
        let sc = self.u32c(s);
        let partner = self.binary(B::InclusiveOr, item, sc);
        let items = self.u32c(items);
        let present = self.binary(B::Less, partner, items);
        if !bit_clear_only {
            return present;
        }
        let bit = self.binary(B::And, item, sc);
        let zero = self.u32c(0);
        let clear = self.binary(B::Equal, bit, zero);
        self.binary(B::LogicalAnd, clear, present)
    }

    /// The partner's value and index through `subgroupShuffleXor(_, s)`.
    pub(super) fn shuffle_pair(&mut self, plan: &Plan, v: H, iv: H, s: u32) -> (H, H) {
        let ty = self.types[&plan.elem];
        let sc = self.u32c(s);
        let pv = self.subgroup_result(ty, |result| Statement::SubgroupGather {
            mode: GatherMode::ShuffleXor(sc),
            argument: v,
            result,
        });
        if !plan.op.is_index() {
            return (pv, iv);
        }
        let ity = self.types[&Scalar::I32];
        let piv = self.subgroup_result(ity, |result| Statement::SubgroupGather {
            mode: GatherMode::ShuffleXor(sc),
            argument: iv,
            result,
        });
        (pv, piv)
    }

    /// The levels from stride `s0` up through the workgroup arrays, then
    /// item 0 of each row writes the result.
    pub(super) fn finish(
        &mut self,
        plan: &Plan,
        (v, iv): (H, H),
        (item, row, active): (H, H, H),
        s0: u32,
        result: &ResultTo,
        (scratch, scratch_index): (Handle<GlobalVariable>, Option<Handle<GlobalVariable>>),
    ) -> Result<(), LowerError> {
        let index = plan.op.is_index();
        let items = plan.len.div_ceil(plan.block);
        let write_result =
            |lw: &mut Self, v: H, iv: H| lw.put_result(result, row, if index { iv } else { v });
        if s0 >= plan.per_row {
            let zero = self.u32c(0);
            let first = self.binary(B::Equal, item, zero);
            let cond = self.binary(B::LogicalAnd, active, first);
            let accept = self.nested(|lw| write_result(lw, v, iv))?;
            self.if_then(cond, accept);
            return Ok(());
        }
        let inv = self.local;
        let ptr = self.array_ptr(scratch, inv);
        self.var_store(ptr, v);
        if let Some(si) = scratch_index {
            let ptr = self.array_ptr(si, inv);
            self.var_store(ptr, iv);
        }
        let mut s = s0;
        while s < plan.per_row {
            self.cur
                .push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
            let last = 2 * s == plan.per_row;
            let mask = self.u32c(2 * s - 1);
            let low = self.binary(B::And, item, mask);
            let zero = self.u32c(0);
            let lead = self.binary(B::Equal, low, zero);
            let cond = self.binary(B::LogicalAnd, active, lead);
            let stride = s;
            let accept = self.nested(|lw| {
                let sc = lw.u32c(stride);
                let other = lw.binary(B::Add, inv, sc);
                let pa = lw.array_ptr(scratch, inv);
                let pb = lw.array_ptr(scratch, other);
                let a = lw.var_load(pa);
                let b = lw.var_load(pb);
                let (ia, ib, pia) = match scratch_index {
                    Some(si) => {
                        let pia = lw.array_ptr(si, inv);
                        let pib = lw.array_ptr(si, other);
                        let ia = lw.var_load(pia);
                        let ib = lw.var_load(pib);
                        (ia, ib, Some(pia))
                    }
                    None => (a, a, None),
                };
                let present = lw.partner_present(item, stride, items, false);
                let (r, ri) = lw.pair_step(plan.op, plan.elem, (a, ia), (b, ib), present);
                if last {
                    write_result(lw, r, ri)?;
                } else {
                    lw.var_store(pa, r);
                    if let Some(pia) = pia {
                        lw.var_store(pia, ri);
                    }
                }
                Ok(())
            })?;
            self.if_then(cond, accept);
            s *= 2;
        }
        Ok(())
    }

    /// One combine of the tree: left item `a` and right item `b` (value,
    /// index), the right one taken into account only where `present`
    /// (else `a` is carried up). `max`/`min`/`argmax`/`argmin` keep `b`
    /// exactly when [`Lower::takes_right`] says; `sum` adds.
    pub(super) fn pair_step(
        &mut self,
        op: ReduceOp,
        elem: Scalar,
        (a, ia): (H, H),
        (b, ib): (H, H),
        present: H,
    ) -> (H, H) {
        if op == ReduceOp::Sum {
            let both = self.combine(op, elem, a, b);
            return (self.select(present, both, a), ia);
        }
        let take = self.takes_right(op, elem, a, b);
        let take = self.binary(B::LogicalAnd, take, present);
        (self.select(take, b, a), self.select(take, ib, ia))
    }

    pub(super) fn array_ptr(&mut self, array: Handle<GlobalVariable>, index: H) -> H {
        let base = self.expr(Expression::GlobalVariable(array));
        self.access(base, index)
    }

    /// The workgroup arrays of one value per invocation that the levels
    /// share (one per element type, and one of `argmax`'s indices), or
    /// where `alternating`, the slots `coop_warp.rs` alternates between.
    pub(super) fn scratch(
        &mut self,
        (elem, index, alternating): (Scalar, bool, bool),
        count: u32,
    ) -> Option<Handle<GlobalVariable>> {
        let key = (elem, index, alternating);
        if let Some(g) = self.tree_buffers.get(&key) {
            return Some(*g);
        }
        let kind = if alternating { "warp" } else { "reduce" };
        let name = if index {
            format!("{kind}_index")
        } else {
            format!("{kind}_{elem}")
        };
        let pad = self.options.knobs.workgroup_pad / 4;
        let count = if self.tree_buffers.is_empty() {
            count.max(pad)
        } else {
            count
        };
        let g = self.workgroup_array(&name, elem, count)?;
        self.tree_buffers.insert(key, g);
        Some(g)
    }

    /// The bytes of workgroup memory the module's variables take so far.
    pub(super) fn workgroup_used(&self) -> u64 {
        self.m
            .global_variables
            .iter()
            .filter(|(_, g)| g.space == AddressSpace::WorkGroup)
            .map(|(_, g)| u64::from(self.m.types[g.ty].inner.size(self.m.to_ctx())))
            .sum()
    }

    /// A new workgroup array of `count` elements of `elem`, or `None`
    /// where it would not fit beside the kernel's others in
    /// `GpuOptions::workgroup_memory`.
    pub(super) fn workgroup_array(
        &mut self,
        name: &str,
        elem: Scalar,
        count: u32,
    ) -> Option<Handle<GlobalVariable>> {
        if self.workgroup_used() + u64::from(count) * 4 > self.options.workgroup_memory {
            return None;
        }
        let count = NonZeroU32::new(count.max(1)).expect("positive");
        let base = (self.types[&elem], 4);
        Some(super::bindings::workgroup_var(
            &mut self.m,
            name.into(),
            base,
            count,
        ))
    }

    /// At the top of the block, where the kernel has a reduction and
    /// `GpuOptions::subgroup_width` is above 1: whether every subgroup of
    /// the workgroup is that wide with its lanes in invocation order
    /// (uniform over the workgroup, through `workgroupUniformLoad`).
    pub(super) fn subgroup_check(&mut self) -> Option<H> {
        let g = self.options.subgroup_width;
        if !self.plan.subgroups {
            return None;
        }
        if self.options.subgroup_layout_known {
            return Some(self.lit(phobos_core::types::Value::Bool(true)));
        }
        let flag = self.workgroup_array("subgroup_bad", Scalar::U32, 1)?;
        let zero = self.u32c(0);
        let ptr = self.array_ptr(flag, zero);
        self.var_store(ptr, zero);
        self.cur
            .push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
        let ok = self.subgroup_in_order(g);
        let bad = self.expr(Expression::Unary {
            op: naga::UnaryOperator::LogicalNot,
            expr: ok,
        });
        let one = self.u32c(1);
        self.if_then(
            bad,
            Block::from_vec(vec![Statement::Store {
                pointer: ptr,
                value: one,
            }]),
        );
        let u32_ty = self.u32_ty;
        let result = self.f.expressions.append(
            Expression::WorkGroupUniformLoadResult { ty: u32_ty },
            Span::UNDEFINED,
        );
        self.cur.push(Statement::WorkGroupUniformLoad {
            pointer: ptr,
            result,
        });
        Some(self.binary(B::Equal, result, zero))
    }
}
