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
use phobos_core::ir::{BinOp, UnOp};
use phobos_core::ir::{Builtin, ExprId, ExprKind};
use phobos_core::types::{Dim, Scalar, Value as V};
use phobos_tandem::core::{Block, Chunk, GROUP_CHUNKS};
use std::cell::RefCell;
use std::collections::HashMap;

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
            Builtin::TandemKey(q) => {
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
    /// that consecutive elements read the same group of chunks.
    pub(crate) fn counters_sequential(&self, id: ExprId) -> bool {
        slope(self.k, id, &mut HashMap::new()).is_some_and(|d| d.abs() <= SEQUENTIAL_STEP)
    }
}

/// How much the integer node `id` changes per step along the last axis of
/// the tile it is evaluated over, when that is a known constant; `None`
/// when it is not (a load, a product of two varying values, ...). Masks and
/// right shifts by constants keep their operand's slope as a bound, which is
/// all `counters_sequential` needs.
fn slope(
    k: &phobos_core::ir::Kernel,
    id: ExprId,
    memo: &mut HashMap<ExprId, Option<i64>>,
) -> Option<i64> {
    if let Some(d) = memo.get(&id) {
        return *d;
    }
    let e = &k.exprs[id];
    let int = |s: Scalar| matches!(s, Scalar::I32 | Scalar::U32);
    let constant = |x: ExprId| match k.exprs[x].kind {
        ExprKind::Const(V::I32(c)) => Some(i64::from(c)),
        ExprKind::Const(V::U32(c)) => Some(i64::from(c)),
        _ => None,
    };
    let d = match e.shape.last() {
        None | Some(Dim::Const(1)) => Some(0),
        _ => match &e.kind {
            ExprKind::Const(_)
            | ExprKind::Param(_)
            | ExprKind::DimValue(_)
            | ExprKind::BlockId(_)
            | ExprKind::GridSize(_) => Some(0),
            ExprKind::Iota(a) => Some(i64::from(*a as usize + 1 == e.shape.len())),
            ExprKind::Cast(a) | ExprKind::Bitcast(a) if int(e.ty) && int(k.exprs[*a].ty) => {
                slope(k, *a, memo)
            }
            ExprKind::Unary(UnOp::Neg, a) => slope(k, *a, memo).map(|d| -d),
            ExprKind::Binary(op, a, b) if int(e.ty) => {
                let (da, db) = (slope(k, *a, memo), slope(k, *b, memo));
                match op {
                    BinOp::Add => da.zip(db).and_then(|(x, y)| x.checked_add(y)),
                    BinOp::Sub => da.zip(db).and_then(|(x, y)| x.checked_sub(y)),
                    BinOp::Mul => match (da, db) {
                        (Some(0), Some(0)) => Some(0),
                        (Some(x), Some(0)) => constant(*b).and_then(|c| x.checked_mul(c)),
                        (Some(0), Some(y)) => constant(*a).and_then(|c| y.checked_mul(c)),
                        _ => None,
                    },
                    BinOp::BitAnd | BinOp::BitOr | BinOp::Shr if db == Some(0) => {
                        constant(*b).and(da)
                    }
                    _ if da == Some(0) && db == Some(0) => Some(0),
                    _ => None,
                }
            }
            ExprKind::Builtin(_, xs) => {
                let all = xs.iter().all(|x| slope(k, *x, memo) == Some(0));
                all.then_some(0)
            }
            // Values the analysis does not follow: a load, a tile local, a
            // float or 64-bit operation, a reduction.
            ExprKind::Local(_)
            | ExprKind::Load { .. }
            | ExprKind::Unary(..)
            | ExprKind::Binary(..)
            | ExprKind::Cast(_)
            | ExprKind::Bitcast(_)
            | ExprKind::Select(..)
            | ExprKind::Reduce { .. } => None,
        },
    };
    memo.insert(id, d);
    d
}
