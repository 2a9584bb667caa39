//! Chunk states carried from one fill of a statement's staged words to
//! the next: where the statement sits in a `for` loop and its counters
//! move forward through the same chunks from one iteration to the next
//! (attention's mask, `(bh * S + i + iota(0)) * S + j + iota(1)` with
//! `j = jb * BN`: each row's words of iteration `jb` are block `jb` of
//! the row's eight chunks), a task keeps its chunk's state after the fill
//! and resumes from it at the next one, one step an iteration instead of
//! a seed, a warm-up and `j` steps.
//!
//! The state is carried, never assumed: a task resumes only where the
//! state it holds is of the same key and chunk and has not yet passed the
//! first block it must store; anything else seeds the chunk afresh, as
//! the fill without a carry does. So a carry moves time, never bits.
//! Each task keeps its state in variables of its own, so the tasks are
//! laid out over the invocations the same way at every fill: a fixed
//! number of task slots an invocation, unrolled.

use super::{Lower, WARM_UP};
use crate::LowerError;
use crate::lower::H;
use naga::{BinaryOperator as B, Expression, LocalVariable, Span};

/// The most task slots an invocation carries (each holds ten words).
pub(super) const MOST_SLOTS: u32 = 4;

/// One task slot's carried chunk: its state, its step counter (0 for
/// none yet), its chunk index and its key.
#[derive(Clone, Copy)]
pub(super) struct Carry {
    pub(super) vars: [H; 4],
    pub(super) t: H,
    chunk: H,
    key: [H; 4],
}

impl Lower<'_> {
    /// A slot's variables, declared with the function (so kept from one
    /// iteration of a loop to the next), its step counter at 0.
    pub(super) fn carry_vars(&mut self) -> Carry {
        let var = |lw: &mut Self, name: &str| {
            let zero = lw.u32c(0);
            let v = lw.f.local_variables.append(
                LocalVariable {
                    name: Some(name.into()),
                    ty: lw.u32_ty,
                    init: Some(zero),
                },
                Span::UNDEFINED,
            );
            lw.expr(Expression::LocalVariable(v))
        };
        Carry {
            vars: std::array::from_fn(|_| var(self, "carried_s")),
            t: var(self, "carried_t"),
            chunk: var(self, "carried_chunk"),
            key: std::array::from_fn(|_| var(self, "carried_key")),
        }
    }

    /// Whether this code runs inside a `for` loop of the kernel, where a
    /// carry can pay.
    pub(super) fn in_loop(&self) -> bool {
        self.tandem.looped
    }

    /// A fill's tasks `0 .. tasks`, at most `most` of them: each with a
    /// carry of its own (in `slots` unrolled slots) inside a loop where the
    /// slots fit, else without (`chunk_tasks`). `task` gets each task's
    /// group (`task / 8`), lane (`task % 8`) and carry.
    pub(super) fn fill_tasks(
        &mut self,
        (tasks, most): (H, u32),
        task: impl Fn(&mut Self, H, H, Option<&Carry>) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        let slots = most.div_ceil(self.block_invocations);
        if self.in_loop() && self.tandem.resumes && slots <= MOST_SLOTS {
            let carries: Vec<Carry> = (0..slots).map(|_| self.carry_vars()).collect();
            return self.chunk_task_slots(tasks, slots, |lw, group, lane, s| {
                task(lw, group, lane, Some(&carries[s as usize]))
            });
        }
        self.chunk_tasks(tasks, |lw, group, lane| task(lw, group, lane, None))
    }

    /// Tasks `0 .. tasks` over the workgroup's invocations as
    /// `chunk_tasks` lays them out (task `i + s n` on invocation `i`), in
    /// `slots` unrolled slots: `body` gets each task's group (`task / 8`),
    /// lane (`task % 8`) and slot `s`.
    fn chunk_task_slots(
        &mut self,
        tasks: H,
        slots: u32,
        mut body: impl FnMut(&mut Self, H, H, u32) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        for s in 0..slots {
            let off = self.u32c(s * self.block_invocations);
            let task = self.binary(B::Add, self.local, off);
            let inside = self.binary(B::Less, task, tasks);
            let block = self.nested(|lw| {
                let three = lw.u32c(3);
                let group = lw.binary(B::ShiftRight, task, three);
                let seven = lw.u32c(7);
                let lane = lw.binary(B::And, task, seven);
                body(lw, group, lane, s)
            })?;
            self.if_then(inside, block);
        }
        Ok(())
    }

    /// The state a fill task steps: `carry`'s where it holds chunk `chunk`
    /// of `key` warmed up and not yet past place `a + 7` (its next block,
    /// at place `place0 + 8 j`, is at most this task's first one to store),
    /// else chunk `chunk` seeded and warmed up afresh into the carry.
    pub(super) fn resume_or_seed(
        &mut self,
        c: &Carry,
        key: [H; 4],
        chunk: H,
        (place0, a): (H, H),
    ) -> Result<(), LowerError> {
        let t = self.var_load(c.t);
        let warm = self.u32c(WARM_UP);
        let mut keep = self.binary(B::GreaterEqual, t, warm);
        let held = self.var_load(c.chunk);
        let same = self.binary(B::Equal, held, chunk);
        keep = self.binary(B::LogicalAnd, keep, same);
        for (v, k) in c.key.iter().zip(key) {
            let held = self.var_load(*v);
            let same = self.binary(B::Equal, held, k);
            keep = self.binary(B::LogicalAnd, keep, same);
        }
        let j = self.binary(B::Subtract, t, warm);
        let three = self.u32c(3);
        let j8 = self.binary(B::ShiftLeft, j, three);
        let next = self.binary(B::Add, place0, j8);
        let eight = self.u32c(8);
        let last = self.binary(B::Add, a, eight);
        let ahead = self.binary(B::Less, next, last);
        keep = self.binary(B::LogicalAnd, keep, ahead);
        let reseed = self.nested(|lw| {
            let init = lw.chunk_seed(key, chunk);
            for (v, x) in c.vars.iter().zip(init) {
                lw.var_store(*v, x);
            }
            let zero = lw.u32c(0);
            lw.var_store(c.t, zero);
            lw.var_store(c.chunk, chunk);
            for (v, k) in c.key.iter().zip(key) {
                lw.var_store(*v, k);
            }
            let warm = lw.u32c(WARM_UP);
            lw.steps_until(c.vars, c.t, warm)
        })?;
        self.cur.push(naga::Statement::If {
            condition: keep,
            accept: naga::Block::new(),
            reject: reseed,
        });
        Ok(())
    }
}
