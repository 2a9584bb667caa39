//! Staged Tandem words: when a statement's counters are contiguous along
//! its tile, the workgroup steps chunks instead of seeding one per element.
//!
//! The statement's tile is cut into windows of `window` consecutive flat
//! positions. For each window, every invocation runs (the window loop is
//! uniform: it depends on extents and constants only):
//! 1. the counters of the window's first and last elements, which bound
//!    every counter of the window (`ir::analysis::Slopes` proves the counter a
//!    non-decreasing function of the flat position);
//! 2. a barrier (the buffer's previous readers are done), then the fill:
//!    one task per chunk that holds a block of the window's words (SPEC.md
//!    section 3.4: block `b` is block `j = (b % 8K) / 8` of chunk
//!    `8 (b / 8K) + b % 8`), taken by invocations `i, i + n, ...`; a task
//!    seeds its chunk, warms it up and steps it through the blocks the
//!    window needs, storing their four words in workgroup memory;
//! 3. a barrier, then the statement's own tile loop over the window, where
//!    each staged word node reads `buf[counter - first word]`.
//!
//! A counter outside its window's buffer (one the analysis guessed wrong,
//! counters that wrap past 2^32, more words than the buffer holds) takes
//! the direct path in an `if`, so staging only moves time, never bits.
//! One window of `W` words costs about `W / 4` steps plus 8 warm-up steps
//! per chunk touched (2 to 3 groups of 8 chunks for `W = 2048`), against
//! about 25 steps per word seeded directly.

use super::{K_GROUP_BLOCKS, Lower, WARM_UP};
use crate::LowerError;
use crate::lower::H;
use crate::plan::draws::Draw;
use naga::{
    BinaryOperator as B, Block, Expression, GlobalVariable, Handle, MathFunction, Statement,
};
use phobos_core::ir::analysis::{self, KeyOf, Slopes, key_of};
use phobos_core::ir::{Builtin, ExprId, ExprKind, IdVec, Kernel, Place, Stmt};
use phobos_core::types::{Dim, Scalar};
use std::collections::HashMap;
use std::num::NonZeroU32;

/// The most flat positions of one window: 2048 words (8 KiB) cover two
/// groups of eight chunks, so a window touches 16 to 24 chunks.
const MAX_WINDOW: u32 = 2048;
/// The fewest positions a window is worth staging for.
const MIN_WINDOW: u32 = 64;
/// The most positions a store over kept rows stages its words for, unless
/// `GpuOptions::knobs` says otherwise (0 turns the path off): one group
/// of eight chunks. On the H200, rows of 1024 ran 23 to 62% faster staged
/// than stepped in exact mode and 0 to 18% in fast mode, while rows of
/// 2048 to 8192 ran 4 to 36% slower: there the stepped loop has a lane for
/// each of 16 to 64 chunks a row, and each lane's chain of steps overlaps
/// the stores it feeds, where staging runs the chains before the stores
/// (bench/RESULTS.md, eleventh session).
pub(crate) const ROW_WORDS_MAX: u32 = K_GROUP_BLOCKS * 4;

/// Workgroup memory a row store's buffers leave for what the statements
/// before it still make (the reductions' partials), in bytes.
const ROW_MARGIN: u64 = 4096;
/// The workgroup memory stores over kept rows may give their words where
/// `used` bytes are declared before the statements.
pub(crate) fn row_room(limit: u64, used: u64) -> u64 {
    limit.saturating_sub(used).saturating_sub(ROW_MARGIN)
}

/// Words a buffer holds beyond its window: the first counter rounded down
/// to its block, and `i | 1` one past the last (`tandem_normal`).
pub(super) const SLACK: u32 = 8;

/// Where a staged word node reads its word: `buf[i - first]` when
/// `i - first < count` (wrapping), the direct path otherwise.
#[derive(Clone, Copy)]
pub(in crate::lower) struct Window {
    pub(super) buf: Handle<GlobalVariable>,
    pub(super) first: H,
    pub(super) count: H,
    /// Where the buffer holds a window of each of several rows
    /// (`rows.rs`): `first` is the first row's first counter.
    pub(super) rows: Option<super::rows::RowWindow>,
}

/// The word nodes of `value` whose key is a scalar and whose counter is
/// contiguous along `tile`, grouped by key (one buffer per group).
pub(crate) fn word_groups(k: &Kernel, value: ExprId, tile: &[Dim]) -> Vec<Vec<ExprId>> {
    groups_by(k, value, tile, |c| c.contiguous())
}

/// The word nodes of `value` whose key is a scalar and whose counter over
/// `tile` is as `pick` asks, grouped by key.
pub(super) fn groups_by(
    k: &Kernel,
    value: ExprId,
    tile: &[Dim],
    pick: impl Fn(analysis::Counter) -> bool,
) -> Vec<Vec<ExprId>> {
    // Word nodes of one key (the core's classification of key arguments:
    // `_tandem_key(seed, q)` of a parameter or a constant seed is the same
    // value wherever it appears) share a buffer.
    let mut groups: Vec<([KeyOf; 4], Vec<ExprId>)> = Vec::new();
    let mut slopes = Slopes::new(k, tile.len());
    let mut seen = IdVec::from_elem(false, k.exprs.len());
    let mut stack = vec![value];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id], true) {
            continue;
        }
        let e = &k.exprs[id];
        if let ExprKind::Builtin(Builtin::TandemWord, xs) = &e.kind {
            let scalar_key = xs[..4].iter().all(|x| k.exprs[*x].shape.is_empty());
            if scalar_key && pick(slopes.counter(xs[4], tile)) {
                let key: [KeyOf; 4] = std::array::from_fn(|q| key_of(k, xs[q]));
                match groups.iter_mut().find(|(g, _)| *g == key) {
                    Some((_, ids)) => ids.push(id),
                    None => groups.push((key, vec![id])),
                }
            }
        }
        // A word under a reduction is drawn at the reduced positions, not
        // the statement's: it is computed directly, never staged or stepped.
        if let ExprKind::Reduce { .. } = e.kind {
            continue;
        }
        // Operands, the counter included (it may hold words of its own).
        stack.extend(e.kind.operands());
    }
    // In the order of the nodes, so that a kernel lowers the same way every time.
    let mut out: Vec<Vec<ExprId>> = groups.into_iter().map(|(_, ids)| ids).collect();
    for ids in &mut out {
        ids.sort_unstable();
    }
    out.sort_unstable();
    out
}

/// Whether the DAG under `value` has a Tandem word node.
pub(crate) fn has_words(k: &Kernel, value: ExprId) -> bool {
    let mut seen = IdVec::from_elem(false, k.exprs.len());
    let mut stack = vec![value];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id], true) {
            continue;
        }
        let kind = &k.exprs[id].kind;
        if let ExprKind::Builtin(Builtin::TandemWord, _) = kind {
            return true;
        }
        stack.extend(kind.operands());
    }
    false
}

/// The statements whose tile loops may stage words, with their tile and value.
fn staging_candidates(k: &Kernel) -> Vec<(Vec<Dim>, ExprId, bool)> {
    let private = |p| crate::lower::bindings::private(k, p);
    let scopes = k.scopes();
    let mut out = Vec::new();
    for (i, s) in k.body.iter().enumerate() {
        // A statement whose draws are stepped needs no buffer.
        let mut push = |tile: Vec<Dim>, value: ExprId, quads: bool| {
            if super::stepped::stepped_words(k, value, &tile, quads).is_none() {
                out.push((tile, value, scopes[i].is_some()));
            }
        };
        match s {
            Stmt::For { .. } | Stmt::EndFor => {}
            Stmt::Let { local, value } | Stmt::Var { local, value } => {
                if !private(Place::Local(*local)) {
                    push(k.locals[*local].shape.clone(), *value, false);
                }
            }
            Stmt::Store {
                place,
                index,
                value,
            } => {
                if private(*place) || analysis::reads_place(k, *value, *place) {
                    continue;
                }
                let tile = analysis::slice_tile(index);
                let quads = crate::lower::stmt::quad_slice(k, *place, index);
                push(tile, *value, quads);
            }
        }
    }
    out
}

/// The workgroup buffers of staged words, planned before the body is
/// lowered (`plan::memory`): as many as the statement with the most keys
/// of staged words needs, each `window + SLACK` words, in the `room` bytes
/// of workgroup memory that `let`/`var` tiles and staging tiles leave
/// under `GpuOptions::workgroup_memory`. The window is [`MAX_WINDOW`], or
/// the largest constant tile when smaller, halved while the buffers do not
/// fit; with less room than one buffer of [`MIN_WINDOW`], words go direct
/// (`None`). A statement with more keys than buffers stages the first
/// ones.
pub(crate) fn word_buffers(
    k: &Kernel,
    room: u64,
    (invocations, heavy): (u32, bool),
) -> Option<crate::plan::WordBuffers> {
    let mut keys = 0;
    let mut largest: Option<u64> = None;
    // The words of the most rows a window of a statement staged by rows
    // holds (`rows.rs`), and a row's.
    let mut row_words: Option<(u64, u64)> = None;
    for (tile, value, looped) in staging_candidates(k) {
        let flat = word_groups(k, value, &tile).len();
        if flat > 0 {
            keys = keys.max(flat);
            let elements = tile.iter().try_fold(1u64, |n, d| match d {
                Dim::Const(v) => Some(n.saturating_mul(*v)),
                Dim::Sym(_) => None,
            });
            largest = largest.max(Some(elements.unwrap_or(u64::MAX)));
            continue;
        }
        let (groups, columns) = super::rows::oriented_groups(k, value, &tile);
        let rows = groups.len();
        if rows > 0
            && heavy
            && super::rows::rows_pay(&tile, invocations, looped)
            && let Some(w) = super::rows::window_words(&tile, columns)
        {
            keys = keys.max(rows);
            row_words = row_words.max(Some(w));
        }
    }
    if keys == 0 {
        return None;
    }
    let keys = keys as u64;
    let mut window = 0;
    let mut words = 0;
    if let Some(largest) = largest {
        window = largest
            .checked_next_power_of_two()
            .and_then(|w| u32::try_from(w).ok())
            .map_or(MAX_WINDOW, |w| w.clamp(MIN_WINDOW, MAX_WINDOW));
        let bytes = |w: u32| u64::from(w + SLACK) * 4;
        while window > MIN_WINDOW && bytes(window) * keys > room {
            window /= 2;
        }
        words = window + SLACK;
    }
    if let Some((most, row)) = row_words {
        // As many of the rows as fit, none where not even one does.
        let rows = (room / (keys * row * 4)).min(most / row);
        words = words.max(u32::try_from(rows * row).unwrap_or(u32::MAX));
    }
    let count = (room / (u64::from(words) * 4).max(1)).min(keys) as u32;
    (count > 0 && words > 0).then_some(crate::plan::WordBuffers {
        window,
        words,
        count,
    })
}

/// Declares the plan's buffers of staged words (`word_buffers`).
pub(in crate::lower) fn draw_buffers(lw: &mut Lower<'_>) {
    let Some(w) = lw.plan.upfront.words else {
        return;
    };
    for g in 0..w.count {
        let buf = word_buffer(lw, &format!("tandem_words_{g}"), w.words);
        lw.tandem.bufs.push(buf);
    }
    lw.tandem.window = w.window;
}

/// A workgroup array of `words` u32 named `name`.
fn word_buffer(lw: &mut Lower<'_>, name: &str, words: u32) -> Handle<GlobalVariable> {
    let count = NonZeroU32::new(words).expect("positive");
    let base = (lw.u32_ty, 4);
    crate::lower::bindings::workgroup_var(&mut lw.m, name.into(), base, count)
}

/// The positions of a tile of constant extents, if it has them and they
/// fit in u32.
fn const_positions(tile: &[Dim]) -> Option<u32> {
    let n = tile.iter().try_fold(1u64, |n, d| match d {
        Dim::Const(v) => n.checked_mul(*v),
        Dim::Sym(_) => None,
    })?;
    u32::try_from(n).ok()
}

impl Lower<'_> {
    /// `body` (a store over kept rows that [`row_words_fit`]
    /// admitted) with the words of `value` staged for the whole tile `tile`
    /// (extents `lens`): one buffer per key, filled between two barriers
    /// before it. `Ok(false)`, with nothing emitted, when what the earlier
    /// statements made leaves no room for the buffers after all; the caller
    /// then takes another path, with the same bits.
    pub(in crate::lower) fn with_row_words(
        &mut self,
        (value, tile, lens): (ExprId, &[Dim], &[H]),
        pre: &HashMap<ExprId, H>,
        body: impl FnOnce(&mut Self) -> Result<(), LowerError>,
    ) -> Result<bool, LowerError> {
        let groups = word_groups(self.k, value, tile);
        if groups.is_empty() {
            body(self)?;
            return Ok(true);
        }
        let n = const_positions(tile).expect("row_words_fit checked the tile");
        let cap = n + SLACK;
        let bytes = u64::from(cap) * 4 * groups.len() as u64;
        if self.workgroup_used() + bytes > self.options.workgroup_memory {
            return Ok(false);
        }
        let stmt = self.tandem.stmt;
        let bufs: Vec<_> = (0..groups.len())
            .map(|g| word_buffer(self, &format!("tandem_row_words_{stmt}_{g}"), cap))
            .collect();
        self.tandem.note(
            "staged: the tile's words stepped into workgroup memory by chunk, then read \
             by each kept row's leaves",
        );
        let zero = self.u32c(0);
        let all = self.u32c(n);
        self.stage_window((&groups, &bufs, cap), lens, (zero, all), pre)?;
        let r = body(self);
        self.tandem.staged.clear();
        r.map(|()| true)
    }

    /// The tile loop of a statement of tile `tile` (extents `lens`) and
    /// value `value`, over groups of `group` flat positions
    /// ([`Self::tile_loop_by`]): staged by windows when the value has word
    /// nodes with contiguous counters and a buffer is free, plain otherwise.
    pub(in crate::lower) fn draw_tile_loop(
        &mut self,
        tile: &[Dim],
        lens: &[H],
        group: u32,
        value: ExprId,
        pre: &HashMap<ExprId, H>,
        body: impl FnMut(&mut Self, H, &[H]) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        let quads = group == 4;
        let upfront = &self.plan.upfront;
        let looped = self.in_loop();
        let (groups, window) = match crate::plan::draws::strategy(
            self.k,
            (upfront, self.block_invocations, self.options.heavy_groups),
            (value, tile, group, looped),
        ) {
            Draw::Stepped(plan) => {
                let n = tile.iter().map(|d| match d {
                    Dim::Const(v) => *v,
                    Dim::Sym(_) => unreachable!("a stepped tile has constant extents"),
                });
                let n = u32::try_from(n.product::<u64>()).expect("stepped tiles fit in u32");
                self.tandem
                    .note("stepped: one invocation steps one chunk in registers");
                return self.stepped_tile_loop(lens, (n, quads), (&plan, value), pre, body);
            }
            Draw::Direct(why) => {
                if let Some(why) = why {
                    self.tandem.note(&format!("direct (slower): {why}"));
                }
                return self.tile_loop_by(lens, group, body);
            }
            Draw::Staged {
                groups,
                window,
                rows,
            } => (groups, (window, rows)),
        };
        let (window, rows) = window;
        // One window holds the whole tile: every column, or every row.
        let whole = rows.is_some_and(|r| {
            r.columns || matches!(tile.first(), Some(Dim::Const(n)) if *n <= u64::from(r.rows))
        });
        let window = match rows {
            Some(r) if r.columns => {
                self.tandem.note(&format!(
                    "staged by columns: their counters run down the columns, so each \
                     column's are stepped into workgroup memory, all {} at once",
                    r.rows
                ));
                r.rows * r.len
            }
            Some(r) => {
                self.tandem.note(&format!(
                    "staged by rows: their counters run along the rows, so each row's are \
                     stepped into workgroup memory, {} rows at a time",
                    r.rows
                ));
                r.rows * r.len
            }
            None => {
                self.tandem.note(&format!(
                    "staged: windows of {window} counters stepped into workgroup memory"
                ));
                window
            }
        };
        debug_assert!(window.is_multiple_of(group));
        let mut n = self.u32c(1);
        for e in lens {
            n = self.binary(B::Multiply, n, *e);
        }
        let start = self.temp(Scalar::U32);
        let zero = self.u32c(0);
        self.var_store(start, zero);
        let mut body = Some(body);
        let loop_body = self.nested(|lw| {
            let w0 = lw.var_load(start);
            let done = lw.binary(B::GreaterEqual, w0, n);
            lw.if_then(done, Block::from_vec(vec![Statement::Break]));
            // The window's end, min(w0 + window, n) without overflow.
            let w = lw.u32c(window);
            let left = lw.binary(B::Subtract, n, w0);
            let full = lw.binary(B::Greater, left, w);
            let end = lw.binary(B::Add, w0, w);
            let w1 = lw.select(full, end, n);
            let bufs = lw.tandem.bufs.clone();
            match rows {
                Some(r) => lw.stage_rows((&groups, &bufs, r), lens, (w0, w1, whole), pre)?,
                None => lw.stage_window((&groups, &bufs, window + SLACK), lens, (w0, w1), pre)?,
            }
            let body = body.take().expect("one window loop");
            let r = lw.tile_loop_range(lens, group, Some((w0, w1)), body);
            lw.tandem.staged.clear();
            r
        })?;
        let continuing = self.nested(|lw| {
            let w0 = lw.var_load(start);
            let w = lw.u32c(window);
            let next = lw.binary(B::Add, w0, w);
            lw.var_store(start, next);
            Ok(())
        })?;
        self.push_loop(loop_body, continuing);
        Ok(())
    }

    /// Steps the Tandem words that flat positions `w0 .. w1` of a tile of
    /// extents `lens` draw into workgroup memory, between two barriers: the
    /// word nodes of `groups[g]` (one key) into `bufs[g]`, `cap` words
    /// from the first counter's block. Each word node then reads its buffer
    /// ([`Self::staged_word`]) until `self.tandem.staged` is cleared.
    fn stage_window(
        &mut self,
        (groups, bufs, cap): (&[Vec<ExprId>], &[Handle<GlobalVariable>], u32),
        lens: &[H],
        (w0, w1): (H, H),
        pre: &HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        for b in bufs {
            self.tandem.filled.retain(|f| f.buf != *b);
        }
        let zero = self.u32c(0);
        let one = self.u32c(1);
        let last = self.binary(B::Subtract, w1, one);
        let first_pos = self.flat_position(w0, lens);
        let last_pos = self.flat_position(last, lens);
        let barrier = Statement::ControlBarrier(naga::Barrier::WORK_GROUP);
        let mut fills = Vec::new();
        for (g, ids) in groups.iter().enumerate() {
            let ExprKind::Builtin(_, xs) = &self.k.exprs[ids[0]].kind else {
                unreachable!("a word node is a builtin")
            };
            let mut cache = pre.clone();
            let mut key = [zero; 4];
            for (q, x) in xs[..4].iter().enumerate() {
                key[q] = self.node(*x, &[], &mut cache)?;
            }
            let (mut lo, mut hi) = (None, None);
            for id in ids {
                let ExprKind::Builtin(_, xs) = &self.k.exprs[*id].kind else {
                    unreachable!("a word node is a builtin")
                };
                let i = xs[4];
                let a = self.node(i, &first_pos, &mut pre.clone())?;
                let b = self.node(i, &last_pos, &mut pre.clone())?;
                lo = Some(lo.map_or(a, |x| self.min_max(MathFunction::Min, x, a)));
                hi = Some(hi.map_or(b, |x| self.min_max(MathFunction::Max, x, b)));
            }
            let (lo, hi) = (lo.expect("a group has a word"), hi.expect("and a last"));
            let not3 = self.u32c(!3);
            let first = self.binary(B::And, lo, not3);
            let span = self.binary(B::Subtract, hi, first);
            let span = self.binary(B::Add, span, one);
            let cap_words = self.u32c(cap);
            let words = self.min_max(MathFunction::Min, span, cap_words);
            let three = self.u32c(3);
            let blocks = self.binary(B::Add, words, three);
            let two = self.u32c(2);
            let blocks = self.binary(B::ShiftRight, blocks, two);
            let count = self.binary(B::ShiftLeft, blocks, two);
            let buf = bufs[g];
            fills.push((buf, key, first, blocks));
            for id in ids {
                self.tandem.staged.insert(
                    *id,
                    Window {
                        buf,
                        first,
                        count,
                        rows: None,
                    },
                );
            }
        }
        self.cur.push(barrier.clone());
        for (buf, key, first, blocks) in fills {
            self.fill_window(buf, key, (first, blocks), cap / 4)?;
        }
        self.cur.push(barrier);
        Ok(())
    }

    /// The tile position of flat index `flat` (row-major over `ext`).
    pub(super) fn flat_position(&mut self, flat: H, ext: &[H]) -> Vec<H> {
        let mut pos = vec![flat; ext.len()];
        let mut rest = flat;
        for a in (1..ext.len()).rev() {
            pos[a] = self.binary(B::Modulo, rest, ext[a]);
            rest = self.binary(B::Divide, rest, ext[a]);
        }
        if let Some(p) = pos.first_mut() {
            *p = rest;
        }
        pos
    }

    pub(super) fn min_max(&mut self, fun: MathFunction, a: H, b: H) -> H {
        self.expr(Expression::Math {
            fun,
            arg: a,
            arg1: Some(b),
            arg2: None,
            arg3: None,
        })
    }

    /// Stores words `first .. first + 4 blocks` (wrapping) of the stream of
    /// `key` into `buf[0 ..]`: one task per chunk holding one of the blocks
    /// (groups of eight chunks from the first block's group, eight tasks a
    /// group), tasks `i, i + n, ...` on invocation `i`. A task seeds its
    /// chunk, warms it up, and steps it from block 0 to its last block in
    /// the range, storing the blocks in the range. Inside a loop, each task
    /// carries its chunk's state to the next fill (`carried.rs`) where the
    /// slots for windows of up to `most` blocks fit.
    fn fill_window(
        &mut self,
        buf: Handle<GlobalVariable>,
        key: [H; 4],
        (first, blocks): (H, H),
        most: u32,
    ) -> Result<(), LowerError> {
        let [a, g0, lim] = self.block_places(first, blocks);
        let in_group = self.u32c(K_GROUP_BLOCKS - 1);
        let gs = self.u32c(K_GROUP_BLOCKS.trailing_zeros());
        let three = self.u32c(3);
        let round = self.binary(B::Add, lim, in_group);
        let groups = self.binary(B::ShiftRight, round, gs);
        let tasks = self.binary(B::ShiftLeft, groups, three);
        let task = |lw: &mut Self, go: H, lane: H, carry: Option<&super::carried::Carry>| {
            let zero = lw.u32c(0);
            lw.block_task((buf, zero), key, [g0, go, lane], [a, lim], carry)
        };
        // The window's blocks start anywhere in a group.
        self.fill_tasks((tasks, 8 * (1 + most.div_ceil(K_GROUP_BLOCKS))), task)
    }

    /// Where blocks `first / 4 ..` (`blocks` of them) lie in the groups of
    /// eight chunks: the first one's place `a` in its group `g0`, and `lim
    /// = a + blocks`, places counted from group `g0`'s first block.
    pub(super) fn block_places(&mut self, first: H, blocks: H) -> [H; 3] {
        let two = self.u32c(2);
        let b0 = self.binary(B::ShiftRight, first, two);
        let in_group = self.u32c(K_GROUP_BLOCKS - 1);
        let a = self.binary(B::And, b0, in_group);
        let gs = self.u32c(K_GROUP_BLOCKS.trailing_zeros());
        let g0 = self.binary(B::ShiftRight, b0, gs);
        let lim = self.binary(B::Add, a, blocks);
        [a, g0, lim]
    }

    /// Task `(go, lane)` of a fill of places `a .. lim` from group `g0`
    /// (`block_places`) into `buf` from word `offset`: chunk `lane` of
    /// group `g0 + go`, where it holds one of the places; resuming from
    /// `carry`'s state where it may (`carried.rs`).
    pub(super) fn block_task(
        &mut self,
        (buf, offset): (Handle<GlobalVariable>, H),
        key: [H; 4],
        [g0, go, lane]: [H; 3],
        [a, lim]: [H; 2],
        carry: Option<&super::carried::Carry>,
    ) -> Result<(), LowerError> {
        let gs = self.u32c(K_GROUP_BLOCKS.trailing_zeros());
        let place0 = self.binary(B::ShiftLeft, go, gs);
        let place0 = self.binary(B::InclusiveOr, place0, lane);
        let needed = self.binary(B::Less, place0, lim);
        let accept = self.nested(|lw| {
            lw.fill_task(
                (buf, offset),
                key,
                [g0, go, lane],
                [a, lim],
                (place0, carry),
            )
        })?;
        self.if_then(needed, accept);
        Ok(())
    }

    /// One fill task: chunk `lane` of group `g0 + go` (wrapping at the
    /// 2^22 groups of the 2^32 words counters reach), whose block `j` is
    /// at place `place0 + 8 j`; stores the blocks at places in `a .. lim`
    /// into `buf` from word `offset` on.
    fn fill_task(
        &mut self,
        (buf, offset): (Handle<GlobalVariable>, H),
        key: [H; 4],
        [g0, go, lane]: [H; 3],
        [a, lim]: [H; 2],
        (place0, carry): (H, Option<&super::carried::Carry>),
    ) -> Result<(), LowerError> {
        let three = self.u32c(3);
        let group = self.binary(B::Add, g0, go);
        let groups_mask = self.u32c((1u32 << (30 - K_GROUP_BLOCKS.trailing_zeros())) - 1);
        let group = self.binary(B::And, group, groups_mask);
        let chunk = self.binary(B::ShiftLeft, group, three);
        let chunk = self.binary(B::InclusiveOr, chunk, lane);
        let (vars, t) = match carry {
            Some(c) => {
                self.resume_or_seed(c, key, chunk, (place0, a))?;
                (c.vars, c.t)
            }
            None => {
                let (vars, t) = self.seed_chunk(key, chunk);
                let warm = self.u32c(WARM_UP);
                self.steps_until(vars, t, warm)?;
                (vars, t)
            }
        };
        let body = self.nested(|lw| {
            let place = lw.next_block_or_break(t, place0, lim);
            let out = lw.step(vars, t);
            let inside = lw.binary(B::GreaterEqual, place, a);
            let store = lw.nested(|lw| {
                let rel = lw.binary(B::Subtract, place, a);
                let two = lw.u32c(2);
                let at = lw.binary(B::ShiftLeft, rel, two);
                let at = lw.binary(B::Add, at, offset);
                let base = lw.expr(Expression::GlobalVariable(buf));
                for (q, w) in out.into_iter().enumerate() {
                    let off = lw.u32c(q as u32);
                    let index = lw.binary(B::Add, at, off);
                    let pointer = lw.access(base, index);
                    lw.var_store(pointer, w);
                }
                Ok(())
            })?;
            lw.if_then(inside, store);
            Ok(())
        })?;
        self.push_loop(body, Block::new());
        Ok(())
    }

    /// A staged word: `buf[i - first]` inside the window's buffer, the
    /// direct path outside it.
    pub(super) fn staged_word(&mut self, w: Window, key: [H; 4], i: H) -> Result<H, LowerError> {
        let (d, hit) = match w.rows {
            Some(rows) => self.row_slot(&w, rows, i),
            None => {
                let d = self.binary(B::Subtract, i, w.first);
                (d, self.binary(B::Less, d, w.count))
            }
        };
        let result = self.temp(Scalar::U32);
        let accept = self.nested(|lw| {
            let base = lw.expr(Expression::GlobalVariable(w.buf));
            let pointer = lw.access(base, d);
            let v = lw.var_load(pointer);
            lw.var_store(result, v);
            Ok(())
        })?;
        let reject = self.nested(|lw| {
            let v = lw.direct_word(key, i);
            lw.var_store(result, v);
            Ok(())
        })?;
        self.cur.push(Statement::If {
            condition: hit,
            accept,
            reject,
        });
        Ok(self.var_load(result))
    }
}

/// Whether a store of `value` over the whole constant tile `tile` may
/// take the kept rows' path (`Lower::row_store`) as far as its Tandem
/// words go: it draws none, or its words have counters that run along
/// the tile (`word_groups`), the tile has at most `most` positions
/// ([`ROW_WORDS_MAX`] unless `Knobs::row_words_max` says otherwise), and
/// a buffer of the tile's words per key fits in `room` bytes. There the
/// words are stepped into workgroup memory by chunk
/// (`Lower::with_row_words`) and each leaf reads its own, so the store
/// keeps the rows' order instead of being turned inside out by chunks
/// (`stepped.rs`), which would leave all but one invocation a chunk idle.
pub(crate) fn row_words_fit(
    k: &Kernel,
    value: ExprId,
    tile: &[Dim],
    (most, room): (u32, u64),
) -> bool {
    if !has_words(k, value) {
        return true;
    }
    let groups = word_groups(k, value, tile).len() as u64;
    let Some(n) = const_positions(tile) else {
        return false;
    };
    groups > 0 && n <= most && (u64::from(n) + u64::from(SLACK)) * 4 * groups <= room
}
