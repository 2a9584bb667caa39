//! The Phobos GPU backend: the tile IR lowered to a `naga::Module` built
//! directly (never WGSL text parsed back), checked by naga's validator, and
//! emitted as WGSL and SPIR-V; plus what a runtime needs to dispatch it
//! ([`Layout`], [`dispatch_size`]).
//!
//! The mapping (see `lower/`):
//! - each block is one workgroup of [`GpuOptions::workgroup_size`]
//!   invocations (see [`workgroup_size`]); the dispatch is a 2-D grid of
//!   workgroups ([`dispatch_size`]) that the shader numbers linearly and
//!   decomposes into `ctx.block`, x fastest, so grids beyond 65,535 blocks
//!   per axis run; surplus workgroups do nothing;
//! - a statement's tile is flattened and invocation `i` of `n` handles its
//!   elements `i, i + n, ...`; where the layout allows (a 32-bit tensor
//!   whose rows are a constant multiple of 4 long, stored over an aligned
//!   range) it handles groups of 4 instead, with one 16-byte store and
//!   16-byte loads of operands aligned the same way;
//! - every tensor is a `storage` buffer binding (`read` or `read_write`) in
//!   group 0, binding 1 + its position among the tensor parameters; scalar
//!   parameters, dims and the grid live in one uniform struct at binding 0
//!   ([`Layout`]);
//! - where each `let`/`var` lives is [`plan`]ned first: a `let` tile is
//!   computed where it is read unless the plan says why it lives in
//!   workgroup memory; `var` tiles live there; scalars in each
//!   invocation's own variable; barriers separate statements whose places
//!   conflict;
//! - a store whose value reads its own destination computes the value into
//!   a workgroup staging tile, then (after a barrier) copies it, so every
//!   element sees the old values as in the interpreter; its tile must have
//!   a constant extent ([`specialize`] makes it so from a launch's dims);
//! - a tensor larger than the device's largest storage binding (2 GiB on
//!   the H200, 128 MiB on lavapipe) is bound in pieces ([`Split`], chosen
//!   per launch like [`specialize`]): every access picks its piece with an
//!   `if`/`else` tree on `flat >> log2(piece_len)` (logical addressing has
//!   no select of pointers), a load through a function-local variable;
//! - loads outside a tensor read 0 and stores outside are dropped, with
//!   `if`s, so nothing relies on the driver's robustness;
//! - scalar operations mean exactly what `phobos_core::interp::ops` says for
//!   bool, i32, u32 and f32: integer division, shifts and float-to-integer
//!   casts are spelled out with selects rather than left to WGSL or SPIR-V;
//! - exact mode (the default): f32 `/` and `sqrt` call functions of integer
//!   operations that round correctly (`exact.rs`), and [`spirv`] adds
//!   `NoContraction` to every float operation and the float controls
//!   `DenormPreserve` and `SignedZeroInfNanPreserve` ([`spirv_exact`]). The
//!   WGSL cannot say the latter two, so only the SPIR-V carries exact mode's
//!   full guarantee. Fast mode uses the native `/` and `sqrt`.
//!
//! - NaN bits: devices make their own NaNs (lavapipe's `+` of a NaN
//!   operand gives other bits than the host), so, as ops.rs specifies, every
//!   f32 store to a tensor and every `bitcast` from f32 to an integer type
//!   replaces a NaN by the canonical `0x7FC00000`; NaN is found with integer
//!   operations on the bits (`(bits & 0x7fffffff) > 0x7f800000`), which no
//!   driver can fold away as it may fold `x != x`.
//! - The WGSL is valid by the WGSL spec, which Tint (Chromium, Dawn)
//!   enforces and naga does not: no constant expression evaluates to a NaN
//!   or infinity, shifts bits out or divides an integer by zero. A node
//!   whose operands are all constants is computed at compile time with
//!   `interp::ops`, and a non-finite f32 is a bitcast of a `let`-bound u32,
//!   which WGSL does not evaluate at shader creation (`lower/fold.rs`;
//!   checked with Tint and naga by `tests/wgsl_valid.rs`).
//!
//! TODO (not done here):
//! - i64/u64/f64 and bool tensors (one byte per element) are `Unsupported`;
//! - 16-byte loads and stores over rows of a symbolic length (`[N]`) whose
//!   launch value is not a multiple of 4 (where it is, [`specialize`]
//!   records it and they move 16 bytes at a time);
//! - stores whose value reads their own destination over a tile of more
//!   than 16 KiB (with the `let`/`var` tiles): their value is staged in
//!   workgroup memory before the destination is written (see [`specialize`]
//!   for tiles whose extent depends on a dim, which a runtime must call);
//! - `let`/`var` tiles that the plan keeps in workgroup memory and whose
//!   extent depends on a dim (workgroup memory needs a constant size).

mod exact;
mod half;
mod layout;
mod lower;
pub mod plan;
mod probe;
mod spirv;
mod subgroup;
pub mod tandem;
mod tandem_ops;

use naga::Module;
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use phobos_core::ir::Kernel;
use phobos_core::types::Dim;
use std::fmt;

pub use layout::{
    FieldKind, Layout, SeedOf, Split, TensorBinding, UNIFORM_BINDING, UniformField, layout,
    layout_split,
};
pub use lower::{WORKGROUP_MEMORY_LIMIT, lower, lower_split, specialize};
pub use probe::subgroup_probe;
pub use spirv::spirv_exact;

/// The workgroup size of [`GpuOptions::default`].
pub const DEFAULT_WORKGROUP_SIZE: u32 = 64;

/// The largest workgroup size [`lower`] accepts: Vulkan's and Direct3D's
/// most, which the H200 has. A runtime also keeps to its device's
/// `maxComputeInvocationsPerWorkgroup`.
pub const MAX_WORKGROUP_SIZE: u32 = 1024;

/// The largest workgroup size the lowering picks by itself
/// ([`workgroup_size`], the blocks of stepped Tandem draws): WebGPU's
/// default `maxComputeInvocationsPerWorkgroup`, which every device has.
/// Larger sizes are the tuner's to try where the device allows them.
pub const PORTABLE_WORKGROUP_SIZE: u32 = 256;

/// WebGPU's default `maxStorageBuffersPerShaderStage`, which every device
/// has: a kernel binds one storage buffer per tensor (more where a tensor
/// is bound in pieces, [`Split`]).
pub const PORTABLE_STORAGE_BUFFERS: u32 = 8;

/// Exact or fast (`phobos_core::Precision`): exact mode lowers `/` and
/// `sqrt` correctly rounded and [`spirv`] post-processes the module so the
/// device keeps subnormals and never contracts; fast mode uses the device's
/// own operations and no post-processing.
pub use phobos_core::Precision;

/// How a kernel is lowered. Neither field changes which element gets which
/// value, only how the work is spread and (for `precision`) how `/` and
/// `sqrt` are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuOptions {
    pub precision: Precision,
    /// Invocations per workgroup (one workgroup runs one block), in
    /// `1..=MAX_WORKGROUP_SIZE`; see [`workgroup_size`] for a good choice.
    pub workgroup_size: u32,
    /// Whether exact division's rare long-division fallback sits behind an
    /// `if` (true: the common path skips it; what GPUs want) or is computed
    /// always and selected (false). Mesa's lavapipe takes minutes to create
    /// a pipeline where that `if` is uniform, so runtimes turn it off there;
    /// on the H200 it makes exact `dropout_rows` 4x faster. Same bits
    /// either way.
    pub branch_fallback: bool,
    /// Whether exact `/` and `sqrt` check a native estimate with f64
    /// arithmetic inside the function (`exact::div_wide`, `sqrt_wide`: a few
    /// float operations instead of about 85 integer ones for `/` and a
    /// 26-step loop for `sqrt`; the module then needs the `Float64`
    /// capability, wgpu's `SHADER_F64`). Same bits either way.
    pub wide_div: bool,
    /// Whether the module may hold code that native drivers compile
    /// quickly and run fastest but Chromium's SwiftShader takes minutes to
    /// create a pipeline for (docs/playground.md):
    /// - a store by groups of 4 keeps its groups where an element computes
    ///   more than one exact `/` or `sqrt` (each then appears four times in
    ///   the group's code): a softmax that divides each element by its
    ///   row's sum keeps its row in registers and its 16-byte stores;
    /// - Tandem words whose counters run along the rows of a block are
    ///   staged by rows (`lower/tandem_draw/rows.rs`): exact
    ///   `dropout_backward_tandem` took SwiftShader over 120 s so.
    ///
    /// Modules for WebGPU (`phobosc build`, the playground) leave it off:
    /// those values are stored element by element, and those words drawn
    /// directly. Same bits either way.
    pub heavy_groups: bool,
    /// Whether the Tandem fills form 32 x 32 -> 64-bit products (Lemire's
    /// bounded integers, the alias table's column) with one 64-bit
    /// multiply instead of four 16-bit limb products; the module then needs
    /// the `Int64` capability, wgpu's `SHADER_INT64`. Same bits either way.
    pub int64: bool,
    /// Whether the device's subgroups are always 32 invocations wide, so
    /// that stepped Tandem draws may exchange words inside one
    /// (`lower/tandem_draw/shuffled.rs`: their loads and stores then run
    /// in tile order); the module then needs subgroup operations (wgpu's
    /// `SUBGROUP`). Each subgroup checks its lanes at run time and takes
    /// the direct path otherwise. Same bits either way.
    pub subgroup_shuffle: bool,
    /// The width of every subgroup of the device where all are one width
    /// (0 or 1: no subgroup operations in reductions). Reductions then take
    /// their levels below that width through `subgroupShuffleXor`
    /// (`lower/coop_reduce.rs`); each workgroup checks the layout at run
    /// time and takes workgroup memory otherwise. Same bits either way.
    pub subgroup_width: u32,
    /// Whether the device is known to lay out every workgroup's subgroups
    /// as `subgroup_width` needs (that many lanes, in invocation order):
    /// the runtime sets it where the device's subgroups have one width and
    /// [`subgroup_probe`] found them in order. Reductions then skip the
    /// check at the top of the block (two barriers) and the fallback path
    /// through workgroup memory, whose per-lane array the H100's driver
    /// keeps in local memory: rows of 4096 ran 1.1x to 3x faster without it
    /// (bench/RESULTS.md, eighteenth session). Same bits either way.
    pub subgroup_layout_known: bool,
    /// The workgroup memory a kernel may use, in bytes: the device's
    /// `max_compute_workgroup_storage_size` (default
    /// [`WORKGROUP_MEMORY_LIMIT`], WebGPU's minimum). What does not fit
    /// is computed another way (reductions) or refused (staged stores).
    pub workgroup_memory: u64,
    /// Whether fast mode's `dot` may use cooperative matrices (tensor
    /// cores): the device has 16 x 16 x 16 products of f16 into f32,
    /// subgroups (`SubgroupId`), and loads SPIR-V unchanged, which a module
    /// with them needs (`lower/dot_coop.rs`). Exact mode never uses them.
    pub cooperative: bool,
    /// The lowering's measurement knobs ([`Knobs`]): part of the options,
    /// so part of every cache key that holds them.
    pub knobs: Knobs,
}

/// Choices of the lowering that exist to be measured, set from the
/// environment ([`Knobs::from_env`]) when options are made: the runtime's
/// tuning cache keys each measured time by them, so a time measured under
/// one knob is never reused without it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Knobs {
    /// The registers (32-bit words) a lane may keep for a row's values
    /// (`lower/row_cache.rs`); 0 turns the row cache off
    /// (`PHOBOS_ROW_CACHE_WORDS`, default 64). Same bits either way.
    pub row_cache_words: u32,
    /// The most positions a store over kept rows stages its Tandem words
    /// for (`lower/tandem_draw/staged.rs`); 0 turns the path off
    /// (`PHOBOS_ROW_WORDS_MAX`, default 32). Same bits either way.
    pub row_words_max: u32,
    /// Measurement only: the draws' stream step replaced by one addition,
    /// to show what a kernel costs without the stream's arithmetic
    /// (`PHOBOS_ABLATE_STREAM=1`). The bits are wrong.
    pub ablate_stream: bool,
    /// Measurement only: the Tandem fills' exact logarithm (SPEC.md 6.2)
    /// replaced by the hardware's `log`, f64's by f32's widened
    /// (`PHOBOS_ABLATE_MAP=1` or `=log`), to show what the SPEC's exact
    /// maps cost. The bits are wrong.
    pub ablate_log: bool,
    /// Measurement only: the fills' correctly rounded square root
    /// (normal_f32's radius) replaced by the hardware's `sqrt`
    /// (`PHOBOS_ABLATE_MAP=1` or `=sqrt`). The bits are wrong.
    pub ablate_sqrt: bool,
    /// Measurement only: exact mode's f32 `/` replaced by the driver's
    /// (`PHOBOS_ABLATE_MATH=div` or `=all`), to show what correctly rounded
    /// division costs a kernel. The bits are wrong.
    pub ablate_div: bool,
    /// Measurement only: exact mode's `exp`, `log`, `cos`, `tanh` and
    /// `rsqrt` replaced by the driver's, as fast mode has them
    /// (`PHOBOS_ABLATE_MATH=exp` or `=all`). The bits are wrong.
    pub ablate_native: bool,
    /// Whether `dot` may be computed ahead by the workgroup
    /// (`lower/dot_ahead.rs`); `PHOBOS_DOT_AHEAD=0` keeps every product's
    /// loop per element, to measure what staging gains (`=1` asks for
    /// staging on lavapipe too, where the runtime leaves it off). Same bits
    /// either way.
    pub dot_ahead: bool,
    /// Whether fast mode's cooperative matrices may load a product's f16
    /// operands straight from their tensors (`plan/dots.rs`);
    /// `PHOBOS_COOP_DIRECT=0` stages every operand in workgroup memory, to
    /// measure what the direct loads gain. Same values either way.
    pub coop_direct: bool,
    /// Measurement only: a product whose operands both load straight from
    /// their tensors takes that path with no test and no staged fallback
    /// (`PHOBOS_ABLATE_FALLBACK=1`), to measure what the fallback's code
    /// costs where every block is inside. A ragged block reads past its
    /// slices: its values are wrong.
    pub ablate_fallback: bool,
    /// How exact `/` with [`GpuOptions::wide_div`] checks its estimate
    /// ([`DivCheck`], `PHOBOS_DIV_CHECK=recip|f64|f32`). Same bits every
    /// way.
    pub div_check: DivCheck,
    /// Measurement only: the bytes of workgroup memory the first scratch
    /// array of the reductions takes at least (`PHOBOS_WORKGROUP_PAD`,
    /// default 0), which bounds how many workgroups a multiprocessor holds
    /// at once, to measure what fewer rows in flight do to re-reads from
    /// L2. Same bits either way.
    pub workgroup_pad: u32,
}

/// The checks of exact `/` on devices with f64 ([`GpuOptions::wide_div`]).
/// Each gives the correctly rounded quotient; they differ in cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DivCheck {
    /// A reciprocal in f64, checked once per divisor, and the quotient
    /// rounded from its bits (`exact::div_recip`), where
    /// [`GpuOptions::int64`] allows; else [`DivCheck::F64`]. The default:
    /// 4-15% faster than `F64` on the H100's exact softmax and layer norm
    /// (bench/RESULTS.md, session 22).
    #[default]
    Recip,
    /// A native f32 quotient checked in f64 (`exact::div_wide`).
    F64,
    /// A native f32 quotient checked in f32 with Dekker's exact product
    /// (`exact::div_split`): slower on the H100 (bench/RESULTS.md, session
    /// 21), kept to be measured on devices without fast f64.
    F32,
}

impl DivCheck {
    /// `PHOBOS_DIV_CHECK`'s value, else the default.
    fn from_env() -> DivCheck {
        match std::env::var("PHOBOS_DIV_CHECK").as_deref() {
            Ok("f64") => DivCheck::F64,
            Ok("f32") => DivCheck::F32,
            _ => DivCheck::Recip,
        }
    }
}

impl Knobs {
    /// The knobs as the environment sets them, else their defaults.
    pub fn from_env() -> Knobs {
        let number = |name: &str, default: u32| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let ablate_map = std::env::var("PHOBOS_ABLATE_MAP");
        let ablate_math = std::env::var("PHOBOS_ABLATE_MATH");
        Knobs {
            row_cache_words: number("PHOBOS_ROW_CACHE_WORDS", lower::ROW_CACHE_WORDS),
            row_words_max: number("PHOBOS_ROW_WORDS_MAX", lower::ROW_WORDS_MAX),
            ablate_stream: std::env::var("PHOBOS_ABLATE_STREAM").as_deref() == Ok("1"),
            ablate_log: matches!(ablate_map.as_deref(), Ok("1" | "log")),
            ablate_sqrt: matches!(ablate_map.as_deref(), Ok("1" | "sqrt")),
            ablate_div: matches!(ablate_math.as_deref(), Ok("all" | "div")),
            ablate_native: matches!(ablate_math.as_deref(), Ok("all" | "exp")),
            dot_ahead: std::env::var("PHOBOS_DOT_AHEAD").as_deref() != Ok("0"),
            coop_direct: std::env::var("PHOBOS_COOP_DIRECT").as_deref() != Ok("0"),
            ablate_fallback: std::env::var("PHOBOS_ABLATE_FALLBACK").as_deref() == Ok("1"),
            div_check: DivCheck::from_env(),
            workgroup_pad: number("PHOBOS_WORKGROUP_PAD", 0),
        }
    }
}

impl Default for GpuOptions {
    /// Exact precision and [`DEFAULT_WORKGROUP_SIZE`].
    fn default() -> Self {
        GpuOptions {
            precision: Precision::Exact,
            workgroup_size: DEFAULT_WORKGROUP_SIZE,
            branch_fallback: true,
            wide_div: false,
            heavy_groups: false,
            int64: false,
            subgroup_shuffle: false,
            subgroup_width: 0,
            subgroup_layout_known: false,
            workgroup_memory: lower::WORKGROUP_MEMORY_LIMIT,
            cooperative: false,
            knobs: Knobs::from_env(),
        }
    }
}

impl GpuOptions {
    /// Exact precision and the [`workgroup_size`] heuristic's size for `kernel`.
    pub fn for_kernel(kernel: &Kernel) -> Self {
        GpuOptions {
            precision: Precision::Exact,
            workgroup_size: workgroup_size(kernel),
            branch_fallback: true,
            wide_div: false,
            heavy_groups: false,
            int64: false,
            subgroup_shuffle: false,
            subgroup_width: 0,
            subgroup_layout_known: false,
            workgroup_memory: lower::WORKGROUP_MEMORY_LIMIT,
            cooperative: false,
            knobs: Knobs::from_env(),
        }
    }
}

/// A workgroup size for `kernel`, from the elements one block computes.
///
/// One workgroup runs one block, and a statement's tile is spread over its
/// invocations with a stride (invocation `i` takes flat elements `i`,
/// `i + size`, ...), so the size never changes the bits. What it changes is
/// speed. NVIDIA schedules warps of 32 (AMD waves of 64), so sizes are
/// multiples of 64 and never smaller, or whole warps would idle
/// (`seeds/003`). Within that, fewer invocations with more elements each
/// were measured faster on the H200 (bench/RESULTS.md, 2026-11-30,
/// `PHOBOS_WORKGROUP_SIZE` sweeps): about 64 elements per invocation took
/// exact `dropout_rows` R=16 from 86% to 93% of the copy ceiling and a
/// 4096-element `hash32` fill from 88% to 93% of the zero fill, while fast
/// `dropout_rows` stayed at 98%, since an invocation's indexing and setup
/// are paid once for more elements and more loads stay in flight. Hence
/// `clamp(next_power_of_two(E / 64), 64, 256)` for `E` the largest
/// statement tile of the kernel: 64 up to 4,096 elements, 128 for 8,192,
/// 256 from 16,384 (WebGPU's default limit). A tile whose extent depends on
/// a dim is taken as large.
///
/// A kernel with a statement whose Tandem draws are stepped (one
/// invocation per chunk of the stream, `lower/tandem_draw/stepped.rs`)
/// gets one invocation per chunk task of its largest such tile instead,
/// as a power of two from 32 (one NVIDIA warp) to 256: a block of 4,096
/// elements steps 32 chunks, and more invocations would only wait. Blocks
/// smaller than [`STEPPED_WORKGROUP_SIZE`] invocations run several to a
/// workgroup ([`Compiled::blocks_per_workgroup`]), since a GPU keeps only
/// so many workgroups resident (32 a multiprocessor on the H200, so
/// 32-invocation workgroups use at most half of its 64 warps). On the H200
/// (bench/RESULTS.md, 2026-12-01) Tandem dropout over blocks of 4,096
/// elements ran at 2908-2928 GiB/s with 32 invocations a workgroup and
/// 3085-3107 with 64 (two blocks); 128 and 256 were no better.
///
/// A kernel with a reduction gets at least one invocation per 4 elements of
/// its largest reduction's operand (a power of two, up to 256): a reduction
/// is spread over the whole workgroup (`lower/coop_reduce.rs`, each
/// invocation reducing an aligned block of the row in registers), so its
/// barriers are paid once for the whole tile, and more invocations keep
/// more loads in flight. The examples' `[4, 256]` chunks get 256, the size
/// tuning picked on the H200 (bench/RESULTS.md, issue 14: 64 lost 2x).
pub fn workgroup_size(kernel: &Kernel) -> u32 {
    workgroup_size_within(kernel, PORTABLE_WORKGROUP_SIZE, Precision::Exact)
}

/// [`workgroup_size`] for a device that runs workgroups of up to `most`
/// invocations (a power of two, at least [`DEFAULT_WORKGROUP_SIZE`]), in
/// `precision`: a kernel whose reductions or products want more
/// invocations than WebGPU's 256 (rows of 4,096 elements, at 8 an
/// invocation) gets them there, and fast mode's products, whose elements
/// cost less, get twice as many invocations as exact mode's.
pub fn workgroup_size_within(kernel: &Kernel, most_invocations: u32, precision: Precision) -> u32 {
    if let Some(n) = lower::largest_stepped_tile(kernel) {
        let per_block = lower::stepped_block_invocations(n);
        return per_block.max(STEPPED_WORKGROUP_SIZE);
    }
    let mut most: u64 = 1;
    for e in &kernel.exprs {
        most = most.max(elements(&e.shape));
    }
    for l in &kernel.locals {
        most = most.max(elements(&l.shape));
    }
    for s in &kernel.body {
        if let phobos_core::ir::Stmt::Store { index, .. } = s {
            let tile = phobos_core::ir::analysis::slice_tile(index);
            most = most.max(elements(&tile));
        }
    }
    // A reduction's operand, spread over the workgroup: about 8 elements
    // an invocation (`lower/coop_reduce.rs`; on the H100, rows of 4,096
    // ran at 2398 GiB/s at 8 a lane against 1378 at 16 and 1534 at 4,
    // bench/RESULTS.md, seventeenth session); a product of constant shape,
    // about 8 elements of the result an invocation in exact mode
    // (`lower/dot_regs.rs`'s 2 x 4 register tiles) and 4 in fast mode
    // (matmul 2048^3 on the H100, same session: 64 x 64 blocks ran fastest
    // at 256 invocations exact and 1,024 fast).
    let per_product = match precision {
        Precision::Exact => 8,
        Precision::Fast => 4,
    };
    let mut reduced: u64 = 0;
    for e in &kernel.exprs {
        if let phobos_core::ir::ExprKind::Reduce { arg, .. } = e.kind {
            reduced = reduced.max(elements(&kernel.exprs[arg].shape).div_ceil(8));
        }
        let constant = e.shape.iter().all(|d| matches!(d, Dim::Const(_)));
        if let phobos_core::ir::ExprKind::Dot { .. } = e.kind
            && constant
        {
            reduced = reduced.max(elements(&e.shape).div_ceil(per_product));
        }
    }
    // Only reductions ask for more than WebGPU's 256.
    let plain = most
        .div_ceil(64)
        .next_power_of_two()
        .min(PORTABLE_WORKGROUP_SIZE as u64);
    plain.max(reduced.next_power_of_two()).clamp(
        DEFAULT_WORKGROUP_SIZE as u64,
        most_invocations.max(DEFAULT_WORKGROUP_SIZE) as u64,
    ) as u32
}

/// The elements of a tile; a symbolic extent counts as large.
fn elements(shape: &[Dim]) -> u64 {
    shape.iter().fold(1u64, |n, d| match d {
        Dim::Const(v) => n.saturating_mul(*v),
        Dim::Sym(_) => n.saturating_mul(1 << 20),
    })
}

/// The smallest workgroup [`workgroup_size`] gives a kernel of stepped
/// Tandem draws: blocks with fewer invocations run several to a workgroup
/// ([`Compiled::blocks_per_workgroup`]).
const STEPPED_WORKGROUP_SIZE: u32 = 64;

/// The name of the compute entry point.
pub const ENTRY_POINT: &str = "main";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LowerError {
    /// A construct this backend does not lower yet; the message names it.
    Unsupported(String),
    /// naga rejected the module: a compiler bug, with the printed IR.
    Internal(String),
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LowerError::Unsupported(m) => write!(f, "not supported on the GPU backend yet: {m}"),
            LowerError::Internal(m) => write!(f, "internal compiler error (GPU lowering): {m}"),
        }
    }
}

impl std::error::Error for LowerError {}

/// The workgroups to dispatch for a kernel of `grid` blocks, when a
/// dispatch may have at most `max_per_dim` workgroups per dimension
/// (`max_compute_workgroups_per_dimension`, 65,535 on every adapter here).
///
/// The shader numbers the workgroups of the dispatch linearly, x fastest,
/// runs block number `n` (decomposed into the grid's `(x, y, z)`, x
/// fastest) on workgroup `n`, and leaves workgroups past the last block
/// idle. So the dispatch is `[cdiv(total, rows), rows, 1]` for
/// `total = grid[0] * grid[1] * grid[2]` and `rows = cdiv(total, max)`:
/// the fewest rows, as even as they can be, so fewer than `rows`
/// workgroups idle. (`[min(total, max), rows, 1]` idles up to a whole row:
/// 65,534 of the 131,070 workgroups of a 65,536-block grid, which cost the
/// H200 benchmarks' copy ceiling and every kernel of that size several
/// percent, bench/RESULTS.md 2026-12-01.) A grid of no blocks dispatches
/// `[0, 1, 1]`, which runs nothing.
///
/// # Panics
/// If the grid has more than `max_per_dim^2` blocks (about 4.3e9 for
/// 65,535) or `2^32` blocks or more (the shader numbers blocks in u32), or
/// `max_per_dim` is 0.
pub fn dispatch_size(grid: [u32; 3], max_per_dim: u32) -> [u32; 3] {
    assert!(max_per_dim > 0, "max_per_dim must be positive");
    let total = grid.iter().map(|&g| g as u64).product::<u64>();
    let max = max_per_dim as u64;
    assert!(
        total <= max * max && total <= u32::MAX as u64,
        "a grid of {total} blocks (one dispatch numbers at most {max}^2, in 32 bits)"
    );
    let rows = total.div_ceil(max).max(1);
    [total.div_ceil(rows) as u32, rows as u32, 1]
}

/// Validates a lowered module. A failure is an internal compiler error: its
/// message carries naga's error and the kernel's printed IR, so that a bad
/// lowering is never a kernel that silently does nothing.
pub fn validate(kernel: &Kernel, module: &Module) -> Result<ModuleInfo, LowerError> {
    // FLOAT64 admits `GpuOptions::wide_div`'s f64 values, which never
    // leave `exact_div`, and SHADER_INT64 the 64-bit integer its
    // `GpuOptions::int64` form reads their bits through.
    // SUBGROUP admits `GpuOptions::subgroup_shuffle`'s vote and shuffles.
    // SHADER_FLOAT16_IN_FLOAT32 admits fast mode's `unpack2x16float` of f16
    // loads (`lower/half_io.rs`), core WGSL and in every Vulkan driver.
    // A module with cooperative matrices (`GpuOptions::cooperative`) has
    // f16 staging arrays and subgroup barriers (`lower/dot_tiles.rs`), and
    // its subgroups multiply in control flow uniform over each subgroup, as
    // Vulkan asks, not over the workgroup, as naga's check would
    // (`lower/dot_coop.rs`).
    // Its f16 tensors bound as `array<f16>` (`Plan::native_halves`, planned
    // only for devices with cooperative matrices, which have f16) stay so
    // where the emitter then computes their products another way (their
    // arrays did not fit).
    let coop = uses_cooperative_matrices(module);
    let (flags, mut extra) = match coop {
        true => (
            ValidationFlags::all() - ValidationFlags::CONTROL_FLOW_UNIFORMITY,
            Capabilities::COOPERATIVE_MATRIX
                | Capabilities::SHADER_FLOAT16
                | Capabilities::SUBGROUP_BARRIER,
        ),
        false => (ValidationFlags::all(), Capabilities::empty()),
    };
    if uses_f16(module) {
        extra |= Capabilities::SHADER_FLOAT16;
    }
    Validator::new(
        flags,
        Capabilities::FLOAT64
            | Capabilities::SHADER_INT64
            | Capabilities::SUBGROUP
            | Capabilities::SHADER_FLOAT16_IN_FLOAT32
            | extra,
    )
    .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
    .subgroup_operations(
        naga::valid::SubgroupOperationSet::BASIC
            | naga::valid::SubgroupOperationSet::VOTE
            | naga::valid::SubgroupOperationSet::BALLOT
            | naga::valid::SubgroupOperationSet::SHUFFLE,
    )
    .validate(module)
    .map_err(|e| {
        LowerError::Internal(format!(
            "naga rejected the module for kernel `{}`: {}\n{}",
            kernel.name,
            e.emit_to_string(""),
            kernel.print()
        ))
    })
}

/// Whether `module` uses cooperative matrices (tensor cores): a runtime
/// then loads its SPIR-V ([`Compiled::spirv`]) rather than the module,
/// which wgpu's own validation, uniform over the workgroup, would refuse.
pub fn uses_cooperative_matrices(module: &Module) -> bool {
    module
        .types
        .iter()
        .any(|(_, t)| matches!(t.inner, naga::TypeInner::CooperativeMatrix { .. }))
        || module.entry_points.iter().any(|e| {
            e.function
                .expressions
                .iter()
                .any(|(_, x)| matches!(x, naga::Expression::CooperativeLoad { .. }))
        })
}

/// Whether `module` declares an f16 value (its native f16 bindings).
fn uses_f16(module: &Module) -> bool {
    module.types.iter().any(|(_, t)| {
        matches!(
            t.inner,
            naga::TypeInner::Scalar(naga::Scalar::F16)
                | naga::TypeInner::Vector {
                    scalar: naga::Scalar::F16,
                    ..
                }
        ) || matches!(t.inner, naga::TypeInner::Array { base, .. }
            if module.types[base].inner == naga::TypeInner::Scalar(naga::Scalar::F16))
    })
}

/// A lowered, validated kernel and what a runtime needs to run it.
#[derive(Debug)]
pub struct Compiled {
    pub module: Module,
    pub info: ModuleInfo,
    /// The bindings: uniform fields and storage buffers.
    pub layout: Layout,
    /// The options it was lowered with.
    pub options: GpuOptions,
    /// How the lowering took each statement's Tandem draws (stepped,
    /// staged or direct, and why a slower path), for the provenance.
    pub notes: Vec<String>,
    /// How many blocks one workgroup runs (1 but for kernels of stepped
    /// Tandem draws given a larger workgroup, see [`workgroup_size`]): a
    /// runtime dispatches [`dispatch_size`] of the grid's blocks divided
    /// by this, rounded up.
    pub blocks_per_workgroup: u32,
    /// What the lowering decided before emitting ([`plan`]): where each
    /// value lives, and the kernel it lowered.
    pub plan: plan::Plan,
    /// The workgroup memory the module declares, item by item.
    pub budget: plan::Budget,
}

impl Compiled {
    /// The module as WGSL text (the playground's view; a runtime that wants
    /// exact mode's guarantees loads [`Compiled::spirv`] instead).
    pub fn wgsl(&self) -> String {
        wgsl(&self.module, &self.info)
    }

    /// The module as SPIR-V words, post-processed in exact mode: see [`spirv`].
    pub fn spirv(&self) -> Vec<u32> {
        spirv(&self.module, &self.info, &self.options)
    }

    /// `Err` with a message naming every array where the module's
    /// workgroup memory is more than `limit` bytes (the device's; a
    /// runtime must check, since SPIR-V passthrough skips wgpu's check).
    pub fn check_workgroup_memory(&self, limit: u64) -> Result<(), String> {
        let used = self.budget.total();
        if used <= limit {
            return Ok(());
        }
        Err(format!(
            "`{}` needs {used} bytes of workgroup memory ({}), more than the {limit} bytes",
            self.plan.kernel.name,
            self.budget.list()
        ))
    }

    /// Where the module's workgroup memory is more than `limit` bytes, the
    /// diagnostic `phobosc build` prints: code `E0140`, each `let`/`var`
    /// tile kept in workgroup memory labelled at its statement with its
    /// bytes, and the limit ([`plan::Budget::diagnostic`]). `None` where
    /// it fits.
    pub fn workgroup_memory_diagnostic(&self, limit: u64) -> Option<phobos_core::Diagnostic> {
        self.budget.diagnostic(&self.plan.kernel, limit)
    }

    /// Where the module binds more than `limit` storage buffers (one per
    /// tensor, or per piece of a split one), the diagnostic `phobosc build`
    /// prints: code `E0141`, the tensors past the limit labelled at their
    /// parameters. `None` where they fit.
    pub fn storage_buffers_diagnostic(&self, limit: u32) -> Option<phobos_core::Diagnostic> {
        use phobos_core::diag::{Diagnostic, code};
        let k = &self.plan.kernel;
        let used = self.layout.tensors.len();
        if used <= limit as usize {
            return None;
        }
        let mut d = Diagnostic::error(
            code::STORAGE_BUFFERS,
            format!(
                "kernel `{}` binds {used} storage buffers, more than the target's {limit} a shader stage",
                k.name
            ),
        );
        for (n, t) in self.layout.tensors.iter().enumerate().skip(limit as usize) {
            if let Some(span) = k.params[t.param_index].span {
                d = d.label(
                    span,
                    format!("storage buffer {} of {used}: `{}`", n + 1, t.name),
                );
            }
        }
        Some(d.help(format!(
            "split the kernel into kernels of at most {limit} tensors each, or give `phobosc build \
             --storage-buffers N` the target device's limit (WebGPU's default is {PORTABLE_STORAGE_BUFFERS})"
        )))
    }

    /// The plan as text ([`plan::explain`]).
    pub fn explain(&self) -> String {
        plan::explain(self)
    }
}

/// Lowers and validates in one step.
pub fn compile(kernel: &Kernel, options: &GpuOptions) -> Result<Compiled, LowerError> {
    compile_split(kernel, options, &[])
}

/// [`compile`] with tensors bound in pieces as `splits` says (by parameter
/// index; see [`Split`]): a launch's specialisation, like [`specialize`].
pub fn compile_split(
    kernel: &Kernel,
    options: &GpuOptions,
    splits: &[Option<Split>],
) -> Result<Compiled, LowerError> {
    let lowered = lower::lower_noted(kernel, options, splits)?;
    let planned = &lowered.plan.kernel;
    let info = validate(planned, &lowered.module)?;
    let budget = plan::Budget::of(planned, &lowered.module);
    Ok(Compiled {
        layout: layout_split(planned, splits)?,
        module: lowered.module,
        info,
        options: *options,
        notes: lowered.notes,
        blocks_per_workgroup: lowered.blocks_per_workgroup,
        budget,
        plan: lowered.plan,
    })
}

/// The module as WGSL text.
pub fn wgsl(module: &Module, info: &ModuleInfo) -> String {
    naga::back::wgsl::write_string(module, info, naga::back::wgsl::WriterFlags::empty())
        .expect("a validated module writes as WGSL")
}

/// The module as SPIR-V 1.3 words, post-processed by [`spirv_exact`] when
/// `options.precision` is exact: this is what a runtime loads through
/// SPIR-V passthrough. The writer flags are explicit because naga's defaults
/// add debug info in debug builds only, so the bytes would differ between
/// debug and release.
pub fn spirv(module: &Module, info: &ModuleInfo, options: &GpuOptions) -> Vec<u32> {
    let spv_options = naga::back::spv::Options {
        lang_version: (1, 3),
        flags: naga::back::spv::WriterFlags::empty(),
        ..Default::default()
    };
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: ENTRY_POINT.to_string(),
    };
    let words = naga::back::spv::write_vec(module, info, &spv_options, Some(&pipeline))
        .expect("a validated module writes as SPIR-V");
    match options.precision {
        Precision::Exact => spirv_exact(&words),
        Precision::Fast => words,
    }
}
