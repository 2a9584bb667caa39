//! The workgroup memory a module declares before its statements, planned
//! from the kernel and the options: the `let`/`var` tiles, the staging
//! tiles of stores that read their own destination (`lower/bindings.rs`),
//! the buffers of staged Tandem words (`lower/tandem_draw/staged.rs`), and
//! the flag by which a block checks its subgroups' layout. What is left
//! of `GpuOptions::workgroup_memory` after them is what the plan gives
//! stores over kept rows for their words ([`Upfront::row_room`]); the
//! statements' own arrays (the reductions' levels, products' operands)
//! take what remains as they are emitted, and their notes say where one
//! did not fit.

use crate::{GpuOptions, LowerError};
use phobos_core::ir::Kernel;
use phobos_core::types::{Dim, Scalar};

/// The buffers of staged Tandem words: `count` arrays of `words` u32 each,
/// covering a window of `window` counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WordBuffers {
    pub window: u32,
    pub words: u32,
    pub count: u32,
}

/// The arrays declared before the statements (module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Upfront {
    /// The bytes of the `let`/`var` tiles.
    pub tiles: u64,
    /// One staging tile per element type, with its elements.
    pub staging: Vec<(Scalar, u32)>,
    pub words: Option<WordBuffers>,
    /// Whether the block checks its subgroups' layout through a workgroup
    /// flag (`Lower::subgroup_check`).
    pub subgroup_flag: bool,
}

impl Upfront {
    pub fn bytes(&self) -> u64 {
        let staging: u64 = self
            .staging
            .iter()
            .map(|&(elem, n)| u64::from(n.max(1)) * stride(elem))
            .sum();
        let words = self
            .words
            .map_or(0, |w| u64::from(w.words) * 4 * u64::from(w.count));
        self.tiles + staging + words + if self.subgroup_flag { 4 } else { 0 }
    }

    /// What stores over kept rows may give their words.
    pub fn row_room(&self, options: &GpuOptions) -> u64 {
        crate::lower::tandem_draw::staged::row_room(options.workgroup_memory, self.bytes())
    }
}

/// The bytes an element of a workgroup array of `elem` takes: a bool is
/// held as a u32 (`lower/bindings.rs`).
fn stride(elem: Scalar) -> u64 {
    if elem == Scalar::Bool {
        4
    } else {
        elem.size() as u64
    }
}

/// The arrays `kernel` declares before its statements, where `subgroups`
/// says its reductions may take subgroup levels and its products may take
/// `reserve` bytes (`dots::reserve`), which staged Tandem words leave them.
/// A staging tile that does not fit is refused with the sizes
/// (`lower::bindings::staging`).
pub fn plan(
    kernel: &Kernel,
    options: &GpuOptions,
    subgroups: bool,
    reserve: u64,
) -> Result<Upfront, LowerError> {
    let tiles = kernel
        .locals
        .iter()
        .filter(|l| !l.shape.is_empty())
        .map(|l| {
            let n = l.shape.iter().fold(1u64, |n, d| match d {
                Dim::Const(v) => n.saturating_mul(*v),
                Dim::Sym(_) => n,
            });
            n.max(1).saturating_mul(stride(l.elem))
        })
        .fold(0u64, u64::saturating_add);
    let staging = crate::lower::bindings::staging(kernel, options)?;
    let mut up = Upfront {
        tiles,
        staging,
        words: None,
        subgroup_flag: false,
    };
    let room = options
        .workgroup_memory
        .saturating_sub(up.bytes())
        .saturating_sub(reserve);
    up.words = crate::lower::tandem_draw::staged::word_buffers(
        kernel,
        room,
        (options.workgroup_size, options.heavy_groups),
    );
    up.subgroup_flag =
        subgroups && !options.subgroup_layout_known && up.bytes() + 4 <= options.workgroup_memory;
    Ok(up)
}
