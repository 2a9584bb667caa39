//! Resource bounds: the one place that decides how large a program or a
//! launch Phobos accepts, so that every input gets a result or a located
//! error, never an abort, a hang or memory growth without limit. The policy
//! and where each bound is checked are in `docs/bounds.md`; every number
//! lives here, with why it is what it is, and every user reads it from here.
//!
//! Each bound is checked as early as it can be, and once:
//! - [`MAX_TUNE_CONFIGS`]: the checker counts an `@autotune` space before it
//!   enumerates anything (`E0124`), so neither `check`, the tuner nor
//!   `build` ever materialises a larger product.
//! - [`MAX_TUNE_TRIALS`]: the configurations the tuner times at once,
//!   lowering choices included; past it, it times a sum, not a product.
//! - [`MAX_CHECK_NODES`]: the IR the checker builds for one kernel over its
//!   whole space, estimated from the first configuration before the others
//!   are checked (`E0124` too), so that a large kernel times a large space
//!   cannot keep `check` busy for minutes.
//! - [`MAX_CALL_DEPTH`]: how deeply `fn` calls may nest when the checker
//!   expands them (`E0125`).
//! - [`MAX_TILE_BYTES`]: the checker refuses a `let` or `var` tile whose
//!   constant extents exceed it (`E0123`), so no backend sees one; a tile
//!   whose extent is a symbolic dim is refused with the same bound when the
//!   launch binds its dims ([`crate::launch::bind_shapes`]), before any
//!   backend runs.
//! - [`MAX_BLOCKS`]: a launch's grid, all axes together, checked when the
//!   launch is bound.
//! - [`playground`] and [`server`]: what one request to the playground (in
//!   the page, or `phobosc serve`) may cost.
//!
//! The tile bound is the smallest that every backend can hold: the
//! interpreter and Cranelift materialise a tile in host memory, and the GPU
//! backend declares it as one workgroup array, whose size naga limits to
//! 2^31 - 1 bytes (with bools held as 32-bit words). A device's workgroup
//! memory (16 KiB by WebGPU's default) is far smaller and differs between
//! devices, so it is not a property of the program: the GPU backend reports
//! it when it builds for a device.
//!
//! A tensor of `phobosc run` or of the Rust API is bounded by the memory of
//! the machine, not by a number here: `phobosc run` refuses generated
//! tensors beyond the memory available (`compiler/cli/src/run.rs`), and the
//! GPU runtime splits tensors larger than a storage binding. Only the
//! playground, which runs other people's requests, has a fixed bound
//! ([`playground::MAX_TENSOR_BYTES`]).

use crate::types::Scalar;

/// The most configurations an `@autotune` space may have: the product of
/// the lengths of its value lists. The tuner runs every configuration and
/// `check` checks every one, so a larger space is refused, with its count,
/// before any configuration is built.
pub const MAX_TUNE_CONFIGS: u64 = 4096;

/// The most configurations the tuner times in one pass: `@autotune`
/// configurations times the lowering's choices (workgroup sizes). A larger
/// product is never formed: the tuner times each `@autotune`
/// configuration with the launch heuristic's lowering, then the winner
/// with each lowering choice, so it times a sum instead of a product.
pub const MAX_TUNE_TRIALS: u64 = 256;

/// The most `@autotune` configurations the launch heuristic looks at (in
/// declared order) before it picks one: it checks each, so it looks at a
/// few, and puts the first value of each list first.
pub const HEURISTIC_LOOKS: usize = 16;

/// The most IR expressions the checker may build for one kernel over all
/// the configurations of its space (about 2.5 s of checking on one core of
/// the development machine, in a release build):
/// a space within [`MAX_TUNE_CONFIGS`] is refused all the same when its
/// configurations times the size of the kernel's IR exceed this, since the
/// checker, `build` and the tuner each build every configuration.
pub const MAX_CHECK_NODES: u64 = 1 << 23;

/// The most bytes one `let` or `var` tile may hold, every element counted
/// as at least 4 bytes (the GPU keeps a `bool` as a 32-bit word): 2^28
/// elements of 32 bits or fewer, 2^27 of 64 bits. 1 GiB is under naga's
/// 2^31 - 1 byte limit on an array for every element type, and the same
/// limit the interpreter and Cranelift have always had for 32-bit tiles.
pub const MAX_TILE_BYTES: u64 = 1 << 30;

/// The most blocks one launch may have, the product of its grid's axes:
/// 2^40, beyond which the grid is surely a mistake (the CPU backends
/// would run for days, and a GPU dispatch has at most 65,535^3 workgroups).
pub const MAX_BLOCKS: u64 = 1 << 40;

/// How deeply the checker expands nested `fn` calls: 64, almost six times
/// the deepest chain of the standard library (11 levels, from
/// `tandem_exponential_f64`). Each level is a frame of the checker's
/// recursion, so this bounds its stack.
pub const MAX_CALL_DEPTH: usize = 64;

/// The bounds of one playground request, in the page (the interpreter
/// compiled to wasm) and on `phobosc serve`: what a browser tab can hold
/// and compute without freezing.
pub mod playground {
    /// The most bytes the tensors of one launch may hold together: 128 MiB,
    /// WebGPU's default `maxStorageBufferBindingSize`, and well within a
    /// browser tab's memory.
    pub const MAX_TENSOR_BYTES: u64 = 128 << 20;

    /// The most expression-node evaluations an interpreter run may take
    /// (elements of every statement's tile, times the iterations of the
    /// loops around it and the extents its reductions run over, times the
    /// kernel's nodes, times the blocks): 2^28, about seven seconds of the
    /// wasm interpreter (37 M nodes/s for `dropout_rows` in V8 here,
    /// 2026-12-01).
    pub const MAX_WORK: u64 = 1 << 28;

    /// The most a launch the page dispatches on WebGPU may take, in the
    /// same measure: 2^34, as much as `phobosc serve` runs natively
    /// ([`super::server::MAX_WORK`]). The page also stops waiting on WebGPU
    /// after 20 s; this bound refuses before dispatch the launches that
    /// would hold the reader's GPU far longer (every loop ends, E0133, but
    /// nested loops of 2^31 iterations take hours; a loop whose bounds the
    /// measure cannot follow counts as unbounded).
    pub const MAX_GPU_WORK: u64 = 1 << 34;
}

/// The bounds of `phobosc serve`, which runs requests from the page on the
/// host's backend: a request must not hold the host for long, nor many at
/// once. Its launches also keep [`playground::MAX_TENSOR_BYTES`].
pub mod server {
    use std::time::Duration;

    /// The largest request body: a source and its launch fields, 256 KiB
    /// (the longest example is under 4 KiB; the stdlib is 30 KiB).
    pub const MAX_BODY: usize = 256 * 1024;

    /// Runs at once; more are refused (503), so two users cannot queue
    /// work without limit.
    pub const MAX_RUNS: usize = 2;

    /// How long a request waits for its run: 10 s. A run still going then
    /// is answered with 503 and finishes in the background, holding its
    /// slot.
    pub const RUN_TIMEOUT: Duration = Duration::from_secs(10);

    /// The most expression-node evaluations of one run (the playground's
    /// measure, `phobos_playground::work`): 2^34, some seconds of the CPU
    /// backend on one core (64 times the page's own bound, since native
    /// code is that much faster than the wasm interpreter).
    pub const MAX_WORK: u64 = 1 << 34;

    /// Outputs larger than this, together, come back without their words
    /// (the page then compares nothing): 4 MiB of JSON numbers is already
    /// about 40 MB of text.
    pub const MAX_WORDS_BYTES: usize = 4 << 20;
}

/// The bytes a tile of `elem` with these extents counts against
/// [`MAX_TILE_BYTES`], saturating. An extent of 0 counts as 1: workgroup
/// arrays cannot be empty, so the GPU backend holds such an axis as one
/// element.
pub fn tile_bytes(elem: Scalar, extents: impl IntoIterator<Item = u64>) -> u128 {
    let elements = extents
        .into_iter()
        .fold(1u128, |n, e| n.saturating_mul(e.max(1) as u128));
    elements.saturating_mul(elem.size().max(4) as u128)
}

/// Whether a tile of `elem` with these extents is within
/// [`MAX_TILE_BYTES`].
pub fn tile_fits(elem: Scalar, extents: impl IntoIterator<Item = u64>) -> bool {
    tile_bytes(elem, extents) <= MAX_TILE_BYTES as u128
}

/// The most elements a tile of `elem` may have.
pub fn max_tile_elements(elem: Scalar) -> u64 {
    MAX_TILE_BYTES / elem.size().max(4) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tile_bound_sits_at_one_gib() {
        assert!(tile_fits(Scalar::F32, [1 << 28]));
        assert!(!tile_fits(Scalar::F32, [(1 << 28) + 1]));
        assert!(tile_fits(Scalar::Bool, [1 << 14, 1 << 14]));
        assert!(!tile_fits(Scalar::Bool, [1 << 14, (1 << 14) + 1]));
        assert!(tile_fits(Scalar::F64, [1 << 27]));
        assert!(!tile_fits(Scalar::F64, [1 << 28]));
        assert_eq!(max_tile_elements(Scalar::U32), 1 << 28);
        assert_eq!(max_tile_elements(Scalar::I64), 1 << 27);
        // Saturating, and a zero extent counts as one.
        assert!(!tile_fits(Scalar::F32, [u64::MAX, u64::MAX, u64::MAX]));
        assert!(!tile_fits(Scalar::F32, [u64::MAX, 0]));
        assert!(tile_fits(Scalar::F32, [0, 0, 1 << 28]));
    }
}
