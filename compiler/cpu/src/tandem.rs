//! Tandem draws inside kernels on the CPU: the Tandem builtins become calls
//! to the Rust functions below, which compute
//! `phobos_core::interp::ops::{tandem_key, tandem_word, tandem_below_retry}`
//! through the reference crate, so the bits are the reference's by
//! construction.
//!
//! A word is one of two calls, chosen when the kernel is compiled:
//! - `word_direct` seeds the word's chunk and steps to its block: 8 + j + 1
//!   steps (j < K) for every element, the cheapest way to one element;
//! - `word_stepped`, for counters that move by a few steps along the tile's
//!   last axis ([`Gen::counters_sequential`]), keeps this thread's last group
//!   of eight chunks (`8 K` blocks, one seeding per chunk for `4 K` words
//!   per chunk) and steps a whole group when a counter leaves it, so a
//!   contiguous tile costs a third of a step per word instead of about 25.
//!
//! Both return the same bits for every counter; the choice only moves time.

use crate::codegen::Gen;
use cranelift_codegen::ir::{AbiParam, InstBuilder, Signature, Value, types};
use phobos_core::interp::ops::{TANDEM_K, tandem_below_retry, tandem_key, tandem_word};
use phobos_core::ir::analysis::{Seed, Slopes, seed_of};
use phobos_core::ir::{Builtin, ExprId, ExprKind};
use phobos_core::types::Dim;
use phobos_tandem::core::{Block, Chunk, GROUP_CHUNKS};
use std::cell::RefCell;

extern "C" fn key_word(seed: u32, q: u32) -> u32 {
    tandem_key(seed)[(q & 3) as usize]
}

extern "C" fn word_direct(k0: u32, k1: u32, k2: u32, k3: u32, i: u32) -> u32 {
    tandem_word([k0, k1, k2, k3], i)
}

/// Blocks of one group: `8 K` consecutive stream blocks of one key.
struct Group {
    key: [u32; 4],
    /// The group's index, `None` before the first fill.
    group: Option<u32>,
    blocks: Vec<Block>,
}

thread_local! {
    static GROUP: RefCell<Group> = RefCell::new(Group {
        key: [0; 4],
        group: None,
        blocks: vec![[0; 4]; (GROUP_CHUNKS as u32 * TANDEM_K) as usize],
    });
}

extern "C" fn word_stepped(k0: u32, k1: u32, k2: u32, k3: u32, i: u32) -> u32 {
    let key = [k0, k1, k2, k3];
    let per_group = GROUP_CHUNKS as u32 * TANDEM_K;
    let b = i >> 2;
    let group = b / per_group;
    GROUP.with_borrow_mut(|g| {
        if g.group != Some(group) || g.key != key {
            // Step the group's eight chunks: block j of chunk 8G + lane is
            // stream block 8 K G + 8 j + lane (SPEC.md section 3.4).
            for lane in 0..GROUP_CHUNKS as u32 {
                let chunk = u64::from(group) * GROUP_CHUNKS + u64::from(lane);
                let mut c = Chunk::new(key, TANDEM_K, chunk);
                for j in 0..TANDEM_K {
                    g.blocks[(j * GROUP_CHUNKS as u32 + lane) as usize] = c.step();
                }
            }
            g.key = key;
            g.group = Some(group);
        }
        g.blocks[(b % per_group) as usize][(i & 3) as usize]
    })
}

extern "C" fn below_retry(
    rejected: u32,
    k0: u32,
    k1: u32,
    k2: u32,
    k3: u32,
    i: u32,
    n: u32,
) -> u32 {
    if rejected == 0 {
        return 0;
    }
    tandem_below_retry([k0, k1, k2, k3], i, n)
}

/// The most a counter may move per element along the last axis for
/// `word_stepped`: `tandem_normal` reads words `i & !1` and `i | 1`, and
/// `tandem_bool` word `i >> 5`, both within a few words of their neighbours.
const SEQUENTIAL_STEP: i64 = 4;

impl Gen<'_, '_> {
    /// A call to one of the functions above; every argument and the result
    /// are 32-bit (a bool is widened to 0 or 1).
    fn call_u32(&mut self, f: *const u8, args: &[Value]) -> Value {
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        let mut vals = Vec::new();
        for a in args {
            sig.params.push(AbiParam::new(types::I32));
            let v = if self.b.func.dfg.value_type(*a) == types::I8 {
                self.b.ins().uextend(types::I32, *a)
            } else {
                *a
            };
            vals.push(v);
        }
        sig.returns.push(AbiParam::new(types::I32));
        let sig = self.b.import_signature(sig);
        let ptr = self.b.func.dfg.value_type(self.frame);
        let callee = self.b.ins().iconst(ptr, f as usize as i64);
        let call = self.b.ins().call_indirect(sig, callee, &vals);
        self.b.inst_results(call)[0]
    }

    /// A Tandem builtin at node `id` on its emitted arguments.
    pub(crate) fn tandem(&mut self, id: ExprId, f: Builtin, args: &[Value]) -> Value {
        match f {
            // The core's classification of the seed: a constant seed's key
            // is a constant; any other is derived by the call.
            Builtin::TandemKey(q) => {
                if let ExprKind::Builtin(_, xs) = &self.k.exprs[id].kind
                    && let Seed::Const(s) = seed_of(self.k, xs[0])
                {
                    let word = tandem_key(s)[q as usize % 4];
                    return self.b.ins().iconst(types::I32, i64::from(word));
                }
                let q = self.b.ins().iconst(types::I32, i64::from(q));
                self.call_u32(key_word as *const u8, &[args[0], q])
            }
            Builtin::TandemWord => {
                let ExprKind::Builtin(_, xs) = &self.k.exprs[id].kind else {
                    unreachable!("a Tandem word is a builtin node")
                };
                let f = if self.counters_sequential(xs[4]) {
                    word_stepped as *const u8
                } else {
                    word_direct as *const u8
                };
                self.call_u32(f, args)
            }
            Builtin::TandemBelowRetry => self.call_u32(below_retry as *const u8, args),
            f => unreachable!("{f:?} is not a Tandem builtin"),
        }
    }

    /// Whether the counter `id` moves by at most [`SEQUENTIAL_STEP`] per
    /// element along the statement's last axis (the innermost loop), so
    /// that consecutive elements read the same group of chunks: its slope
    /// along its own last axis (shapes align on their last axes), from the
    /// core's counter-slope analysis (`ir::analysis::Slopes`), which the GPU
    /// lowering's stepped and staged draws use too. A non-decreasing
    /// function of an affine form (`i & !1`, `i | 1`, `i >> 5`) counts with
    /// the form's slope.
    pub(crate) fn counters_sequential(&self, id: ExprId) -> bool {
        let shape = &self.k.exprs[id].shape;
        if shape.last() == Some(&Dim::Const(1)) {
            return true;
        }
        Slopes::new(self.k, shape.len())
            .of(id)
            .is_some_and(|s| s.coef.last().is_none_or(|d| d.abs() <= SEQUENTIAL_STEP))
    }
}
