//! Coalesced stores for maps whose stream block gives two `vec4<u32>` of
//! output (`below_i64_u32`: four 8-byte values per 16-byte block).
//!
//! Stored directly, lane `l` of a group writes its block's 32 bytes as two
//! 16-byte stores, 32 bytes apart from its neighbours': every store of a
//! warp half-fills 32 sectors (50 % of the write ceiling on the H200).
//! Instead each lane puts its two vectors in workgroup memory, a barrier,
//! then in store `e` lane `l` writes vector `8e + l` of the group's 256
//! contiguous bytes, so each store of a group covers two whole 128-byte
//! lines. Steps alternate halves of the stage, so one barrier per step is
//! enough (as for bools, `ints::store_bools`).

use super::builder::{Fb, H, Tys};
use super::{FillMap, Globals, store_words, workgroup_array};
use naga::{GlobalVariable, Handle, Module};

/// Vec4 slots per group of eight invocations: the group's sixteen vectors
/// and one of padding against bank conflicts.
const GROUP_SLOTS: u32 = 17;

/// The stage of a workgroup of `size` invocations: two halves (even and odd
/// steps), each with [`GROUP_SLOTS`] `vec4<u32>` per group.
pub(super) fn declare(m: &mut Module, tys: Tys, size: u32) -> Handle<GlobalVariable> {
    let len = 2 * (size / 8) * GROUP_SLOTS;
    workgroup_array(m, "wide_stage", tys.vec4, len, 16)
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
    pub size: u32,
}

fn slot(b: &mut Fb, stage: Handle<GlobalVariable>, index: H) -> H {
    let s = b.expr(naga::Expression::GlobalVariable(stage));
    b.expr(naga::Expression::Access { base: s, index })
}

/// One step: `words` builds the block's eight output words (run only for a
/// block of the dispatch, `inside`), which go to the stage; then a barrier
/// and the group's coalesced stores of `map`'s output. Every invocation of
/// the workgroup must run this.
pub(super) fn store(
    b: &mut Fb,
    g: &Globals,
    map: FillMap,
    stage: Handle<GlobalVariable>,
    at: Step,
    inside: H,
    words: impl FnOnce(&mut Fb) -> Vec<H>,
) {
    let groups = at.size / 8;
    let group = b.shr_c(at.local, 3);
    let lane = b.and_c(at.local, 7);
    let half = b.c(groups * GROUP_SLOTS);
    let half_base = b.mul(at.parity, half);
    let slots = b.c(GROUP_SLOTS);
    let in_half = b.mul(group, slots);
    let group_slot = b.add(half_base, in_half);
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
        let rel = b.add(at.step_base, block);
        let idx = b.sub(rel, at.skip);
        let after = b.ge(rel, at.skip);
        let before = b.lt(idx, at.n_blocks);
        let ok = b.land(after, before);
        let ok = b.land(at.live, ok);
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
