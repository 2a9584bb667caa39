//! Tandem draws inside kernels (`Builtin::TandemKey`, `TandemWord`,
//! `TandemBelowRetry`) as naga code, with the meaning of
//! `phobos_core::interp::ops::{tandem_key, tandem_word, tandem_below_retry}`
//! (stdlib/tandem/SPEC.md sections 2, 3 and 7.5).
//!
//! A key derivation is twelve rounds unrolled into straight-line code. The
//! four words of `Key::from_seed(seed)` are derived together, once per seed
//! value per invocation ([`DrawState::keys`]): the key nodes are scalars, so
//! `hoist` lowers them before the element loops, in the body's outermost
//! block, where every later statement can use them.
//!
//! A word has two paths:
//! - *staged* (`staged.rs`): when a statement's counters are contiguous
//!   along its tile, the workgroup steps the chunks that cover a window of
//!   counters into workgroup memory (one invocation per chunk: seed, warm
//!   up, then one step per block), and each element reads its word there;
//! - *direct*: the word seeds its chunk and runs a loop of `8 + j` steps
//!   (the warm-up, then up to block `j < K`), then one step whose output
//!   holds the word: at most `8 + K` steps per word, no state carried
//!   between elements. Counters the compiler cannot see are contiguous take
//!   it, and so does a staged word whose counter falls outside its window,
//!   so the choice never changes a bit.
//!
//! A rejected bounded draw runs its retry loop inside an `if`, so only the
//! rare rejected elements pay for it.

mod carried;
pub(crate) mod rows;
mod shuffled;
pub(crate) mod staged;
pub(crate) mod stepped;

pub(super) use staged::{draw_buffers, has_words};
pub(crate) use stepped::{largest_stepped_tile, stepped_tasks};

use super::{H, Lower};
use crate::LowerError;
use naga::{BinaryOperator as B, Block, Statement};
use phobos_core::interp::ops::TANDEM_K;
use phobos_core::ir::BinOp;
use phobos_core::ir::analysis::{Seed, SeedOf, seed_of};
use phobos_core::ir::{Builtin, ExprId, ExprKind};
use phobos_core::types::Scalar;
use std::collections::HashMap;

use crate::tandem_ops::{self, DOMAIN_SEED, DOMAIN_SPLIT, DOMAIN_SUB, WARM_UP_STEPS as WARM_UP};

/// Blocks of a group of eight chunks (`8 K`, SPEC.md section 3.4).
pub(crate) const K_GROUP_BLOCKS: u32 = 8 * TANDEM_K;
/// `PURPOSE_BELOW`: the purpose whose splits retry rejected bounded draws.
const PURPOSE_BELOW: u32 = phobos_tandem::PURPOSE_BELOW as u32;

/// What the lowering keeps about draws across nodes and statements.
#[derive(Default)]
pub(super) struct DrawState {
    /// The words of `Key::from_seed(seed)` by the seed's lowered value. A
    /// seed node's handle is only reused where it is in scope, and its key
    /// is derived right where the first key node of that seed is lowered,
    /// in the same block (key nodes are scalars whenever their seed is, and
    /// are hoisted with it), so the words are in scope wherever the seed is.
    keys: HashMap<H, [H; 4]>,
    /// The word nodes of the statement being lowered that read a staged
    /// window, and where.
    staged: HashMap<ExprId, staged::Window>,
    /// The workgroup buffers of staged words (`staged.rs`), made before the
    /// body is lowered, and the window of counters one holds.
    bufs: Vec<naga::Handle<naga::GlobalVariable>>,
    window: u32,
    /// The word nodes of the group being computed in a stepped loop
    /// (`stepped.rs`), and the block they read.
    stepped: HashMap<ExprId, stepped::Stepped>,
    /// `tandem_word(k0, k1, k2, k3, i)`: the direct path as one function
    /// of the module, made on first use, so that each word node that may
    /// take it costs a call rather than an inlined copy of its loop.
    word_fn: Option<naga::Handle<naga::Function>>,
    /// The words of keys the host derives (`FieldKind::TandemKey`), loaded
    /// from the uniform block at the top of the body.
    host_keys: HashMap<(usize, SeedOf), [Option<H>; 4]>,
    /// The 16-byte loads a stepped loop made for the group it is about to
    /// compute, one step earlier (`stepped.rs`); the group's `Lane` starts
    /// from them.
    pub(super) preloaded: HashMap<ExprId, H>,
    /// The statement being lowered (its index in the body), and how each
    /// statement's draws were lowered, for the provenance
    /// (`crate::Compiled::notes`).
    pub(super) stmt: usize,
    pub(super) notes: Vec<String>,
    /// Whether the statement being lowered is inside a `for` loop, and
    /// whether its fills may resume the chunks the last iteration stepped
    /// (not where the plan found they never do: `Plan::fresh_fills`).
    pub(super) looped: bool,
    pub(super) resumes: bool,
    /// The whole-tile fills by rows or columns whose words each buffer
    /// still holds (`rows.rs`): a later statement of the same iteration
    /// that draws the same words reads them there without filling again.
    pub(super) filled: Vec<rows::Filled>,
    /// The kernel's value numbers (`analysis::value_numbers`), made on
    /// first use.
    pub(super) numbers: Option<phobos_core::ir::IdVec<ExprId, ExprId>>,
}

impl DrawState {
    /// Replaces the note just recorded for this statement, once a path
    /// refines the one it was chosen as.
    pub(super) fn renote(&mut self, path: &str) {
        self.notes.pop();
        self.note(path);
    }

    /// Records how statement `self.stmt`'s draws are lowered.
    pub(super) fn note(&mut self, path: &str) {
        self.notes
            .push(format!("statement {}: Tandem draws {path}", self.stmt + 1));
    }

    /// Forgets the fills whose words a statement that writes `writes`
    /// may change (it writes a place their keys or counters read), or all
    /// of them (`None`: a loop's bracket, where a new iteration starts).
    pub(super) fn forget_fills(&mut self, writes: Option<&[phobos_core::ir::Place]>) {
        match writes {
            None => self.filled.clear(),
            Some(w) => self
                .filled
                .retain(|f| !f.reads.iter().any(|p| w.contains(p))),
        }
    }

    pub(super) fn host_key(&mut self, seed: (usize, SeedOf), word: u8, v: H) {
        self.host_keys.entry(seed).or_default()[word as usize] = Some(v);
    }
}

impl Lower<'_> {
    /// A Tandem builtin at node `id` on its already lowered arguments.
    pub(super) fn tandem_builtin(
        &mut self,
        id: ExprId,
        f: Builtin,
        args: &[H],
    ) -> Result<H, LowerError> {
        Ok(match (f, args) {
            (Builtin::TandemKey(q), [seed]) => {
                let ExprKind::Builtin(_, xs) = &self.k.exprs[id].kind else {
                    unreachable!("a key node is a builtin")
                };
                // The core's classification of the seed: a parameter's key
                // was derived by the host, a constant's is a constant.
                match seed_of(self.k, xs[0]) {
                    Seed::Param { param, of } => {
                        match self
                            .tandem
                            .host_keys
                            .get(&(param, of))
                            .and_then(|k| k[q as usize])
                        {
                            Some(w) => w,
                            None => self.seed_key(*seed)[q as usize],
                        }
                    }
                    Seed::Const(s) => {
                        self.u32c(phobos_core::interp::ops::tandem_key(s)[q as usize])
                    }
                    Seed::Node(_) => self.seed_key(*seed)[q as usize],
                }
            }
            (Builtin::TandemWord, [k0, k1, k2, k3, i]) => {
                let key = [*k0, *k1, *k2, *k3];
                if let Some(s) = self.tandem.stepped.get(&id).copied() {
                    self.stepped_word(s, key, *i)
                } else {
                    match self.tandem.staged.get(&id).copied() {
                        Some(w) => self.staged_word(w, key, *i)?,
                        None => self.direct_word(key, *i),
                    }
                }
            }
            (Builtin::TandemBelowRetry, [rejected, k0, k1, k2, k3, i, n]) => {
                self.tandem_retry(*rejected, [*k0, *k1, *k2, *k3], *i, *n)?
            }
            (f, _) => unreachable!("the verifier checks the arguments of {f:?}"),
        })
    }

    /// The four words of `Key::from_seed(seed)`, derived at most once per
    /// seed value ([`DrawState::keys`]).
    fn seed_key(&mut self, seed: H) -> [H; 4] {
        if let Some(k) = self.tandem.keys.get(&seed) {
            return *k;
        }
        let zero = self.u32c(0);
        let k = self.derive([zero; 4], DOMAIN_SEED, seed);
        self.tandem.keys.insert(seed, k);
        k
    }

    /// `derive(k, domain, v)` for a 32-bit value `v` (`v_hi = 0`).
    fn derive(&mut self, k: [H; 4], domain: u32, v: H) -> [H; 4] {
        let zero = self.u32c(0);
        tandem_ops::derive(self, k, domain, (v, zero))
    }

    /// The state of chunk `chunk` (below 2^32) of `key`'s stream with
    /// `K = TANDEM_K` before its warm-up (SPEC 3.2: `[k0, k1 ^ K, k2 ^ c_lo,
    /// k3 ^ c_hi]`, `c_hi = 0`), in variables, and its step counter at 0.
    fn seed_chunk(&mut self, key: [H; 4], chunk: H) -> ([H; 4], H) {
        let init = self.chunk_seed(key, chunk);
        self.chunk_vars(init)
    }

    /// The words [`Self::seed_chunk`] starts chunk `chunk` of `key` from.
    fn chunk_seed(&mut self, key: [H; 4], chunk: H) -> [H; 4] {
        let k_tag = self.u32c(TANDEM_K);
        [
            key[0],
            self.binary(B::ExclusiveOr, key[1], k_tag),
            self.binary(B::ExclusiveOr, key[2], chunk),
            key[3],
        ]
    }

    /// Four u32 variables holding `init`, and a step counter at 0.
    fn chunk_vars(&mut self, init: [H; 4]) -> ([H; 4], H) {
        let vars: [H; 4] = std::array::from_fn(|_| self.temp(Scalar::U32));
        for (v, x) in vars.iter().zip(init) {
            self.var_store(*v, x);
        }
        let t = self.temp(Scalar::U32);
        let zero = self.u32c(0);
        self.var_store(t, zero);
        (vars, t)
    }

    /// The next step of the chunk in `vars` (step number `t + 1`); its
    /// output, the permuted state plus the round's input.
    fn step(&mut self, vars: [H; 4], t: H) -> [H; 4] {
        let one = self.u32c(1);
        let n = self.var_load(t);
        let n = self.binary(B::Add, n, one);
        self.var_store(t, n);
        let s: [H; 4] = std::array::from_fn(|q| self.var_load(vars[q]));
        let (next, out) = if self.options.knobs.ablate_stream {
            // Measurement only: a step of two operations, wrong bits.
            let a = self.binary(B::Add, s[0], n);
            let next = [a, s[1], s[2], s[3]];
            (next, next)
        } else {
            tandem_ops::step(self, s, n)
        };
        for (v, x) in vars.iter().zip(next) {
            self.var_store(*v, x);
        }
        out
    }

    /// Steps the chunk in `vars` until its counter reaches `until`.
    fn steps_until(&mut self, vars: [H; 4], t: H, until: H) -> Result<(), LowerError> {
        let body = self.nested(|lw| {
            let done = lw.var_load(t);
            let done = lw.binary(B::GreaterEqual, done, until);
            lw.if_then(done, Block::from_vec(vec![Statement::Break]));
            lw.step(vars, t);
            Ok(())
        })?;
        self.push_loop(body, Block::new());
        Ok(())
    }

    /// A loop over the chunk tasks `0 .. tasks` of a workgroup, tasks
    /// `i, i + size, ...` on invocation `i`: `body` gets each task's group
    /// (`task / 8`, counted from the first) and lane (`task % 8`). The
    /// staged fill and the stepped loop both take chunks this way.
    fn chunk_tasks(
        &mut self,
        tasks: H,
        body: impl FnOnce(&mut Self, H, H) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        let task = self.temp(Scalar::U32);
        let li = self.local;
        self.var_store(task, li);
        let loop_body = self.nested(|lw| {
            let t = lw.var_load(task);
            let done = lw.binary(B::GreaterEqual, t, tasks);
            lw.if_then(done, Block::from_vec(vec![Statement::Break]));
            let three = lw.u32c(3);
            let group = lw.binary(B::ShiftRight, t, three);
            let seven = lw.u32c(7);
            let lane = lw.binary(B::And, t, seven);
            body(lw, group, lane)
        })?;
        let continuing = self.nested(|lw| {
            let t = lw.var_load(task);
            let size = lw.u32c(lw.block_invocations);
            let next = lw.binary(B::Add, t, size);
            lw.var_store(task, next);
            Ok(())
        })?;
        self.push_loop(loop_body, continuing);
        Ok(())
    }

    /// In a chunk's step loop after the warm-up (step counter `t`): the
    /// place `start + 8 j` of the block the next step gives, `j` the
    /// blocks stepped so far, after leaving the loop once the chunk's `K`
    /// blocks are done or the place reaches `limit` (blocks of a group of
    /// eight chunks interleave, SPEC.md section 3.4).
    fn next_block_or_break(&mut self, t: H, start: H, limit: H) -> H {
        let s = self.var_load(t);
        let warm = self.u32c(WARM_UP);
        let j = self.binary(B::Subtract, s, warm);
        let three = self.u32c(3);
        let j8 = self.binary(B::ShiftLeft, j, three);
        let place = self.binary(B::Add, start, j8);
        let k = self.u32c(TANDEM_K);
        let chunk_done = self.binary(B::GreaterEqual, j, k);
        let past = self.binary(B::GreaterEqual, place, limit);
        let stop = self.binary(B::LogicalOr, chunk_done, past);
        self.if_then(stop, Block::from_vec(vec![Statement::Break]));
        place
    }

    /// Word `q` (a u32 below 4) of a block.
    fn pick(&mut self, o: [H; 4], q: H) -> H {
        let mut v = o[3];
        for w in (0..3).rev() {
            let c = self.u32c(w);
            let is = self.binary(B::Equal, q, c);
            v = self.select(is, o[w as usize], v);
        }
        v
    }

    /// Word `i` of the stream of `key` (SPEC.md sections 3.2 to 3.6): block
    /// `b = i / 4` is block `j` of chunk `c` (the layout interleaves groups
    /// of eight chunks), stepped directly from the chunk's seed. Counters
    /// are below 2^32, so the chunk index's high word is 0.
    fn tandem_word(&mut self, key: [H; 4], i: H) -> Result<H, LowerError> {
        let two = self.u32c(2);
        let b = self.binary(B::ShiftRight, i, two);
        let three = self.u32c(3);
        let q = self.binary(B::And, i, three);
        let b_over = self.binary(B::ShiftRight, b, three);
        let k_mask = self.u32c(TANDEM_K - 1);
        let j = self.binary(B::And, b_over, k_mask);
        let seven = self.u32c(7);
        let lane = self.binary(B::And, b, seven);
        let group_shift = self.u32c(3 + TANDEM_K.trailing_zeros());
        let group = self.binary(B::ShiftRight, b, group_shift);
        let group_first = self.binary(B::ShiftLeft, group, three);
        let chunk = self.binary(B::InclusiveOr, group_first, lane);
        let (vars, t) = self.seed_chunk(key, chunk);
        let warm = self.u32c(WARM_UP);
        let until = self.binary(B::Add, j, warm);
        self.steps_until(vars, t, until)?;
        let out = self.step(vars, t);
        Ok(self.pick(out, q))
    }

    /// Word `i` of the stream of `key` by the direct path, through a call
    /// of the module's `tandem_word` function (made on first use).
    fn direct_word(&mut self, key: [H; 4], i: H) -> H {
        let f = match self.tandem.word_fn {
            Some(f) => f,
            None => {
                let f = self.word_function();
                self.tandem.word_fn = Some(f);
                f
            }
        };
        self.call(f, vec![key[0], key[1], key[2], key[3], i])
    }

    /// Builds `tandem_word(k0, k1, k2, k3, i) -> u32` on a swapped-in
    /// function, with [`Self::tandem_word`] as its body.
    fn word_function(&mut self) -> naga::Handle<naga::Function> {
        let u32_ty = self.u32_ty;
        let names = ["k0", "k1", "k2", "k3", "i"];
        let func = naga::Function {
            name: Some("tandem_word".into()),
            arguments: names
                .iter()
                .map(|n| naga::FunctionArgument {
                    name: Some((*n).into()),
                    ty: u32_ty,
                    binding: None,
                })
                .collect(),
            result: Some(naga::FunctionResult {
                ty: u32_ty,
                binding: None,
            }),
            ..Default::default()
        };
        let outer_f = std::mem::replace(&mut self.f, func);
        let outer_cur = std::mem::take(&mut self.cur);
        let args: Vec<H> = (0..5)
            .map(|a| self.expr(naga::Expression::FunctionArgument(a)))
            .collect();
        let value = self
            .tandem_word([args[0], args[1], args[2], args[3]], args[4])
            .expect("the direct word lowers without errors");
        self.cur.push(Statement::Return { value: Some(value) });
        let mut func = std::mem::replace(&mut self.f, outer_f);
        func.body = Block::from_vec(std::mem::replace(&mut self.cur, outer_cur));
        self.m.functions.append(func, naga::Span::UNDEFINED)
    }

    /// The high half of the 64-bit product of two u32 values (16-bit limbs).
    fn mulhi(&mut self, x: H, n: H) -> H {
        let (mask, sixteen) = (self.u32c(0xFFFF), self.u32c(16));
        let xl = self.binary(B::And, x, mask);
        let xh = self.binary(B::ShiftRight, x, sixteen);
        let nl = self.binary(B::And, n, mask);
        let nh = self.binary(B::ShiftRight, n, sixteen);
        let ll = self.binary(B::Multiply, xl, nl);
        let lh = self.binary(B::Multiply, xl, nh);
        let hl = self.binary(B::Multiply, xh, nl);
        let hh = self.binary(B::Multiply, xh, nh);
        let ll_hi = self.binary(B::ShiftRight, ll, sixteen);
        let lh_lo = self.binary(B::And, lh, mask);
        let hl_lo = self.binary(B::And, hl, mask);
        let mid = self.binary(B::Add, ll_hi, lh_lo);
        let mid = self.binary(B::Add, mid, hl_lo);
        let carry = self.binary(B::ShiftRight, mid, sixteen);
        let lh_hi = self.binary(B::ShiftRight, lh, sixteen);
        let hl_hi = self.binary(B::ShiftRight, hl, sixteen);
        let hi = self.binary(B::Add, hh, lh_hi);
        let hi = self.binary(B::Add, hi, hl_hi);
        self.binary(B::Add, hi, carry)
    }

    /// Lemire's method on one word: `(value, accepted)`.
    fn lemire(&mut self, x: H, n: H) -> (H, H) {
        let lo = self.binary(B::Multiply, x, n);
        let hi = self.mulhi(x, n);
        let zero = self.u32c(0);
        let neg = self.binary(B::Subtract, zero, n);
        // `%` with the IR's meaning (`x % 0 == 0`): n is never 0 here, but
        // the lowering stays defined for any argument.
        let threshold = self.binop(BinOp::Rem, Scalar::U32, neg, n);
        let small = self.binary(B::GreaterEqual, lo, n);
        let kept = self.binary(B::GreaterEqual, lo, threshold);
        let accepted = self.binary(B::LogicalOr, small, kept);
        (hi, accepted)
    }

    /// The retry of a rejected bounded draw: only when `rejected`, the
    /// first word of the continuation of `key.sub(PURPOSE_BELOW).split(i)`
    /// (seeded with `K` tag 0, warmed up, then read in order) that Lemire's
    /// method accepts; 0 otherwise.
    fn tandem_retry(&mut self, rejected: H, key: [H; 4], i: H, n: H) -> Result<H, LowerError> {
        let result = self.temp(Scalar::U32);
        let zero = self.u32c(0);
        self.var_store(result, zero);
        let accept = self.nested(|lw| {
            let purpose = lw.u32c(PURPOSE_BELOW);
            let sub = lw.derive(key, DOMAIN_SUB, purpose);
            let x = lw.derive(sub, DOMAIN_SPLIT, i);
            let (vars, t) = lw.chunk_vars(x);
            let warm = lw.u32c(WARM_UP);
            lw.steps_until(vars, t, warm)?;
            let found = lw.temp(Scalar::U32);
            let no = lw.u32c(0);
            lw.var_store(found, no);
            let body = lw.nested(|lw| {
                let out = lw.step(vars, t);
                for w in out {
                    let (v, ok) = lw.lemire(w, n);
                    let before = lw.var_load(found);
                    let zero = lw.u32c(0);
                    let first = lw.binary(B::Equal, before, zero);
                    let take = lw.binary(B::LogicalAnd, first, ok);
                    let old = lw.var_load(result);
                    let v = lw.select(take, v, old);
                    lw.var_store(result, v);
                    let one = lw.u32c(1);
                    let f = lw.select(take, one, before);
                    lw.var_store(found, f);
                }
                let f = lw.var_load(found);
                let zero = lw.u32c(0);
                let done = lw.binary(B::NotEqual, f, zero);
                lw.if_then(done, Block::from_vec(vec![Statement::Break]));
                Ok(())
            })?;
            lw.push_loop(body, Block::new());
            Ok(())
        })?;
        self.if_then(rejected, accept);
        Ok(self.var_load(result))
    }
}
