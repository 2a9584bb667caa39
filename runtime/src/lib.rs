//! The Phobos runtime: choosing a backend, launching checked kernels on it,
//! generating inputs, and moving tensors in and out of `.npy` files.
//!
//! ```
//! use phobos_core::Program;
//! use phobos_core::launch::Arg;
//! use phobos_core::tensor::Tensor;
//! use phobos_core::types::{Scalar, Value};
//! use phobos_runtime::{Backend, Options, launch};
//!
//! let src = "kernel twice(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X * 2.0 }";
//! let (program, diags) = Program::parse("twice.ph", src);
//! assert!(diags.is_empty());
//! let kernel = program.kernel("twice", &[]).expect("checks");
//! let x = Tensor::from_fn(Scalar::F32, &[4], |i| Value::F32(i as f32));
//! let mut args = vec![Arg::Tensor(x), Arg::Tensor(Tensor::zeros(Scalar::F32, &[4]))];
//! let run = launch(&kernel, &mut args, &Options { backend: Backend::Auto, ..Options::default() }).unwrap();
//! assert_eq!(run.backend, Backend::Cpu);
//! let Arg::Tensor(y) = &args[1] else { unreachable!() };
//! assert_eq!(y.get(3), Value::F32(6.0));
//! ```

pub mod checks;
pub mod fills;
pub mod gpu;
pub mod memory;
/// Generated inputs (in the core, so that the playground shares them).
pub use phobos_core::inputs;
pub mod npy;
pub mod phases;
pub mod split;
pub mod tune;

use phobos_core::interp;
use phobos_core::ir::Kernel;
use phobos_core::launch::{Arg, Bound, LaunchError};
use std::fmt;

/// Where a kernel runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// The best backend present.
    #[default]
    Auto,
    /// The reference interpreter.
    Interp,
    /// Compiled code on the host's cores.
    Cpu,
    /// A GPU through wgpu.
    Gpu,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Interp => "interp",
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
        }
    }

    /// Reads a backend name; `PHOBOS_BACKEND` uses the same names.
    pub fn parse(s: &str) -> Option<Backend> {
        [Backend::Auto, Backend::Interp, Backend::Cpu, Backend::Gpu]
            .into_iter()
            .find(|b| b.name() == s)
    }
}

/// Whether float results must be exact (the default) or may use the
/// device's native approximations: the one type the whole project names.
pub use phobos_core::Precision;

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub backend: Backend,
    pub precision: Precision,
    /// Threads for the CPU backend (default: every core).
    pub threads: Option<usize>,
    /// Invocations per workgroup on the GPU: the tuner's choice, or `None`
    /// for the launch heuristic's ([`gpu::Gpu::heuristic_workgroup_size`]).
    /// Ignored by the other backends. Never changes the bits.
    pub workgroup_size: Option<u32>,
    /// With [`Backend::Gpu`]: fail where the GPU refuses the kernel (too
    /// little workgroup memory) instead of running it on the CPU backend
    /// with the same bits, as a launch does by default. `phobosc bench
    /// --backend gpu` times the GPU or nothing.
    pub gpu_only: bool,
}

/// How a result was produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    pub backend: Backend,
    pub device: String,
    pub threads: usize,
    /// The precision the result has; the interpreter is always exact.
    pub precision: Precision,
    pub config: Vec<(String, i64)>,
    pub bound: Bound,
    /// Milliseconds spent compiling, for compiled backends.
    pub compile_ms: Option<f64>,
    /// Whether the compiled code came from this process's cache.
    pub cache_hit: Option<bool>,
    /// What the backend's compiler chose that changes speed but never bits:
    /// on the GPU, how each statement's Tandem draws were lowered (stepped,
    /// staged or direct, and why a slower path was taken). Also why the
    /// kernel ran on the CPU backend when the GPU was passed over or
    /// refused it (exact mode on an API that cannot keep it, too little
    /// workgroup memory).
    pub lowering: Vec<String>,
    /// Invocations per workgroup, on the GPU.
    pub workgroup_size: Option<u32>,
    /// On the GPU, the plan of the module that ran, as `phobosc build
    /// --explain` prints it but for this device's options (its limits,
    /// f64 and 64-bit integers, subgroups): where each value lives, how
    /// each statement is stored and its draws taken, the workgroup memory.
    pub plan: Option<String>,
    /// How the configuration was chosen (the launch heuristic, the caller,
    /// or the tuner) and whether the tuning cache served it.
    pub tuning: tune::Tuning,
}

#[derive(Debug)]
pub enum RuntimeError {
    Launch(LaunchError),
    /// The backend failed to compile the kernel.
    Compile(String),
    /// The backend asked for is not in this build or not on this machine.
    Unavailable {
        backend: Backend,
        why: String,
    },
    /// The GPU backend failed: too large a tensor, a lost device, a kernel
    /// that cannot run exactly there.
    Gpu(gpu::GpuError),
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::Launch(e) => write!(f, "{e}"),
            RuntimeError::Compile(e) => write!(f, "{e}"),
            RuntimeError::Unavailable { backend, why } => {
                write!(f, "backend `{}` is not available: {why}", backend.name())
            }
            RuntimeError::Gpu(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RuntimeError {}

impl From<gpu::GpuError> for RuntimeError {
    fn from(e: gpu::GpuError) -> Self {
        match e {
            e @ (gpu::GpuError::NoAdapter(_) | gpu::GpuError::Device(_)) => {
                RuntimeError::Unavailable {
                    backend: Backend::Gpu,
                    why: e.to_string(),
                }
            }
            e => RuntimeError::Gpu(e),
        }
    }
}

impl From<LaunchError> for RuntimeError {
    fn from(e: LaunchError) -> Self {
        RuntimeError::Launch(e)
    }
}

/// Picks the backend `Auto` means here: a hardware GPU when wgpu finds one
/// that can run `precision` (a software adapter such as lavapipe is slower
/// than the CPU backend, so `Auto` passes it over; `--backend gpu` still
/// uses it), else the CPU backend. `PHOBOS_BACKEND` overrides `Auto`.
pub fn resolve(backend: Backend, precision: Precision) -> Result<Backend, RuntimeError> {
    resolve_why(backend, precision).map(|(b, _)| b)
}

/// [`resolve`], and why `Auto` passed over a hardware GPU when it did: one
/// whose API cannot keep exact mode ([`gpu::ExactSupport`]) runs exact
/// kernels on the CPU backend, with the same bits. A GPU asked for by name
/// is never passed over; an exact launch there is refused instead.
fn resolve_why(
    backend: Backend,
    precision: Precision,
) -> Result<(Backend, Option<String>), RuntimeError> {
    let wanted = match (backend, std::env::var("PHOBOS_BACKEND")) {
        (Backend::Auto, Ok(name)) => {
            Backend::parse(&name).ok_or_else(|| RuntimeError::Unavailable {
                backend: Backend::Auto,
                why: format!("PHOBOS_BACKEND is `{name}`; expected auto, interp, cpu or gpu"),
            })?
        }
        (b, _) => b,
    };
    match wanted {
        Backend::Auto => match gpu::Gpu::shared() {
            Ok(g) if g.info().device_type != wgpu::DeviceType::Cpu => {
                match (precision, g.exact_support()) {
                    (Precision::Exact, gpu::ExactSupport::No(why)) => Ok((
                        Backend::Cpu,
                        Some(format!(
                            "ran on the CPU backend, which keeps exact mode: {why}"
                        )),
                    )),
                    _ => Ok((Backend::Gpu, None)),
                }
            }
            _ => Ok((Backend::Cpu, None)),
        },
        Backend::Cpu => Ok((Backend::Cpu, None)),
        Backend::Interp => Ok((Backend::Interp, None)),
        Backend::Gpu => {
            gpu::Gpu::shared()?;
            Ok((Backend::Gpu, None))
        }
    }
}

/// Runs a checked kernel; tensor arguments that the kernel stores to hold
/// the results afterwards.
pub fn launch(
    kernel: &Kernel,
    args: &mut [Arg],
    options: &Options,
) -> Result<Provenance, RuntimeError> {
    launch_kept(kernel, args, options).map(|(prov, _)| prov)
}

/// [`launch`], and on the GPU the tensors' buffers as the kernel left
/// them, for kernels that read its results without uploading them again
/// (`checks::evaluate_kept`). `None` on the other backends.
pub fn launch_kept(
    kernel: &Kernel,
    args: &mut [Arg],
    options: &Options,
) -> Result<(Provenance, Option<gpu::Resident>), RuntimeError> {
    launch_streaming(kernel, args, options, None)
}

/// Where the bytes of a launch's stored tensors go as the GPU reads them
/// back: called with the parameter's index, the byte offset and the
/// little-endian bytes, in order, every byte once, while the device copies
/// the next piece (so `phobosc run --output` writes its files during the
/// read-back).
pub type PieceSink<'a> = &'a mut dyn FnMut(usize, u64, &[u8]);

/// How [`launch_streaming`] moves a launch's tensors: which inputs it
/// generates where they are used, where the stored tensors' bytes go as
/// the GPU reads them back (the sink), and which tensors go to the sink
/// alone or stay on the device.
pub struct Transfers<'a> {
    /// Takes every stored tensor's bytes as they are read back.
    pub sink: PieceSink<'a>,
    /// Stored tensors, by parameter index, whose bytes go to `sink` only:
    /// on the GPU their tensors in the arguments are not filled but left
    /// as they were, which saves a host copy and the memory it touches
    /// (for a 3 GiB output, 3 GiB of fresh pages). Their results stay on
    /// the device in the launch's [`gpu::Resident`] until it is dropped,
    /// and [`gpu::Gpu::read_back_stale`] brings them into the arguments when
    /// they are wanted after all ([`checks::evaluate_kept`] does so before
    /// a check falls back to the interpreter). Every other stored tensor
    /// is filled as in [`launch`], on other threads while `sink` takes
    /// each piece. The other backends fill every tensor and never call
    /// `sink`.
    pub sink_only: Vec<usize>,
    /// Stored tensors, by parameter index, that the launch does not read
    /// back at all, neither to `sink` nor to the arguments: on the GPU
    /// they are left as `sink_only` leaves them, for the caller to read
    /// from the launch's [`gpu::Resident`] when and where it likes
    /// ([`gpu::Gpu::read_resident`]), for instance on another thread while
    /// kernels that read them run (`phobosc run` writes its `--output`
    /// files while the check lines run).
    pub on_device: Vec<usize>,
    /// Tensor parameters to fill with [`inputs::tensor`]'s values instead
    /// of the arguments' (whose tensors are then placeholders of the right
    /// type and shape, their values unread: `Tensor::zeros` costs no memory
    /// until touched). On the GPU a tensor of a type
    /// [`inputs::kernel_source`] covers is generated on the device, and its
    /// host tensor is left as it was unless the launch reads it back as a
    /// stored tensor ([`gpu::Gpu::read_back_stale`] brings it home, as a
    /// check falling back to the interpreter does). Otherwise it is
    /// generated on the host into the arguments before the launch.
    pub generated: Vec<usize>,
    /// Tensor parameters whose arguments the caller made all zero (such as
    /// `phobosc run`'s outputs, from `Tensor::zeros`): on the GPU they are
    /// neither scanned nor uploaded, since wgpu zero-fills a new buffer.
    /// A promise: a tensor listed here that is not zero gives wrong
    /// results. Tensors not listed are scanned (on all cores) and not
    /// uploaded when they are zero. The other backends read the arguments.
    pub zeroed: Vec<usize>,
}

/// Fills the arguments of `generated` with [`inputs::tensor`]'s values,
/// on the host.
fn generate_on_host(args: &mut [Arg], generated: &[usize]) {
    for &p in generated {
        if let Some(Arg::Tensor(t)) = args.get_mut(p) {
            *t = phases::time("generate", || inputs::tensor(t.elem(), &t.shape));
        }
    }
}

/// [`launch_kept`], handing `streaming`'s sink the stored tensors' bytes
/// as the GPU reads them back ([`Transfers`]). Other backends never call
/// it: their results are in the arguments when this returns.
pub fn launch_streaming(
    kernel: &Kernel,
    args: &mut [Arg],
    options: &Options,
    streaming: Option<Transfers<'_>>,
) -> Result<(Provenance, Option<gpu::Resident>), RuntimeError> {
    let (backend, passed_over) = resolve_why(options.backend, options.precision)?;
    let mut prov = Provenance {
        backend,
        device: String::new(),
        threads: 1,
        precision: Precision::Exact,
        config: kernel.config.clone(),
        bound: Bound {
            dims: Vec::new(),
            grid: [0; 3],
        },
        compile_ms: None,
        cache_hit: None,
        lowering: passed_over.into_iter().collect(),
        workgroup_size: None,
        plan: None,
        tuning: tune::Tuning::default(),
    };
    let generated = streaming
        .as_ref()
        .map_or_else(Vec::new, |s| s.generated.clone());
    if backend != Backend::Gpu {
        generate_on_host(args, &generated);
    }
    match backend {
        Backend::Cpu => {
            let started = std::time::Instant::now();
            let run = phobos_cpu::run(kernel, args, options.threads).map_err(|e| match e {
                phobos_cpu::RunError::Launch(e) => RuntimeError::Launch(e),
                phobos_cpu::RunError::Compile(e) => RuntimeError::Compile(e.to_string()),
            })?;
            let compile = std::time::Duration::from_secs_f64(run.compile_ms / 1e3);
            phases::add("compile", compile);
            phases::add("kernel", started.elapsed().saturating_sub(compile));
            prov.device = format!("host CPU ({}, Cranelift JIT)", std::env::consts::ARCH);
            prov.threads = run.threads;
            prov.bound = run.bound;
            prov.compile_ms = Some(run.compile_ms);
            prov.cache_hit = Some(run.cache_hit);
        }
        Backend::Gpu => {
            let g = gpu::Gpu::shared()?;
            match g.run_streaming(
                kernel,
                args,
                options.precision,
                options.workgroup_size,
                streaming,
            ) {
                Ok((run, resident)) => {
                    prov.device = g.describe();
                    prov.precision = options.precision;
                    prov.bound = run.bound;
                    prov.compile_ms = Some(run.compile_ms);
                    prov.cache_hit = Some(run.cache_hit);
                    prov.lowering = run.notes;
                    prov.workgroup_size = Some(run.workgroup_size);
                    prov.plan = Some(run.plan.to_string());
                    return Ok((prov, Some(resident)));
                }
                // Refused before anything was uploaded: the same bits from
                // the CPU backend, slower, and the provenance says why.
                Err(RuntimeError::Gpu(gpu::GpuError::WorkgroupMemory(why)))
                    if !options.gpu_only =>
                {
                    generate_on_host(args, &generated);
                    let cpu = Options {
                        backend: Backend::Cpu,
                        ..options.clone()
                    };
                    let mut p = launch(kernel, args, &cpu)?;
                    p.lowering
                        .push(format!("ran on the CPU backend instead (same bits): {why}"));
                    return Ok((p, None));
                }
                Err(e) => return Err(e),
            }
        }
        _ => {
            prov.bound = phases::time("kernel", || interp::run(kernel, args))?;
            prov.device = "host CPU (reference interpreter)".to_string();
        }
    }
    Ok((prov, None))
}
