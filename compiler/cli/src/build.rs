//! `phobosc build`: every kernel of a file, in every configuration asked
//! for, lowered to WGSL and SPIR-V, with a `manifest.json` that tells a
//! runtime how to bind and dispatch each one.

use crate::source;
use crate::{BackendArg, PrecisionArg};
use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};
use phobos_core::Program;
use phobos_core::ir::{Kernel, ParamKind};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    Wgsl,
    Spirv,
}

#[derive(Args)]
pub struct BuildArgs {
    /// The `.ph` file.
    file: PathBuf,
    /// The directory to write into (created if missing).
    #[arg(
        short = 'o',
        long = "out-dir",
        value_name = "DIR",
        default_value = "build"
    )]
    out: PathBuf,
    /// What to write for each configuration.
    #[arg(long, value_delimiter = ',', default_value = "wgsl,spirv")]
    target: Vec<Target>,
    /// Only configurations with this `@autotune` value; repeat for several
    /// parameters, or give one parameter several times for several values.
    #[arg(long = "config", value_name = "NAME=VALUE")]
    config: Vec<String>,
    /// Only this kernel (default: every kernel of the file).
    #[arg(long)]
    kernel: Option<String>,
    /// Exact mode (the default) post-processes the SPIR-V so no driver fuses
    /// or flushes; fast mode leaves float operations to the driver.
    #[arg(long, value_enum, default_value = "exact")]
    precision: PrecisionArg,
    /// Also tune each kernel here (on --backend, at the --dim extents given)
    /// and write tuning.json and the winners' shaders beside the others.
    #[arg(long)]
    tuned: bool,
    /// The extent of a symbolic dimension, NAME=N: the kernel is
    /// specialised to it as a launch is (and --tuned tunes at it).
    #[arg(long = "dim", value_name = "NAME=N")]
    dims: Vec<String>,
    /// Print the plan of each configuration: where each value lives and
    /// why, how Tandem draws are taken, and the workgroup memory item by
    /// item.
    #[arg(long)]
    explain: bool,
    /// The workgroup memory the target device has, in bytes (default:
    /// WebGPU's default limit, which every WebGPU device accepts).
    #[arg(long, value_name = "BYTES", default_value_t = phobos_gpu::WORKGROUP_MEMORY_LIMIT)]
    workgroup_memory: u64,
    /// The storage buffers a shader stage may bind on the target device
    /// (default: WebGPU's default limit, 8): one per tensor.
    #[arg(long, value_name = "N", default_value_t = phobos_gpu::PORTABLE_STORAGE_BUFFERS)]
    storage_buffers: u32,
    /// With --tuned: a scalar argument, NAME=VALUE (others are 0).
    #[arg(long = "arg", value_name = "NAME=VALUE", requires = "tuned")]
    args: Vec<String>,
    /// With --tuned: where to tune.
    #[arg(long, value_enum, default_value = "auto", requires = "tuned")]
    backend: BackendArg,
}

#[derive(Serialize)]
struct Manifest {
    phobosc: &'static str,
    source: String,
    precision: &'static str,
    /// The limits the kernels were planned within.
    limits: Limits,
    /// The dims the kernels were specialised to (`--dim`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    dims: BTreeMap<String, u64>,
    entry_point: &'static str,
    dispatch: &'static str,
    kernels: Vec<KernelEntry>,
}

#[derive(Serialize)]
struct Limits {
    max_compute_workgroup_storage_size: u64,
    max_compute_invocations_per_workgroup: u32,
    max_storage_buffers_per_shader_stage: u32,
}

#[derive(Serialize)]
struct KernelEntry {
    name: String,
    params: Vec<ParamEntry>,
    dims: Vec<String>,
    tuning_space: BTreeMap<String, Vec<i64>>,
    configurations: Vec<ConfigEntry>,
}

#[derive(Serialize)]
struct ParamEntry {
    name: String,
    kind: &'static str,
    elem: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    shape: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    written: Option<bool>,
}

#[derive(Serialize)]
struct ConfigEntry {
    config: BTreeMap<String, i64>,
    grid: [String; 3],
    workgroup_size: u32,
    blocks_per_workgroup: u32,
    layout: phobos_gpu::Layout,
    #[serde(skip_serializing_if = "Option::is_none")]
    wgsl: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    spirv: Option<String>,
}

fn params(kernel: &Kernel) -> Vec<ParamEntry> {
    kernel
        .params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Tensor {
                elem,
                shape,
                written,
                ..
            } => ParamEntry {
                name: p.name.clone(),
                kind: "tensor",
                elem: elem.to_string(),
                shape: Some(
                    shape
                        .iter()
                        .map(|d| match d {
                            phobos_core::types::Dim::Const(v) => v.to_string(),
                            phobos_core::types::Dim::Sym(s) => kernel.dims[*s].clone(),
                        })
                        .collect(),
                ),
                written: Some(*written),
            },
            ParamKind::Scalar(s) => ParamEntry {
                name: p.name.clone(),
                kind: "scalar",
                elem: s.to_string(),
                shape: None,
                written: None,
            },
        })
        .collect()
}

/// The configurations of `kernel` that `--config` selects; an unknown
/// parameter or a value the kernel does not declare is an error.
fn selected(
    program: &Program,
    kernel: &str,
    filters: &[(String, i64)],
) -> Result<Vec<Vec<(String, i64)>>> {
    let space = program.tune_space(kernel);
    for (n, v) in filters {
        let Some(p) = space.iter().find(|p| &p.name == n) else {
            bail!("--config {n}={v}: kernel `{kernel}` has no @autotune parameter `{n}`");
        };
        if !p.values.contains(v) {
            bail!(
                "--config {n}={v}: `{n}` takes the values {:?} in kernel `{kernel}`",
                p.values
            );
        }
    }
    Ok(program
        .configs(kernel)
        .into_iter()
        .filter(|c| {
            c.iter().all(|(n, v)| {
                let wanted: Vec<i64> = filters
                    .iter()
                    .filter(|(f, _)| f == n)
                    .map(|(_, v)| *v)
                    .collect();
                wanted.is_empty() || wanted.contains(v)
            })
        })
        .collect())
}

/// Tunes kernel `name` as `phobosc tune` would (the cache first), and
/// writes the winner's shaders when its workgroup size is not the one the
/// build used (`KERNEL.NAMEVALUE....wgN.wgsl`): what `tuning.json` lists.
fn tuned(
    a: &BuildArgs,
    name: &str,
    precision: phobos_gpu::Precision,
    written: &mut Vec<String>,
) -> Result<serde_json::Value> {
    let run = crate::run::RunArgs::for_tuning(
        a.file.clone(),
        Some(name.to_string()),
        a.dims.clone(),
        a.args.clone(),
        Vec::new(),
        a.backend,
        a.precision,
        None,
    );
    let prepared = match crate::run::prepare(&run)? {
        Ok(p) => p,
        Err(_) => bail!("--tuned: `{name}` does not check"),
    };
    let crate::run::Prepared {
        program,
        mut args,
        options,
        ..
    } = prepared;
    let t = phobos_runtime::tune::tune(&program, name, &mut args, &options, &mut |_| {})
        .map_err(|e| anyhow!("--tuned: tuning `{name}`: {e}"))?;
    let mut entry = t.to_json();
    if let Some(w) = t.chosen.workgroup_size {
        let kernel = program.kernel(name, &t.chosen.config).map_err(|_| {
            anyhow!(
                "--tuned: `{name}` in {} does not check",
                t.chosen.describe()
            )
        })?;
        let options = phobos_gpu::GpuOptions {
            precision,
            workgroup_size: w,
            ..phobos_gpu::GpuOptions::for_kernel(&kernel)
        };
        let stem = if options.workgroup_size
            == phobos_gpu::GpuOptions::for_kernel(&kernel).workgroup_size
        {
            file_stem(name, &t.chosen.config)
        } else {
            format!("{}.wg{w}", file_stem(name, &t.chosen.config))
        };
        let compiled = phobos_gpu::compile(&kernel, &options)
            .map_err(|e| anyhow!("--tuned: `{name}` in {}: {e}", t.chosen.describe()))?;
        let mut files = Vec::new();
        if a.target.contains(&Target::Wgsl) {
            let file = format!("{stem}.wgsl");
            write(&a.out.join(&file), compiled.wgsl().as_bytes())?;
            files.push(file);
        }
        if a.target.contains(&Target::Spirv) {
            let file = format!("{stem}.spv");
            let bytes: Vec<u8> = compiled
                .spirv()
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            write(&a.out.join(&file), &bytes)?;
            files.push(file);
        }
        for f in &files {
            if !written.contains(f) {
                written.push(f.clone());
            }
        }
        entry["files"] = serde_json::json!(files);
    }
    Ok(entry)
}

/// `kernel` specialised to the `--dim` values, as a launch specialises
/// it (`phobos_gpu::specialize`); as it is where none are given.
fn specialise(kernel: &Kernel, given: &BTreeMap<String, u64>) -> Result<Kernel> {
    if given.is_empty() {
        return Ok(kernel.clone());
    }
    let mut dims = Vec::new();
    for n in &kernel.dims {
        match given.get(n) {
            Some(v) => dims.push(*v),
            None => bail!(
                "--dim: kernel `{}` also needs `--dim {n}=N` to be specialised",
                kernel.name
            ),
        }
    }
    Ok(phobos_gpu::specialize(kernel, &dims).into_owned())
}

/// `dropout_rows.R16` for the configuration `[R=16]`.
fn file_stem(kernel: &str, config: &[(String, i64)]) -> String {
    let mut s = kernel.to_string();
    for (n, v) in config {
        s.push_str(&format!(".{n}{v}"));
    }
    s
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

pub fn build(a: &BuildArgs) -> Result<ExitCode> {
    let (program, diags) = source::load(&a.file)?;
    if !diags.is_empty() {
        source::print_diagnostics(&program, &diags);
        return Ok(ExitCode::from(1));
    }
    let mut filters = Vec::new();
    for c in &a.config {
        let (n, v) = crate::run::split("config", c)?;
        let v: i64 = v
            .parse()
            .map_err(|_| anyhow!("--config {n}: `{v}` is not an integer"))?;
        filters.push((n.to_string(), v));
    }
    let mut given = BTreeMap::new();
    for d in &a.dims {
        let (n, v) = crate::run::split("dim", d)?;
        let v: u64 = v
            .parse()
            .map_err(|_| anyhow!("--dim {n}: `{v}` is not a non-negative integer"))?;
        given.insert(n.to_string(), v);
    }
    let names: Vec<String> = match &a.kernel {
        Some(k) if program.kernel_def(k).is_none() => bail!(
            "--kernel {k}: {} defines {}",
            a.file.display(),
            program.kernel_names().join(", ")
        ),
        Some(k) => vec![k.clone()],
        None => program
            .kernel_names()
            .into_iter()
            .map(String::from)
            .collect(),
    };
    if names.is_empty() {
        bail!("{} defines no kernel", a.file.display());
    }

    // Every --dim names a dim of some kernel built here.
    let mut known = std::collections::BTreeSet::new();
    for name in &names {
        if let Some(config) = program.configs(name).first()
            && let Ok(k) = program.kernel(name, config)
        {
            known.extend(k.dims);
        }
    }
    if let Some(n) = given.keys().find(|n| !known.contains(*n)) {
        bail!("--dim {n}: no kernel built here has a dim `{n}`");
    }
    let precision: phobos_gpu::Precision = a.precision.into();
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let mut kernels = Vec::new();
    let mut written = Vec::new();
    for name in &names {
        let mut entry = None::<KernelEntry>;
        for config in selected(&program, name, &filters)? {
            let kernel = match program.kernel(name, &config) {
                Ok(k) => k,
                Err(d) => {
                    source::print_diagnostics(&program, &d);
                    return Ok(ExitCode::from(1));
                }
            };
            let options = phobos_gpu::GpuOptions {
                precision,
                workgroup_memory: a.workgroup_memory,
                ..phobos_gpu::GpuOptions::for_kernel(&kernel)
            };
            let shown: Vec<String> = config.iter().map(|(n, v)| format!("{n}={v}")).collect();
            let specialised = specialise(&kernel, &given)?;
            if let Some(d) = phobos_gpu::plan::symbolic_tiles_diagnostic(&specialised) {
                source::print_diagnostics(&program, &[d]);
                return Ok(ExitCode::from(1));
            }
            let compiled = phobos_gpu::compile(&specialised, &options)
                .map_err(|e| anyhow!("kernel `{name}` [{}]: {e}", shown.join(", ")))?;
            // What the target cannot hold however it is placed: located at
            // the values and tensors concerned, never a module it refuses.
            let refused: Vec<_> = [
                compiled.workgroup_memory_diagnostic(a.workgroup_memory),
                compiled.storage_buffers_diagnostic(a.storage_buffers),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !refused.is_empty() {
                source::print_diagnostics(&program, &refused);
                return Ok(ExitCode::from(1));
            }
            if a.explain {
                // Where `--dim` changed the kernel, the plan is a launch's.
                if specialised != kernel {
                    let dims: Vec<String> = given.iter().map(|(n, v)| format!("{n}={v}")).collect();
                    println!(
                        "(specialised for {}: the plan a launch at these dims follows)",
                        dims.join(", ")
                    );
                }
                print!("{}", compiled.explain());
            }
            let stem = file_stem(name, &config);
            let mut ce = ConfigEntry {
                config: config.iter().cloned().collect(),
                grid: kernel.grid.clone().map(|g| g.display(&kernel.dims)),
                workgroup_size: options.workgroup_size,
                blocks_per_workgroup: compiled.blocks_per_workgroup,
                layout: compiled.layout.clone(),
                wgsl: None,
                spirv: None,
            };
            if a.target.contains(&Target::Wgsl) {
                let file = format!("{stem}.wgsl");
                write(&a.out.join(&file), compiled.wgsl().as_bytes())?;
                written.push(file.clone());
                ce.wgsl = Some(file);
            }
            if a.target.contains(&Target::Spirv) {
                let file = format!("{stem}.spv");
                let words = compiled.spirv();
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                write(&a.out.join(&file), &bytes)?;
                written.push(file.clone());
                ce.spirv = Some(file);
            }
            entry
                .get_or_insert_with(|| KernelEntry {
                    name: name.clone(),
                    params: params(&kernel),
                    dims: kernel.dims.clone(),
                    tuning_space: program
                        .tune_space(name)
                        .into_iter()
                        .map(|p| (p.name, p.values))
                        .collect(),
                    configurations: Vec::new(),
                })
                .configurations
                .push(ce);
        }
        kernels.extend(entry);
    }
    let manifest = Manifest {
        phobosc: env!("CARGO_PKG_VERSION"),
        source: a.file.display().to_string(),
        precision: precision.name(),
        limits: Limits {
            max_compute_workgroup_storage_size: a.workgroup_memory,
            max_compute_invocations_per_workgroup: phobos_gpu::PORTABLE_WORKGROUP_SIZE,
            max_storage_buffers_per_shader_stage: a.storage_buffers,
        },
        dims: given,
        entry_point: phobos_gpu::ENTRY_POINT,
        dispatch: "workgroups [cdiv(W, rows), rows, 1] for W = cdiv(B, blocks_per_workgroup) of the \
                   B = grid.x * grid.y * grid.z blocks and rows = cdiv(W, 65535); bind group 0: the uniform block at `layout.uniform_fields`, tensors at their bindings",
        kernels,
    };
    let json = serde_json::to_string_pretty(&manifest)?;
    write(&a.out.join("manifest.json"), format!("{json}\n").as_bytes())?;
    written.push("manifest.json".to_string());
    if a.tuned {
        let mut results = Vec::new();
        for name in &names {
            results.push(tuned(a, name, precision, &mut written)?);
        }
        let json = serde_json::to_string_pretty(&serde_json::json!({
            "phobosc": env!("CARGO_PKG_VERSION"),
            "source": a.file.display().to_string(),
            "kernels": results,
        }))?;
        write(&a.out.join("tuning.json"), format!("{json}\n").as_bytes())?;
        written.push("tuning.json".to_string());
    }
    eprintln!(
        "wrote {} files to {}: {}",
        written.len(),
        a.out.display(),
        written.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
