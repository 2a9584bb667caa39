//! The GPU backend: checked kernels lowered by `phobos-gpu` and dispatched
//! through wgpu.
//!
//! - [`Gpu::shared`] opens the best adapter once per process; [`Gpu::new`]
//!   opens a fresh one and [`Gpu::from_device`] wraps a `wgpu::Device` the
//!   caller already has.
//! - [`Gpu::run`] takes host tensors: it uploads them, dispatches, and reads
//!   back every tensor the kernel stores to. [`Gpu::dispatch`] takes the
//!   caller's own buffers and leaves the results there.
//! - Exact mode (the default) loads SPIR-V that forbids contraction and keeps
//!   subnormals, through wgpu's SPIR-V passthrough; only Vulkan has it. On
//!   Metal, DX12, or Vulkan without passthrough, only `Precision::Fast`
//!   runs, and an exact launch is refused naming the API
//!   ([`ExactSupport`], `platform.rs`).
//! - Pipelines are cached per kernel (its printed IR), precision and the
//!   splits of its tensors: the [`PIPELINES_KEPT`] used last, so that a
//!   process that builds kernel after kernel (a server, a test suite)
//!   does not grow without bound.
//! - A tensor larger than the device's largest storage binding is bound in
//!   pieces (`phobos_gpu::Split`), each a range of its one buffer; only a
//!   tensor beyond the largest buffer is refused ([`GpuError::TooLarge`]).
//!   [`Gpu::set_max_binding`] (or `PHOBOS_MAX_BINDING=<bytes>` when a
//!   device is opened) pretends the binding limit is smaller, so that small
//!   tensors split: a knob for tests and experiments, same bits either way.

mod device;
pub(crate) mod disk_cache;
mod dispatch;
mod fill;
mod pipeline;
mod platform;
mod probe;
mod timing;
mod transfer;

pub use dispatch::{GpuArg, Prepared, Resident};
pub(crate) use dispatch::{bytes_of, bytes_of_mut};
pub use fill::{PreparedFill, fill_map};
pub use pipeline::BuildPhases;
pub use platform::ExactSupport;
pub use timing::{time_passes, time_rounds};

use crate::Precision;
use pipeline::Pipeline;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuError {
    /// No adapter was found (no GPU and no software Vulkan driver).
    NoAdapter(String),
    /// The adapter would not open a device.
    Device(String),
    /// The device was lost (driver reset, removed GPU, timeout).
    Lost(String),
    /// A tensor larger than the device's largest buffer (`limit`), or than
    /// the caller's buffer given for it.
    TooLarge {
        param: String,
        bytes: u64,
        limit: u64,
    },
    /// The device cannot run this kernel with exact results.
    NotExact(String),
    /// The kernel does not lower to the GPU (the message names what).
    Lower(String),
    /// The kernel's workgroup tiles need more workgroup memory than the
    /// device has (the message names the tiles and the limit).
    /// [`crate::launch`] runs such a kernel on the CPU backend instead.
    WorkgroupMemory(String),
    /// wgpu reported an error: a bug in Phobos, with its message.
    Wgpu(String),
    /// A Tandem fill the GPU cannot make (a type without a GPU port yet, or
    /// bad parameters); the message says which and what to use instead.
    Fill(String),
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::NoAdapter(why) => write!(
                f,
                "no GPU adapter found; install a Vulkan driver (on Debian, `mesa-vulkan-drivers` \
                 gives a software one) or use --backend cpu (wgpu: {why})"
            ),
            GpuError::Device(why) => write!(f, "the GPU adapter would not open a device: {why}"),
            GpuError::Lost(why) => write!(f, "the GPU device was lost: {why}"),
            GpuError::TooLarge {
                param,
                bytes,
                limit,
            } => write!(
                f,
                "tensor `{param}` is {bytes} bytes, more than fits in its buffer ({limit} bytes)"
            ),
            GpuError::NotExact(why) => write!(f, "{why}"),
            GpuError::Lower(why) | GpuError::WorkgroupMemory(why) => write!(f, "{why}"),
            GpuError::Wgpu(why) => write!(f, "internal error in the GPU runtime: {why}"),
            GpuError::Fill(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for GpuError {}

/// The workgroup size for `kernel` without a device: `PHOBOS_WORKGROUP_SIZE`
/// when set (for experiments; any size gives the same bits), else the
/// lowering's heuristic. [`Gpu::heuristic_workgroup_size`] also fits it to
/// a device's limits.
pub fn workgroup_size(kernel: &phobos_core::ir::Kernel) -> u32 {
    env_workgroup_size().unwrap_or_else(|| phobos_gpu::workgroup_size(kernel))
}

/// `PHOBOS_WORKGROUP_SIZE`, when it holds a size the lowering accepts. An
/// empty value is unset; any other value is ignored with a warning on stderr, once per process, so an
/// experiment that asked for a size it did not get says so.
fn env_workgroup_size() -> Option<u32> {
    let raw = std::env::var("PHOBOS_WORKGROUP_SIZE").ok()?;
    if raw.trim().is_empty() {
        return None;
    }
    let max = phobos_gpu::MAX_WORKGROUP_SIZE;
    let size = raw.trim().parse().ok().filter(|w| (1..=max).contains(w));
    if size.is_none() {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            eprintln!(
                "phobos: warning: PHOBOS_WORKGROUP_SIZE={raw:?} is not a size in 1..={max}; \
                 using the heuristic's size"
            )
        });
    }
    size
}

/// The workgroup sizes the tuner tries besides the heuristic's: powers of
/// two from one NVIDIA warp to the lowering's largest size. Every size
/// gives the same bits (invocation `i` of `n` takes elements, or chunk
/// tasks, `i, i + n, ...`).
pub const WORKGROUP_SIZE_CHOICES: [u32; 6] = [32, 64, 128, 256, 512, 1024];

/// How many compiled pipelines a [`Gpu`] keeps in memory, the least
/// recently used going first. A pipeline costs about 0.7 MB on lavapipe
/// (its compiled code among it): 40,000 distinct kernels in one process
/// would have taken about 27 GB before there was a bound. Tuning a kernel
/// builds at most `configurations x WORKGROUP_SIZE_CHOICES` pipelines, far
/// fewer, so the winner is still cached when it runs.
pub const PIPELINES_KEPT: usize = 256;

/// A kernel's fingerprint (`Kernel::fingerprint`), the lowering's knobs,
/// precision, splits, whether `/` and `sqrt` are checked in f64, the
/// workgroup size, the subgroup width reductions are compiled for, and
/// whether they check the subgroups' layout.
type PipelineKey = (
    String,
    phobos_gpu::Knobs,
    Precision,
    Vec<Option<phobos_gpu::Split>>,
    bool,
    u32,
    u32,
    bool,
);

/// One opened device with its pipeline cache.
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    pipelines: Mutex<lru::LruCache<PipelineKey, Arc<Pipeline>>>,
    /// The binding limit to split at instead of the device's, when smaller.
    max_binding: Mutex<Option<u64>>,
    /// [`Gpu::set_dot_ahead`]'s choice; `None` is automatic.
    dot_ahead: Mutex<Option<bool>>,
    /// [`Gpu::set_div_check`]'s choice; `None` is the environment's.
    div_check: Mutex<Option<phobos_gpu::DivCheck>>,
    /// [`Gpu::set_wide_checks`]'s choice; `None` is automatic.
    wide_checks: Mutex<Option<bool>>,
    /// [`Gpu::set_subgroup_width`]'s width; `None` is the device's.
    forced_subgroup_width: Mutex<Option<u32>>,
    /// [`Gpu::subgroup_layout_known`], asked once (`probe.rs`).
    layout_known: std::sync::OnceLock<bool>,
    /// Fill pipelines by map and workgroup size.
    fills: Mutex<HashMap<(phobos_gpu::tandem::FillMap, u32), Arc<fill::FillPipeline>>>,
    lost: Arc<Mutex<Option<String>>>,
    /// Compiled pipelines on disk, where the device and environment allow.
    disk: Option<disk_cache::DiskCache>,
    /// The adapter's cooperative-matrix shapes, where the device was opened
    /// with them (`Features::EXPERIMENTAL_COOPERATIVE_MATRIX`).
    cooperative: Vec<wgpu::CooperativeMatrixProperties>,
}

/// What one launch did.
#[derive(Clone, Debug)]
pub struct GpuRun {
    pub bound: phobos_core::launch::Bound,
    /// Milliseconds spent lowering and creating the pipeline (0 when cached).
    pub compile_ms: f64,
    /// Where `compile_ms` went (`None` when the pipeline was cached).
    pub build_phases: Option<BuildPhases>,
    pub cache_hit: bool,
    /// How the lowering took the kernel's Tandem draws (stepped, staged or
    /// direct, and why a slower path).
    pub notes: Vec<String>,
    /// The plan of the module that ran (`phobos_gpu::Compiled::explain`,
    /// for this device's options).
    pub plan: std::sync::Arc<str>,
    /// Invocations per workgroup.
    pub workgroup_size: u32,
}

impl Gpu {
    /// Opens the best adapter: a hardware GPU before a software one.
    pub fn new() -> Result<Gpu, GpuError> {
        let (adapter, device, queue) = device::open()?;
        let mut gpu = Gpu::from_device(device, queue, adapter.get_info());
        if gpu
            .device
            .features()
            .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
        {
            gpu.cooperative = adapter.cooperative_matrix_properties();
        }
        Ok(gpu)
    }

    /// Every adapter wgpu finds, in the order that `--devices gpu0,gpu1,...`
    /// numbers them ([`crate::split`]).
    pub fn adapters() -> Vec<wgpu::AdapterInfo> {
        device::adapters().iter().map(|a| a.get_info()).collect()
    }

    /// Opens a new device on adapter `index` of [`Gpu::adapters`]; an
    /// adapter may have several open at once (so the split of a launch can
    /// be tested on one GPU, or on lavapipe).
    pub fn on_adapter(index: usize) -> Result<Gpu, GpuError> {
        let adapters = device::adapters();
        let adapter = adapters.get(index).ok_or_else(|| {
            GpuError::NoAdapter(format!(
                "there is no adapter {index}; wgpu found {}",
                adapters.len()
            ))
        })?;
        let (device, queue) = device::open_on(adapter)?;
        let mut gpu = Gpu::from_device(device, queue, adapter.get_info());
        if gpu
            .device
            .features()
            .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
        {
            gpu.cooperative = adapter.cooperative_matrix_properties();
        }
        Ok(gpu)
    }

    /// Wraps a device the caller opened. Exact mode needs a Vulkan device
    /// with `Features::PASSTHROUGH_SHADERS` ([`ExactSupport`]).
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Gpu {
        let lost = Arc::new(Mutex::new(None));
        let flag = lost.clone();
        device.set_device_lost_callback(move |reason, message| {
            *flag.lock().unwrap() = Some(format!("{reason:?}: {message}"));
        });
        // Errors are caught by the error scopes around each call; anything
        // that escapes them is reported, never a panic inside wgpu.
        device.on_uncaptured_error(Arc::new(|e| eprintln!("phobos: wgpu error: {e}")));
        let disk = disk_cache::DiskCache::open(&device, &info);
        Gpu {
            device,
            queue,
            info,
            pipelines: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(PIPELINES_KEPT).expect("not zero"),
            )),
            max_binding: Mutex::new(
                std::env::var("PHOBOS_MAX_BINDING")
                    .ok()
                    .and_then(|v| v.parse().ok()),
            ),
            wide_checks: Mutex::new(None),
            dot_ahead: Mutex::new(None),
            div_check: Mutex::new(None),
            forced_subgroup_width: Mutex::new(
                std::env::var("PHOBOS_SUBGROUPS")
                    .ok()
                    .and_then(|v| v.parse::<u32>().ok())
                    .filter(|w| *w >= 2 && w.is_power_of_two()),
            ),
            layout_known: std::sync::OnceLock::new(),
            fills: Mutex::new(HashMap::new()),
            lost,
            disk,
            cooperative: Vec::new(),
        }
    }

    /// The process's shared device, opened on first use.
    pub fn shared() -> Result<&'static Gpu, GpuError> {
        static SHARED: OnceLock<Result<Gpu, GpuError>> = OnceLock::new();
        SHARED.get_or_init(Gpu::new).as_ref().map_err(Clone::clone)
    }

    /// The cooperative-matrix shapes (M, N, K and the element types) that
    /// modules may use on this device; empty where the adapter has none or
    /// the device came from [`Gpu::from_device`].
    pub fn cooperative_matrix(&self) -> &[wgpu::CooperativeMatrixProperties] {
        &self.cooperative
    }

    /// Whether fast mode's `dot` may use tensor cores here
    /// (`phobos_gpu::GpuOptions::cooperative`): 16 x 16 x 16 products of
    /// f16 into f32, f16 arithmetic and subgroups, unless
    /// `PHOBOS_COOPERATIVE=off` (for measurements).
    pub fn cooperative_f16(&self) -> bool {
        let features = self.device.features();
        features.contains(wgpu::Features::SHADER_F16 | wgpu::Features::SUBGROUP)
            && self.cooperative.iter().any(|p| {
                (p.m_size, p.n_size, p.k_size) == (16, 16, 16)
                    && p.ab_type == wgpu::CooperativeScalarType::F16
                    && p.cr_type == wgpu::CooperativeScalarType::F32
            })
            && std::env::var("PHOBOS_COOPERATIVE").as_deref() != Ok("off")
    }

    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    pub fn info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// The adapter, its API and its driver, for provenance.
    pub fn describe(&self) -> String {
        let i = &self.info;
        let driver = [i.driver.as_str(), i.driver_info.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if driver.is_empty() {
            format!("{} ({:?})", i.name, i.backend)
        } else {
            format!("{} ({:?}, {driver})", i.name, i.backend)
        }
    }

    /// Whether products of constant extents are computed ahead by the
    /// workgroup (`phobos_gpu::Knobs::dot_ahead`): `None` is automatic,
    /// which is on except on lavapipe, whose LLVM takes a minute or more to
    /// compile an exact-mode kernel with a staged product (the attention
    /// examples: two minutes each, cold); `PHOBOS_DOT_AHEAD=1` turns it on
    /// there too. Tests force it on for small products there. Same bits
    /// either way.
    pub fn set_dot_ahead(&self, on: Option<bool>) {
        *self.dot_ahead.lock().unwrap() = on;
    }

    /// How exact `/` with the wide checks checks its quotient
    /// (`phobos_gpu::Knobs::div_check`): `None` (the default) takes
    /// `PHOBOS_DIV_CHECK`. Same bits every way; pipelines built before a
    /// change are not reused.
    pub fn set_div_check(&self, check: Option<phobos_gpu::DivCheck>) {
        *self.div_check.lock().unwrap() = check;
    }

    /// The lowering's knobs on this device: the environment's
    /// ([`phobos_gpu::Knobs::from_env`]), with [`Gpu::set_dot_ahead`]'s
    /// and [`Gpu::set_div_check`]'s choices.
    pub fn knobs(&self) -> phobos_gpu::Knobs {
        let mut knobs = phobos_gpu::Knobs::from_env();
        let here = self.dot_ahead.lock().unwrap().unwrap_or(
            std::env::var("PHOBOS_DOT_AHEAD").as_deref() == Ok("1")
                || !self.info.name.contains("llvmpipe"),
        );
        knobs.dot_ahead &= here;
        if let Some(check) = *self.div_check.lock().unwrap() {
            knobs.div_check = check;
        }
        knobs
    }

    /// Whether exact `/` and `sqrt` check a native estimate in f64
    /// (`phobos_gpu::GpuOptions::wide_div`) rather than use integer
    /// operations only. `None` (the default) decides automatically: yes
    /// where the device has `SHADER_F64`, except on lavapipe, whose
    /// optimiser folds around the checked functions (see `pipeline.rs`),
    /// and except when `PHOBOS_NARROW_DIV` is set. `Some(true)` asks for it
    /// on any device with f64 (the tests run the checked functions on
    /// lavapipe this way), `Some(false)` turns it off. The bits are the same
    /// either way; pipelines built before a change are not reused.
    pub fn set_wide_checks(&self, on: Option<bool>) {
        *self.wide_checks.lock().unwrap() = on;
    }

    /// The effective choice of [`Gpu::set_wide_checks`].
    pub(crate) fn wide_checks(&self) -> bool {
        let f64 = self.device.features().contains(wgpu::Features::SHADER_F64);
        match *self.wide_checks.lock().unwrap() {
            Some(on) => on && f64,
            None => {
                f64 && !self.info.name.contains("llvmpipe")
                    && std::env::var_os("PHOBOS_NARROW_DIV").is_none()
            }
        }
    }

    /// Whether stores keep their groups of 4 where an element computes
    /// several exact `/` or `sqrt` (`phobos_gpu::GpuOptions::heavy_groups`):
    /// on every native device, unless `PHOBOS_HEAVY_GROUPS=0`. Same bits
    /// either way.
    pub(crate) fn heavy_groups(&self) -> bool {
        std::env::var("PHOBOS_HEAVY_GROUPS").as_deref() != Ok("0")
    }

    /// Whether kernels may exchange Tandem words inside subgroups
    /// (`phobos_gpu::GpuOptions::subgroup_shuffle`): where the device has
    /// subgroup operations and its subgroups are always 32 wide, unless
    /// `PHOBOS_SUBGROUPS=off`. Same bits either way.
    pub(crate) fn subgroup_shuffle(&self) -> bool {
        self.device.features().contains(wgpu::Features::SUBGROUP)
            && self.info.subgroup_min_size == 32
            && self.info.subgroup_max_size == 32
            && std::env::var("PHOBOS_SUBGROUPS").as_deref() != Ok("off")
    }

    /// The width of every subgroup here where all are one width, for
    /// reductions' shuffles (`phobos_gpu::GpuOptions::subgroup_width`): 0
    /// without subgroup operations, with widths that vary, or with
    /// `PHOBOS_SUBGROUPS=off`. Same bits either way.
    pub fn subgroup_width(&self) -> u32 {
        let (min, max) = (self.info.subgroup_min_size, self.info.subgroup_max_size);
        let forced = *self.forced_subgroup_width.lock().unwrap();
        if let Some(w) = forced
            && self.device.features().contains(wgpu::Features::SUBGROUP)
        {
            return w;
        }
        if self.device.features().contains(wgpu::Features::SUBGROUP)
            && min == max
            && min.is_power_of_two()
            && std::env::var("PHOBOS_SUBGROUPS").as_deref() != Ok("off")
        {
            min
        } else {
            0
        }
    }

    /// Pretends that a storage binding holds at most `bytes` (when smaller
    /// than the device's limit; `None`: the device's), so that tensors
    /// larger than that are bound in pieces. For tests and experiments:
    /// the bits are the same either way. A `bytes` below the device's
    /// binding offset alignment is taken as it.
    pub fn set_max_binding(&self, bytes: Option<u64>) {
        *self.max_binding.lock().unwrap() = bytes;
    }

    /// Compiles reductions for subgroups of `width` lanes (a power of two
    /// from 2; `None`: the device's own width) where the device has
    /// subgroup operations. For tests and experiments: where the device's
    /// subgroups are not that wide, each block's check at its start
    /// (`phobos_gpu`'s `subgroup_check`) sends its reductions through
    /// workgroup memory instead, which a device of the right width never
    /// runs. The bits are the same either way. `PHOBOS_SUBGROUPS=<width>`
    /// sets it when a device is opened (`PHOBOS_SUBGROUPS=off`: no
    /// subgroup operations at all).
    pub fn set_subgroup_width(&self, width: Option<u32>) {
        assert!(
            width.is_none_or(|w| w >= 2 && w.is_power_of_two()),
            "a subgroup width is a power of two from 2"
        );
        *self.forced_subgroup_width.lock().unwrap() = width;
    }

    /// The most bytes one storage binding of a kernel holds here: the
    /// device's `max_storage_buffer_binding_size`, or less when
    /// [`Gpu::set_max_binding`] says so.
    pub fn max_binding(&self) -> u64 {
        let device = self.device.limits().max_storage_buffer_binding_size;
        match *self.max_binding.lock().unwrap() {
            Some(b) => b.min(device),
            None => device,
        }
    }

    /// Whether exact mode can run here, and if not, why (naming the API).
    pub fn exact_support(&self) -> ExactSupport {
        ExactSupport::of(self.info.backend, self.device.features(), &self.info.name)
    }

    /// Whether exact mode can run here.
    pub fn can_run_exact(&self) -> bool {
        self.exact_support() == ExactSupport::Yes
    }

    /// The on-disk pipeline cache to build with, if any.
    pub(crate) fn disk_cache(&self) -> Option<&wgpu::PipelineCache> {
        self.disk.as_ref().map(|d| d.cache())
    }

    /// Tells the on-disk pipeline cache that a pipeline was built, of
    /// this SPIR-V where the caller has it (a pipeline the file lists does
    /// not make the cache write itself again).
    pub(crate) fn note_pipeline_built(&self, spirv: Option<&[u32]>) {
        if let Some(d) = &self.disk {
            d.built(spirv.map(|w| d.key(w)));
        }
    }

    /// The most invocations a workgroup may have here: the device's
    /// limits and the lowering's.
    pub fn max_workgroup_size(&self) -> u32 {
        let l = self.device.limits();
        l.max_compute_invocations_per_workgroup
            .min(l.max_compute_workgroup_size_x)
            .clamp(1, phobos_gpu::MAX_WORKGROUP_SIZE)
    }

    /// The launch heuristic's workgroup size for `kernel` on this device
    /// (docs/language.md, "The launch heuristic"): `PHOBOS_WORKGROUP_SIZE`
    /// when set, else [`phobos_gpu::workgroup_size_within`] the device's
    /// limit (about 64 elements per invocation, 8 per invocation of a
    /// reduction's operand, or one invocation per chunk task of a stepped
    /// Tandem statement), lowered to a power of two within
    /// [`Gpu::max_workgroup_size`], and raised to the device's largest
    /// subgroup (warp) where that is within the limit, so that no
    /// workgroup leaves part of a warp idle.
    pub fn heuristic_workgroup_size(
        &self,
        kernel: &phobos_core::ir::Kernel,
        precision: phobos_gpu::Precision,
    ) -> u32 {
        if let Some(w) = env_workgroup_size() {
            return w.min(self.max_workgroup_size());
        }
        let max = self.max_workgroup_size();
        let max_pow2 = 1u32 << (31 - max.leading_zeros());
        let warp = self.info.subgroup_max_size;
        // A CPU runs a workgroup's invocations one after another: no more
        // than WebGPU's 256 there (`workgroup_sizes`).
        let most = if self.info.device_type == wgpu::DeviceType::Cpu {
            max_pow2.min(phobos_gpu::PORTABLE_WORKGROUP_SIZE)
        } else {
            max_pow2
        };
        let mut w = phobos_gpu::workgroup_size_within(kernel, most, precision).min(max_pow2);
        if warp.is_power_of_two() && warp <= max_pow2 {
            w = w.max(warp);
        }
        w
    }

    /// The workgroup sizes worth timing for `kernel` here: the heuristic's
    /// first, then each of [`WORKGROUP_SIZE_CHOICES`] within
    /// [`Gpu::max_workgroup_size`]; on a CPU adapter (lavapipe) only those
    /// up to [`phobos_gpu::PORTABLE_WORKGROUP_SIZE`], since a CPU runs a
    /// workgroup's invocations one after another and gains nothing from
    /// more (a whole-row softmax took 4x longer at 1024 than at 256 there).
    /// At most seven; same bits for each.
    pub fn workgroup_sizes(
        &self,
        kernel: &phobos_core::ir::Kernel,
        precision: phobos_gpu::Precision,
    ) -> Vec<u32> {
        let mut sizes = vec![self.heuristic_workgroup_size(kernel, precision)];
        let most = if self.info.device_type == wgpu::DeviceType::Cpu {
            self.max_workgroup_size()
                .min(phobos_gpu::PORTABLE_WORKGROUP_SIZE)
        } else {
            self.max_workgroup_size()
        };
        for w in WORKGROUP_SIZE_CHOICES {
            if w <= most && !sizes.contains(&w) {
                sizes.push(w);
            }
        }
        sizes
    }

    /// Saves the on-disk pipeline cache if pipelines were built since it
    /// was last saved (and that was long enough ago): called once the work
    /// that uses them is submitted, so the write overlaps it.
    pub(crate) fn flush_disk_cache(&self) {
        if let Some(d) = &self.disk {
            d.flush();
        }
    }

    fn check_lost(&self) -> Result<(), GpuError> {
        match &*self.lost.lock().unwrap() {
            Some(why) => Err(GpuError::Lost(why.clone())),
            None => Ok(()),
        }
    }

    /// The pipeline for `kernel` at `precision` with its tensors split as
    /// `splits` says and `workgroup_size` invocations per workgroup, from
    /// the cache or built now; the flag says whether the cache served it.
    fn pipeline(
        &self,
        kernel: &phobos_core::ir::Kernel,
        precision: Precision,
        splits: &[Option<phobos_gpu::Split>],
        workgroup_size: u32,
    ) -> Result<(Arc<Pipeline>, bool), GpuError> {
        let key = (
            kernel.fingerprint(),
            self.knobs(),
            precision,
            splits.to_vec(),
            self.wide_checks(),
            workgroup_size,
            self.subgroup_width(),
            self.subgroup_layout_known(),
        );
        if let Some(p) = self.pipelines.lock().unwrap().get(&key) {
            return Ok((p.clone(), true));
        }
        let built = Arc::new(Pipeline::build(
            self,
            kernel,
            precision,
            splits,
            workgroup_size,
        )?);
        self.pipelines.lock().unwrap().put(key, built.clone());
        Ok((built, false))
    }
}
