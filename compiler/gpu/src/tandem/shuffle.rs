//! Fill stores in the order of the output: a subgroup exchanges its
//! stepped blocks before storing them.
//!
//! One invocation steps one chunk, so at one step the 32 lanes of a
//! subgroup hold one block of each of their chunks: four groups of eight
//! chunks, whose blocks at that step lie `8K` blocks apart in the
//! interleaved layout (SPEC.md 3.4). Stored as they come, a warp's 16-byte
//! stores fall on four 128-byte lines 4 KiB apart (K = 32). Here each lane
//! takes four steps, then the subgroup transposes the 4 x 4 matrix of
//! (group, step) with two rounds of shuffles (`tandem_ops::transpose_groups`,
//! which the kernels' stepped draws use too, `lower/tandem_draw/shuffled.rs`),
//! so that each of the four stores that follow covers 512 contiguous bytes,
//! as a copy's do. The map (the raw stream, uniform floats) is applied
//! after the exchange, to the block each lane stores.
//!
//! The bits are those of the direct loop: the same blocks, mapped the same
//! way, stored at the same places. A subgroup takes this path only when a
//! vote says that it is 32 wide, that its lane `i` is invocation
//! `32 w + i` of one `w`, that all 32 chunks are in the dispatch and that
//! `K` is at least 8 ([`MIN_K`]; a batch is four steps); otherwise it takes
//! the direct loop.

use super::builder::{Fb, H};
use super::{FillMap, stream};
use crate::GpuOptions;
use crate::subgroup::{self, SubgroupOps};
use crate::tandem_ops::{self, LaneOps, SHUFFLE_BATCH, SHUFFLE_LANES};
use naga::{
    BuiltIn, CollectiveOperation, Expression, FunctionArgument, GatherMode, Span, Statement,
    SubgroupOperation,
};

/// The shortest chunk (`K`) whose fills exchange blocks: on the H100
/// (bench/RESULTS.md, sixteenth session) the exchange at `K = 4` (one batch
/// a chunk) took the f32 fill from 97.7% to 94.8% of the ceiling and the f64
/// fill from 82.5% to 72.3%.
const MIN_K: u32 = 8;

/// Whether `map`'s fill kernel exchanges blocks: where the device's
/// subgroups are always 32 wide (`GpuOptions::subgroup_shuffle`), for the
/// maps that store each block's output at the block's own place and whose
/// arithmetic is light, so that the stores bound them. On the H100
/// (bench/RESULTS.md, sixteenth session, two calls) it took u32, f32 and
/// f64 from 92.8-94.5% of the ceiling to 97.3-97.7% in both, and slowed the
/// maps bound by their arithmetic (exp_f32 from 72.0% to 63.8%,
/// normal_f32 from 54.3% to 51.2%), which keep the direct loop. f16 went
/// from 89.5% to 95.1% in one call and from 88.5% to 65.6% in the other,
/// so it keeps the direct loop until that is understood. Bools and
/// `below_i64_u32` stage their stores; the maps with retries or misses
/// keep the direct loop too.
pub(super) fn applies(map: FillMap, options: &GpuOptions) -> bool {
    options.subgroup_shuffle
        && match map {
            FillMap::Raw | FillMap::F32 | FillMap::F64 => true,
            FillMap::F16
            | FillMap::NormalF32
            | FillMap::ExponentialF32
            | FillMap::ExponentialF64
            | FillMap::Bool
            | FillMap::Below32
            | FillMap::Below32To64
            | FillMap::Below64
            | FillMap::Choice
            | FillMap::NormalF64 => false,
        }
}

impl SubgroupOps for Fb {
    fn builtin(&mut self, builtin: BuiltIn, name: &str) -> H {
        let binding = Some(naga::Binding::BuiltIn(builtin));
        let index = match self.f.arguments.iter().position(|a| a.binding == binding) {
            Some(i) => i,
            None => {
                self.f.arguments.push(FunctionArgument {
                    name: Some(name.into()),
                    ty: self.tys.u32,
                    binding,
                });
                self.f.arguments.len() - 1
            }
        };
        self.expr(Expression::FunctionArgument(index as u32))
    }
    fn broadcast_first(&mut self, v: H) -> H {
        let u32_ty = self.tys.u32;
        subgroup_result(self, u32_ty, |result| Statement::SubgroupGather {
            mode: GatherMode::BroadcastFirst,
            argument: v,
            result,
        })
    }
    fn all(&mut self, b: H) -> H {
        let boolean = self.tys.boolean;
        subgroup_result(self, boolean, |result| {
            Statement::SubgroupCollectiveOperation {
                op: SubgroupOperation::All,
                collective_op: CollectiveOperation::Reduce,
                argument: b,
                result,
            }
        })
    }
}

/// The result of a subgroup operation of type `ty`, made by `op`.
fn subgroup_result(b: &mut Fb, ty: naga::Handle<naga::Type>, op: impl FnOnce(H) -> Statement) -> H {
    let result =
        b.f.expressions
            .append(Expression::SubgroupOperationResult { ty }, Span::UNDEFINED);
    b.cur.push(op(result));
    result
}

/// True in every lane of a subgroup that may take the exchange (module
/// doc), for the invocation of linear index `g`; uniform over the
/// subgroup. Every lane of the workgroup must reach it (none has returned).
pub(super) fn vote(b: &mut Fb, g: H, live: H, k: H) -> H {
    let ok = subgroup::lane_in_order(b, g, SHUFFLE_LANES);
    let min_k = b.c(MIN_K);
    let long = b.ge(k, min_k);
    let ok = b.land(ok, live);
    let ok = b.land(ok, long);
    b.all(ok)
}

/// The fill kernel's exchange of `vec4<u32>` blocks.
struct Blocks<'a>(&'a mut Fb);

impl LaneOps for Blocks<'_> {
    type V = H;
    type B = H;
    fn pick(&mut self, c: H, yes: H, no: H) -> H {
        self.0.select(c, yes, no)
    }
    fn shuffle_xor(&mut self, v: H, mask: u32) -> H {
        let mask = self.0.c(mask);
        let vec4 = self.0.tys.vec4;
        subgroup_result(self.0, vec4, |result| Statement::SubgroupGather {
            mode: GatherMode::ShuffleXor(mask),
            argument: v,
            result,
        })
    }
}

/// Where an invocation's blocks go.
pub(super) struct Place {
    /// The invocation's linear index in the dispatch.
    pub g: H,
    /// `8 K`: blocks of a group of eight chunks.
    pub k8: H,
    /// Blocks of the dispatch's first group not written.
    pub skip: H,
    /// Blocks written, from binding index 0.
    pub n_blocks: H,
}

/// Steps the chunk in `vars` (seeded and warmed up) through its `k` blocks
/// four at a time, exchanges each batch (module doc) and calls
/// `store(b, block, idx)` for each block that lies in the binding, with
/// its output block index.
pub(super) fn fill_loop(
    b: &mut Fb,
    vars: [H; 4],
    k: H,
    at: Place,
    mut store: impl FnMut(&mut Fb, [H; 4], H),
) {
    let lane = b.and_c(at.g, SHUFFLE_LANES - 1);
    // The subgroup's first group of eight chunks.
    let sub = b.shr_c(at.g, SHUFFLE_LANES.trailing_zeros());
    let first_group = b.shl_c(sub, (SHUFFLE_BATCH as u32).trailing_zeros());
    let up = [3, 4].map(|bit| {
        let x = b.shr_c(at.g, bit);
        let x = b.and_c(x, 1);
        let one = b.c(1);
        b.eq(x, one)
    });
    let batches = b.shr_c(k, (SHUFFLE_BATCH as u32).trailing_zeros());
    let zero = b.c(0);
    let jb = b.var_init("jb", zero);
    b.loop_(|b| {
        let jv = b.load(jb);
        let done = b.ge(jv, batches);
        b.if_(done, |b| b.brk());
        let next = b.add_c(jv, 1);
        b.store(jb, next);
        // Step numbers 9 + 4 jb + t: blocks 4 jb + t of the chunk.
        let j0 = b.shl_c(jv, (SHUFFLE_BATCH as u32).trailing_zeros());
        let t0 = b.add_c(j0, stream::WARM_UP_STEPS + 1);
        let vec4 = b.tys.vec4;
        let mut slots: [H; SHUFFLE_BATCH] = std::array::from_fn(|t| {
            let n = b.add_c(t0, t as u32);
            let o = b.step(vars, n, true).expect("an output step");
            b.expr(Expression::Compose {
                ty: vec4,
                components: o.to_vec(),
            })
        });
        tandem_ops::transpose_groups(&mut Blocks(b), &mut slots, up);
        // Slot s is block 8 (4 jb + lane / 8) + lane % 8 of the subgroup's
        // group s: relative block (first_group + s) 8K + 32 jb + lane.
        let step_off = b.shl_c(jv, SHUFFLE_LANES.trailing_zeros());
        let step_off = b.add(step_off, lane);
        for (s, slot) in slots.into_iter().enumerate() {
            let group = b.add_c(first_group, s as u32);
            let base = b.mul(group, at.k8);
            let rel = b.add(base, step_off);
            let idx = b.sub(rel, at.skip);
            // skip <= rel and rel - skip < n_blocks.
            let after = b.ge(rel, at.skip);
            let before = b.lt(idx, at.n_blocks);
            let inside = b.land(after, before);
            b.if_(inside, |b| {
                let o = std::array::from_fn(|q| {
                    b.expr(Expression::AccessIndex {
                        base: slot,
                        index: q as u32,
                    })
                });
                store(b, o, idx);
            });
        }
    });
}
