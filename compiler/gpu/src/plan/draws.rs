//! How a statement takes its Tandem draws, decided from the kernel and the
//! plan's workgroup memory before anything is emitted: the one rule that
//! `lower/tandem_draw/` follows for every tile loop of a statement, and
//! whose reason `phobosc build --explain` prints.
//!
//! - **Stepped**: where the statement's words have counters that run along
//!   its constant tile with slope 1 (`stepped.rs`'s `stepped_words`), one
//!   invocation steps one chunk in registers and computes its blocks.
//! - **Staged**: otherwise, where some words have counters contiguous along
//!   the tile and the plan gave the staged words buffers
//!   ([`super::Upfront::words`]), windows of counters are stepped into
//!   workgroup memory and each element reads its word there; one buffer a
//!   key, the first keys where there are more keys than buffers.
//!   Where the counters run along the rows of a 2-D tile but jump between
//!   rows (a block of a larger matrix), each row gets its own window (each
//!   column, where they run down the columns: a transposed block), where
//!   the tile gives each invocation enough draws (`rows::rows_pay`: fewer
//!   inside a `for` loop, where the fills carry their chunks) and the
//!   module is for a native driver (`GpuOptions::heavy_groups`).
//! - **Direct**: otherwise each draw steps its own chunk.
//!
//! Every path gives the same bits; they differ in speed.

use super::Upfront;
use crate::lower::tandem_draw::rows::{RowStaging, oriented_groups, row_staging, rows_pay};
use crate::lower::tandem_draw::staged::{has_words, word_groups};
use crate::lower::tandem_draw::stepped::{StepPlan, stepped_words};
use phobos_core::ir::{Builtin, ExprId, ExprKind, Kernel, LocalId, Place, Stmt, analysis};
use phobos_core::types::Dim;

/// How a tile loop of a statement takes its draws (module doc).
pub(crate) enum Draw {
    Stepped(StepPlan),
    /// The word nodes of each staged key, and the counters a window holds.
    Staged {
        groups: Vec<Vec<ExprId>>,
        window: u32,
        /// Where the counters run along the rows only: a window per row
        /// (`rows.rs`).
        rows: Option<RowStaging>,
    },
    /// Each draw steps its own chunk, for this reason (`None`: the value
    /// draws nothing).
    Direct(Option<&'static str>),
}

/// How a loop over `tile` by groups of `group` positions takes the draws
/// of `value`, in a statement inside a `for` loop where `looped` (module
/// doc).
pub(crate) fn strategy(
    k: &Kernel,
    (upfront, invocations, heavy): (&Upfront, u32, bool),
    (value, tile, group, looped): (ExprId, &[Dim], u32, bool),
) -> Draw {
    let quads = group == 4;
    if (quads || group == 1)
        && let Some(plan) = stepped_words(k, value, tile, quads)
    {
        return Draw::Stepped(plan);
    }
    let flat = word_groups(k, value, tile);
    // Staged whole where the counters run along the whole tile, by rows
    // where only along its rows (and the buffers hold a row).
    let (mut groups, rows, fits) =
        if flat.is_empty() && heavy && rows_pay(tile, invocations, looped) {
            let (groups, columns) = oriented_groups(k, value, tile);
            let rows = upfront
                .words
                .and_then(|w| row_staging(tile, w.words, columns));
            (groups, rows, rows.is_some())
        } else {
            (flat, None, true)
        };
    let contiguous = !groups.is_empty();
    let buffers = upfront.words.map_or(0, |w| w.count as usize);
    groups.truncate(buffers);
    match upfront.words {
        Some(w) if !groups.is_empty() && fits => Draw::Staged {
            groups,
            window: w.window,
            rows,
        },
        _ if contiguous => Draw::Direct(Some(
            "no workgroup memory left to stage their words; each draw steps its own chunk",
        )),
        _ if has_words(k, value) => Draw::Direct(Some(
            "their counters are not seen to run along the tile; each draw steps its own chunk",
        )),
        _ => Draw::Direct(None),
    }
}

/// The statements inside a `for` loop whose staged fills can never resume
/// a chunk the last iteration stepped (`lower/tandem_draw/carried.rs`),
/// by index in `k`'s body: every word they draw has a counter that moves
/// by a constant from one iteration of the innermost loop to the next
/// ([`analysis::loop_slope`]), and none forward by less than a group of
/// eight chunks (`8 K` blocks of 4 words), so each iteration's words lie
/// in chunks the last one did not step, or behind them. The backward over
/// keys walks its queries so: its mask moves `BM * S` words an iteration.
/// Their fills seed every chunk, as they would anyway, without carrying
/// states they never use. Anything not known to move so keeps its carry.
pub(crate) fn fresh_fills(k: &Kernel, loops: &[super::LoopPlan]) -> Vec<usize> {
    let group_words = 4 * i64::from(crate::lower::tandem_draw::K_GROUP_BLOCKS);
    let consts = analysis::constant_values(k);
    let mut out = Vec::new();
    for l in loops {
        let Stmt::For { local: var, .. } = k.body[l.start] else {
            continue;
        };
        let mut written = vec![Place::Local(var)];
        for s in &k.body[l.start + 1..l.end] {
            written.extend(analysis::access(k, s).writes);
        }
        let varies = |p: Place| written.contains(&p);
        let mut lets: Vec<(LocalId, ExprId)> = Vec::new();
        let mut depth = 0;
        for (i, s) in k.body.iter().enumerate().take(l.end).skip(l.start + 1) {
            match s {
                Stmt::For { .. } => depth += 1,
                Stmt::EndFor => depth -= 1,
                _ if depth > 0 => {}
                _ => {
                    let value = s.value().expect("not a loop bracket");
                    let scalar_let =
                        |x: LocalId| lets.iter().find(|(l, _)| *l == x).map(|(_, v)| *v);
                    let words: Vec<ExprId> = k
                        .reachable(value)
                        .into_iter()
                        .filter_map(|id| match &k.exprs[id].kind {
                            ExprKind::Builtin(Builtin::TandemWord, xs) => Some(xs[4]),
                            _ => None,
                        })
                        .collect();
                    let fresh = !words.is_empty()
                        && words.iter().all(|c| {
                            analysis::loop_slope(k, *c, var, &scalar_let, &varies, &consts)
                                .is_some_and(|d| d == 0 || d >= group_words)
                        });
                    if fresh {
                        out.push(i);
                    }
                    if let Stmt::Let { local, value } = s
                        && k.locals[*local].shape.is_empty()
                    {
                        lets.push((*local, *value));
                    }
                }
            }
        }
    }
    out
}
