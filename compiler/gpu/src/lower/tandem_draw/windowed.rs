//! Stepped words handed over through a window of workgroup memory, so that
//! the statement's loads and stores run in the tile's own order.
//!
//! The stepped loop (`stepped.rs`) computes each block's elements right
//! after the step that gives it, so one invocation walks its chunk's blocks
//! 128 bytes apart, and a warp's loads and stores at one step fall on four
//! lines 4 KiB apart. Here each invocation still steps one chunk in
//! registers, but every [`WINDOW_STEPS`] steps the workgroup hands the
//! words over:
//! 1. a barrier (the window's previous readers are done); each chunk's
//!    invocation steps it `S` times and stores each block's 4 words in
//!    `window[s * tasks + task]`;
//! 2. a barrier; the invocations then take the window's blocks in the
//!    order they lie in the stream (group by group, each group's `8 S`
//!    blocks contiguous), invocation `i` the blocks `i, i + size, ...`, and
//!    compute and store each block's 4 elements from the words read back,
//!    so consecutive invocations load and store consecutive 16 bytes, as a
//!    copy does.
//!
//! Applies where the stepped loop's lanes read words known at compile time
//! (`stepped::statically_aligned`), the tile's first counter is a multiple
//! of a group's `4 * 8K` words and its length a whole number of groups,
//! one invocation steps each chunk, and the window fits beside the
//! kernel's other workgroup memory; otherwise the stepped loop runs as it
//! was. The bits are the stepped loop's: the same steps, the same words.

use super::stepped::{Pattern, Stepped};
use super::{K_GROUP_BLOCKS, Lower, WARM_UP};
use crate::LowerError;
use crate::lower::{H, WORKGROUP_MEMORY_LIMIT};
use naga::{
    AddressSpace, ArraySize, BinaryOperator as B, Block, Expression, GlobalVariable, Handle, Span,
    Statement, Type, TypeInner,
};
use phobos_core::ir::ExprId;
use phobos_core::types::Scalar;
use std::collections::HashMap;
use std::num::NonZeroU32;

/// Steps between two hand-overs (a divisor of K = 32): 8 keeps the window
/// of a 32-chunk block at 4 KiB.
const WINDOW_STEPS: u32 = 8;

/// `PHOBOS_WINDOW_STEPS` (a power of two up to 32) overrides
/// [`WINDOW_STEPS`], and `PHOBOS_STEPPED=registers` turns windows off, for
/// benchmarks.
fn window_steps() -> Option<u32> {
    if std::env::var("PHOBOS_STEPPED").as_deref() == Ok("registers") {
        return None;
    }
    let s = std::env::var("PHOBOS_WINDOW_STEPS")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|s| s.is_power_of_two() && *s <= K_GROUP_BLOCKS / 8)
        .unwrap_or(WINDOW_STEPS);
    Some(s)
}

impl Lower<'_> {
    /// The workgroup buffer of `slots` blocks of 4 words, shared by every
    /// windowed statement; `None` when it would not fit beside the kernel's
    /// other workgroup memory.
    fn window_buffer(&mut self, slots: u32) -> Option<Handle<GlobalVariable>> {
        if let Some((buf, have)) = self.tandem.window_buf
            && have >= slots
        {
            return Some(buf);
        }
        let used: u64 =
            self.m
                .global_variables
                .iter()
                .filter(|(_, g)| g.space == AddressSpace::WorkGroup)
                .map(|(_, g)| u64::from(self.m.types[g.ty].inner.size(self.m.to_ctx())))
                .sum();
        if used + u64::from(slots) * 16 > WORKGROUP_MEMORY_LIMIT {
            return None;
        }
        let vec4 = crate::lower::bindings::vec4_type(&mut self.m, Scalar::U32);
        let arr = self.m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Array {
                    base: vec4,
                    size: ArraySize::Constant(NonZeroU32::new(slots)?),
                    stride: 16,
                },
            },
            Span::UNDEFINED,
        );
        let buf = self.m.global_variables.append(
            GlobalVariable {
                name: Some("tandem_window".into()),
                space: AddressSpace::WorkGroup,
                binding: None,
                ty: arr,
                init: None,
                memory_decorations: Default::default(),
            },
            Span::UNDEFINED,
        );
        self.tandem.window_buf = Some((buf, slots));
        Some(buf)
    }

    /// The windowed loop (module doc) over a tile of `n` positions whose
    /// first counter is `lo`, when it applies; `Ok(false)` leaves the
    /// statement to the stepped loop.
    pub(super) fn windowed_loop(
        &mut self,
        (lens, n): (&[H], u32),
        (key, lo): ([H; 4], H),
        (ids, fixed): (&[ExprId], &HashMap<ExprId, Pattern>),
        body: &mut impl FnMut(&mut Self, H, &[H]) -> Result<(), LowerError>,
    ) -> Result<bool, LowerError> {
        let Some(steps) = window_steps() else {
            return Ok(false);
        };
        let chunk_blocks = K_GROUP_BLOCKS / 8;
        let tasks = n / 4 / chunk_blocks;
        if !n.is_multiple_of(4 * K_GROUP_BLOCKS) || tasks > self.block_invocations {
            return Ok(false);
        }
        let Some(buf) = self.window_buffer(tasks * steps) else {
            return Ok(false);
        };
        self.tandem.renote(&format!(
            "stepped: one invocation steps one chunk in registers; every {steps} steps the \
             words pass through workgroup memory, so loads and stores run in tile order"
        ));
        let gs = self.u32c(K_GROUP_BLOCKS.trailing_zeros());
        let two = self.u32c(2);
        let three = self.u32c(3);
        let seven = self.u32c(7);
        let b0 = self.binary(B::ShiftRight, lo, two);
        let g0 = self.binary(B::ShiftRight, b0, gs);
        let local = self.local;
        let tasks_h = self.u32c(tasks);
        let active = self.binary(B::Less, local, tasks_h);

        // This invocation's chunk: lane `local % 8` of group `g0 + local / 8`
        // (chunk indices wrap with the 2^30 blocks 32-bit counters reach).
        let mut chunk_state = None;
        let seed = self.nested(|lw| {
            let go = lw.binary(B::ShiftRight, local, three);
            let gu = lw.binary(B::Add, g0, go);
            let mask = lw.u32c((1u32 << (30 - K_GROUP_BLOCKS.trailing_zeros())) - 1);
            let group = lw.binary(B::And, gu, mask);
            let chunk = lw.binary(B::ShiftLeft, group, three);
            let lane = lw.binary(B::And, local, seven);
            let chunk = lw.binary(B::InclusiveOr, chunk, lane);
            let (vars, tc) = lw.seed_chunk(key, chunk);
            let warm = lw.u32c(WARM_UP);
            lw.steps_until(vars, tc, warm)?;
            chunk_state = Some((vars, tc));
            Ok(())
        })?;
        self.if_then(active, seed);
        let (vars, tc) = chunk_state.expect("seeded above");

        let window = self.temp(Scalar::U32);
        let zero = self.u32c(0);
        self.var_store(window, zero);
        let windows = self.u32c(chunk_blocks / steps);
        let barrier = Statement::ControlBarrier(naga::Barrier::WORK_GROUP);
        let window_body = self.nested(|lw| {
            let w = lw.var_load(window);
            let done = lw.binary(B::GreaterEqual, w, windows);
            lw.if_then(done, Block::from_vec(vec![Statement::Break]));
            lw.cur.push(barrier.clone());
            let fill = lw.nested(|lw| lw.window_fill(buf, (vars, tc), steps, tasks))?;
            lw.if_then(active, fill);
            lw.cur.push(barrier.clone());
            let first_step = lw.u32c(steps);
            let first_step = lw.binary(B::Multiply, w, first_step);
            lw.window_blocks(buf, (lens, tasks, steps), (lo, first_step), (ids, fixed), body)
        })?;
        let continuing = self.nested(|lw| {
            let w = lw.var_load(window);
            let one = lw.u32c(1);
            let next = lw.binary(B::Add, w, one);
            lw.var_store(window, next);
            Ok(())
        })?;
        self.cur.push(Statement::Loop {
            body: window_body,
            continuing,
            break_if: None,
        });
        Ok(true)
    }

    /// Phase 1: `steps` steps of this invocation's chunk, block `s` of the
    /// window into `buf[s * tasks + local]`.
    fn window_fill(
        &mut self,
        buf: Handle<GlobalVariable>,
        (vars, tc): ([H; 4], H),
        steps: u32,
        tasks: u32,
    ) -> Result<(), LowerError> {
        let s = self.temp(Scalar::U32);
        let zero = self.u32c(0);
        self.var_store(s, zero);
        let vec4 = crate::lower::bindings::vec4_type(&mut self.m, Scalar::U32);
        let local = self.local;
        let body = self.nested(|lw| {
            let si = lw.var_load(s);
            let end = lw.u32c(steps);
            let done = lw.binary(B::GreaterEqual, si, end);
            lw.if_then(done, Block::from_vec(vec![Statement::Break]));
            let out = lw.step(vars, tc);
            let words = lw.expr(Expression::Compose {
                ty: vec4,
                components: out.to_vec(),
            });
            let t = lw.u32c(tasks);
            let slot = lw.binary(B::Multiply, si, t);
            let slot = lw.binary(B::Add, slot, local);
            let base = lw.expr(Expression::GlobalVariable(buf));
            let pointer = lw.expr(Expression::Access { base, index: slot });
            lw.var_store(pointer, words);
            let one = lw.u32c(1);
            let next = lw.binary(B::Add, si, one);
            lw.var_store(s, next);
            Ok(())
        })?;
        self.cur.push(Statement::Loop {
            body,
            continuing: Block::new(),
            break_if: None,
        });
        Ok(())
    }

    /// Phase 2: the window's `tasks * steps` blocks in stream order, block
    /// `q` on invocations `q % size`: run `r = q / 8S` (group `g0 + r`),
    /// offset `o = q % 8S` in it, so step `first_step + o / 8` of chunk
    /// `8 r + o % 8`; its words are `buf[(o / 8) * tasks + 8 r + o % 8]`
    /// and its elements are flat positions `4 (r 8K + 8 (first_step + o /
    /// 8) + o % 8) ..` of the tile.
    fn window_blocks(
        &mut self,
        buf: Handle<GlobalVariable>,
        (lens, tasks, steps): (&[H], u32, u32),
        (lo, first_step): (H, H),
        (ids, fixed): (&[ExprId], &HashMap<ExprId, Pattern>),
        body: &mut impl FnMut(&mut Self, H, &[H]) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        let q = self.temp(Scalar::U32);
        let local = self.local;
        self.var_store(q, local);
        let loop_body = self.nested(|lw| {
            let qi = lw.var_load(q);
            let slots = lw.u32c(tasks * steps);
            let done = lw.binary(B::GreaterEqual, qi, slots);
            lw.if_then(done, Block::from_vec(vec![Statement::Break]));
            let run_shift = lw.u32c((8 * steps).trailing_zeros());
            let run = lw.binary(B::ShiftRight, qi, run_shift);
            let run_mask = lw.u32c(8 * steps - 1);
            let o = lw.binary(B::And, qi, run_mask);
            let three = lw.u32c(3);
            let s = lw.binary(B::ShiftRight, o, three);
            let seven = lw.u32c(7);
            let lane = lw.binary(B::And, o, seven);
            let t = lw.u32c(tasks);
            let slot = lw.binary(B::Multiply, s, t);
            let chunk0 = lw.binary(B::ShiftLeft, run, three);
            let slot = lw.binary(B::Add, slot, chunk0);
            let slot = lw.binary(B::Add, slot, lane);
            // The block's place from the tile's first block.
            let gs = lw.u32c(K_GROUP_BLOCKS.trailing_zeros());
            let rel = lw.binary(B::ShiftLeft, run, gs);
            let j = lw.binary(B::Add, first_step, s);
            let j = lw.binary(B::ShiftLeft, j, three);
            let rel = lw.binary(B::Add, rel, j);
            let rel = lw.binary(B::Add, rel, lane);
            let two = lw.u32c(2);
            let flat = lw.binary(B::ShiftLeft, rel, two);
            let pos = lw.flat_position(flat, lens);
            let base = lw.expr(Expression::GlobalVariable(buf));
            let pointer = lw.expr(Expression::Access { base, index: slot });
            let words = lw.var_load(pointer);
            let out: [H; 4] = std::array::from_fn(|i| {
                lw.expr(Expression::AccessIndex {
                    base: words,
                    index: i as u32,
                })
            });
            // Word nodes read by their patterns; `first` is the block's
            // first counter, for a node that would need the direct path
            // (none does: every lane's word is known).
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
            r
        })?;
        let continuing = self.nested(|lw| {
            let qi = lw.var_load(q);
            let size = lw.u32c(lw.block_invocations);
            let next = lw.binary(B::Add, qi, size);
            lw.var_store(q, next);
            Ok(())
        })?;
        self.cur.push(Statement::Loop {
            body: loop_body,
            continuing,
            break_if: None,
        });
        Ok(())
    }
}
