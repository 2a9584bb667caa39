//! Stepped Tandem words: the loop of a statement whose counters run along
//! its tile is turned inside out, so that each invocation steps one chunk
//! of the stream in registers and computes the elements of each block the
//! chunk gives, as the bulk fills do (`crate::tandem`).
//!
//! Applies to a statement over a tile of constant extents whose word nodes
//! of one scalar key have counters that are a non-decreasing function of
//! the flat position with slope 1 (`ir::analysis::Counter::flat`), as
//! `(r + iota(0)) * 256 + iota(1)` is: a store by groups of 4 (`stmt.rs`'s
//! `quad_store`: one group a block), or any other store or `let`/`var`
//! tile, whose block's 4 positions are then computed one by one (those
//! inside the tile; the tile need not hold a whole number of blocks). For the tile's `n` positions, with `c` the smallest counter at flat
//! position 0 and `b0 = c / 4`, group `q` of 4 positions (flat `4q ..
//! 4q + 3`) is paired with stream block `b0 + q`. Block `b` is block
//! `j = (b % 8K) / 8` of chunk `8 (b / 8K) + b % 8` (SPEC.md section 3.4),
//! so the chunks of the groups of eight that hold blocks `b0 .. b0 + n/4`
//! are tasks, taken by invocations `i, i + size, ...`: a task seeds its
//! chunk, warms it up, then steps it through its blocks, and after the step
//! that gives block `b` inside the range it computes and stores the 4
//! elements of group `b - b0`. Each group is computed exactly once.
//!
//! A word node then reads word `i - 4b` of the step's output when that is
//! below 4, and otherwise takes the direct path (`mod.rs`, a function
//! call): counters that are not a multiple of 4 at flat 0, that wrap past
//! 2^32, or that the analysis misjudged. So the pairing only moves time,
//! never bits. Aligned counters (the first a multiple of 4, as in every
//! row-major counter over rows that are a multiple of 4 long) never take
//! the direct path; misaligned ones take it for some lanes of every group.
//!
//! Cost: `8 + 32` steps per chunk for 128 words, the fill's ratio, with no
//! workgroup memory and no barrier; no invocation waits for another. The
//! workgroup size that fits ([`stepped_tasks`]) is one invocation per task.

use super::staged::word_groups;
use super::{K_GROUP_BLOCKS, Lower, WARM_UP};
use crate::LowerError;
use crate::lower::H;
use naga::{BinaryOperator as B, Block, Expression, Statement};
use phobos_core::ir::BinOp;
use phobos_core::ir::analysis::{self, Slopes};
use phobos_core::ir::{ExprId, ExprKind, IdVec, Kernel};
use phobos_core::types::{Dim, Scalar, Value};
use std::collections::HashMap;

/// How many groups ahead a stepped loop makes its 16-byte loads. One
/// (the next group's loads in flight while this group's step and values
/// run) measured best on the H200 (bench/RESULTS.md, 2026-12-01): Tandem
/// dropout at R = 64 gave 3097, 3046, 2885, 2819 and 2561 GiB/s for 1, 2,
/// 3, 4 and 6 groups ahead, as each one more costs four registers a load.
const PREFETCH_DEPTH: usize = 1;

/// Where a stepped word node reads its word: the four words of the block
/// just stepped, the index of that block's first word, and, in the aligned
/// loop, which word each lane of a group of 4 reads.
#[derive(Clone, Copy)]
pub(in crate::lower) struct Stepped {
    pub(super) out: [H; 4],
    pub(super) first: H,
    pub(super) pattern: Option<Pattern>,
    /// The element's lane in a loop by single elements (a store by groups
    /// of 4 has it in `Lower::lane` instead).
    pub(super) lane: Option<u32>,
}

/// How a word node's counter is made from a counter `a = c + flat` (slope
/// 1, no mask on the way): `a`, `a & !1` or `a | 1` (`tandem_normal`'s
/// pair). When `a` at flat position 0 is the smallest counter and a
/// multiple of 4 (checked once per workgroup), lane `l` of the group paired
/// with block `b` reads word [`Pattern::word`] of it, known when the kernel
/// is compiled: lanes that read the same word then share every value made
/// from it (the driver merges the equal expressions), which halves the
/// logarithms and square roots of `tandem_normal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pattern {
    Same,
    Even,
    Odd,
}

impl Pattern {
    fn word(self, lane: u32) -> u32 {
        match self {
            Pattern::Same => lane,
            Pattern::Even => lane & !1,
            Pattern::Odd => lane | 1,
        }
    }
}

/// The statement's stepped words and, when every one has a [`Pattern`],
/// each one's pattern and base counter `a`.
pub(crate) struct StepPlan {
    ids: Vec<ExprId>,
    patterns: Option<HashMap<ExprId, (ExprId, Pattern)>>,
}

fn pattern(
    k: &Kernel,
    counter: ExprId,
    tile: &[Dim],
    slopes: &mut Slopes<'_>,
) -> Option<(ExprId, Pattern)> {
    if slopes.counter(counter, tile).exact {
        return Some((counter, Pattern::Same));
    }
    let constant = |x: ExprId| match k.exprs[x].kind {
        ExprKind::Const(Value::U32(c)) => Some(c),
        ExprKind::Const(Value::I32(c)) => Some(c as u32),
        _ => None,
    };
    let ExprKind::Binary(op, a, b) = k.exprs[counter].kind else {
        return None;
    };
    let (a, c) = match (constant(a), constant(b)) {
        (None, Some(c)) => (a, c),
        (Some(c), None) => (b, c),
        _ => return None,
    };
    let p = match (op, c) {
        (BinOp::BitAnd, 0xFFFF_FFFE) => Pattern::Even,
        (BinOp::BitOr, 1) => Pattern::Odd,
        _ => return None,
    };
    slopes.counter(a, tile).exact.then_some((a, p))
}

/// Whether the aligned loop's condition holds for every workgroup, known
/// when the kernel is compiled: every word node has a pattern over one
/// base counter, some word reads the base itself (not only `a | 1`), and
/// that counter is a multiple of 4 at the tile's first
/// position (`ir::range::zero_low_bits_at_origin`), so the smallest counter
/// is the base itself (`a & !1` and `a | 1` are `a` and `a + 1` there).
/// The general loop is then never taken and is not emitted: half the
/// shader, and its direct-path fallbacks' registers, gone. Returns how
/// many low bits of that first counter are known to be zero.
fn statically_aligned(
    k: &Kernel,
    ids: &[ExprId],
    patterns: &HashMap<ExprId, (ExprId, Pattern)>,
) -> Option<u32> {
    let mut bases = ids.iter().map(|id| patterns.get(id).map(|(a, _)| *a));
    let base = bases.next()??;
    // Some word reads the base itself, not only `a | 1`, so the smallest
    // counter is the base.
    let at_base = patterns.values().any(|(_, p)| *p != Pattern::Odd);
    let low_bits = phobos_core::ir::range::zero_low_bits_at_origin(k, base);
    (bases.all(|a| a == Some(base)) && at_base && low_bits >= 2).then_some(low_bits)
}

/// The elements of a tile of constant extents.
fn const_elements(tile: &[Dim]) -> Option<u64> {
    tile.iter().try_fold(1u64, |n, d| match d {
        Dim::Const(v) => n.checked_mul(*v),
        Dim::Sym(_) => None,
    })
}

/// The word nodes of `value` that a stepped loop over `tile` serves (the
/// largest group of one key whose counters all run along the tile with
/// slope 1), or `None` when the statement is not stepped.
pub(crate) fn stepped_words(
    k: &Kernel,
    value: ExprId,
    tile: &[Dim],
    quads: bool,
) -> Option<StepPlan> {
    let n = const_elements(tile)?;
    let whole_groups = n >= 4 && n.is_multiple_of(4);
    if n == 0 || (quads && !whole_groups) || n > u64::from(u32::MAX) {
        return None;
    }
    let mut slopes = Slopes::new(k, tile.len());
    let flat = |id: &ExprId, slopes: &mut Slopes<'_>| match &k.exprs[*id].kind {
        ExprKind::Builtin(_, xs) => {
            let c = slopes.counter(xs[4], tile);
            c.flat && !c.uniform
        }
        _ => false,
    };
    let ids = word_groups(k, value, tile)
        .into_iter()
        .filter(|ids| ids.iter().all(|id| flat(id, &mut slopes)))
        .max_by_key(|ids| ids.len())?;
    let patterns = ids
        .iter()
        .map(|id| match &k.exprs[*id].kind {
            ExprKind::Builtin(_, xs) => pattern(k, xs[4], tile, &mut slopes).map(|p| (*id, p)),
            _ => None,
        })
        .collect();
    Some(StepPlan { ids, patterns })
}

/// The tasks (chunks) of a stepped loop over `n` positions: the groups of
/// eight chunks that `n / 4` consecutive blocks can touch, eight each.
pub(crate) fn stepped_tasks(n: u64) -> u64 {
    let group = u64::from(K_GROUP_BLOCKS);
    8 * ((n / 4).div_ceil(group) + 1)
}

/// The number of positions of the largest tile a statement of `kernel`
/// steps, for the workgroup size heuristic.
pub(crate) fn largest_stepped_tile(k: &Kernel) -> Option<u64> {
    use phobos_core::ir::Stmt;
    let mut best = None;
    for s in &k.body {
        let (tile, value, quads) = match s {
            Stmt::For { .. } | Stmt::EndFor => continue,
            Stmt::Let { local, value } | Stmt::Var { local, value } => {
                let shape = k.locals[*local].shape.clone();
                if shape.is_empty() {
                    // A scalar: every invocation computes its own.
                    continue;
                }
                (shape, *value, false)
            }
            Stmt::Store {
                place,
                index,
                value,
            } => {
                if analysis::reads_place(k, *value, *place) {
                    continue;
                }
                (
                    analysis::slice_tile(index),
                    *value,
                    crate::lower::stmt::quad_slice(k, *place, index),
                )
            }
        };
        if stepped_words(k, value, &tile, quads).is_some() {
            let n = const_elements(&tile).unwrap_or(0);
            best = Some(best.map_or(n, |b: u64| b.max(n)));
        }
    }
    best
}

impl Lower<'_> {
    /// The stepped loop (see the module doc) over a tile of extents `lens`
    /// and `n` positions for `plan`'s word nodes; `body` gets the flat index
    /// and position of each group of 4 once. With patterns, two copies:
    /// the aligned loop, where lanes read words known at compile time, and
    /// the general one for workgroups whose counters are not aligned.
    pub(in crate::lower) fn stepped_tile_loop(
        &mut self,
        lens: &[H],
        (n, quads): (u32, bool),
        (plan, value): (&StepPlan, ExprId),
        pre: &HashMap<ExprId, H>,
        mut body: impl FnMut(&mut Self, H, &[H]) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        let k = self.k;
        let ids = &plan.ids;
        let counter = |id: &ExprId| match &k.exprs[*id].kind {
            ExprKind::Builtin(_, xs) => xs[4],
            _ => unreachable!("a word node is a builtin"),
        };
        let ExprKind::Builtin(_, xs) = &k.exprs[ids[0]].kind else {
            unreachable!("a word node is a builtin")
        };
        let mut cache = pre.clone();
        let mut key = [self.u32c(0); 4];
        for (q, x) in xs[..4].iter().enumerate() {
            key[q] = self.node(*x, &[], &mut cache)?;
        }
        let zero = self.u32c(0);
        let pos0 = vec![zero; lens.len()];
        let mut lo = None;
        for id in ids {
            // Counters are u32 (`Builtin::tandem_args`).
            let c = self.node(counter(id), &pos0, &mut pre.clone())?;
            lo = Some(lo.map_or(c, |x| self.min_max(naga::MathFunction::Min, x, c)));
        }
        let lo = lo.expect("a stepped statement has a word");
        let Some(patterns) = &plan.patterns else {
            return self.stepped_loop(
                lens,
                (n, quads),
                (key, lo),
                (ids, value, pre),
                None,
                &mut body,
            );
        };
        let fixed: HashMap<ExprId, Pattern> =
            patterns.iter().map(|(id, (_, p))| (*id, *p)).collect();
        let words = (ids.as_slice(), value, pre);
        if let Some(low_bits) = statically_aligned(k, ids, patterns) {
            if quads && self.shuffle_applies(value, n, low_bits) {
                self.tandem.renote(
                    "stepped: one invocation steps one chunk in registers, and each subgroup \
                     of 32 exchanges every 4 steps' words (subgroupShuffleXor) so that its \
                     loads and stores run in tile order",
                );
                let in_order = self.subgroup_in_order(super::shuffled::LANES);
                let accept =
                    self.nested(|lw| lw.shuffled_loop(lens, (key, lo), ids, &fixed, &mut body))?;
                // Never taken where subgroups are laid out as every known
                // driver lays them out, so the smallest correct code: each
                // draw on the direct path.
                let reject = self
                    .nested(|lw| lw.tile_loop_by(lens, 4, |lw, flat, pos| body(lw, flat, pos)))?;
                self.cur.push(Statement::If {
                    condition: in_order,
                    accept,
                    reject,
                });
                return Ok(());
            }
            return self.stepped_loop(lens, (n, quads), (key, lo), words, Some(&fixed), &mut body);
        }
        // Aligned: lo is a multiple of 4 and every base counter starts at lo.
        let three = self.u32c(3);
        let low = self.binary(B::And, lo, three);
        let mut aligned = self.binary(B::Equal, low, zero);
        for (a, _) in patterns.values() {
            let c = self.node(*a, &pos0, &mut pre.clone())?;
            let same = self.binary(B::Equal, c, lo);
            aligned = self.binary(B::LogicalAnd, aligned, same);
        }
        let accept = self.nested(|lw| {
            lw.stepped_loop(lens, (n, quads), (key, lo), words, Some(&fixed), &mut body)
        })?;
        let reject =
            self.nested(|lw| lw.stepped_loop(lens, (n, quads), (key, lo), words, None, &mut body))?;
        self.cur.push(Statement::If {
            condition: aligned,
            accept,
            reject,
        });
        Ok(())
    }

    /// One copy of the stepped loop from the smallest counter `lo`; with
    /// `fixed`, each word node's lanes read the words its pattern says.
    fn stepped_loop(
        &mut self,
        lens: &[H],
        (n, quads): (u32, bool),
        (key, lo): ([H; 4], H),
        (ids, value, pre): (&[ExprId], ExprId, &HashMap<ExprId, H>),
        fixed: Option<&HashMap<ExprId, Pattern>>,
        body: &mut impl FnMut(&mut Self, H, &[H]) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        let (one, two, three) = (self.u32c(1), self.u32c(2), self.u32c(3));
        let gs = self.u32c(K_GROUP_BLOCKS.trailing_zeros());
        // Blocks b0 .. b_end (unwrapped: below 2^31), groups g0 ..= g1.
        let b0 = self.binary(B::ShiftRight, lo, two);
        let nq = self.u32c(n.div_ceil(4));
        let b_end = self.binary(B::Add, b0, nq);
        let g0 = self.binary(B::ShiftRight, b0, gs);
        let last = self.binary(B::Subtract, b_end, one);
        let g1 = self.binary(B::ShiftRight, last, gs);
        let groups = self.binary(B::Subtract, g1, g0);
        let groups = self.binary(B::Add, groups, one);
        let tasks = self.binary(B::ShiftLeft, groups, three);
        let depth = PREFETCH_DEPTH;
        let fetch = match quads {
            true => self.fetch_vars(value, depth),
            false => Vec::new(),
        };
        self.chunk_tasks(tasks, |lw, go, lane| {
            let gu = lw.binary(B::Add, g0, go);
            // Chunk indices wrap with the 2^30 blocks that 32-bit counters reach.
            let mask = lw.u32c((1u32 << (30 - K_GROUP_BLOCKS.trailing_zeros())) - 1);
            let group = lw.binary(B::And, gu, mask);
            let chunk = lw.binary(B::ShiftLeft, group, three);
            let chunk = lw.binary(B::InclusiveOr, chunk, lane);
            let (vars, tc) = lw.seed_chunk(key, chunk);
            let warm = lw.u32c(WARM_UP);
            lw.steps_until(vars, tc, warm)?;
            let gs = lw.u32c(K_GROUP_BLOCKS.trailing_zeros());
            let bstart = lw.binary(B::ShiftLeft, gu, gs);
            let bstart = lw.binary(B::InclusiveOr, bstart, lane);
            for d in 0..depth {
                let ahead = lw.u32c(8 * d as u32);
                let b = lw.binary(B::Add, bstart, ahead);
                lw.fetch_group(b, (b0, b_end), lens, &fetch, d, pre)?;
            }
            let steps = lw.nested(|lw| {
                let b = lw.next_block_or_break(tc, bstart, b_end);
                // This group's loads, made one step earlier, and the next
                // group's, in flight while this step and group run.
                let cur: Vec<H> = fetch.iter().map(|(_, v)| lw.var_load(v[0])).collect();
                for (_, v) in &fetch {
                    for d in 1..depth {
                        let x = lw.var_load(v[d]);
                        lw.var_store(v[d - 1], x);
                    }
                }
                let ahead = lw.u32c(8 * depth as u32);
                let next = lw.binary(B::Add, b, ahead);
                lw.fetch_group(next, (b0, b_end), lens, &fetch, depth - 1, pre)?;
                let q = lw.binary(B::Subtract, b, b0);
                let two = lw.u32c(2);
                let flat = lw.binary(B::ShiftLeft, q, two);
                let pos = lw.flat_position(flat, lens);
                let out = lw.step(vars, tc);
                let inside = lw.binary(B::GreaterEqual, b, b0);
                let accept = lw.nested(|lw| {
                    let two = lw.u32c(2);
                    let first = lw.binary(B::ShiftLeft, b, two);
                    let mut element = |lw: &mut Self, lane: Option<u32>, flat: H, pos: &[H]| {
                        for id in ids {
                            let pattern = fixed.and_then(|f| f.get(id).copied());
                            lw.tandem.stepped.insert(
                                *id,
                                Stepped {
                                    out,
                                    first,
                                    pattern,
                                    lane,
                                },
                            );
                        }
                        let r = body(lw, flat, pos);
                        lw.tandem.stepped.clear();
                        lw.tandem.preloaded.clear();
                        r
                    };
                    if quads {
                        lw.tandem.preloaded = fetch.iter().map(|(id, _)| *id).zip(cur).collect();
                        return element(lw, None, flat, &pos);
                    }
                    // Single elements: the block's 4 positions in turn,
                    // those inside the tile.
                    element(lw, Some(0), flat, &pos)?;
                    for l in 1..4u32 {
                        let d = lw.u32c(l);
                        let at = lw.binary(B::Add, flat, d);
                        let end = lw.u32c(n);
                        let inside = lw.binary(B::Less, at, end);
                        let accept = lw.nested(|lw| {
                            let pos = lw.flat_position(at, lens);
                            element(lw, Some(l), at, &pos)
                        })?;
                        lw.if_then(inside, accept);
                    }
                    Ok(())
                })?;
                lw.if_then(inside, accept);
                Ok(())
            })?;
            lw.push_loop(steps, Block::new());
            Ok(())
        })
    }

    /// The 16-byte loads under `value` (`stmt::quad_load`), each with a
    /// function variable that holds it for the next group.
    fn fetch_vars(&mut self, value: ExprId, depth: usize) -> Vec<(ExprId, Vec<H>)> {
        let k = self.k;
        let mut loads = Vec::new();
        let mut seen = IdVec::from_elem(false, k.exprs.len());
        let mut stack = vec![value];
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id], true) {
                continue;
            }
            let kind = &k.exprs[id].kind;
            if let ExprKind::Load { place, .. } = kind
                && crate::lower::stmt::quad_load(k, id)
            {
                loads.push((id, self.place_elem(*place)));
            }
            stack.extend(kind.operands());
        }
        loads.sort_unstable_by_key(|(id, _)| *id);
        loads
            .into_iter()
            .map(|(id, elem)| {
                let ty = crate::lower::bindings::vec4_type(&mut self.m, elem);
                let vars = (0..depth)
                    .map(|_| {
                        let var = self.f.local_variables.append(
                            naga::LocalVariable {
                                name: None,
                                ty,
                                init: None,
                            },
                            naga::Span::UNDEFINED,
                        );
                        self.expr(Expression::LocalVariable(var))
                    })
                    .collect();
                (id, vars)
            })
            .collect()
    }

    /// Makes the 16-byte loads `fetch` names for the group paired with
    /// block `b`, into their variables, when `b` is in `b0 .. b_end`.
    fn fetch_group(
        &mut self,
        b: H,
        (b0, b_end): (H, H),
        lens: &[H],
        fetch: &[(ExprId, Vec<H>)],
        slot: usize,
        pre: &HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        if fetch.is_empty() {
            return Ok(());
        }
        let from = self.binary(B::GreaterEqual, b, b0);
        let to = self.binary(B::Less, b, b_end);
        let inside = self.binary(B::LogicalAnd, from, to);
        let accept = self.nested(|lw| {
            let q = lw.binary(B::Subtract, b, b0);
            let two = lw.u32c(2);
            let flat = lw.binary(B::ShiftLeft, q, two);
            let pos = lw.flat_position(flat, lens);
            lw.lane = Some(crate::lower::Lane {
                lane: 0,
                pos0: pos.clone(),
                loads: HashMap::new(),
            });
            let mut cache = pre.clone();
            for (id, _) in fetch {
                if let Err(e) = lw.node(*id, &pos, &mut cache) {
                    lw.lane = None;
                    return Err(e);
                }
            }
            let lane = lw.lane.take().expect("set above");
            for (id, vars) in fetch {
                lw.var_store(vars[slot], lane.loads[id]);
            }
            Ok(())
        })?;
        self.if_then(inside, accept);
        Ok(())
    }

    /// A stepped word: word `i - first` of the block just stepped when that
    /// is below 4, the direct path otherwise.
    pub(super) fn stepped_word(&mut self, s: Stepped, key: [H; 4], i: H) -> H {
        let lane = s.lane.or(self.lane.as_ref().map(|l| l.lane));
        if let (Some(p), Some(lane)) = (s.pattern, lane) {
            return s.out[p.word(lane) as usize];
        }
        let d = self.binary(B::Subtract, i, s.first);
        let four = self.u32c(4);
        let hit = self.binary(B::Less, d, four);
        let result = self.temp(Scalar::U32);
        let v = self.pick(s.out, d);
        self.var_store(result, v);
        let reject = self.nested(|lw| {
            let v = lw.direct_word(key, i);
            lw.var_store(result, v);
            Ok(())
        });
        let reject = reject.expect("the direct path is a call");
        self.cur.push(Statement::If {
            condition: hit,
            accept: Block::new(),
            reject,
        });
        self.var_load(result)
    }
}
