//! Random well-typed kernels, and inputs full of edge values, for
//! differential testing: every backend must give the interpreter's bits on
//! every kernel this makes.
//!
//! Everything is drawn from one `u64` seed through SplitMix64, so a failing
//! case is reproduced from its seed alone. [`generate`] makes the source and
//! the symbolic dims; [`args`] makes the arguments of the checked kernel.
//!
//! The generator is type- and shape-directed. Each expression is generated
//! for an element type and for the tile of its statement; a leaf is chosen
//! only if its shape broadcasts to that tile, and an operator only if the
//! language defines it on that type, so the checker accepts every kernel
//! (`tests/tests/differential.rs` checks that it does).
//!
//! A kernel has one of four frames:
//! - `Rows1`: tensors `[M]`, blocks of `R` rows (`let r = ctx.block.x * R`);
//! - `Rows2`: tensors `[M, C]`, `[M]`, `[M, 1]`, `[C]`, blocks of `R` rows;
//! - `Grid2`: tensors `[M, N]`, `[M, 1]`, `[N]`, blocks of `R × K` (a 2-D grid);
//! - `Whole`: one block, whole or partial stores at any offset.
//!
//! In the block frames the dims are rarely multiples of the tile, so the last
//! block is partial, and loads start off the block (`X[r + 1 :+ R, :]`), so
//! they read past the end. Blocks never read what another block writes and
//! never write the same element, so a backend that runs blocks in parallel
//! must still give the interpreter's bits.
//!
//! With [`Options::tuning_invariant`], a kernel computes the same bits in
//! every `@autotune` configuration: each element's value depends only on its
//! logical position, never on `ctx`, a tuning value, or a position within a
//! block.

use phobos_core::ir::{Kernel, ParamKind};
use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::{Dim, Scalar, Value};
use std::collections::HashMap;

/// The name of the generated kernel.
pub const KERNEL: &str = "k";

/// SplitMix64: tiny, fast, and good enough to pick programs; written here so
/// that a seed means the same kernel on every machine and every version of
/// the dependencies.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// An index into `weights`, drawn in proportion to them.
    pub fn weighted(&mut self, weights: &[usize]) -> usize {
        let mut x = self.below(weights.iter().sum());
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        unreachable!("x is below the sum of the weights")
    }
}

/// What kind of kernels to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Only kernels whose bits cannot depend on the `@autotune`
    /// configuration (and that have at least two configurations).
    pub tuning_invariant: bool,
    /// Whether `i64`, `u64` and `f64` appear (a backend without 64-bit types
    /// can turn them off).
    pub wide_types: bool,
    /// Whether tensors of `bool` appear (the GPU backend has no 8-bit
    /// storage yet).
    pub bool_tensors: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            tuning_invariant: false,
            wide_types: true,
            bool_tensors: true,
        }
    }
}

/// One generated kernel.
#[derive(Clone, Debug)]
pub struct Case {
    pub seed: u64,
    /// The `.ph` text, with one kernel named [`KERNEL`].
    pub source: String,
    /// The extent of each symbolic dim at launch.
    pub dims: Vec<(String, usize)>,
}

/// The source of the kernel of `seed`, with the default options.
pub fn kernel_source(seed: u64) -> String {
    generate(seed, Options::default()).source
}

/// The kernel of `seed`.
pub fn generate(seed: u64, opts: Options) -> Case {
    Gen::new(seed, opts).kernel()
}

/// The arguments of a launch of `kernel` (the checked `case`), in parameter
/// order: every tensor, outputs included, filled with edge values, so that an
/// element a backend should not write still shows if it is written. `off`,
/// the generator's slice offset, is small so that shifted slices overlap the
/// tensor.
pub fn args(kernel: &Kernel, case: &Case) -> Vec<Arg> {
    // A stream of its own, so that inputs do not shift when the generator's
    // use of the seed changes.
    let mut rng = Rng::new(case.seed ^ 0x5DEE_CE66_D1CE_0F0F);
    kernel
        .params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Scalar(t) if p.name == "off" && *t == Scalar::I32 => {
                Arg::Scalar(Value::I32(*rng.pick(&[0, 0, 1, -1, 1, 2, -2, 3])))
            }
            ParamKind::Scalar(t) => Arg::Scalar(value(*t, &mut rng)),
            ParamKind::Tensor { elem, shape, .. } => {
                let ext: Vec<usize> = shape
                    .iter()
                    .map(|d| match d {
                        Dim::Const(v) => *v as usize,
                        Dim::Sym(s) => {
                            case.dims
                                .iter()
                                .find(|(n, _)| *n == kernel.dims[*s])
                                .expect("every symbolic dim has an extent")
                                .1
                        }
                    })
                    .collect();
                let mut t = Tensor::zeros(*elem, &ext);
                for i in 0..t.len() {
                    t.set(i, value(*elem, &mut rng));
                }
                Arg::Tensor(t)
            }
        })
        .collect()
}

const I32_EDGES: &[i32] = &[
    0,
    1,
    -1,
    2,
    -2,
    7,
    -7,
    31,
    32,
    33,
    -32,
    63,
    64,
    100,
    65535,
    65536,
    -65536,
    16_777_217,
    0x5555_5555,
    i32::MIN,
    i32::MIN + 1,
    i32::MAX,
];

const U32_EDGES: &[u32] = &[
    0,
    1,
    2,
    7,
    31,
    32,
    33,
    64,
    65535,
    16_777_217,
    0x7FFF_FFFF,
    0x8000_0000,
    0x8000_0001,
    0xAAAA_AAAA,
    u32::MAX,
];

const I64_EDGES: &[i64] = &[
    0,
    1,
    -1,
    31,
    32,
    63,
    64,
    65,
    1 << 31,
    -(1 << 31),
    1 << 32,
    -(1 << 32) - 1,
    (1 << 53) + 1,
    i64::MIN,
    i64::MIN + 1,
    i64::MAX,
];

const U64_EDGES: &[u64] = &[
    0,
    1,
    31,
    32,
    63,
    64,
    65,
    (1 << 32) - 1,
    1 << 32,
    (1 << 53) + 1,
    (1 << 63) - 1,
    1 << 63,
    u64::MAX,
];

/// f32 edges as bits, so that NaN payloads and signs are exact.
const F32_EDGES: &[u32] = &[
    0x0000_0000, // 0
    0x8000_0000, // -0
    0x3F80_0000, // 1
    0xBF80_0000, // -1
    0x3F00_0000, // 0.5
    0xBF00_0000, // -0.5
    0x3FC0_0000, // 1.5
    0x4020_0000, // 2.5
    0xC020_0000, // -2.5
    0x3EFF_FFFF, // 0.49999997
    0x3DCC_CCCD, // 0.1
    0x7FC0_0000, // NaN
    0xFFC0_0000, // -NaN (x86's default NaN)
    0x7FC1_2345, // NaN with a payload
    0x7F80_0001, // signalling NaN
    0x7F80_0000, // inf
    0xFF80_0000, // -inf
    0x7F7F_FFFF, // f32::MAX
    0xFF7F_FFFF, // f32::MIN
    0x0080_0000, // smallest normal
    0x8080_0000, // -smallest normal
    0x0000_0001, // smallest subnormal
    0x8000_0001, // -smallest subnormal
    0x007F_FFFF, // largest subnormal
    0x4F00_0000, // 2^31
    0xCF00_0000, // -2^31
    0x4EFF_FFFF, // 2147483520, largest below 2^31
    0x4F80_0000, // 2^32
    0x4F7F_FFFF, // 4294967040, largest below 2^32
    0x4B80_0000, // 2^24
    0x4B80_0001, // 2^24 + 2
    0x5F00_0000, // 2^63
    0xDF00_0000, // -2^63
    0x5F80_0000, // 2^64
    0x501502F9,  // 1e10
    0x40C9_0FDB, // 2π
    0x4600_0000, // 8192
];

const F64_EDGES: &[u64] = &[
    0x0000_0000_0000_0000, // 0
    0x8000_0000_0000_0000, // -0
    0x3FF0_0000_0000_0000, // 1
    0xBFF0_0000_0000_0000, // -1
    0x3FE0_0000_0000_0000, // 0.5
    0x3FB9_9999_9999_999A, // 0.1
    0x7FF8_0000_0000_0000, // NaN
    0xFFF8_0000_0000_0000, // -NaN
    0x7FF8_0000_0012_3456, // NaN with a payload
    0x7FF0_0000_0000_0001, // signalling NaN
    0x7FF0_0000_0000_0000, // inf
    0xFFF0_0000_0000_0000, // -inf
    0x7FEF_FFFF_FFFF_FFFF, // f64::MAX
    0x0010_0000_0000_0000, // smallest normal
    0x0000_0000_0000_0001, // smallest subnormal
    0x41E0_0000_0000_0000, // 2^31
    0xC1E0_0000_0000_0000, // -2^31
    0x41DF_FFFF_FFC0_0000, // 2^31 - 1
    0x41F0_0000_0000_0000, // 2^32
    0x4340_0000_0000_0000, // 2^53
    0x4340_0000_0000_0001, // 2^53 + 2
    0x43E0_0000_0000_0000, // 2^63
    0xC3E0_0000_0000_0000, // -2^63
    0x43F0_0000_0000_0000, // 2^64
    0x47EF_FFFF_F000_0000, // above f32::MAX: inf as f32... after rounding
    0x47EF_FFFF_E000_0000, // f32::MAX exactly
    0x3690_0000_0000_0000, // 2^-150: rounds to 0 or the smallest f32 subnormal
    0x36A0_0000_0000_0000, // 2^-149: the smallest f32 subnormal
];

/// One edge-heavy value of a type: half of the time a listed edge, else
/// random bits or a small number.
fn value(ty: Scalar, rng: &mut Rng) -> Value {
    let edge = rng.one_in(2);
    let small = rng.below(33) as i64 - 16;
    match ty {
        Scalar::Bool => Value::Bool(rng.one_in(2)),
        Scalar::I32 => Value::I32(if edge {
            *rng.pick(I32_EDGES)
        } else if rng.one_in(2) {
            rng.next_u64() as i32
        } else {
            small as i32
        }),
        Scalar::U32 => Value::U32(if edge {
            *rng.pick(U32_EDGES)
        } else if rng.one_in(2) {
            rng.next_u64() as u32
        } else {
            small.unsigned_abs() as u32
        }),
        Scalar::I64 => Value::I64(if edge {
            *rng.pick(I64_EDGES)
        } else if rng.one_in(2) {
            rng.next_u64() as i64
        } else {
            small
        }),
        Scalar::U64 => Value::U64(if edge {
            *rng.pick(U64_EDGES)
        } else if rng.one_in(2) {
            rng.next_u64()
        } else {
            small.unsigned_abs()
        }),
        Scalar::F32 => Value::F32(if edge {
            f32::from_bits(*rng.pick(F32_EDGES))
        } else {
            match rng.below(4) {
                0 => f32::from_bits(rng.next_u64() as u32),
                1 => small as f32 / 8.0,
                2 => small as f32,
                _ => {
                    let m = 1.0 + (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
                    m * 2f32.powi(rng.below(80) as i32 - 40)
                        * if rng.one_in(2) { -1.0 } else { 1.0 }
                }
            }
        }),
        Scalar::F64 => Value::F64(if edge {
            f64::from_bits(*rng.pick(F64_EDGES))
        } else {
            match rng.below(4) {
                0 => f64::from_bits(rng.next_u64()),
                1 => small as f64 / 8.0,
                2 => small as f64,
                _ => {
                    let m = 1.0 + (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    m * 2f64.powi(rng.below(160) as i32 - 80)
                        * if rng.one_in(2) { -1.0 } else { 1.0 }
                }
            }
        }),
        // An element of a 16-bit tensor: any bit pattern, as its f32.
        Scalar::F16 | Scalar::BF16 => {
            Value::F32(phobos_core::types::half_value(ty, rng.next_u64() as u16))
        }
    }
}

/// Literals of each type. Negative ones are parenthesized so that they can
/// follow any operator. They include the extremes of the type, hex and `_`
/// forms, and integers written where a float is expected.
fn literals(ty: Scalar) -> &'static [&'static str] {
    match ty {
        Scalar::I32 => &[
            "0",
            "1",
            "2",
            "3",
            "7",
            "31",
            "32",
            "33",
            "64",
            "100",
            "65535",
            "(-1)",
            "(-2)",
            "(-7)",
            "(-33)",
            "(-65536)",
            "2147483647",
            "(-2147483648)",
            "0x7fffffff",
            "0x7FFF_FFFF",
            "0xff",
            "1_000_000",
        ],
        Scalar::U32 => &[
            "0",
            "1",
            "2",
            "3",
            "7",
            "31",
            "32",
            "33",
            "64",
            "65535",
            "2147483647",
            "2147483648",
            "4294967295",
            "0xFFFFFFFF",
            "0x8000_0000",
            "1_000_000",
        ],
        Scalar::I64 => &[
            "0",
            "1",
            "(-1)",
            "7",
            "32",
            "63",
            "64",
            "65",
            "4294967296",
            "(-4294967296)",
            "9223372036854775807",
            "(-9223372036854775808)",
            "0xFFFF_FFFF",
            "0x7FFF_FFFF_FFFF_FFFF",
        ],
        Scalar::U64 => &[
            "0",
            "1",
            "7",
            "63",
            "64",
            "65",
            "4294967295",
            "4294967296",
            "9223372036854775808",
            "18446744073709551615",
            "0xFFFF_FFFF_FFFF_FFFF",
        ],
        Scalar::F32 => &[
            "0.0",
            "1.0",
            "(-1.0)",
            "0.5",
            "0.1",
            "2.5",
            "(-2.5)",
            "1.5e3",
            "6.02E23",
            "3.4028235e38",
            "(-3.4028235e38)",
            "1.0e-45",
            "1.1754943508222875e-38",
            "2147483648.0",
            "(-2147483648.0)",
            "2147483520.0",
            "4294967296.0",
            "16777217.0",
            "1e10",
            "(-0.0)",
            "1_000.25",
            "2",
            "(-7)",
            "16777217",
            "4294967295",
            "2147483647",
        ],
        Scalar::F16 | Scalar::BF16 => unreachable!("no value is 16-bit, so no literal is"),
        Scalar::F64 => &[
            "0.0",
            "1.0",
            "(-1.0)",
            "0.1",
            "2.5",
            "1e300",
            "(-1e300)",
            "1.7976931348623157e308",
            "5e-324",
            "2.2250738585072014e-308",
            "9007199254740993.0",
            "9223372036854775808.0",
            "18446744073709551616.0",
            "(-0.0)",
            "2",
            "(-9223372036854775808)",
            "4294967295",
        ],
        Scalar::Bool => &["true", "false"],
    }
}

/// Divisors that hit the special cases of `/` and `%`.
fn divisors(ty: Scalar) -> &'static [&'static str] {
    match ty {
        Scalar::I32 | Scalar::I64 => &["0", "(-1)", "1", "2", "(-2)"],
        _ => &["0", "1", "2", "4294967295"],
    }
}

/// Shift counts: in range, at the width, past it, and negative.
fn shift_counts(ty: Scalar) -> &'static [&'static str] {
    match ty {
        Scalar::I32 => &["0", "1", "31", "32", "33", "(-1)", "(-31)", "100"],
        Scalar::U32 => &["0", "1", "31", "32", "33", "4294967295", "100"],
        Scalar::I64 => &["0", "1", "63", "64", "65", "(-1)", "100"],
        _ => &["0", "1", "63", "64", "65", "100"],
    }
}

const DROPOUT_P: &[&str] = &["0.0", "0.1", "0.5", "0.9", "0.99"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Rows1,
    Rows2,
    Grid2,
    Whole,
}

/// Where a tile starts along an axis: its text, and whether it is a
/// compile-time constant (the checker bounds-checks constant slices).
#[derive(Clone, Debug)]
struct Origin {
    text: String,
    konst: bool,
}

/// One axis of a statement's tile.
#[derive(Clone, Debug)]
struct TileAx {
    /// Its extent as written (`R`, `4`, `N`).
    tl: String,
    /// Where it starts in the destination, when the statement slices it.
    origin: Option<Origin>,
    /// Whether its positions depend on the block decomposition (`R` rows of
    /// block `ctx.block.x`).
    blocked: bool,
}

/// How the current statement uses a tensor dim: the tile extent along it
/// (`None` when the store drops it) and where the tile starts.
#[derive(Clone, Debug)]
struct DimUse {
    tl: Option<String>,
    origin: Option<Origin>,
    blocked: bool,
}

/// One axis of a readable place.
#[derive(Clone, Debug)]
struct Ax {
    /// The extent as written in the type (`M`, `4`, `1`, or `R` for a tile).
    dim: String,
    /// For a `let` or `var` tile: its positions are relative to the block.
    local_blocked: bool,
}

/// Something an expression can read: a tensor, a scalar parameter, a dim, a
/// `let`, a `var`, `ctx`.
#[derive(Clone, Debug)]
struct Place {
    name: String,
    ty: Scalar,
    axes: Vec<Ax>,
    tensor: bool,
    /// A tensor the kernel stores to: in a block frame, it is read only at the
    /// block's own positions.
    output: bool,
    /// Whether its value is the same in every configuration.
    inv: bool,
    /// The tile of a `var` (assignable); `None` for everything else.
    var: Option<Vec<TileAx>>,
}

/// A generated expression: its text, shape (tile extents and `1`s), and
/// whether its type is fixed (an untyped literal takes its context's).
#[derive(Clone, Debug)]
struct E {
    text: String,
    shape: Vec<String>,
    typed: bool,
}

/// Whether `shape` broadcasts to `tile` without growing it.
fn fits(shape: &[String], tile: &[String]) -> bool {
    shape.len() <= tile.len()
        && shape
            .iter()
            .rev()
            .zip(tile.iter().rev())
            .all(|(s, t)| s == t || s == "1")
}

/// The broadcast of two shapes that both fit one tile.
fn bcast(a: &[String], b: &[String]) -> Vec<String> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = (i + a.len()).checked_sub(n).map(|j| &a[j]);
            let y = (i + b.len()).checked_sub(n).map(|j| &b[j]);
            match (x, y) {
                (Some(x), Some(y)) if x == "1" => y.clone(),
                (Some(x), _) | (None, Some(x)) => x.clone(),
                (None, None) => unreachable!("i < n"),
            }
        })
        .collect()
}

/// A choice of slice index along one axis, and whether it keeps the value
/// independent of the configuration.
#[derive(Clone, Debug)]
struct Choice {
    text: String,
    inv: bool,
}

fn choice(text: impl Into<String>, inv: bool) -> Choice {
    Choice {
        text: text.into(),
        inv,
    }
}

struct Gen {
    seed: u64,
    rng: Rng,
    opts: Options,
    frame: Frame,
    types: Vec<Scalar>,
    places: Vec<Place>,
    /// Tuning parameters, usable as untyped literals (not invariant).
    tunes: Vec<String>,
    syms: Vec<String>,
    dimmap: HashMap<String, DimUse>,
    /// The tile of the statement being generated.
    tile: Vec<TileAx>,
    iota_ok: bool,
    /// Whether the kernel has the small i32 scalar `off` for shifted slices.
    off: bool,
    /// Integer scalar parameters, used as out-of-range slice indices.
    int_scalars: Vec<String>,
    next: usize,
}

impl Gen {
    fn new(seed: u64, opts: Options) -> Gen {
        let mut types = vec![Scalar::I32, Scalar::U32, Scalar::F32, Scalar::Bool];
        if opts.wide_types {
            types.extend([Scalar::I64, Scalar::U64, Scalar::F64]);
        }
        Gen {
            seed,
            rng: Rng::new(seed),
            opts,
            frame: Frame::Whole,
            types,
            places: Vec::new(),
            tunes: Vec::new(),
            syms: Vec::new(),
            dimmap: HashMap::new(),
            tile: Vec::new(),
            iota_ok: false,
            off: false,
            int_scalars: Vec::new(),
            next: 0,
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// An element type, mostly the 32-bit ones the issue asks about.
    fn elem_type(&mut self, bool_ok: bool) -> Scalar {
        let wide = if self.opts.wide_types { 1 } else { 0 };
        let b = if bool_ok { 1 } else { 0 };
        let ws = [5, 3, 5, b, wide, wide, wide];
        [
            Scalar::I32,
            Scalar::U32,
            Scalar::F32,
            Scalar::Bool,
            Scalar::I64,
            Scalar::U64,
            Scalar::F64,
        ][self.rng.weighted(&ws)]
    }

    /// A type other than `not`, to convert from: mostly one that some
    /// place has, so that conversions apply to data rather than literals.
    fn other_type(&mut self, not: Scalar) -> Scalar {
        let had: Vec<Scalar> = self
            .places
            .iter()
            .map(|p| p.ty)
            .filter(|t| *t != not)
            .collect();
        if !had.is_empty() && !self.rng.one_in(3) {
            return *self.rng.pick(&had);
        }
        loop {
            let t = *self.rng.pick(&self.types.clone());
            if t != not {
                return t;
            }
        }
    }

    fn tile_texts(&self) -> Vec<String> {
        self.tile.iter().map(|t| t.tl.clone()).collect()
    }

    fn is_sym(&self, d: &str) -> bool {
        self.syms.iter().any(|s| s == d)
    }

    /// The last index of an axis of extent `d`.
    fn last(d: &str) -> String {
        match d.parse::<u64>() {
            Ok(v) => (v - 1).to_string(),
            Err(_) => format!("{d} - 1"),
        }
    }

    /// A symbolic dim (`name`, extent in `lo..=hi`, rarely 0) or a literal
    /// one (`lit_lo..=lit_hi`).
    fn dim(
        &mut self,
        name: &str,
        (lo, hi): (usize, usize),
        (lit_lo, lit_hi): (usize, usize),
        dims: &mut Vec<(String, usize)>,
    ) -> String {
        if self.rng.below(4) != 0 {
            let v = if self.rng.one_in(40) {
                0
            } else {
                lo + self.rng.below(hi - lo + 1)
            };
            self.syms.push(name.to_string());
            dims.push((name.to_string(), v));
            name.to_string()
        } else {
            (lit_lo + self.rng.below(lit_hi - lit_lo + 1)).to_string()
        }
    }

    /// `d`, or the next literal when it is the literal `other`: two axes of
    /// one tensor with one extent text would be one dim to the generator.
    fn distinct(d: String, other: &str) -> String {
        if d == other {
            (d.parse::<usize>().expect("only literals can be equal") + 1).to_string()
        } else {
            d
        }
    }

    /// `@autotune` values for a parameter: one to three (at least two for
    /// invariant kernels, which are run in several configurations).
    fn tune_values(&mut self) -> Vec<u32> {
        let n = if self.opts.tuning_invariant {
            2 + self.rng.below(2)
        } else {
            1 + self.rng.below(3)
        };
        let mut vals: Vec<u32> = Vec::new();
        while vals.len() < n {
            let v = *self.rng.pick(&[1, 2, 3, 4, 4, 5, 8]);
            if !vals.contains(&v) {
                vals.push(v);
            }
        }
        vals
    }

    /// The start of the block's tile along a grid axis, sometimes through
    /// lets (grid inference follows them), sometimes inline.
    fn origin(&mut self, axis: &str, tune: &str, name: &str, body: &mut Vec<String>) -> Origin {
        let block = format!("ctx.block.{axis}");
        let text = match self.rng.below(6) {
            0 => {
                return Origin {
                    text: format!("{block} * {tune}"),
                    konst: false,
                };
            }
            1 => {
                body.push(format!("let {name} = {tune} * {block}"));
                name.to_string()
            }
            2 => {
                let b = format!("b{axis}");
                body.push(format!("let {b} = {block}"));
                body.push(format!("let {name} = {b} * {tune}"));
                self.scalar_place(&b, Scalar::I32, false);
                name.to_string()
            }
            _ => {
                body.push(format!("let {name} = {block} * {tune}"));
                name.to_string()
            }
        };
        Origin { text, konst: false }
    }

    fn scalar_place(&mut self, name: &str, ty: Scalar, inv: bool) {
        self.places.push(Place {
            name: name.to_string(),
            ty,
            axes: Vec::new(),
            tensor: false,
            output: false,
            inv,
            var: None,
        });
    }

    fn kernel(mut self) -> Case {
        self.frame = if self.opts.tuning_invariant {
            *self
                .rng
                .pick(&[Frame::Rows1, Frame::Rows2, Frame::Rows2, Frame::Grid2])
        } else {
            *self.rng.pick(&[
                Frame::Rows1,
                Frame::Rows2,
                Frame::Rows2,
                Frame::Grid2,
                Frame::Whole,
                Frame::Whole,
            ])
        };
        let mut dims = Vec::new();
        let mut annotations = Vec::new();
        let mut body = Vec::new();
        // Tensor shapes, as (dims, weight) for inputs and for outputs.
        let ins: Vec<(Vec<String>, usize)>;
        let outs: Vec<(Vec<String>, usize)>;
        let one = || "1".to_string();
        match self.frame {
            Frame::Rows1 | Frame::Rows2 => {
                let m = self.dim("M", (1, 29), (2, 20), &mut dims);
                let r = self.tune_values();
                annotations.push(format!("@autotune(R in {r:?})"));
                self.tunes.push("R".into());
                if self.rng.one_in(5) {
                    annotations.push(format!("@grid(cdiv({m}, R))"));
                }
                let o = self.origin("x", "R", "r", &mut body);
                self.dimmap.insert(
                    m.clone(),
                    DimUse {
                        tl: Some("R".into()),
                        origin: Some(o.clone()),
                        blocked: true,
                    },
                );
                let rows = TileAx {
                    tl: "R".into(),
                    origin: Some(o),
                    blocked: true,
                };
                if self.frame == Frame::Rows1 {
                    self.tile = vec![rows];
                    ins = vec![(vec![m.clone()], 1)];
                    outs = ins.clone();
                } else {
                    let c = Self::distinct(self.dim("N", (1, 6), (2, 6), &mut dims), &m);
                    self.dimmap.insert(
                        c.clone(),
                        DimUse {
                            tl: Some(c.clone()),
                            origin: None,
                            blocked: false,
                        },
                    );
                    self.tile = vec![
                        rows,
                        TileAx {
                            tl: c.clone(),
                            origin: None,
                            blocked: false,
                        },
                    ];
                    let mat = vec![m.clone(), c.clone()];
                    outs = vec![(mat, 4), (vec![m.clone()], 1), (vec![m.clone(), one()], 1)];
                    ins = [outs.clone(), vec![(vec![c], 1)]].concat();
                }
            }
            Frame::Grid2 => {
                let m = self.dim("M", (1, 13), (2, 13), &mut dims);
                let n = Self::distinct(self.dim("N", (1, 12), (2, 12), &mut dims), &m);
                let (r, k) = (self.tune_values(), self.tune_values());
                if self.rng.one_in(2) {
                    annotations.push(format!("@autotune(R in {r:?}, K in {k:?})"));
                } else {
                    annotations.push(format!("@autotune(R in {r:?})"));
                    annotations.push(format!("@autotune(K in {k:?})"));
                }
                self.tunes.extend(["R".into(), "K".into()]);
                if self.rng.one_in(5) {
                    annotations.push(format!("@grid(cdiv({n}, K), cdiv({m}, R))"));
                }
                let ro = self.origin("y", "R", "r", &mut body);
                let co = self.origin("x", "K", "c", &mut body);
                for (d, tl, o) in [(&m, "R", &ro), (&n, "K", &co)] {
                    self.dimmap.insert(
                        d.clone(),
                        DimUse {
                            tl: Some(tl.into()),
                            origin: Some(o.clone()),
                            blocked: true,
                        },
                    );
                    self.tile.push(TileAx {
                        tl: tl.into(),
                        origin: Some(o.clone()),
                        blocked: true,
                    });
                }
                outs = vec![(vec![m.clone(), n.clone()], 1)];
                ins = vec![
                    (vec![m.clone(), n.clone()], 4),
                    (vec![m, one()], 1),
                    (vec![n], 1),
                ];
            }
            Frame::Whole => {
                let d0 = self.dim("M", (1, 12), (2, 9), &mut dims);
                if self.rng.one_in(2) {
                    self.tile = vec![TileAx {
                        tl: d0.clone(),
                        origin: None,
                        blocked: false,
                    }];
                    ins = vec![(vec![d0], 4), (vec![one()], 1)];
                } else {
                    let d1 = Self::distinct(self.dim("N", (1, 7), (2, 6), &mut dims), &d0);
                    for d in [&d0, &d1] {
                        self.tile.push(TileAx {
                            tl: d.clone(),
                            origin: None,
                            blocked: false,
                        });
                    }
                    ins = vec![
                        (vec![d0.clone(), d1.clone()], 4),
                        (vec![d1], 1),
                        (vec![d0, one()], 1),
                    ];
                }
                outs = ins.clone();
                self.full_dimmap();
            }
        }
        // The frame's main tile: the shape of `var` and `let` tiles.
        let main_tile = self.tile.clone();

        // Parameters: tensors, then scalars; their order is shuffled.
        let mut params = Vec::new();
        let n_in = 1 + self.rng.below(3);
        let n_out = 1 + self.rng.below(2);
        let shapes: Vec<Vec<String>> = (0..n_in + n_out)
            .map(|i| {
                let kinds = if i >= n_in { &outs } else { &ins };
                let w: Vec<usize> = kinds.iter().map(|k| k.1).collect();
                kinds[self.rng.weighted(&w)].0.clone()
            })
            .collect();
        // A symbolic dim exists only through a tensor that has it; the first
        // shape of each list has them all.
        let all_syms = self
            .syms
            .iter()
            .all(|d| shapes.iter().any(|s| s.contains(d)));
        for (i, shape) in shapes.into_iter().enumerate() {
            let output = i >= n_in;
            let shape = if i == 0 && !all_syms {
                ins[0].0.clone()
            } else {
                shape
            };
            let ty = self.elem_type(self.opts.bool_tensors);
            let name = format!("T{i}");
            params.push(format!("{name}: tensor<{ty}>[{}]", shape.join(", ")));
            self.places.push(Place {
                name,
                ty,
                axes: shape
                    .into_iter()
                    .map(|dim| Ax {
                        dim,
                        local_blocked: false,
                    })
                    .collect(),
                tensor: true,
                output,
                inv: true,
                var: None,
            });
        }
        for i in 0..self.rng.below(3) {
            let ty = self.elem_type(true);
            let name = format!("s{i}");
            params.push(format!("{name}: {ty}"));
            if ty.is_int() {
                self.int_scalars.push(name.clone());
            }
            self.scalar_place(&name, ty, true);
        }
        if self.frame != Frame::Whole || self.rng.one_in(2) {
            self.off = true;
            params.push("off: i32".into());
            self.scalar_place("off", Scalar::I32, true);
        }
        for i in (1..params.len()).rev() {
            let j = self.rng.below(i + 1);
            params.swap(i, j);
        }
        for s in self.syms.clone() {
            self.scalar_place(&s, Scalar::I32, true);
        }
        // What depends on the block decomposition (the grid, a block's
        // index, its origin) is read only by non-invariant kernels.
        for f in ["ctx.grid.x", "ctx.grid.y", "ctx.grid.z"] {
            self.scalar_place(f, Scalar::I32, false);
        }
        for t in main_tile.clone() {
            if let Some(o) = t.origin {
                let name = if o.text.contains(' ') {
                    format!("({})", o.text)
                } else {
                    o.text
                };
                self.scalar_place(&name, Scalar::I32, false);
            }
        }
        match self.frame {
            Frame::Rows1 | Frame::Rows2 => self.scalar_place("ctx.block.x", Scalar::I32, false),
            Frame::Grid2 => {
                self.scalar_place("ctx.block.x", Scalar::I32, false);
                self.scalar_place("ctx.block.y", Scalar::I32, false);
            }
            Frame::Whole => {}
        }

        // Statements.
        let mut stores = 0;
        let mut range_stores = 0;
        for _ in 0..1 + self.rng.below(4) {
            let vars = self.places.iter().any(|p| p.var.is_some());
            let what = self.rng.weighted(&[
                2,
                2,
                2,
                1,
                6,
                if vars { 2 } else { 0 },
                if vars { 1 } else { 0 },
            ]);
            self.tile = main_tile.clone();
            if self.frame == Frame::Whole {
                self.full_dimmap();
            }
            let stmt = match what {
                0 => self.let_stmt(true),
                1 => self.let_stmt(false),
                2 => self.var_stmt(false),
                3 => self.var_stmt(true),
                4 => {
                    let (s, range) = self.store(false);
                    stores += 1;
                    range_stores += usize::from(range);
                    s
                }
                5 => self.var_update(),
                _ => self.for_loop(),
            };
            body.push(stmt);
        }
        if stores == 0 || (self.frame != Frame::Whole && range_stores == 0) {
            self.tile = main_tile.clone();
            if self.frame == Frame::Whole {
                self.full_dimmap();
            }
            body.push(self.store(true).0);
        }

        let mut src = String::new();
        for a in &annotations {
            src.push_str(a);
            src.push('\n');
        }
        src.push_str(&format!("kernel {KERNEL}("));
        for (i, p) in params.iter().enumerate() {
            if i > 0 {
                // A newline inside the parentheses continues the line.
                src.push_str(if self.rng.one_in(6) { ",\n    " } else { ", " });
            }
            src.push_str(p);
        }
        src.push_str(") {\n  ");
        for (i, s) in body.iter().enumerate() {
            if i > 0 {
                src.push_str(if self.rng.one_in(8) { "; " } else { "\n  " });
            }
            src.push_str(s);
        }
        src.push_str("\n}\n");
        Case {
            seed: self.seed,
            source: src,
            dims,
        }
    }

    /// Every tensor dim taken whole (`Whole` frame statements).
    fn full_dimmap(&mut self) {
        let dims: Vec<String> = self
            .places
            .iter()
            .flat_map(|p| p.axes.iter().map(|a| a.dim.clone()))
            .chain(self.tile.iter().map(|t| t.tl.clone()))
            .collect();
        self.dimmap.clear();
        for d in dims {
            self.dimmap.insert(
                d.clone(),
                DimUse {
                    tl: Some(d),
                    origin: None,
                    blocked: false,
                },
            );
        }
    }

    /// `let NAME = VALUE`: a scalar, or a tile of the frame's shape (no iota).
    fn let_stmt(&mut self, scalar: bool) -> String {
        if scalar {
            self.tile = Vec::new();
        }
        self.iota_ok = false;
        let ty = self.elem_type(true);
        let depth = 1 + self.rng.below(3) as u32;
        let e = self.expr(ty, depth, true);
        let name = self.fresh(if scalar { "a" } else { "t" });
        self.local_place(&name, ty, &e.shape, None);
        format!("let {name} = {}", e.text)
    }

    /// `var NAME: tile<T>[...] = VALUE` or `var NAME: T = VALUE`.
    fn var_stmt(&mut self, scalar: bool) -> String {
        if scalar {
            self.tile = Vec::new();
        }
        self.iota_ok = true;
        let ty = self.elem_type(true);
        let depth = 1 + self.rng.below(3) as u32;
        let e = self.expr(ty, depth, false);
        let name = self.fresh(if scalar { "z" } else { "v" });
        let tile = self.tile.clone();
        let texts = self.tile_texts();
        self.local_place(&name, ty, &texts, Some(tile));
        if scalar {
            format!("var {name}: {ty} = {}", e.text)
        } else {
            format!("var {name}: tile<{ty}>[{}] = {}", texts.join(", "), e.text)
        }
    }

    fn local_place(&mut self, name: &str, ty: Scalar, shape: &[String], var: Option<Vec<TileAx>>) {
        let axes = shape
            .iter()
            .map(|d| Ax {
                dim: d.clone(),
                local_blocked: self.tunes.contains(d),
            })
            .collect();
        self.places.push(Place {
            name: name.to_string(),
            ty,
            axes,
            tensor: false,
            output: false,
            inv: true,
            var,
        });
    }

    /// `v = VALUE` for an existing `var`.
    /// `for i in a .. b { .. }` around one or two `var` updates, which may
    /// read `i`. The bounds are literals or a dim modulo a small number, so
    /// a loop runs at most a few times, sometimes not at all.
    fn for_loop(&mut self) -> String {
        let name = self.fresh("i");
        let mut bounds = vec![
            "0 .. 3".to_string(),
            "1 .. 1".to_string(),
            "-2 .. 2".to_string(),
            "4 .. 2".to_string(),
        ];
        for s in &self.syms {
            bounds.push(format!("0 .. {s} % 4"));
            bounds.push(format!("{s} % 3 - 1 .. {s} % 5"));
        }
        let range = self.rng.pick(&bounds).clone();
        self.places.push(Place {
            name: name.clone(),
            ty: Scalar::I32,
            axes: Vec::new(),
            tensor: false,
            output: false,
            inv: true,
            var: None,
        });
        let mut body = Vec::new();
        for _ in 0..1 + self.rng.below(2) {
            body.push(self.var_update());
        }
        self.places.pop();
        format!(
            "for {name} in {range} {{
    {}
  }}",
            body.join(
                "
    "
            )
        )
    }

    fn var_update(&mut self) -> String {
        let vars: Vec<Place> = self
            .places
            .iter()
            .filter(|p| p.var.is_some())
            .cloned()
            .collect();
        let v = self.rng.pick(&vars).clone();
        self.tile = v.var.clone().expect("a var");
        self.iota_ok = true;
        let depth = 1 + self.rng.below(3) as u32;
        let e = self.expr(v.ty, depth, false);
        format!("{} = {}", v.name, e.text)
    }

    /// A store into an output tensor; also says whether it is a range store
    /// along every blocked dim (one that lets the checker infer the grid).
    fn store(&mut self, force_range: bool) -> (String, bool) {
        let outs: Vec<Place> = self.places.iter().filter(|p| p.output).cloned().collect();
        let p = self.rng.pick(&outs).clone();
        let inv = self.opts.tuning_invariant;
        let mut index = Vec::new();
        let mut tile = Vec::new();
        let mut range = true;
        let mut whole_all = true;
        if self.frame == Frame::Whole {
            self.dimmap.clear();
        }
        for ax in &p.axes {
            let d = ax.dim.clone();
            if d == "1" {
                match self.rng.below(3) {
                    0 => {
                        index.push("0".to_string());
                        whole_all = false;
                    }
                    1 => {
                        index.push("0 :+ 1".to_string());
                        whole_all = false;
                        tile.push(TileAx {
                            tl: d,
                            origin: None,
                            blocked: false,
                        });
                    }
                    _ => {
                        index.push(":".to_string());
                        tile.push(TileAx {
                            tl: d,
                            origin: None,
                            blocked: false,
                        });
                    }
                }
                continue;
            }
            if self.frame != Frame::Whole {
                let u = self.dimmap[&d].clone();
                let tl = u.tl.clone().expect("block frames keep every dim");
                match &u.origin {
                    Some(o) => {
                        // Rarely, one element per block at its origin: not a
                        // range store, and not invariant.
                        if !force_range && !inv && self.rng.one_in(8) {
                            index.push(o.text.clone());
                            range = false;
                        } else {
                            index.push(format!("{} :+ {tl}", o.text));
                            tile.push(TileAx {
                                tl,
                                origin: Some(o.clone()),
                                blocked: u.blocked,
                            });
                        }
                    }
                    None => match self.rng.weighted(&[5, 1, if self.off { 1 } else { 0 }, 1]) {
                        0 => {
                            index.push(":".into());
                            tile.push(TileAx {
                                tl,
                                origin: None,
                                blocked: false,
                            });
                        }
                        1 => {
                            index.push(format!("0 :+ {d}"));
                            tile.push(TileAx {
                                tl,
                                origin: None,
                                blocked: false,
                            });
                        }
                        2 => {
                            // Shifted along a whole axis: elements past the
                            // end are dropped, and the first ones keep their
                            // old values.
                            index.push(format!("off :+ {d}"));
                            tile.push(TileAx {
                                tl,
                                origin: Some(Origin {
                                    text: "off".into(),
                                    konst: false,
                                }),
                                blocked: false,
                            });
                        }
                        _ => {
                            let i = self.index_text(&d);
                            index.push(i);
                        }
                    },
                }
                whole_all = false;
                continue;
            }
            // The Whole frame: whole, partial at any start, or one element.
            match self.rng.weighted(&[4, 3, 1]) {
                0 => {
                    index.push(":".into());
                    self.dimmap.insert(
                        d.clone(),
                        DimUse {
                            tl: Some(d.clone()),
                            origin: None,
                            blocked: false,
                        },
                    );
                    tile.push(TileAx {
                        tl: d,
                        origin: None,
                        blocked: false,
                    });
                }
                1 => {
                    whole_all = false;
                    let lit = d.parse::<usize>().ok();
                    let n = 1 + self.rng.below(lit.unwrap_or(3).min(3));
                    let start = match (lit, self.rng.below(3)) {
                        (_, 0) if self.off => Origin {
                            text: "off".into(),
                            konst: false,
                        },
                        (Some(l), _) => Origin {
                            text: self.rng.below(l - n + 1).to_string(),
                            konst: true,
                        },
                        (None, _) => Origin {
                            text: self.rng.pick(&["-1", "0", "1", "2"]).to_string(),
                            konst: true,
                        },
                    };
                    index.push(format!("{} :+ {n}", start.text));
                    self.dimmap.insert(
                        d.clone(),
                        DimUse {
                            tl: Some(n.to_string()),
                            origin: Some(start.clone()),
                            blocked: false,
                        },
                    );
                    tile.push(TileAx {
                        tl: n.to_string(),
                        origin: Some(start),
                        blocked: false,
                    });
                }
                _ => {
                    whole_all = false;
                    let i = self.index_text(&d);
                    index.push(i);
                    self.dimmap.insert(
                        d,
                        DimUse {
                            tl: None,
                            origin: None,
                            blocked: false,
                        },
                    );
                }
            }
        }
        if self.frame == Frame::Whole {
            // Dims of other tensors that this store does not have.
            let others: Vec<String> = self
                .places
                .iter()
                .flat_map(|p| p.axes.iter().map(|a| a.dim.clone()))
                .collect();
            for d in others {
                self.dimmap.entry(d).or_insert(DimUse {
                    tl: None,
                    origin: None,
                    blocked: false,
                });
            }
        }
        self.tile = tile;
        self.iota_ok = true;
        let depth = 1 + self.rng.below(3) as u32 + u32::from(self.rng.one_in(4));
        let e = self.expr(p.ty, depth, false);
        let place = if whole_all && self.rng.one_in(2) {
            p.name.clone()
        } else {
            format!("{}[{}]", p.name, index.join(", "))
        };
        (format!("{place} = {}", e.text), range)
    }

    /// A single index into an axis of extent `d`: in range or not.
    fn index_text(&mut self, d: &str) -> String {
        let mut opts = vec!["0".to_string(), Self::last(d)];
        if self.off {
            opts.push("off".into());
        }
        self.rng.pick(&opts).clone()
    }

    // ---- expressions ----

    /// An expression of `ty` that fits the current tile, at most `depth`
    /// operators deep; `typed` asks for a fixed type (where a literal would
    /// default to i32 or f32 instead of taking its context's type).
    ///
    /// Operators are picked for the type the expression will have, never
    /// for the literal kind of its operands. That matters: the checker
    /// accepts an integer-only operator on untyped integer literals that
    /// later become a float (`F[0] = 3 % 2`, `1 << 2`, `5 & 3`, `~5`, `!5`
    /// into an f32 tensor), and the interpreter then panics on an f32 `%`.
    /// Until the checker rejects those, this generator must not write them
    /// (and, by construction, does not).
    fn expr(&mut self, ty: Scalar, depth: u32, typed: bool) -> E {
        if depth == 0 || self.rng.one_in(6) {
            return self.leaf(ty, typed);
        }
        match ty {
            Scalar::Bool => self.bool_expr(depth, typed),
            t if t.is_float() => self.float_expr(t, depth, typed),
            t => self.int_expr(t, depth, typed),
        }
    }

    /// Two operands of one type; when the result must be typed, one of them
    /// is (the other may be an untyped literal that takes its type).
    fn pair(&mut self, ty: Scalar, depth: u32, typed: bool) -> (E, E) {
        let side = self.rng.below(2);
        let a = self.expr(ty, depth - 1, typed && side == 0);
        let b = self.expr(ty, depth - 1, typed && side == 1);
        (a, b)
    }

    fn binary(&self, a: &E, op: &str, b: &E) -> E {
        E {
            text: format!("({} {op} {})", a.text, b.text),
            shape: bcast(&a.shape, &b.shape),
            typed: a.typed || b.typed,
        }
    }

    /// `name(args)`; `typed` says whether the result has a fixed type (for
    /// `where`, only its branches decide).
    fn call(name: &str, args: &[&E], typed: bool) -> E {
        let mut shape = Vec::new();
        for a in args {
            shape = bcast(&shape, &a.shape);
        }
        let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
        E {
            text: format!("{name}({})", texts.join(", ")),
            shape,
            typed,
        }
    }

    fn lit(ty: Scalar, text: &str, typed: bool) -> E {
        E {
            text: if typed && ty != Scalar::Bool {
                format!("{ty}({text})")
            } else {
                text.to_string()
            },
            shape: Vec::new(),
            typed: typed || ty == Scalar::Bool,
        }
    }

    /// A literal of `ty` (as `ty(...)` when it must be typed).
    fn literal(&mut self, ty: Scalar, typed: bool) -> E {
        let mut pool: Vec<&str> = literals(ty).to_vec();
        let tunes = self.tunes.clone();
        if !self.opts.tuning_invariant && ty != Scalar::Bool {
            pool.extend(tunes.iter().map(|s| s.as_str()));
        }
        let text = self.rng.pick(&pool).to_string();
        Self::lit(ty, &text, typed)
    }

    /// A leaf: a literal, a slice of a place, or `iota`.
    fn leaf(&mut self, ty: Scalar, typed: bool) -> E {
        let inv = self.opts.tuning_invariant;
        // Outputs are read less often: reading a destination is one case
        // among many, not half of all kernels.
        let outputs = self.rng.one_in(3);
        let cands: Vec<usize> = (0..self.places.len())
            .filter(|&i| {
                let p = &self.places[i];
                p.ty == ty && (p.inv || !inv) && (outputs || !p.output)
            })
            .collect();
        let iota = ty == Scalar::I32 && self.iota_ok && !self.tile.is_empty();
        let n = cands.len() + usize::from(iota);
        if n == 0 || self.rng.one_in(5) {
            // Data of another type, converted, rather than yet another literal.
            let others: Vec<usize> = (0..self.places.len())
                .filter(|&i| {
                    let p = &self.places[i];
                    p.ty != ty && (p.inv || !inv) && (outputs || !p.output)
                })
                .collect();
            if !others.is_empty() && self.rng.one_in(2) {
                let pi = *self.rng.pick(&others);
                if let Some(e) = self.place_leaf(pi) {
                    return Self::call(ty.name(), &[&e], true);
                }
            }
            return self.literal(ty, typed);
        }
        // iota is one leaf among many places; give it a fair share.
        let k = if iota && self.rng.one_in(4) {
            cands.len()
        } else {
            self.rng.below(n)
        };
        let leaf = if k < cands.len() {
            self.place_leaf(cands[k])
        } else {
            self.iota_leaf()
        };
        leaf.unwrap_or_else(|| self.literal(ty, typed))
    }

    /// `iota(k)`, or the global position `origin + iota(k)`.
    fn iota_leaf(&mut self) -> Option<E> {
        let k = self.rng.below(self.tile.len());
        let ax = self.tile[k].clone();
        let mut opts = Vec::new();
        opts.push(choice(format!("iota({k})"), !ax.blocked));
        if let Some(o) = &ax.origin {
            opts.push(choice(format!("({} + iota({k}))", o.text), true));
        }
        if self.opts.tuning_invariant {
            opts.retain(|c| c.inv);
        }
        if opts.is_empty() {
            return None;
        }
        Some(E {
            text: self.rng.pick(&opts).text.clone(),
            shape: self.tile_texts(),
            typed: true,
        })
    }

    /// The ways to index one axis of a place: as a kept tile axis (with the
    /// extent it then has), or by one position (kept as `i :+ 1`, or dropped).
    fn axis_choices(&self, p: &Place, ax: &Ax) -> (Vec<Choice>, Option<String>, Vec<Choice>) {
        let d = &ax.dim;
        let sym = self.is_sym(d);
        if d == "1" {
            let mut idx = vec![choice("0", true)];
            if self.off {
                idx.push(choice("off", true));
            }
            return (
                vec![choice(":", true), choice("0 :+ 1", true)],
                Some("1".into()),
                idx,
            );
        }
        let mut tile = Vec::new();
        let mut idx = Vec::new();
        if !p.tensor {
            // A let or var tile: positions relative to the block when its
            // axis is a tuning extent.
            let lb = ax.local_blocked;
            tile.push(choice(":", true));
            tile.push(choice(format!("0 :+ {d}"), true));
            if self.off {
                tile.push(choice(format!("off :+ {d}"), !lb));
                idx.push(choice("off", !lb));
            }
            if sym {
                tile.push(choice(format!("1 :+ {d}"), true));
            }
            idx.push(choice("0", !lb));
            idx.push(choice(Self::last(d), !lb));
            return (tile, Some(d.clone()), idx);
        }
        let u = self.dimmap[d].clone();
        // In a block frame an output is read only where this block writes it.
        let restricted = p.output && self.frame != Frame::Whole && u.blocked;
        if let Some(tl) = &u.tl {
            match &u.origin {
                Some(o) => {
                    tile.push(choice(format!("{} :+ {tl}", o.text), true));
                    if !restricted && !o.konst {
                        for k in ["+ 1", "+ 2", "- 1", "+ 3"] {
                            tile.push(choice(format!("{} {k} :+ {tl}", o.text), true));
                        }
                        if self.off {
                            tile.push(choice(format!("{} + off :+ {tl}", o.text), true));
                        }
                    }
                }
                None => {
                    tile.push(choice(":", true));
                    tile.push(choice(format!("0 :+ {d}"), true));
                    if self.off {
                        tile.push(choice(format!("off :+ {d}"), true));
                    }
                    if sym {
                        tile.push(choice(format!("1 :+ {d}"), true));
                        tile.push(choice(format!("2 :+ {d}"), true));
                    }
                }
            }
        }
        if !restricted {
            idx.push(choice("0", true));
            idx.push(choice(Self::last(d), true));
            if self.off {
                idx.push(choice("off", true));
            }
            if sym {
                idx.push(choice("-1", true));
            }
            for s in &self.int_scalars {
                idx.push(choice(s.clone(), true));
            }
        }
        if let Some(o) = &u.origin {
            idx.push(choice(o.text.clone(), !u.blocked));
        }
        (tile, u.tl, idx)
    }

    /// A load from place `pi` whose shape fits the current tile.
    fn place_leaf(&mut self, pi: usize) -> Option<E> {
        let p = self.places[pi].clone();
        if p.axes.is_empty() {
            return Some(E {
                text: p.name.clone(),
                shape: Vec::new(),
                typed: true,
            });
        }
        let inv = self.opts.tuning_invariant;
        let mut axes = Vec::new();
        for ax in &p.axes {
            let (mut tile, tl, mut idx) = self.axis_choices(&p, ax);
            if inv {
                tile.retain(|c| c.inv);
                idx.retain(|c| c.inv);
            }
            axes.push((tile, tl, idx));
        }
        // Every combination of (tile, one, drop) per axis whose shape fits.
        let tile_texts = self.tile_texts();
        let rank = axes.len();
        let mut combos = Vec::new();
        for code in 0..3usize.pow(rank as u32) {
            let mut shape = Vec::new();
            let mut ok = true;
            let mut c = code;
            let mut cats = Vec::new();
            for (tile, tl, idx) in &axes {
                let cat = c % 3;
                c /= 3;
                match cat {
                    0 if !tile.is_empty() && tl.is_some() => {
                        shape.push(tl.clone().expect("checked"))
                    }
                    1 if !idx.is_empty() => shape.push("1".to_string()),
                    2 if !idx.is_empty() => {}
                    _ => ok = false,
                }
                cats.push(cat);
            }
            if ok && fits(&shape, &tile_texts) {
                combos.push((cats, shape));
            }
        }
        if combos.is_empty() {
            return None;
        }
        let (cats, shape) = self.rng.pick(&combos).clone();
        let mut parts = Vec::new();
        let mut all_full = true;
        for (cat, (tile, _, idx)) in cats.iter().zip(&axes) {
            let part = match cat {
                0 => self.rng.pick(tile).text.clone(),
                1 => format!("{} :+ 1", self.rng.pick(idx).text),
                _ => self.rng.pick(idx).text.clone(),
            };
            all_full &= part == ":";
            parts.push(part);
        }
        let text = if all_full && self.rng.one_in(2) {
            p.name.clone()
        } else {
            format!("{}[{}]", p.name, parts.join(", "))
        };
        Some(E {
            text,
            shape,
            typed: true,
        })
    }

    fn cast(&mut self, ty: Scalar, depth: u32) -> E {
        let from = self.other_type(ty);
        let inner = self.expr(from, depth - 1, true);
        Self::call(ty.name(), &[&inner], true)
    }

    fn bitcast(&mut self, ty: Scalar, depth: u32) -> Option<E> {
        let group: &[Scalar] = match ty.size() {
            4 => &[Scalar::I32, Scalar::U32, Scalar::F32],
            _ if self.opts.wide_types => &[Scalar::I64, Scalar::U64, Scalar::F64],
            _ => return None,
        };
        let from = loop {
            let t = *self.rng.pick(group);
            if t != ty {
                break t;
            }
        };
        let inner = self.expr(from, depth - 1, true);
        Some(E {
            text: format!("bitcast<{ty}>({})", inner.text),
            shape: inner.shape,
            typed: true,
        })
    }

    fn select(&mut self, ty: Scalar, depth: u32, typed: bool) -> E {
        let c = self.expr(Scalar::Bool, depth - 1, true);
        let (a, b) = self.pair(ty, depth, typed);
        Self::call("where", &[&c, &a, &b], a.typed || b.typed)
    }

    fn int_expr(&mut self, ty: Scalar, depth: u32, typed: bool) -> E {
        let signed = ty.is_signed_int();
        let hash = ty == Scalar::I32;
        let w = [
            40,
            10,
            10,
            5,
            8,
            6,
            usize::from(signed) * 3,
            usize::from(hash) * 4,
            4,
            3,
        ];
        match self.rng.weighted(&w) {
            0 => {
                let op = *self
                    .rng
                    .pick(&["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"]);
                let (a, mut b) = self.pair(ty, depth, typed);
                // Emphasize the special cases; the literal is typed when the
                // side it replaces had to be.
                let special = if op == "/" || op == "%" {
                    self.rng.one_in(2).then(|| divisors(ty))
                } else if op == "<<" || op == ">>" {
                    self.rng.one_in(2).then(|| shift_counts(ty))
                } else {
                    None
                };
                if let Some(pool) = special {
                    let t = self.rng.pick(pool).to_string();
                    b = Self::lit(ty, &t, typed && !a.typed);
                }
                self.binary(&a, op, &b)
            }
            1 => {
                let ops: &[&str] = if signed {
                    &["-", "~", "!"]
                } else {
                    &["~", "!"]
                };
                let op = *self.rng.pick(ops);
                // `-` of a literal folds into it, and `-(-2147483648)` would
                // then be out of range; a typed operand is never a literal.
                let a = self.expr(ty, depth - 1, typed || op == "-");
                E {
                    text: format!("({op}{})", a.text),
                    shape: a.shape,
                    typed: a.typed,
                }
            }
            2 => self.cast(ty, depth),
            3 => self
                .bitcast(ty, depth)
                .unwrap_or_else(|| self.cast(ty, depth)),
            4 => self.select(ty, depth, typed),
            5 => {
                let (a, b) = self.pair(ty, depth, true);
                let f = *self.rng.pick(&["min", "max"]);
                Self::call(f, &[&a, &b], true)
            }
            6 => {
                let a = self.expr(ty, depth - 1, true);
                Self::call("abs", &[&a], true)
            }
            7 => {
                let a = self.expr(ty, depth - 1, false);
                Self::call("hash32", &[&a], true)
            }
            8 => self
                .reduction(ty, depth)
                .unwrap_or_else(|| self.cast(ty, depth)),
            _ => self.clamp(ty, depth),
        }
    }

    /// `clamp(x, lo, hi)` of std/math.ph: its parameters are untyped, so
    /// each argument is typed (an untyped literal would default to i32 or
    /// f32 on its own).
    fn clamp(&mut self, ty: Scalar, depth: u32) -> E {
        let x = self.expr(ty, depth - 1, true);
        let lo = self.expr(ty, depth - 1, true);
        let hi = self.expr(ty, depth - 1, true);
        Self::call("clamp", &[&x, &lo, &hi], true)
    }

    /// `sum`, `max`, `min` (of `ty`) or `argmax`/`argmin` (any type, when `ty` is
    /// i32) along one axis of an operand that has it; `None` when the
    /// operand came out scalar or only an axis the kernel may not reduce
    /// is left. The operand has no `iota` (the checker refuses it there);
    /// a tuning-invariant kernel reduces only along axes whose positions do
    /// not depend on the block decomposition.
    fn reduction(&mut self, ty: Scalar, depth: u32) -> Option<E> {
        let (op, operand) = if ty == Scalar::I32 && !self.rng.one_in(3) {
            let t = self.elem_type(false);
            (*self.rng.pick(&["argmax", "argmin"]), t)
        } else {
            (*self.rng.pick(&["sum", "max", "min"]), ty)
        };
        let iota = std::mem::replace(&mut self.iota_ok, false);
        let a = self.expr(operand, depth - 1, true);
        self.iota_ok = iota;
        let off = self.tile.len().checked_sub(a.shape.len())?;
        let axes: Vec<usize> = (0..a.shape.len())
            .filter(|j| !(self.opts.tuning_invariant && self.tile[off + j].blocked))
            .collect();
        if axes.is_empty() {
            return None;
        }
        let j = *self.rng.pick(&axes);
        let mut shape = a.shape.clone();
        shape[j] = "1".to_string();
        Some(E {
            text: format!("{op}({}, axis = {j})", a.text),
            shape,
            typed: true,
        })
    }

    fn float_expr(&mut self, ty: Scalar, depth: u32, typed: bool) -> E {
        let f32_only = usize::from(ty == Scalar::F32);
        let w = [
            36,
            5,
            10,
            5,
            8,
            6,
            4,
            4,
            3 * f32_only,
            3 * f32_only,
            3 * f32_only,
            2 * f32_only,
            2 * f32_only,
            4,
            4 * f32_only,
            f32_only,
            2,
        ];
        match self.rng.weighted(&w) {
            0 => {
                let op = *self.rng.pick(&["+", "-", "*", "/"]);
                let (a, b) = self.pair(ty, depth, typed);
                self.binary(&a, op, &b)
            }
            1 => {
                let a = self.expr(ty, depth - 1, true);
                E {
                    text: format!("(-{})", a.text),
                    shape: a.shape,
                    typed: true,
                }
            }
            2 => self.cast(ty, depth),
            3 => self
                .bitcast(ty, depth)
                .unwrap_or_else(|| self.cast(ty, depth)),
            4 => self.select(ty, depth, typed),
            5 => {
                let (a, b) = self.pair(ty, depth, true);
                let f = *self.rng.pick(&["min", "max"]);
                Self::call(f, &[&a, &b], true)
            }
            6 | 7 => {
                let a = self.expr(ty, depth - 1, true);
                Self::call(if self.rng.one_in(2) { "sqrt" } else { "abs" }, &[&a], true)
            }
            8 | 9 => {
                let a = self.expr(ty, depth - 1, true);
                Self::call(if self.rng.one_in(2) { "log" } else { "cos" }, &[&a], true)
            }
            10 | 11 => {
                // Seeds and counters are i32; untyped literals default to it.
                let s = self.expr(Scalar::I32, depth - 1, false);
                let c = self.expr(Scalar::I32, depth - 1, false);
                let f = if self.rng.one_in(2) {
                    "uniform"
                } else {
                    "randn"
                };
                Self::call(f, &[&s, &c], true)
            }
            13 => self
                .reduction(ty, depth)
                .unwrap_or_else(|| self.cast(ty, depth)),
            12 => {
                let x = self.expr(ty, depth - 1, true);
                let p = if self.rng.one_in(4) {
                    self.expr(ty, depth - 1, true)
                } else {
                    let t = self.rng.pick(DROPOUT_P).to_string();
                    Self::lit(ty, &t, false)
                };
                let s = self.expr(Scalar::I32, depth - 1, false);
                let c = self.expr(Scalar::I32, depth - 1, false);
                Self::call("dropout", &[&x, &p, &s, &c], true)
            }
            14 => {
                // std/math.ph's f32 functions; an untyped argument takes f32.
                let a = self.expr(ty, depth - 1, false);
                let f = *self.rng.pick(&["exp", "tanh", "erf", "rsqrt"]);
                Self::call(f, &[&a], true)
            }
            15 => {
                let a = self.expr(ty, depth - 1, false);
                let b = self.expr(ty, depth - 1, false);
                let c = self.expr(ty, depth - 1, false);
                Self::call("fma", &[&a, &b, &c], true)
            }
            _ => self.clamp(ty, depth),
        }
    }

    fn bool_expr(&mut self, depth: u32, typed: bool) -> E {
        match self.rng.weighted(&[40, 14, 5, 8, 5, 3]) {
            0 => {
                let t = *self.rng.pick(&self.types.clone());
                let ops: &[&str] = if t == Scalar::Bool {
                    &["==", "!="]
                } else {
                    &["==", "!=", "<", "<=", ">", ">="]
                };
                let op = *self.rng.pick(ops);
                // Two untyped operands would default to i32 or f32.
                let (a, b) = self.pair(t, depth, true);
                E {
                    typed: true,
                    ..self.binary(&a, op, &b)
                }
            }
            1 => {
                let op = *self.rng.pick(&["&&", "||", "&", "|", "^"]);
                let (a, b) = self.pair(Scalar::Bool, depth, true);
                self.binary(&a, op, &b)
            }
            2 => {
                let a = self.expr(Scalar::Bool, depth - 1, true);
                E {
                    text: format!("(!{})", a.text),
                    shape: a.shape,
                    typed: true,
                }
            }
            3 => self.cast(Scalar::Bool, depth),
            4 => self.select(Scalar::Bool, depth, typed),
            _ => {
                // The NaN test.
                let t = if self.opts.wide_types && self.rng.one_in(3) {
                    Scalar::F64
                } else {
                    Scalar::F32
                };
                let x = self.expr(t, depth - 1, true);
                E {
                    text: format!("({} != {})", x.text, x.text),
                    shape: x.shape,
                    typed: true,
                }
            }
        }
    }
}
