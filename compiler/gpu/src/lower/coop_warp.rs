//! Reductions computed by the whole workgroup through subgroup shuffles
//! with coalesced reads: the path `coop_reduce.rs` takes where every
//! subgroup of the block is `G = GpuOptions::subgroup_width` lanes wide in
//! invocation order, a row has at least `G` invocations and each of them
//! reduces a block of `B >= 2 LEAF` elements.
//!
//! `coop_reduce.rs`'s own blocks give invocation `t` of a row the elements
//! `[t B, (t + 1) B)`, so the lanes of a subgroup read `B` elements apart.
//! Here the `G B` elements of subgroup `w` are read as `B / LEAF` segments
//! of `G LEAF` consecutive elements: lane `l` of segment `k` reduces the
//! leaf `[(w B / LEAF + k) G LEAF + l LEAF, .. + LEAF)` in its registers
//! (one 16-byte load per loaded tensor where `stmt::quad_load` allows), and
//! the segment's node comes out of a butterfly of `subgroupShuffleXor`
//! whose every lane computes the pair in the tree's order (the lane with
//! bit `s` clear is the left item), so that all lanes hold it; lane `k`
//! keeps segment `k`'s. Where the row's leaves are all present and a lane
//! has at most `TRANSPOSE_MAX` segments, their butterflies run as one
//! (`Lower::transposed`): each level halves the values a lane holds, and
//! lane `k` ends with segment `k`'s node in fewer shuffles and combines.
//! A second butterfly over those nodes gives lane 0
//! the node over the subgroup's `G B` elements, an aligned block of the
//! pairwise tree, which is exactly what the own-block path holds there.
//! The module doc of `coop_reduce.rs` says why any invocation may compute
//! any aligned node; the combines are `Lower::pair_step`'s, so the bits are
//! the interpreter's.
//!
//! The levels above the subgroup take one barrier where a row has at most
//! `G` subgroups: lane 0 of each subgroup writes its node to the workgroup
//! array, and every subgroup of a row reads the row's nodes back, one a
//! lane, for a last butterfly (the same in each subgroup, so the shuffles
//! stay in uniform control flow); item 0 writes the result. The nodes go
//! to slots of one value a subgroup, in two halves that successive
//! reductions alternate between (a function-local flag says which is
//! next): a reduction writes its half only after every invocation has
//! passed the barrier of the reduction before it, hence after every read
//! of the reduction before that, which used the same half. So nothing
//! waits after the reads, and a fold in a loop (`plan::folds`) takes one
//! barrier an iteration. With more
//! subgroups than that they go through the workgroup array, a barrier a
//! level. `coop_reduce.rs`'s own-block path takes the same levels above its
//! subgroups.

use super::coop_reduce::{Plan, ResultTo};
use super::{H, Lower};
use crate::LowerError;
use naga::{BinaryOperator as B, Expression, GlobalVariable, Handle, Statement};
use phobos_core::ir::{ExprId, ReduceOp};
use phobos_core::types::Scalar;
use std::collections::HashMap;

/// The elements a lane reduces in its registers for one segment.
pub(super) use crate::plan::reductions::LEAF;

/// The most segments whose butterflies run as one (`Lower::transposed`):
/// their leaves are computed before it, so a lane holds one value of each.
const TRANSPOSE_MAX: u32 = 8;

impl Lower<'_> {
    /// Whether `plan` takes this path when the block's subgroups are
    /// checked (`subgroup_ok`): a row has whole subgroups, and each lane's
    /// block holds at least two leaves and at most `G` of them.
    pub(super) fn warp_path(&self, plan: &Plan) -> bool {
        plan.levels == crate::plan::Levels::Subgroups
    }

    /// The row's reduction (value, index) put by item 0 ([`Lower::put_result`])
    /// (module doc).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn warp_reduce(
        &mut self,
        plan: &Plan,
        pre: &HashMap<ExprId, H>,
        pos: &[H],
        (item, row, active): (H, H, H),
        result: &ResultTo,
        (scratch, scratch_index): (Handle<GlobalVariable>, Option<Handle<GlobalVariable>>),
    ) -> Result<(), LowerError> {
        let g = self.options.subgroup_width;
        let g_bits = g.trailing_zeros();
        let segments = plan.block / LEAF;
        let leaves = plan.len.div_ceil(LEAF);
        let gm = self.u32c(g - 1);
        let lane = self.binary(B::And, item, gm);
        let gs = self.u32c(g_bits);
        let warp = self.binary(B::ShiftRight, item, gs);
        let keep_v = self.temp(plan.elem);
        let keep_i = self.temp(Scalar::I32);
        let segs = self.u32c(segments);
        let first_seg = self.binary(B::Multiply, warp, segs);
        let unroll = self.row_region(plan);
        // The lanes' leaves cover the row exactly: every leaf, hence every
        // item a segment's butterfly pairs, is present.
        let full = plan.len.is_multiple_of(LEAF) && plan.per_row * plan.block == plan.len;
        if full && segments <= TRANSPOSE_MAX {
            // Every segment's leaf first, then one transposing butterfly
            // for all of them (`transposed`).
            let mut nodes = Vec::new();
            self.seg_loop(segments, true, |lw, k, fixed| {
                let seg = lw.binary(B::Add, first_seg, k);
                let gc = lw.u32c(g);
                let seg_leaf = lw.binary(B::Multiply, seg, gc);
                let leaf = lw.binary(B::Add, seg_leaf, lane);
                nodes.push(lw.leaf(plan, pre, pos, leaf, (k, fixed))?);
                Ok(())
            })?;
            let (v, iv) = self.transposed(plan, nodes, lane);
            self.var_store(keep_v, v);
            if plan.op.is_index() {
                self.var_store(keep_i, iv);
            }
        } else {
            self.seg_loop(segments, unroll, |lw, k, fixed| {
                // `Lower::leaf_of`, with the invariant parts hoisted.
                let seg = lw.binary(B::Add, first_seg, k);
                let gc = lw.u32c(g);
                let seg_leaf = lw.binary(B::Multiply, seg, gc);
                let leaf = lw.binary(B::Add, seg_leaf, lane);
                let (mut v, mut iv) = lw.leaf(plan, pre, pos, leaf, (k, fixed))?;
                // The butterfly: every lane ends with the segment's node.
                let leaves_c = lw.u32c(leaves);
                let mut s = 1;
                while s < g {
                    let (pv, piv) = lw.shuffle_pair(plan, v, iv, s);
                    if full && plan.op == ReduceOp::Sum {
                        // Every pair is present, and IEEE `+` is commutative
                        // bit for bit, so either lane's order gives the left
                        // item plus the right one.
                        v = lw.combine(plan.op, plan.elem, v, pv);
                        s *= 2;
                        continue;
                    }
                    let sc = lw.u32c(s);
                    let bit = lw.binary(B::And, lane, sc);
                    let zero = lw.u32c(0);
                    let clear = lw.binary(B::Equal, bit, zero);
                    let (l, li) = (lw.select(clear, v, pv), lw.select(clear, iv, piv));
                    let (r, ri) = (lw.select(clear, pv, v), lw.select(clear, piv, iv));
                    // The right item's first leaf: this leaf with bit `s` set
                    // and the bits below cleared.
                    let present = if full {
                        lw.lit(phobos_core::types::Value::Bool(true))
                    } else {
                        let low = lw.u32c(!(s - 1));
                        let right = lw.binary(B::InclusiveOr, leaf, sc);
                        let right = lw.binary(B::And, right, low);
                        lw.binary(B::Less, right, leaves_c)
                    };
                    (v, iv) = lw.pair_step(plan.op, plan.elem, (l, li), (r, ri), present);
                    s *= 2;
                }
                let mine = lw.binary(B::Equal, lane, k);
                let old = lw.var_load(keep_v);
                let next = lw.select(mine, v, old);
                lw.var_store(keep_v, next);
                if plan.op.is_index() {
                    let old = lw.var_load(keep_i);
                    let next = lw.select(mine, iv, old);
                    lw.var_store(keep_i, next);
                }
                Ok(())
            })?;
        }
        let mut v = self.var_load(keep_v);
        let mut iv = if plan.op.is_index() {
            self.var_load(keep_i)
        } else {
            self.lit(phobos_core::types::Value::I32(0))
        };
        // Lane `k` holds segment `first_seg + k`; the tree over them, with a
        // segment present where its first leaf is.
        let seg_leaves = self.u32c(g);
        let leaves_c = self.u32c(leaves);
        let mut s = 1;
        while s < segments {
            let (pv, piv) = self.shuffle_pair(plan, v, iv, s);
            let present = self.lead_and_present(lane, s, |lw, partner| {
                let seg = lw.binary(B::Add, first_seg, partner);
                let first = lw.binary(B::Multiply, seg, seg_leaves);
                lw.binary(B::Less, first, leaves_c)
            });
            (v, iv) = self.pair_step(plan.op, plan.elem, (v, iv), (pv, piv), present);
            s *= 2;
        }
        self.across_warps(
            plan,
            (v, iv),
            (item, lane, row, active),
            result,
            (scratch, scratch_index),
        )
    }

    /// The leaf's node (value, index) of `LEAF` elements from `leaf *
    /// LEAF`; a leaf past the row's end gives an item no level reads.
    pub(super) fn leaf(
        &mut self,
        plan: &Plan,
        pre: &HashMap<ExprId, H>,
        pos: &[H],
        leaf: H,
        (seg, fixed): (H, Option<u32>),
    ) -> Result<(H, H), LowerError> {
        let lc = self.u32c(LEAF);
        let start = self.binary(B::Multiply, leaf, lc);
        if !self.quad_leaves(plan) {
            let mut leaf_plan = plan.clone();
            leaf_plan.block = LEAF;
            return self.own_block(&leaf_plan, pre, pos, start);
        }
        // Every leaf is inside the row or past it as a whole (`L` is a
        // multiple of 4): one past it reads the row's last leaf instead.
        let last = self.u32c(plan.len - LEAF);
        let start = self.min_u32(start, last);
        let outer: HashMap<ExprId, H> = pre
            .iter()
            .filter(|(k, _)| self.k.exprs[**k].shape.is_empty())
            .map(|(k, v)| (*k, *v))
            .collect();
        let mut p0 = pos.to_vec();
        p0[plan.axis] = start;
        self.lane = Some(super::Lane {
            lane: 0,
            pos0: p0.clone(),
            loads: HashMap::new(),
        });
        let mut items = Vec::new();
        let kept = self.row_region(plan);
        for j in 0..LEAF {
            let mut p = p0.clone();
            if j > 0 {
                let jc = self.u32c(j);
                p[plan.axis] = self.binary(B::Add, start, jc);
            }
            self.lane.as_mut().expect("set above").lane = j;
            if kept && let Some(c) = self.rows.as_mut() {
                c.at = Some(super::row_cache::At {
                    seg,
                    fixed,
                    j,
                    keep: true,
                });
            }
            let x = self.node(plan.arg, &p, &mut outer.clone());
            if let Some(c) = self.rows.as_mut() {
                c.at = None;
            }
            let x = match x {
                Ok(x) => x,
                Err(e) => {
                    self.lane = None;
                    return Err(e);
                }
            };
            let i = self.bitcast(p[plan.axis], naga::ScalarKind::Sint);
            items.push((x, i));
        }
        self.lane = None;
        let yes = self.expr(Expression::Literal(naga::Literal::Bool(true)));
        while items.len() > 1 {
            let mut next = Vec::new();
            for pair in items.chunks(2) {
                next.push(self.pair_step(plan.op, plan.elem, pair[0], pair[1], yes));
            }
            items = next;
        }
        Ok(items[0])
    }

    /// Whether a leaf's loads may be 16-byte loads: the reduced axis is the
    /// operand's last, `L` is a multiple of 4, and the operand draws no
    /// Tandem words (whose groups the stepped loop owns).
    pub(super) fn quad_leaves(&self, plan: &Plan) -> bool {
        let shape = &self.k.exprs[plan.arg].shape;
        plan.axis + 1 == shape.len()
            && plan.len.is_multiple_of(LEAF)
            && !super::tandem_draw::has_words(self.k, plan.arg)
    }

    /// The butterflies of a lane's `S` segments at once, where every leaf
    /// of the row is present (`nodes`: the lane's leaf node in each
    /// segment, in order). At stride `s < S` a lane holds `n` entries; the
    /// lane with bit `s` clear keeps the even ones and sends the odd ones,
    /// its partner the reverse, and each computes its kept entry's pair in
    /// the tree's order (the lane with the bit clear is the left item). So
    /// each level halves the entries, and after `log2 S` of them lane `l`
    /// holds segment `l mod S`'s node over its `S` lanes; the levels up to
    /// `G` then pair one value: `S - 1 + log2 (G / S)` shuffles in place of
    /// `S log2 G`, and the same combines of the same items.
    fn transposed(&mut self, plan: &Plan, mut list: Vec<(H, H)>, lane: H) -> (H, H) {
        let g = self.options.subgroup_width;
        let commutes = plan.op == ReduceOp::Sum;
        // Without `argmax`/`argmin` the index is carried, never read.
        let index = plan.op.is_index();
        let yes = self.expr(Expression::Literal(naga::Literal::Bool(true)));
        let mut s = 1;
        while s < g {
            let sc = self.u32c(s);
            let bit = self.binary(B::And, lane, sc);
            let zero = self.u32c(0);
            let clear = self.binary(B::Equal, bit, zero);
            let mut next = Vec::new();
            for pair in list.chunks(2) {
                let ((kv, ki), (sv, si)) = match pair {
                    [even, odd] => {
                        let (k, s) = (
                            self.select(clear, even.0, odd.0),
                            self.select(clear, odd.0, even.0),
                        );
                        match index {
                            true => (
                                (k, self.select(clear, even.1, odd.1)),
                                (s, self.select(clear, odd.1, even.1)),
                            ),
                            false => ((k, even.1), (s, even.1)),
                        }
                    }
                    [one] => (*one, *one),
                    _ => unreachable!("chunks of two"),
                };
                let (pv, piv) = self.shuffle_pair(plan, sv, si, s);
                if commutes {
                    // IEEE `+` is commutative bit for bit.
                    next.push((self.combine(plan.op, plan.elem, kv, pv), ki));
                    continue;
                }
                let (li, ri) = match index {
                    true => (self.select(clear, ki, piv), self.select(clear, piv, ki)),
                    false => (ki, ki),
                };
                let l = (self.select(clear, kv, pv), li);
                let r = (self.select(clear, pv, kv), ri);
                next.push(self.pair_step(plan.op, plan.elem, l, r, yes));
            }
            list = next;
            s *= 2;
        }
        list[0]
    }

    /// True in lanes with bit `s` clear whose partner `lane | s` holds an
    /// item (`present(partner)`).
    fn lead_and_present(&mut self, lane: H, s: u32, present: impl FnOnce(&mut Self, H) -> H) -> H {
        let sc = self.u32c(s);
        let partner = self.binary(B::InclusiveOr, lane, sc);
        let there = present(self, partner);
        let bit = self.binary(B::And, lane, sc);
        let zero = self.u32c(0);
        let clear = self.binary(B::Equal, bit, zero);
        self.binary(B::LogicalAnd, clear, there)
    }

    /// The levels above the subgroup (module doc): lane 0 of each subgroup
    /// holds the node over the subgroup's `G B` elements.
    pub(super) fn across_warps(
        &mut self,
        plan: &Plan,
        (v, iv): (H, H),
        (item, lane, row, active): (H, H, H, H),
        result: &ResultTo,
        (scratch, scratch_index): (Handle<GlobalVariable>, Option<Handle<GlobalVariable>>),
    ) -> Result<(), LowerError> {
        let g = self.options.subgroup_width;
        let warps = plan.per_row / g;
        if warps > g {
            // More subgroups in a row than lanes in one: the levels go
            // through the workgroup array as on the own-block path.
            return self.finish(
                plan,
                (v, iv),
                (item, row, active),
                g,
                result,
                (scratch, scratch_index),
            );
        }
        let index = plan.op.is_index();
        let zero = self.u32c(0);
        let first = self.binary(B::Equal, item, zero);
        let write = self.binary(B::LogicalAnd, active, first);
        if warps == 1 {
            let accept =
                self.nested(|lw| lw.put_result(result, row, if index { iv } else { v }))?;
            self.if_then(write, accept);
            return Ok(());
        }
        let lane0 = self.binary(B::Equal, lane, zero);
        let inv = self.local;
        // Subgroup `k` of the workgroup writes slot `k` of this half; lane
        // `j` of each subgroup of a row reads the row's subgroup `j mod
        // warps`. Where the slots do not fit, the tree's array (one value
        // per invocation, lane 0's) is read the same way.
        let gbits = self.u32c(g.trailing_zeros());
        let (at_own, at_read, arrays) = match self.warp_slots(plan) {
            Some((half, values, indices)) => {
                let own = self.binary(B::ShiftRight, inv, gbits);
                let own = self.binary(B::Add, half, own);
                (own, half, (values, indices))
            }
            None => (inv, zero, (scratch, scratch_index)),
        };
        let (values, indices) = arrays;
        let accept = self.nested(|lw| {
            let ptr = lw.array_ptr(values, at_own);
            lw.var_store(ptr, v);
            if let Some(si) = indices {
                let ptr = lw.array_ptr(si, at_own);
                lw.var_store(ptr, iv);
            }
            Ok(())
        })?;
        self.if_then(lane0, accept);
        self.cur
            .push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
        let rowmask = self.u32c(!(plan.per_row - 1));
        let base = self.binary(B::And, inv, rowmask);
        let wm = self.u32c(warps - 1);
        let j = self.binary(B::And, lane, wm);
        let gc = self.u32c(g);
        let at = if values == scratch {
            let off = self.binary(B::Multiply, j, gc);
            self.binary(B::Add, base, off)
        } else {
            let first = self.binary(B::ShiftRight, base, gbits);
            let first = self.binary(B::Add, at_read, first);
            self.binary(B::Add, first, j)
        };
        let ptr = self.array_ptr(values, at);
        let mut v = self.var_load(ptr);
        let mut iv = match indices {
            Some(si) => {
                let ptr = self.array_ptr(si, at);
                self.var_load(ptr)
            }
            None => iv,
        };
        let blocks = self.u32c(plan.len.div_ceil(plan.block));
        let mut s = 1;
        while s < warps {
            let (pv, piv) = self.shuffle_pair(plan, v, iv, s);
            let present = self.lead_and_present(lane, s, |lw, partner| {
                let first = lw.binary(B::Multiply, partner, gc);
                lw.binary(B::Less, first, blocks)
            });
            (v, iv) = self.pair_step(plan.op, plan.elem, (v, iv), (pv, piv), present);
            s *= 2;
        }
        let accept = self.nested(|lw| lw.put_result(result, row, if index { iv } else { v }))?;
        self.if_then(write, accept);
        Ok(())
    }

    /// The slots of the levels above the subgroups (module doc): two halves
    /// of one value a subgroup of the workgroup (and one index for
    /// `argmax`/`argmin`), and the first slot of the half this reduction
    /// uses, the other half's for the next one. `None` where they would
    /// not fit in workgroup memory.
    fn warp_slots(
        &mut self,
        plan: &Plan,
    ) -> Option<(H, Handle<GlobalVariable>, Option<Handle<GlobalVariable>>)> {
        let per_half = self.block_invocations / self.options.subgroup_width;
        let values = self.scratch((plan.elem, false, true), 2 * per_half)?;
        let indices = match plan.op.is_index() {
            true => Some(self.scratch((Scalar::I32, true, true), 2 * per_half)?),
            false => None,
        };
        let flag = match self.warp_half {
            Some(h) => h,
            None => {
                let zero = self.u32c(0);
                let v = self.f.local_variables.append(
                    naga::LocalVariable {
                        name: Some("warp_half".into()),
                        ty: self.u32_ty,
                        init: Some(zero),
                    },
                    naga::Span::UNDEFINED,
                );
                let h = self.expr(Expression::LocalVariable(v));
                self.warp_half = Some(h);
                h
            }
        };
        let now = self.var_load(flag);
        let one = self.u32c(1);
        let next = self.binary(B::ExclusiveOr, now, one);
        self.var_store(flag, next);
        let n = self.u32c(per_half);
        let first = self.binary(B::Multiply, now, n);
        Some((first, values, indices))
    }
}
