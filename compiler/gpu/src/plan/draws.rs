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
use crate::lower::tandem_draw::rows::{
    RowStaging, column_groups, row_groups, row_staging, rows_pay,
};
use crate::lower::tandem_draw::staged::{has_words, word_groups};
use crate::lower::tandem_draw::stepped::{StepPlan, stepped_words};
use phobos_core::ir::{ExprId, Kernel};
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
            let mut groups = row_groups(k, value, tile);
            let columns = groups.is_empty();
            if columns {
                groups = column_groups(k, value, tile);
            }
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
