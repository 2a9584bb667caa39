//! Stores staged through workgroup memory so that they coalesce, for maps
//! whose stream block gives more than one `vec4<u32>` of output: `bool`
//! (eight vectors a block, `ints::store_bools`) and `below_i64_u32` (two,
//! [`store_pairs`]).
//!
//! Stored directly, lane `l` of a group writes its block's vectors at a
//! stride of the block's output from its neighbours': every store of a
//! warp part-fills its lines (`below_i64_u32` ran at 50 % of the H200's
//! write ceiling, `bool` at 14 %). Instead each lane puts its block (or its
//! output) in the stage, a barrier, then the group's lanes store
//! consecutive vectors of the group's contiguous output. Steps alternate
//! halves of the stage, so a lane writing step `j + 1`'s block cannot
//! overwrite one that a slower lane still reads for step `j` (it passed
//! step `j + 1`'s barrier, so every lane finished step `j`), and one
//! barrier per step is enough. Every invocation of the workgroup must run
//! a step (the barrier); stores of blocks outside `[skip, skip + n_blocks)`
//! or of groups past the dispatch are masked.

use super::builder::{Fb, H, Tys};
use super::{FillMap, Globals, store_words, workgroup_array};
use naga::{GlobalVariable, Handle, Module};

/// A workgroup stage of `size` invocations: two halves (even and odd
/// steps), each with `group_slots` `vec4<u32>` per group of eight.
pub(super) fn declare(
    m: &mut Module,
    tys: Tys,
    name: &str,
    size: u32,
    group_slots: u32,
) -> Handle<GlobalVariable> {
    let len = 2 * (size / 8) * group_slots;
    workgroup_array(m, name, tys.vec4, len, 16)
}

/// Where one step of an invocation's chunk goes.
pub(super) struct Step {
    /// The invocation's index in its workgroup.
    pub local: H,
    /// The step's parity (which half of the stage it uses).
    pub parity: H,
    /// The relative stream block of the group's first block of the step.
    pub step_base: H,
    pub skip: H,
    pub n_blocks: H,
    /// Whether the invocation has a chunk of the dispatch.
    pub live: H,
    /// Invocations per workgroup.
    pub size: u32,
}

impl Step {
    /// `(first slot of the group in this step's half, lane in the group)`.
    pub(super) fn group_slot(&self, b: &mut Fb, group_slots: u32) -> (H, H) {
        let groups = self.size / 8;
        let group = b.shr_c(self.local, 3);
        let lane = b.and_c(self.local, 7);
        let half = b.c(groups * group_slots);
        let half_base = b.mul(self.parity, half);
        let slots = b.c(group_slots);
        let in_half = b.mul(group, slots);
        (b.add(half_base, in_half), lane)
    }

    /// Output block of the group's block `block` (an offset in the step):
    /// `(inside the dispatch and live, binding block index)`.
    pub(super) fn output_block(&self, b: &mut Fb, block: H) -> (H, H) {
        let rel = b.add(self.step_base, block);
        let idx = b.sub(rel, self.skip);
        let after = b.ge(rel, self.skip);
        let before = b.lt(idx, self.n_blocks);
        let inside = b.land(after, before);
        (b.land(self.live, inside), idx)
    }
}

/// Slot `index` of a stage (a pointer).
pub(super) fn slot(b: &mut Fb, stage: Handle<GlobalVariable>, index: H) -> H {
    let s = b.expr(naga::Expression::GlobalVariable(stage));
    b.expr(naga::Expression::Access { base: s, index })
}

/// Vec4 slots per group in [`store_pairs`]' stage: the group's sixteen
/// vectors and one of padding against bank conflicts.
pub(super) const PAIR_SLOTS: u32 = 17;

/// One step of a map with two output vectors a block: `words` builds the
/// block's eight output words (run only for a block of the dispatch,
/// `inside`), which go to the stage; a barrier; then in store `e` lane `l`
/// writes vector `8e + l` of the group's 256 contiguous bytes, so each
/// store of a group covers two whole 128-byte lines.
pub(super) fn store_pairs(
    b: &mut Fb,
    g: &Globals,
    map: FillMap,
    stage: Handle<GlobalVariable>,
    at: Step,
    inside: H,
    words: impl FnOnce(&mut Fb) -> Vec<H>,
) {
    let (group_slot, lane) = at.group_slot(b, PAIR_SLOTS);
    let own = b.shl_c(lane, 1);
    let own = b.add(group_slot, own);
    b.if_(inside, |b| {
        let w = words(b);
        assert_eq!(w.len(), 8, "two vectors a block");
        for (k, v) in w.chunks(4).enumerate() {
            let vec = b.expr(naga::Expression::Compose {
                ty: b.tys.vec4,
                components: v.to_vec(),
            });
            let index = b.add_c(own, k as u32);
            let p = slot(b, stage, index);
            b.store(p, vec);
        }
    });
    b.cur
        .push(naga::Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
    // Store e: vector 8e + l of the group's span, that is vector l % 2 of
    // the group's block 4e + l / 2.
    let pair = b.shr_c(lane, 1);
    let which = b.and_c(lane, 1);
    for e in 0..2u32 {
        let vector = b.add_c(lane, 8 * e);
        let index = b.add(group_slot, vector);
        let p = slot(b, stage, index);
        let v = b.load(p);
        let block = b.add_c(pair, 4 * e);
        let (ok, idx) = at.output_block(b, block);
        b.if_(ok, |b| {
            let first = b.shl_c(idx, 1);
            let first = b.add(first, which);
            let parts: Vec<H> = (0..4)
                .map(|index| b.expr(naga::Expression::AccessIndex { base: v, index }))
                .collect();
            store_words(b, g, map, first, &parts);
        });
    }
}
