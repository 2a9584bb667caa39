//! Resource bounds: the one place that decides how large a program or a
//! launch Phobos accepts, so that every input gets a result or a located
//! error, never an abort, a hang or memory growth without limit.
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
//! - [`MAX_TILE_BYTES`]: the checker refuses a `let` or `var` tile whose
//!   constant extents exceed it (`E0123`), so no backend sees one; a tile
//!   whose extent is a symbolic dim is refused with the same bound when the
//!   launch binds its dims ([`crate::launch::bind_shapes`]), before any
//!   backend runs.
//! - [`MAX_BLOCKS`]: a launch's grid, checked when the launch is bound.
//!
//! The tile bound is the smallest that every backend can hold: the
//! interpreter and Cranelift materialise a tile in host memory, and the GPU
//! backend declares it as one workgroup array, whose size naga limits to
//! 2^31 - 1 bytes (with bools held as 32-bit words). A device's workgroup
//! memory (16 KiB by WebGPU's default) is far smaller and differs between
//! devices, so it is not a property of the program: the GPU backend reports
//! it when it builds for a device.

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

/// The most blocks one launch may have; beyond it the grid is surely a
/// mistake.
pub const MAX_BLOCKS: u64 = 1 << 40;

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
