//! The Phobos standard library as source text.
//!
//! The library is written in Phobos itself, so users can read the exact
//! definitions they call. The compiler embeds these files in its prelude; each
//! entry is `(path, source)`, where the path is what diagnostics show.

/// `std/random.ph`: `hash32`, `_mix`, `uniform`, `randn`, `dropout`.
pub const RANDOM: &str = include_str!("../std/random.ph");

/// `std/math.ph`: `log` and `cos` built from exact operations.
pub const MATH: &str = include_str!("../std/math.ph");

/// `std/tandem.ph`: Tandem draws inside kernels (`tandem_u32`, `tandem_uniform`,
/// `tandem_bool`, `tandem_normal`, `tandem_exponential`, `tandem_below`, and
/// `tandem_u64`, `tandem_uniform_f64`, `tandem_exponential_f64` off the GPU).
pub const TANDEM: &str = include_str!("../std/tandem.ph");

/// Every stdlib file in prelude order, as `(path, source)`.
pub const FILES: &[(&str, &str)] = &[
    ("std/math.ph", MATH),
    ("std/random.ph", RANDOM),
    ("std/tandem.ph", TANDEM),
];
