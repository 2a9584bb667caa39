//! `phobosc run`: bind dims, arguments and inputs; launch; report.

use crate::{BackendArg, PrecisionArg, preview, source};
use anyhow::{Result, anyhow, bail};
use clap::Args;
use phobos_core::bind::{BindError, Binder, Made};
use phobos_core::ir::{Kernel, ParamKind};
use phobos_core::launch::Arg;
use phobos_core::types::Scalar;
use phobos_runtime::gpu::Resident;
use phobos_runtime::{Backend, Options, Provenance, checks, npy, phases};
use serde_json::json;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct RunArgs {
    /// The .ph file.
    pub file: PathBuf,
    /// The kernel to run; may be left out when the file has one.
    #[arg(long)]
    kernel: Option<String>,
    /// The extent of a symbolic dimension, NAME=N.
    #[arg(long = "dim", value_name = "NAME=N")]
    dims: Vec<String>,
    /// A scalar argument, NAME=VALUE; scalars not given are 0.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    args: Vec<String>,
    /// A tensor argument from a .npy file, NAME=PATH; tensors not given are generated.
    #[arg(long = "input", value_name = "NAME=PATH")]
    inputs: Vec<String>,
    /// Save an output tensor to a .npy file, NAME=PATH, instead of previewing it.
    #[arg(long = "output", value_name = "NAME=PATH")]
    pub outputs: Vec<String>,
    /// Where to run; `auto` picks the best backend present.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// `exact` gives the reference's bits; `fast` allows native approximations.
    #[arg(long, value_enum, default_value = "exact")]
    precision: PrecisionArg,
    /// The value of an @autotune parameter, NAME=VALUE; fixes the configuration (no tuning).
    #[arg(long = "config", value_name = "NAME=VALUE")]
    pub config: Vec<String>,
    /// Launch the heuristic's configuration instead of tuning at first launch.
    #[arg(long = "no-tune")]
    pub no_tune: bool,
    /// Threads for the CPU backend (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Split the launch's blocks across several devices, with the same
    /// bits: `all` (every GPU adapter), `N` (the first N), or a list of
    /// `gpuI` (or `I`) and `cpu`, each with an optional `:WEIGHT`
    /// (`gpu0:3,cpu:1`); an adapter named twice opens two devices on it.
    /// Overrides --backend.
    #[arg(long, value_name = "all|N|LIST")]
    pub devices: Option<String>,
    /// Print provenance and per-output statistics as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Print the plan of the GPU module that ran, for this device and the
    /// configuration launched: where each value lives and why, how each
    /// statement is stored and its Tandem draws taken, the workgroup
    /// memory item by item (`phobosc build --explain` prints it for
    /// WebGPU's default limits instead).
    #[arg(long)]
    pub explain: bool,
    /// Print where the time went (device open, inputs, upload or generate,
    /// compile, kernel, read-back, writing, checks; `results` when saved
    /// outputs are written from the GPU while the checks run) on stderr.
    #[arg(long)]
    pub verbose: bool,
}

impl RunArgs {
    /// The arguments of a launch that `tune` and `build --tuned` measure:
    /// what to launch as given, inputs not given generated, no outputs
    /// saved, no configuration fixed.
    #[allow(clippy::too_many_arguments)]
    pub fn for_tuning(
        file: PathBuf,
        kernel: Option<String>,
        dims: Vec<String>,
        args: Vec<String>,
        inputs: Vec<String>,
        backend: BackendArg,
        precision: PrecisionArg,
        threads: Option<usize>,
    ) -> RunArgs {
        RunArgs {
            file,
            kernel,
            dims,
            args,
            inputs,
            outputs: Vec::new(),
            backend,
            precision,
            config: Vec::new(),
            no_tune: false,
            threads,
            devices: None,
            json: true,
            explain: false,
            verbose: false,
        }
    }
}

/// `NAME=VALUE` of flag `--flag`, both sides non-empty and trimmed.
pub(crate) fn split<'a>(flag: &str, s: &'a str) -> Result<(&'a str, &'a str)> {
    match s.split_once('=') {
        Some((n, v)) if !n.is_empty() && !v.is_empty() => Ok((n.trim(), v.trim())),
        _ => bail!("--{flag} `{s}`: expected NAME=VALUE"),
    }
}

/// A kernel ready to launch: checked, configured, with its arguments bound.
pub struct Prepared {
    pub program: phobos_core::Program,
    pub name: String,
    pub kernel: Kernel,
    pub args: Vec<Arg>,
    pub options: Options,
}

/// Checks the file, picks the kernel and binds its arguments; `Err(code)`
/// when diagnostics were printed.
pub fn prepare(a: &RunArgs) -> Result<std::result::Result<Prepared, ExitCode>> {
    prepare_generating(a, false).map(|p| p.map(|(p, _)| p))
}

/// [`prepare`], and the tensor parameters it made rather than read. With
/// `placeholders` the generated ones are left as zero tensors, which cost
/// no memory until touched, for the launch to generate where it runs
/// ([`phobos_runtime::Transfers::generated`]).
fn prepare_generating(
    a: &RunArgs,
    placeholders: bool,
) -> Result<std::result::Result<(Prepared, Made), ExitCode>> {
    let (program, diags) = source::load(&a.file)?;
    if !diags.is_empty() {
        source::print_diagnostics(&program, &diags);
        return Ok(Err(ExitCode::from(1)));
    }
    let name = match &a.kernel {
        Some(k) => k.clone(),
        None => match program.kernel_names()[..] {
            [one] => one.to_string(),
            [] => bail!("{} defines no kernel", a.file.display()),
            ref many => bail!(
                "{} defines several kernels ({}); choose one with --kernel",
                a.file.display(),
                many.join(", ")
            ),
        },
    };
    let mut config = Vec::new();
    for c in &a.config {
        let (n, v) = split("config", c)?;
        let v: i64 = v
            .parse()
            .map_err(|_| anyhow!("--config {n}: `{v}` is not an integer"))?;
        config.push((n.to_string(), v));
    }
    let kernel = match program.kernel(&name, &config) {
        Ok(k) => k,
        Err(d) => {
            source::print_diagnostics(&program, &d);
            return Ok(Err(ExitCode::from(1)));
        }
    };
    let (args, made) = bind_args(a, &kernel, placeholders)?;
    let options = Options {
        backend: match a.backend {
            BackendArg::Auto => Backend::Auto,
            BackendArg::Interp => Backend::Interp,
            BackendArg::Cpu => Backend::Cpu,
            BackendArg::Gpu => Backend::Gpu,
        },
        precision: a.precision.into(),
        threads: a.threads,
        workgroup_size: None,
        gpu_only: false,
    };
    Ok(Ok((
        Prepared {
            program,
            name,
            kernel,
            args,
            options,
        },
        made,
    )))
}

pub fn run(a: &RunArgs) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let code = run_timed(a)?;
    if a.verbose {
        eprint!("{}", phase_report(started.elapsed()));
    }
    Ok(code)
}

fn run_timed(a: &RunArgs) -> Result<ExitCode> {
    let activity = crate::tune::Activity::start(a.json);
    activity.phase("reading and generating inputs");
    // Inputs not given are generated where the kernel runs: on the GPU,
    // on the device, so gigabytes are neither generated nor uploaded by
    // the host. Not when the tuner measures configurations on them (it
    // reads the arguments as they are).
    // `--devices` is read and checked against the adapters present before
    // anything else; a split launch reads its inputs from the host.
    let devices = match &a.devices {
        Some(text) => Some(crate::devices::resolve(text)?),
        None => None,
    };
    let on_device_inputs = (a.no_tune || !a.config.is_empty()) && devices.is_none();
    // The device opens (0.2 s on the H200) while the source is parsed and
    // the inputs are made; a device that fails to open is reported by the
    // launch as before.
    let opens_gpu = match a.backend {
        _ if devices.is_some() => false,
        BackendArg::Gpu => true,
        BackendArg::Auto => std::env::var_os("PHOBOS_BACKEND").is_none(),
        _ => false,
    };
    let opening = DeviceOpening::start(opens_gpu);
    let (
        Prepared {
            program,
            name,
            kernel,
            mut args,
            options,
        },
        made,
    ) = match phases::scoped("inputs", || prepare_generating(a, on_device_inputs))? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let outputs = outputs_to_save(&kernel, &a.outputs)?;
    activity.phase("running");
    // What is left of the device's opening, as a phase of its own.
    phases::time("device open", || opening.finish());
    // On the GPU a saved output is not previewed, so its host tensor is
    // wanted only for `--json`'s statistics (and by a check that falls back
    // to the interpreter, which reads it back itself): without `--json` it
    // stays on the device, and its file is written from there while the
    // check lines run. With `--json` each file is written as the launch
    // reads its tensor back, so the writes overlap the device's copies of
    // the next pieces.
    let mut saving = Saving::new(&kernel, &args, &outputs);
    let on_device: Vec<usize> = if a.json || devices.is_some() {
        Vec::new()
    } else {
        outputs.iter().map(|(p, _)| *p).collect()
    };
    // The tuner draws its own bar, if it tunes.
    let mut split = None;
    let (kernel, prov, resident) = activity.suspend(|| {
        if let Some(devices) = &devices {
            let (kernel, prov, run) =
                crate::devices::launch(a, &program, &name, kernel, &mut args, &options, devices)?;
            split = Some(run);
            return Ok((kernel, prov, None));
        }
        crate::tune::launch(
            a,
            &program,
            &name,
            kernel,
            &mut args,
            &options,
            Some(phobos_runtime::Transfers {
                sink: &mut |param, at, piece| saving.piece(param, at, piece),
                sink_only: Vec::new(),
                on_device: on_device.clone(),
                generated: if on_device_inputs {
                    made.generated
                } else {
                    Vec::new()
                },
                // Zeros, as the binder made them.
                zeroed: made.zeroed,
            }),
        )
    })?;
    // Checks run where the kernel ran, compiled like it, on the tensors
    // the launch left on the GPU; after a split, on the CPU backend.
    let on = Options {
        backend: match split {
            Some(_) => Backend::Cpu,
            None => prov.backend,
        },
        ..options
    };
    let evaluate = |args: &mut Vec<Arg>| {
        phases::scoped("checks", || {
            checks::evaluate_kept(&program, &name, &kernel, args, &on, resident.as_ref())
        })
    };
    let checks = match &resident {
        // The outputs left on the device are written by another thread
        // while the checks run: the two are timed together as `results`.
        Some(resident) if !on_device.is_empty() => {
            activity.phase("saving outputs and evaluating the check lines");
            let (saved, checks) = phases::scoped("results", || {
                let prefix = phases::prefix();
                std::thread::scope(|s| {
                    let saving = &mut saving;
                    let saved = s.spawn(move || {
                        phases::under(&prefix, || {
                            phases::scoped("readback", || saving.write_from_device(resident))
                        })
                    });
                    let checks = evaluate(&mut args);
                    let saved = saved.join().expect("the saving thread does not panic");
                    (saved, checks)
                })
            });
            saved?;
            let checks = checks?;
            save_rest(saving, &kernel, &args, &outputs, &activity)?;
            checks
        }
        _ => {
            save_rest(saving, &kernel, &args, &outputs, &activity)?;
            activity.phase("evaluating the check lines");
            evaluate(&mut args)?
        }
    };
    drop(resident);
    activity.done();
    if a.json {
        let report = json!({
            "kernel": name,
            "provenance": provenance_json(&prov, &kernel, &bind_notes(&kernel, &a.inputs, &a.args)),
            "split": split.as_ref().map(|s| s.json()),
            "outputs": written(&kernel).map(|p| {
                let Arg::Tensor(t) = &args[p] else { unreachable!() };
                let saved = outputs.iter().find(|(q, _)| *q == p).map(|(_, path)| path.display().to_string());
                (kernel.params[p].name.clone(), preview::stats_json(t, saved))
            }).collect::<serde_json::Map<_, _>>(),
            "checks": checks.iter().map(|c| json!({"name": c.name, "holds": c.holds, "total": c.total, "backend": c.backend.name(), "fallback": c.fallback})).collect::<Vec<_>>(),
        });
        let mut report = report;
        if a.explain {
            report["plan"] = json!(prov.plan);
        }
        return emit(&format!("{}\n", serde_json::to_string_pretty(&report)?));
    }
    let mut out = format!("kernel     {name}\n");
    for line in provenance_lines(&prov, &kernel) {
        let _ = writeln!(out, "{line}");
    }
    for line in split.iter().flat_map(crate::devices::lines) {
        let _ = writeln!(out, "{line}");
    }
    for note in bind_notes(&kernel, &a.inputs, &a.args) {
        let _ = writeln!(out, "input      {note}");
    }
    for p in written(&kernel) {
        let pname = &kernel.params[p].name;
        if let Some((_, path)) = outputs.iter().find(|(q, _)| *q == p) {
            let _ = writeln!(out, "\n{pname}: saved to {}", path.display());
            continue;
        }
        let Arg::Tensor(t) = &args[p] else {
            unreachable!()
        };
        out.push('\n');
        out.push_str(&preview::render(pname, t));
    }
    if !checks.is_empty() {
        out.push('\n');
    }
    for c in &checks {
        let pct = 100.0 * c.holds as f64 / c.total.max(1) as f64;
        let mark = if c.all() { " (all)" } else { "" };
        let _ = writeln!(
            out,
            "check `{}`: true for {} of {} elements ({pct:.2}%){mark}",
            c.name, c.holds, c.total
        );
        if let Some(why) = &c.fallback {
            let _ = writeln!(out, "  (ran on the interpreter: {why})");
        }
    }
    if a.explain {
        out.push('\n');
        out.push_str(&explained(&prov));
    }
    emit(&out)
}

/// `--explain`'s text: the plan of the GPU module that ran, or why there
/// is none.
pub(crate) fn explained(prov: &Provenance) -> String {
    match &prov.plan {
        Some(plan) => format!("plan of the module that ran ({}):\n{plan}", prov.device),
        None if prov.device.starts_with("split over") => "plan: none for a launch split over \
             several devices (each plans its own part); run on one device to see its plan\n"
            .to_string(),
        None => format!(
            "plan: none, since the kernel ran on the {} backend; the plan is the GPU \
             lowering's (`--backend gpu`, or `phobosc build --explain` for WebGPU's limits)\n",
            prov.backend.name()
        ),
    }
}

/// Finishes the `--output` files the read-back wrote, and writes from the
/// tensors in `args` those it did not (the launch ran elsewhere).
fn save_rest(
    saving: Saving,
    kernel: &Kernel,
    args: &[Arg],
    outputs: &[(usize, PathBuf)],
    activity: &crate::tune::Activity,
) -> Result<()> {
    for (param, writer) in saving.finish()? {
        let Arg::Tensor(t) = &args[param] else {
            unreachable!("outputs are tensors")
        };
        let path = &outputs
            .iter()
            .find(|(p, _)| *p == param)
            .expect("an output")
            .1;
        match writer {
            Some(w) => w.finish()?,
            None => {
                activity.phase(&format!("saving {}", path.display()));
                phases::time("write", || npy::write(&kernel.params[param].name, path, t))?;
            }
        }
    }
    Ok(())
}

/// The `--output` files written as a launch's read-back hands over their
/// bytes ([`phobos_runtime::PieceSink`]).
struct Saving {
    files: Vec<SavedFile>,
    names: Vec<String>,
    failed: Option<npy::NpyError>,
}

/// One `--output` file: its parameter, path, element type and shape, and
/// the file once its first piece came.
struct SavedFile {
    param: usize,
    path: PathBuf,
    elem: Scalar,
    shape: Vec<usize>,
    writer: Option<npy::Writer>,
}

impl Saving {
    fn new(kernel: &Kernel, args: &[Arg], outputs: &[(usize, PathBuf)]) -> Saving {
        Saving {
            files: outputs
                .iter()
                .map(|(p, path)| {
                    let Arg::Tensor(t) = &args[*p] else {
                        unreachable!("outputs are tensors")
                    };
                    SavedFile {
                        param: *p,
                        path: path.clone(),
                        elem: t.elem(),
                        shape: t.shape.clone(),
                        writer: None,
                    }
                })
                .collect(),
            names: kernel.params.iter().map(|p| p.name.clone()).collect(),
            failed: None,
        }
    }

    /// The bytes at `at` of parameter `param`; a file's first piece creates
    /// it. After a failure nothing more is written; [`Saving::finish`]
    /// reports it.
    fn piece(&mut self, param: usize, at: u64, piece: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        let Some(f) = self.files.iter_mut().find(|f| f.param == param) else {
            return;
        };
        let written = phases::time("write", || {
            if at == 0 {
                f.writer = Some(npy::Writer::create(
                    &self.names[param],
                    &f.path,
                    f.elem,
                    &f.shape,
                )?);
            }
            match &mut f.writer {
                Some(w) => w.write_bytes(piece),
                None => unreachable!("the first piece is at 0"),
            }
        });
        if let Err(e) = written {
            self.failed = Some(e);
        }
    }

    /// Writes the outputs the launch left on the GPU (`resident`) from
    /// there, piece by piece; a failure to write is kept for
    /// [`Saving::finish`], one to read is returned.
    fn write_from_device(&mut self, resident: &Resident) -> Result<()> {
        let g = phobos_runtime::gpu::Gpu::shared()?;
        let files: Vec<(usize, u64)> = (self.files.iter())
            .filter(|f| resident.buffer(f.param).is_some())
            .map(|f| {
                let bytes = f.shape.iter().product::<usize>() * f.elem.size();
                (f.param, bytes as u64)
            })
            .collect();
        for (param, bytes) in files {
            g.read_resident(resident, param, bytes, |at, piece| {
                self.piece(param, at, piece)
            })?;
        }
        Ok(())
    }

    /// Each output with its file when the read-back wrote all of it, else
    /// `None` (the launch ran elsewhere): the first failure, if any.
    fn finish(self) -> Result<Vec<(usize, Option<npy::Writer>)>> {
        if let Some(e) = self.failed {
            return Err(e.into());
        }
        Ok(self
            .files
            .into_iter()
            .map(|f| (f.param, f.writer.filter(npy::Writer::complete)))
            .collect())
    }
}

/// Writes the report to stdout. A reader that stops early (`| head`) is not
/// an error: the rest of the report is simply not wanted.
fn emit(text: &str) -> Result<ExitCode> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

fn written(kernel: &Kernel) -> impl Iterator<Item = usize> + '_ {
    kernel
        .params
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match p.kind {
            ParamKind::Tensor { written: true, .. } => Some(i),
            _ => None,
        })
}

fn outputs_to_save(kernel: &Kernel, specs: &[String]) -> Result<Vec<(usize, PathBuf)>> {
    let mut out = Vec::new();
    for s in specs {
        let (n, path) = split("output", s)?;
        let Some(i) = kernel.params.iter().position(|p| p.name == n) else {
            bail!(
                "--output {n}: `{}` has no parameter `{n}`; its outputs are {}",
                kernel.name,
                names(kernel, written(kernel))
            );
        };
        if !written(kernel).any(|w| w == i) {
            bail!(
                "--output {n}: `{n}` is not written by `{}`; its outputs are {}",
                kernel.name,
                names(kernel, written(kernel))
            );
        }
        out.push((i, PathBuf::from(path)));
    }
    Ok(out)
}

fn names(kernel: &Kernel, it: impl Iterator<Item = usize>) -> String {
    let v: Vec<&str> = it.map(|i| kernel.params[i].name.as_str()).collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

/// Binds the command line's `--dim`, `--input` and `--arg` through the
/// core's binder (`phobos_core::bind`, which the playground binds with
/// too), reading `--input` files here; the tensors made must fit in this
/// machine's available memory. With `placeholders` the generated tensors
/// are zeros for the launch to fill.
fn bind_args(a: &RunArgs, kernel: &Kernel, placeholders: bool) -> Result<(Vec<Arg>, Made)> {
    let mut bind = Binder::new(kernel);
    for s in &a.dims {
        let (n, v) = split("dim", s)?;
        bind.dim(n, v, "--dim")
            .map_err(|e| anyhow!("--dim {n}: {e}"))?;
    }
    for s in &a.inputs {
        let (n, path) = split("input", s)?;
        let input_error = |e: BindError| match e {
            BindError::NotTensor { .. } => {
                anyhow!("--input {n}: {e}; pass it with --arg {n}=VALUE")
            }
            e => anyhow!("--input {n}: {e}"),
        };
        let (_, elem) = bind.tensor_param(n).map_err(input_error)?;
        let t = npy::read(n, path.as_ref(), elem)?;
        bind.tensor(n, t, &format!("--input {n}"), path)
            .map_err(input_error)?;
    }
    for s in &a.args {
        let (n, v) = split("arg", s)?;
        bind.scalar(n, v).map_err(|e| match e {
            BindError::NotScalar { .. } => {
                anyhow!("--arg {n}: {e}; pass it with --input {n}=FILE.npy")
            }
            e => anyhow!("--arg {n}: {e}"),
        })?;
    }
    // Tensors must fit in memory: refuse rather than be killed mid-run.
    let budget = phobos_runtime::memory::available();
    bind.finish(budget, placeholders).map_err(|e| match e {
        BindError::Unbound { ref dim, .. } => {
            anyhow!("{e}: pass --dim {dim}=N, or a tensor that has it with --input")
        }
        BindError::TooLarge {
            name, shape, bytes, left,
        } => anyhow!(
            "`{name}` with shape {shape:?} needs {} bytes, more than this machine's available memory ({left} bytes left for tensors)",
            bytes.map_or("more than 2^64".to_string(), |b| b.to_string()),
        ),
        e => anyhow!("{e}"),
    })
}

/// How each argument that was not given was made.
fn bind_notes(kernel: &Kernel, inputs: &[String], args: &[String]) -> Vec<String> {
    let given = |n: &str, specs: &[String]| specs.iter().any(|s| s.split('=').next() == Some(n));
    kernel
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Scalar(_) if !given(&p.name, args) => {
                Some(format!("{} = 0 (not given)", p.name))
            }
            ParamKind::Tensor {
                read: true, elem, ..
            } if !given(&p.name, inputs) => Some(format!(
                "{} generated: element i is {}",
                p.name,
                match elem {
                    Scalar::F32 | Scalar::F64 => "1 + frac(i * 2654435761 / 2^32)",
                    Scalar::F16 | Scalar::BF16 => "1 + frac(i * 2654435761 / 2^32), rounded",
                    Scalar::Bool => "whether i is odd",
                    _ => "i",
                }
            )),
            _ => None,
        })
        .collect()
}

fn provenance_lines(p: &Provenance, kernel: &Kernel) -> Vec<String> {
    let cfg: Vec<String> = p.config.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let dims: Vec<String> = kernel
        .dims
        .iter()
        .zip(&p.bound.dims)
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let g = p.bound.grid;
    vec![
        format!(
            "backend    {} ({}, {} thread{})",
            p.backend.name(),
            p.device,
            p.threads,
            if p.threads == 1 { "" } else { "s" }
        ),
        format!("precision  {}", p.precision.name()),
        match (p.compile_ms, p.cache_hit) {
            (Some(ms), Some(true)) => format!("compile    {ms:.2} ms (cached in this process)"),
            (Some(ms), _) => format!("compile    {ms:.2} ms"),
            _ => "compile    none (interpreted)".to_string(),
        },
        format!("config     {}", list_or_none(&cfg)),
        format!("tuning     {}", crate::tune::describe(&p.tuning)),
        format!("dims       {}", list_or_none(&dims)),
        format!("grid       {} x {} x {} blocks", g[0], g[1], g[2]),
    ]
    .into_iter()
    .chain(
        p.workgroup_size
            .map(|w| format!("workgroup  {w} invocations")),
    )
    .chain(p.lowering.iter().map(|n| format!("lowering   {n}")))
    .collect()
}

fn provenance_json(p: &Provenance, kernel: &Kernel, notes: &[String]) -> serde_json::Value {
    json!({
        "backend": p.backend.name(),
        "device": p.device,
        "threads": p.threads,
        "precision": p.precision.name(),
        "config": p.config.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "dims": kernel.dims.iter().zip(&p.bound.dims).map(|(n, v)| (n.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "grid": p.bound.grid,
        "tuning_cache": p.tuning.cache.name(),
        "tuning": p.tuning.to_json(),
        "workgroup_size": p.workgroup_size,
        "compile_ms": p.compile_ms,
        "compile_cache_hit": p.cache_hit,
        "lowering": p.lowering,
        "inputs": notes,
    })
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".to_string()
    } else {
        items.join(", ")
    }
}

/// `--verbose`'s table: each phase the runtime recorded (`phases`), with
/// the phases timed inside another indented under it, and what no phase
/// covers (parsing, the report, freeing memory) as the rest of `total`.
fn phase_report(total: std::time::Duration) -> String {
    let recorded = phases::recorded();
    let mut out = String::new();
    let line = |out: &mut String, name: &str, depth: usize, secs: f64, count: u32| {
        let times = if count > 1 {
            format!(" ({count} times)")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "time       {:indent$}{name:<w$} {secs:>9.3} s{times}",
            "",
            indent = 2 * depth,
            w = 22usize.saturating_sub(2 * depth),
        );
    };
    // The phases directly under `prefix` ("" for the top level), each
    // followed by its own.
    fn tree(
        recorded: &[(String, std::time::Duration, u32)],
        prefix: &str,
        depth: usize,
        emit: &mut dyn FnMut(&str, usize, f64, u32),
    ) {
        for (name, spent, count) in recorded {
            let Some(leaf) = name.strip_prefix(prefix).filter(|l| !l.contains('/')) else {
                continue;
            };
            emit(leaf, depth, spent.as_secs_f64(), *count);
            tree(recorded, &format!("{name}/"), depth + 1, emit);
        }
    }
    let mut covered = 0.0;
    tree(&recorded, "", 0, &mut |name, depth, secs, count| {
        if depth == 0 {
            covered += secs;
        }
        line(&mut out, name, depth, secs, count);
    });
    let total = total.as_secs_f64();
    line(&mut out, "other", 0, (total - covered).max(0.0), 1);
    line(&mut out, "total", 0, total, 1);
    out
}

/// The GPU device opening on a thread of its own ([`Gpu::shared`]) while
/// the main thread parses and makes inputs. Dropping it waits for the
/// opening, so that the process never exits (an error in the source, say)
/// while a thread is inside the driver's initialisation.
///
/// [`Gpu::shared`]: phobos_runtime::gpu::Gpu::shared
struct DeviceOpening(Option<std::thread::JoinHandle<()>>);

impl DeviceOpening {
    fn start(opens_gpu: bool) -> DeviceOpening {
        DeviceOpening(
            opens_gpu.then(|| std::thread::spawn(|| drop(phobos_runtime::gpu::Gpu::shared()))),
        )
    }

    /// Waits until the device is open (or failed to open).
    fn finish(mut self) {
        self.wait();
    }

    fn wait(&mut self) {
        if let Some(thread) = self.0.take() {
            // A panic inside the driver's initialisation is not reported
            // here: the launch then opens the device itself, or says why not.
            let _ = thread.join();
        }
    }
}

impl Drop for DeviceOpening {
    fn drop(&mut self) {
        self.wait();
    }
}
