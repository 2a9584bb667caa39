//! Stepped words exchanged inside a subgroup of 32, so that the
//! statement's loads and stores run in the tile's own order.
//!
//! The stepped loop (`stepped.rs`) computes each block's elements right
//! after the step that gives it, so one invocation walks its chunk's blocks
//! 128 bytes apart, and a warp's 16-byte loads and stores at one step fall
//! on four lines 4 KiB apart (its 32 chunks are four groups of eight).
//! Here each invocation still steps one chunk in registers, four steps at a
//! time, and the subgroup then transposes the 4 x 4 matrix of (group of
//! eight lanes, step) with two rounds of `subgroupShuffleXor` (lane bits 3
//! and 4, two exchanges of a 16-byte block each): afterwards lane `l` holds,
//! for each group `s` of the four, the block at place `8 j + l` of that
//! group, so the four stores of a batch are each 512 contiguous bytes, as a
//! copy's are. No workgroup memory and no barrier: measured on the H200,
//! handing the words over through workgroup memory instead was slower than
//! the stepped loop itself (bench/RESULTS.md).
//!
//! Only statements that load nothing take it: on the H200 (bench/RESULTS.md,
//! 2026-12-01) the u32 fill `Y[r :+ R, :] = tandem_u32(seed, ...)` went
//! from 3433 to 3846 GiB/s (95% of the zero fill), the f32 fill from 3432
//! to 3602, while Tandem dropout, which loads X, fell from 3218 to 2857 and
//! noise from 2338 to 2243 (with or without its loads made ahead).
//!
//! Applies on devices whose subgroups are always 32 wide
//! (`GpuOptions::subgroup_shuffle`), to statements whose value loads
//! nothing, where the stepped loop's lanes read
//! words known at compile time, the tile's first counter is a multiple of a
//! group's `4 * 8K` words, its length a whole number of groups, and one
//! invocation steps each chunk with a whole number of subgroups a block.
//! Each subgroup checks at run time that its lanes are the block's
//! invocations `32 w .. 32 w + 31` in order (one vote); one that is not
//! takes the direct path, draw by draw. The bits are the same either way.

use super::stepped::{Pattern, Stepped};
use super::{K_GROUP_BLOCKS, Lower, WARM_UP};
use crate::LowerError;
use crate::lower::H;
use crate::subgroup::{self, SubgroupOps};
use crate::tandem_ops;
use naga::{
    BinaryOperator as B, Block, BuiltIn, CollectiveOperation, Expression, FunctionArgument,
    GatherMode, Span, Statement, SubgroupOperation,
};
use phobos_core::ir::{ExprId, ExprKind, Kernel};
use phobos_core::types::Scalar;
use std::collections::HashMap;

impl SubgroupOps for Lower<'_> {
    fn builtin(&mut self, builtin: BuiltIn, name: &str) -> H {
        self.builtin_argument(builtin, name)
    }
    fn broadcast_first(&mut self, v: H) -> H {
        let u32_ty = self.u32_ty;
        self.subgroup_result(u32_ty, |result| Statement::SubgroupGather {
            mode: GatherMode::BroadcastFirst,
            argument: v,
            result,
        })
    }
    fn all(&mut self, b: H) -> H {
        let bool_ty = self.types[&Scalar::Bool];
        self.subgroup_result(bool_ty, |result| Statement::SubgroupCollectiveOperation {
            op: SubgroupOperation::All,
            collective_op: CollectiveOperation::Reduce,
            argument: b,
            result,
        })
    }
}

/// Lanes a subgroup must have: four groups of eight chunks.
pub(super) const LANES: u32 = tandem_ops::SHUFFLE_LANES;
/// Steps a batch takes before the exchange: one per group of the subgroup.
const BATCH: u32 = tandem_ops::SHUFFLE_BATCH as u32;

/// The lowering's subgroup exchange of `vec4<u32>` blocks.
struct Vec4Lanes<'a, 'b> {
    lw: &'a mut Lower<'b>,
    ty: naga::Handle<naga::Type>,
}

impl tandem_ops::LaneOps for Vec4Lanes<'_, '_> {
    type V = H;
    type B = H;
    fn pick(&mut self, c: H, yes: H, no: H) -> H {
        self.lw.select(c, yes, no)
    }
    fn shuffle_xor(&mut self, v: H, mask: u32) -> H {
        let mask = self.lw.u32c(mask);
        self.lw
            .subgroup_result(self.ty, |result| Statement::SubgroupGather {
                mode: GatherMode::ShuffleXor(mask),
                argument: v,
                result,
            })
    }
}

impl Lower<'_> {
    /// Whether a stepped statement of value `value` over `n` positions
    /// whose first counter has `low_bits` known zero bits can take the
    /// shuffled loop here.
    pub(super) fn shuffle_applies(&self, value: ExprId, n: u32, low_bits: u32) -> bool {
        let chunk_blocks = K_GROUP_BLOCKS / 8;
        let tasks = n / 4 / chunk_blocks;
        self.options.subgroup_shuffle
            && !loads_anything(self.k, value)
            && low_bits >= (4 * K_GROUP_BLOCKS).trailing_zeros()
            && n.is_multiple_of(4 * K_GROUP_BLOCKS)
            && tasks == self.block_invocations
            && tasks.is_multiple_of(LANES)
    }

    /// An entry-point argument for `builtin`, added on first use.
    pub(in crate::lower) fn builtin_argument(&mut self, builtin: BuiltIn, name: &str) -> H {
        let index = match self
            .f
            .arguments
            .iter()
            .position(|a| a.binding == Some(naga::Binding::BuiltIn(builtin)))
        {
            Some(i) => i,
            None => {
                self.f.arguments.push(FunctionArgument {
                    name: Some(name.into()),
                    ty: self.u32_ty,
                    binding: Some(naga::Binding::BuiltIn(builtin)),
                });
                self.f.arguments.len() - 1
            }
        };
        self.expr(Expression::FunctionArgument(index as u32))
    }

    /// The result of a subgroup operation of type `ty`, made by `op`.
    pub(in crate::lower) fn subgroup_result(
        &mut self,
        ty: naga::Handle<naga::Type>,
        op: impl FnOnce(H) -> Statement,
    ) -> H {
        let result = self
            .f
            .expressions
            .append(Expression::SubgroupOperationResult { ty }, Span::UNDEFINED);
        self.cur.push(op(result));
        result
    }

    /// True in every lane of a subgroup that is `lanes` wide (a power of
    /// two) and whose lane `i` is the invocation `lanes w + i` of one `w`
    /// (`crate::subgroup`, which the fills' vote and the runtime's probe
    /// also build).
    pub(in crate::lower) fn subgroup_in_order(&mut self, lanes: u32) -> H {
        let index = self.expr(Expression::FunctionArgument(0));
        subgroup::in_order(self, index, lanes)
    }

    /// The shuffled loop (module doc) over a tile of extents `lens` whose
    /// first counter is `lo`.
    pub(super) fn shuffled_loop(
        &mut self,
        lens: &[H],
        (key, lo): ([H; 4], H),
        ids: &[ExprId],
        fixed: &HashMap<ExprId, Pattern>,
        body: &mut impl FnMut(&mut Self, H, &[H]) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        let (two, three, seven) = (self.u32c(2), self.u32c(3), self.u32c(7));
        let gs = self.u32c(K_GROUP_BLOCKS.trailing_zeros());
        let b0 = self.binary(B::ShiftRight, lo, two);
        let g0 = self.binary(B::ShiftRight, b0, gs);
        let task = self.local;
        // This invocation's chunk: lane `task % 8` of group `g0 + task / 8`
        // (chunk indices wrap with the 2^30 blocks 32-bit counters reach).
        let go = self.binary(B::ShiftRight, task, three);
        let gu = self.binary(B::Add, g0, go);
        let mask = self.u32c((1u32 << (30 - K_GROUP_BLOCKS.trailing_zeros())) - 1);
        let group = self.binary(B::And, gu, mask);
        let chunk = self.binary(B::ShiftLeft, group, three);
        let lane = self.binary(B::And, task, seven);
        let chunk = self.binary(B::InclusiveOr, chunk, lane);
        let (vars, tc) = self.seed_chunk(key, chunk);
        let warm = self.u32c(WARM_UP);
        self.steps_until(vars, tc, warm)?;

        // The lane's place in the subgroup and its subgroup's first group.
        let low = self.u32c(LANES - 1);
        let lane32 = self.binary(B::And, task, low);
        let lanes_shift = self.u32c(LANES.trailing_zeros());
        let sub = self.binary(B::ShiftRight, task, lanes_shift);
        let groups_shift = self.u32c(BATCH.trailing_zeros());
        let first_group = self.binary(B::ShiftLeft, sub, groups_shift);
        let one = self.u32c(1);
        let bit = |lw: &mut Self, b: u32| {
            let s = lw.u32c(b);
            let x = lw.binary(B::ShiftRight, task, s);
            let x = lw.binary(B::And, x, one);
            lw.binary(B::Equal, x, one)
        };
        let bits = [bit(self, 3), bit(self, 4)];

        let batch = self.temp(Scalar::U32);
        let zero = self.u32c(0);
        self.var_store(batch, zero);
        let batches = self.u32c(K_GROUP_BLOCKS / 8 / BATCH);
        let vec4 = crate::lower::bindings::vec4_type(&mut self.m, Scalar::U32);
        let loop_body = self.nested(|lw| {
            let jb = lw.var_load(batch);
            let done = lw.binary(B::GreaterEqual, jb, batches);
            lw.if_then(done, Block::from_vec(vec![Statement::Break]));
            let mut slots: [H; BATCH as usize] = std::array::from_fn(|_| {
                let out = lw.step(vars, tc);
                lw.expr(Expression::Compose {
                    ty: vec4,
                    components: out.to_vec(),
                })
            });
            tandem_ops::transpose_groups(&mut Vec4Lanes { lw, ty: vec4 }, &mut slots, bits);
            // Slot `s` is now block `8 (4 jb + lane / 8) + lane % 8` of the
            // subgroup's group `s`: place `(group << 8) + 32 jb + lane`.
            let five = lw.u32c(5);
            let step_off = lw.binary(B::ShiftLeft, jb, five);
            let step_off = lw.binary(B::Add, step_off, lane32);
            let rels: Vec<H> = (0..BATCH)
                .map(|s| {
                    let sc = lw.u32c(s);
                    let g = lw.binary(B::Add, first_group, sc);
                    let gs = lw.u32c(K_GROUP_BLOCKS.trailing_zeros());
                    let g = lw.binary(B::ShiftLeft, g, gs);
                    lw.binary(B::Add, g, step_off)
                })
                .collect();
            for (s, rel) in rels.iter().enumerate() {
                let two = lw.u32c(2);
                let flat = lw.binary(B::ShiftLeft, *rel, two);
                let pos = lw.flat_position(flat, lens);
                let words = slots[s];
                let out: [H; 4] = std::array::from_fn(|q| {
                    lw.expr(Expression::AccessIndex {
                        base: words,
                        index: q as u32,
                    })
                });
                let first = lw.binary(B::Add, lo, flat);
                for id in ids {
                    let pattern = fixed.get(id).copied();
                    lw.tandem.stepped.insert(
                        *id,
                        Stepped {
                            out,
                            first,
                            pattern,
                            lane: None,
                        },
                    );
                }
                let r = body(lw, flat, &pos);
                lw.tandem.stepped.clear();
                r?;
            }
            Ok(())
        })?;
        let continuing = self.nested(|lw| {
            let jb = lw.var_load(batch);
            let one = lw.u32c(1);
            let next = lw.binary(B::Add, jb, one);
            lw.var_store(batch, next);
            Ok(())
        })?;
        self.push_loop(loop_body, continuing);
        Ok(())
    }
}

/// Whether `value` loads from a tensor or a tile anywhere under it.
fn loads_anything(k: &Kernel, value: ExprId) -> bool {
    k.reachable(value)
        .into_iter()
        .any(|id| matches!(k.exprs[id].kind, ExprKind::Load { .. }))
}
