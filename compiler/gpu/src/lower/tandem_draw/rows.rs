//! Staged Tandem words by rows: where a statement's counters run along
//! the rows of its 2-D tile but jump between rows (the counter of a block
//! of a larger matrix, `(r0 + iota(0)) * N + c0 + iota(1)`: attention's
//! dropout mask, `(bh * S + i) * S + j`), each row's counters are a window
//! of the row's length, `N` apart (`ir::analysis::Counter::row_stride`).
//! `staged.rs` needs the whole tile's counters in one window; here the
//! buffer holds one window per row instead.
//!
//! The tile is taken `rows` rows at a time. For each such window, every
//! invocation runs:
//! 1. the first row's first counter `base` (the counter at `(r, 0)`);
//! 2. a barrier, then the fill: row `q` of the window holds the blocks
//!    from word `(base + q N) & !3` on that hold its `L` words (room for
//!    `cap`), stepped by one task per chunk that holds one of them, all
//!    rows' tasks spread over the workgroup together; inside a loop each
//!    task resumes from the chunk it stepped at the last iteration where
//!    it may (`carried.rs`);
//! 3. a barrier, then the statement's tile loop over those rows, where a
//!    word of counter `i` is looked up in row `(i - base) / N`.
//!
//! A counter that is not where that says (another word node of the same
//! key with another counter, counters wrapping past 2^32) takes the direct
//! path, so staging only moves time, never bits. A row of `L` words costs
//! about `8 (8 + L / 32 + 16)` steps against `25 L` seeded directly.

use super::carried::Carry;
use super::staged::{SLACK, groups_by};
use super::{K_GROUP_BLOCKS, Lower};
use crate::LowerError;
use crate::lower::H;
use naga::{BinaryOperator as B, GlobalVariable, Handle, Statement};
use phobos_core::ir::analysis::Slopes;
use phobos_core::ir::{ExprId, ExprKind, Kernel, Place, analysis};
use phobos_core::types::Dim;
use std::collections::HashMap;

/// How a statement's words are staged by rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowStaging {
    /// The row's length `L`, in positions.
    pub len: u32,
    /// The words a row's window holds: `L` and the slack, in whole blocks.
    pub cap: u32,
    /// The rows a buffer holds, so a window's.
    pub rows: u32,
    /// Whether the counters run down the columns instead
    /// (`Counter::col_stride`): each of the tile's columns is a "row" of
    /// the buffer, `L` is the tile's first extent, and one window holds
    /// every column (the statement's tile loop runs in row-major order, so
    /// a window of whole columns is the whole tile).
    pub columns: bool,
}

/// A fill of a whole tile's words by rows or columns that a buffer holds:
/// the value numbers of its key and counter nodes, its staging and stride,
/// and the places those nodes read.
#[derive(Clone, Debug)]
pub(in crate::lower) struct Filled {
    pub(in crate::lower) buf: Handle<GlobalVariable>,
    key: [ExprId; 4],
    counter: ExprId,
    staging: RowStaging,
    stride: u32,
    pub(in crate::lower) reads: Vec<Place>,
    /// The statement that filled it (its index in the body).
    stmt: usize,
}

impl Filled {
    /// Whether `other` fills `self`'s buffer with the same words.
    fn same(&self, other: &Filled) -> bool {
        (self.buf, self.key, self.counter, self.staging, self.stride)
            == (
                other.buf,
                other.key,
                other.counter,
                other.staging,
                other.stride,
            )
    }
}

/// What a staged word node needs to find its row's window.
#[derive(Clone, Copy, Debug)]
pub(in crate::lower) struct RowWindow {
    /// The counters' step from a row to the next.
    stride: u32,
    /// A row's positions, and the words its window has room for.
    len: u32,
    cap: u32,
    /// The window's rows (the last window may have fewer), and the most
    /// a window has.
    count: H,
    most: u32,
}

/// The word nodes of `value` whose counters run along the rows of `tile`
/// without being contiguous over the whole tile, grouped by key.
pub(crate) fn row_groups(k: &Kernel, value: ExprId, tile: &[Dim]) -> Vec<Vec<ExprId>> {
    groups_by(k, value, tile, |c| {
        c.row_stride.is_some() && !c.contiguous()
    })
}

/// The same for counters that run down the columns of `tile`
/// (`Counter::col_stride`), as a transposed block's do.
fn column_groups(k: &Kernel, value: ExprId, tile: &[Dim]) -> Vec<Vec<ExprId>> {
    groups_by(k, value, tile, |c| {
        c.col_stride.is_some() && c.row_stride.is_none() && !c.contiguous()
    })
}

/// The word nodes of `value` staged by rows ([`row_groups`]), else by
/// columns ([`column_groups`]), and whether by columns: the one choice
/// the plan's buffers and the statement's strategy both follow.
pub(crate) fn oriented_groups(k: &Kernel, value: ExprId, tile: &[Dim]) -> (Vec<Vec<ExprId>>, bool) {
    let rows = row_groups(k, value, tile);
    match rows.is_empty() {
        false => (rows, false),
        true => (column_groups(k, value, tile), true),
    }
}

/// The fewest draws an invocation takes in a statement for staging by rows
/// to pay: filling a window costs each invocation about one chunk's steps
/// and two barriers, seeding costs one chunk's steps a draw. On an H100
/// (bench/RESULTS.md, twenty-seventh session) attention's mask ran 14%
/// faster staged by rows at 4 draws an invocation, and 4% slower at 2
/// (8% in exact mode at 1).
pub(crate) const ROWS_MIN_DRAWS: u64 = 4;

/// [`ROWS_MIN_DRAWS`] for a statement inside a `for` loop, where a fill
/// resumes the chunks the last iteration stepped (`carried.rs`): on an
/// H100 (twenty-eighth session) attention's forward at 2 draws an
/// invocation took 4.20 ms drawing directly against 1.96 staged at 4.
pub(crate) const ROWS_MIN_DRAWS_LOOPED: u64 = 2;

/// Whether a constant 2-D `tile` gives `invocations` invocations enough
/// draws each: [`ROWS_MIN_DRAWS`], or [`ROWS_MIN_DRAWS_LOOPED`] in a loop.
pub(crate) fn rows_pay(tile: &[Dim], invocations: u32, looped: bool) -> bool {
    let [Dim::Const(rows), Dim::Const(len)] = tile[..] else {
        return false;
    };
    let least = match looped {
        true => ROWS_MIN_DRAWS_LOOPED,
        false => ROWS_MIN_DRAWS,
    };
    rows.saturating_mul(len) >= least * u64::from(invocations)
}

/// The words one row's window holds for rows of `len` positions.
fn row_cap(len: u32) -> u32 {
    (len + SLACK).next_multiple_of(4)
}

/// The most rows a window holds: 16 rows of 32 words take 2.5 KiB, and
/// their fill (about 16 tasks a row) keeps 256 invocations busy; more rows
/// would take workgroup memory that products and tiles need more.
pub(crate) const WINDOW_ROWS: u64 = 16;

/// The most columns a window staged by columns holds: all of the tile's,
/// since its window is the whole tile.
pub(crate) const WINDOW_COLUMNS: u64 = 64;

/// The words a buffer of a window of the constant 2-D `tile` holds (its
/// rows, at most [`WINDOW_ROWS`]; or, by `columns`, all its columns, at
/// most [`WINDOW_COLUMNS`]), and a row's (`None` where it has no constant
/// rows, or too many columns).
pub(crate) fn window_words(tile: &[Dim], columns: bool) -> Option<(u64, u64)> {
    let [Dim::Const(rows), Dim::Const(len)] = tile[..] else {
        return None;
    };
    let (rows, len) = match columns {
        false => (rows.min(WINDOW_ROWS), len),
        true => (len, rows),
    };
    if columns && rows > WINDOW_COLUMNS {
        return None;
    }
    let cap = u64::from(row_cap(u32::try_from(len).ok()?));
    Some((rows.checked_mul(cap)?, cap))
}

/// The row staging of a 2-D `tile` with buffers of `words` words: as many
/// rows a window as fit, `None` where not even one does; by `columns`, all
/// its columns in one window, `None` where they do not fit.
pub(crate) fn row_staging(tile: &[Dim], words: u32, columns: bool) -> Option<RowStaging> {
    let [Dim::Const(rows), Dim::Const(len)] = tile[..] else {
        return None;
    };
    let (rows, len) = match columns {
        false => (rows, len),
        true => (len, rows),
    };
    let len = u32::try_from(len).ok()?;
    let cap = row_cap(len);
    let fit = words / cap;
    let all = u32::try_from(rows).unwrap_or(u32::MAX);
    let rows = all.min(fit);
    let whole = !columns || rows == all;
    (rows > 0 && len % 4 == 0 && whole).then_some(RowStaging {
        len,
        cap,
        rows,
        columns,
    })
}

impl Lower<'_> {
    /// Steps the words that rows `ra ..` (flat positions `w0 .. w1`, whole
    /// rows) of a tile of extents `lens` draw into workgroup memory,
    /// between two barriers: the word nodes of `groups[g]` into `bufs[g]`,
    /// `staging.cap` words a row. Each word node then reads its buffer
    /// ([`Self::row_slot`]) until `self.tandem.staged` is cleared.
    ///
    /// Where the window is the whole tile (`whole`), a buffer that an
    /// earlier statement of the same iteration filled with the same words
    /// (the same key and counter nodes by value number, no place they read
    /// written since: [`super::DrawState::forget_fills`]) is read as it is.
    pub(super) fn stage_rows(
        &mut self,
        (groups, bufs, staging): (&[Vec<ExprId>], &[Handle<GlobalVariable>], RowStaging),
        lens: &[H],
        (w0, w1, whole): (H, H, bool),
        pre: &HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        let zero = self.u32c(0);
        let len = self.u32c(staging.len);
        let span = self.binary(B::Subtract, w1, w0);
        let count = self.binary(B::Divide, span, len);
        let first_pos = self.flat_position(w0, lens);
        // A window of whole rows has `count` rows of `len`; one of whole
        // columns is the whole tile, `count` columns of `len`.
        let shape = match staging.columns {
            false => [staging.rows, staging.len],
            true => [staging.len, staging.rows],
        };
        let tile: Vec<Dim> = shape.map(|d| Dim::Const(u64::from(d))).to_vec();
        let mut slopes = Slopes::new(self.k, 2);
        let barrier = Statement::ControlBarrier(naga::Barrier::WORK_GROUP);
        let mut fills = Vec::new();
        let mut reused = None;
        for (g, ids) in groups.iter().enumerate() {
            let ExprKind::Builtin(_, xs) = &self.k.exprs[ids[0]].kind else {
                unreachable!("a word node is a builtin")
            };
            let c = slopes.counter(xs[4], &tile);
            let stride = match staging.columns {
                false => c.row_stride,
                true => c.col_stride,
            }
            .expect("row_groups and column_groups picked counters with a stride");
            let mut cache = pre.clone();
            let mut key = [zero; 4];
            for (q, x) in xs[..4].iter().enumerate() {
                key[q] = self.node(*x, &[], &mut cache)?;
            }
            let base = self.node(xs[4], &first_pos, &mut pre.clone())?;
            let window = RowWindow {
                stride,
                len: staging.len,
                cap: staging.cap,
                count,
                most: staging.rows,
            };
            let filled = whole.then(|| self.filled(bufs[g], xs, staging, stride));
            let held = filled
                .as_ref()
                .and_then(|f| self.tandem.filled.iter().find(|h| h.same(f)))
                .map(|h| h.stmt);
            if let Some(s) = held {
                reused = Some(s);
            } else {
                self.tandem.filled.retain(|f| f.buf != bufs[g]);
                self.tandem.filled.extend(filled);
                fills.push((bufs[g], key, base, window));
            }
            for id in ids {
                let w = super::staged::Window {
                    buf: bufs[g],
                    first: base,
                    count: zero,
                    rows: Some(window),
                };
                self.tandem.staged.insert(*id, w);
            }
        }
        if fills.is_empty() {
            if let Some(s) = reused {
                let how = if staging.columns { "columns" } else { "rows" };
                self.tandem.renote(&format!(
                    "staged by {how}: the words statement {} of this iteration stepped into \
                     workgroup memory, read again",
                    s + 1
                ));
            }
            return Ok(());
        }
        self.cur.push(barrier.clone());
        for (buf, key, base, window) in fills {
            self.fill_rows(buf, key, base, window)?;
        }
        self.cur.push(barrier);
        Ok(())
    }

    /// The record of a whole-tile fill of `buf` by the word node arguments
    /// `xs` (key words, then the counter).
    fn filled(
        &mut self,
        buf: Handle<GlobalVariable>,
        xs: &[ExprId],
        staging: RowStaging,
        stride: u32,
    ) -> Filled {
        let k = self.k;
        let numbers = self
            .tandem
            .numbers
            .get_or_insert_with(|| analysis::value_numbers(k));
        let key = std::array::from_fn(|q| numbers[xs[q]]);
        let counter = numbers[xs[4]];
        let mut reads = Vec::new();
        for x in &xs[..5] {
            for p in analysis::reads(k, *x) {
                if !reads.contains(&p) {
                    reads.push(p);
                }
            }
        }
        Filled {
            buf,
            key,
            counter,
            staging,
            stride,
            reads,
            stmt: self.tandem.stmt,
        }
    }

    /// Row `q < w.count` of `buf` from word `q cap` on: the blocks that
    /// hold words `base + q stride ..` of `key`'s stream, `len` of them
    /// ([`Self::row_blocks`]). One task per chunk holding one of a row's
    /// blocks (the groups of eight chunks from the row's first block's
    /// group, eight tasks a group), all rows' tasks over the workgroup
    /// together (`fill_task`), the rows' first groups first. Inside a
    /// loop, each task carries its chunk's state to the next fill
    /// (`carried.rs`), where its slots fit.
    fn fill_rows(
        &mut self,
        buf: Handle<GlobalVariable>,
        key: [H; 4],
        base: H,
        w: RowWindow,
    ) -> Result<(), LowerError> {
        // A row's blocks start anywhere in a group, so they reach into one
        // group more than they fill.
        let row_groups = 1 + (w.cap / 4).div_ceil(K_GROUP_BLOCKS);
        let per_row = self.u32c(8 * row_groups);
        let tasks = self.binary(B::Multiply, per_row, w.count);
        let task = |lw: &mut Self, t: H, lane: H, carry: Option<&Carry>| {
            let row = lw.binary(B::Modulo, t, w.count);
            let go = lw.binary(B::Divide, t, w.count);
            let (first, n) = lw.row_blocks(base, w, row);
            let [a, g0, lim] = lw.block_places(first, n);
            let cap = lw.u32c(w.cap);
            let offset = lw.binary(B::Multiply, row, cap);
            lw.block_task((buf, offset), key, [g0, go, lane], [a, lim], carry)
        };
        self.fill_tasks((tasks, 8 * row_groups * w.most), task)
    }

    /// Row `row`'s first word, `(base + row stride) & !3`, and the blocks
    /// from it that hold the row's `len` words.
    fn row_blocks(&mut self, base: H, w: RowWindow, row: H) -> (H, H) {
        let stride = self.u32c(w.stride);
        let step = self.binary(B::Multiply, row, stride);
        let exact = self.binary(B::Add, base, step);
        let not3 = self.u32c(!3);
        let first = self.binary(B::And, exact, not3);
        let three = self.u32c(3);
        let lead = self.binary(B::And, exact, three);
        let end = self.u32c(w.len + 3);
        let words = self.binary(B::Add, lead, end);
        let two = self.u32c(2);
        (first, self.binary(B::ShiftRight, words, two))
    }

    /// Where the word of counter `i` is in a buffer of row windows, and
    /// whether it is there: row `(i - base) / stride` of the window, if
    /// that is one of its rows and `i` is in one of the blocks filled for
    /// that row ([`Self::row_blocks`]).
    pub(super) fn row_slot(&mut self, w: &super::staged::Window, rows: RowWindow, i: H) -> (H, H) {
        let d = self.binary(B::Subtract, i, w.first);
        let stride = self.u32c(rows.stride);
        let row = self.binary(B::Divide, d, stride);
        let (first, blocks) = self.row_blocks(w.first, rows, row);
        let at = self.binary(B::Subtract, i, first);
        let two = self.u32c(2);
        let filled = self.binary(B::ShiftLeft, blocks, two);
        let in_rows = self.binary(B::Less, row, rows.count);
        let in_row = self.binary(B::Less, at, filled);
        let hit = self.binary(B::LogicalAnd, in_rows, in_row);
        let cap = self.u32c(rows.cap);
        let offset = self.binary(B::Multiply, row, cap);
        (self.binary(B::Add, offset, at), hit)
    }
}
