//! `phobosc bench`: times a kernel the way `run` would launch it.
//!
//! One warm-up launch (which compiles), then the median and fastest of
//! `--runs` launches, as GiB/s of the bytes the kernel must move: every
//! tensor it reads plus every tensor it writes, once. On the GPU the time is
//! the device's own (timestamps around each dispatch, after half a second of
//! warm-up launches), not the uploads and readbacks a wall clock would see.
//! With `--backend gpu`, a configuration the GPU refuses (too little
//! workgroup memory) is an error, where `run` would run it on the CPU
//! backend: the time is the GPU's or none.

use crate::run::{Prepared, RunArgs, prepare};
use anyhow::Result;
use clap::Args;
use phobos_core::ir::ParamKind;
use phobos_core::launch::Arg;
use phobos_runtime::Backend;
use phobos_runtime::gpu::{Gpu, time_passes};
use serde_json::json;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Timed launches after the warm-up; the median is reported.
    #[arg(long, default_value_t = 21)]
    runs: usize,
    /// With --devices: weight the devices by the speed the warm-up launch
    /// measured (blocks per millisecond of each), not as declared.
    #[arg(long)]
    measured_weights: bool,
}

pub fn bench(a: &BenchArgs) -> Result<ExitCode> {
    // A bad device list fails before anything runs.
    let devices = match &a.run.devices {
        Some(text) => Some(crate::devices::resolve(text)?),
        None => None,
    };
    let Prepared {
        program,
        name,
        kernel,
        mut args,
        options,
    } = match prepare(&a.run)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let mut bytes = 0usize;
    for (p, arg) in kernel.params.iter().zip(&args) {
        if let (
            ParamKind::Tensor {
                read,
                written,
                elem,
                ..
            },
            Arg::Tensor(t),
        ) = (&p.kind, arg)
        {
            bytes += t.len() * elem.size() * (usize::from(*read) + usize::from(*written));
        }
    }
    // `--backend gpu` times the GPU: a configuration it refuses is an
    // error here, not a launch on the CPU backend timed in its place.
    let options = phobos_runtime::Options {
        gpu_only: options.backend == Backend::Gpu,
        ..options
    };
    if let Some(devices) = devices {
        return bench_split(
            a, &program, &name, kernel, &mut args, &options, &devices, bytes,
        );
    }
    // The configuration `run` would launch: tuned at first launch unless
    // --config or --no-tune.
    let (candidate, tuning) =
        crate::tune::choose(&a.run, &program, &name, &kernel, &mut args, &options)?;
    let (kernel, first) = phobos_runtime::tune::launch_candidate(
        &program, &name, &candidate, tuning, &mut args, &options,
    )?;
    let options = phobos_runtime::Options {
        workgroup_size: candidate.workgroup_size,
        ..options
    };
    let secs = if first.backend == Backend::Gpu {
        let gpu = Gpu::shared()?;
        let prepared =
            gpu.prepare_with(&kernel, &args, options.precision, options.workgroup_size)?;
        time_passes(gpu, a.runs.max(1) as u32, 0.5, |enc, ts| {
            prepared.encode(enc, ts)
        })?
    } else {
        let mut secs = Vec::with_capacity(a.runs.max(1));
        for _ in 0..a.runs.max(1) {
            let t = Instant::now();
            phobos_runtime::launch(&kernel, &mut args, &options)?;
            secs.push(t.elapsed().as_secs_f64());
        }
        secs.sort_by(f64::total_cmp);
        secs
    };
    let times = Times::new(secs, bytes);
    let mut report = json!({
        "kernel": name,
        "backend": first.backend.name(),
        "device": first.device,
        "precision": first.precision.name(),
        "timing": if first.backend == Backend::Gpu { "gpu timestamps" } else { "wall clock" },
        "threads": first.threads,
        "config": first.config.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "workgroup_size": first.workgroup_size,
        "tuning": first.tuning.to_json(),
        "compile_ms": first.compile_ms,
        "lowering": first.lowering,
    });
    times.add_to(&mut report);
    if a.run.explain {
        report["plan"] = json!(first.plan);
    }
    if a.run.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let on = if first.backend == Backend::Gpu {
            format!(
                "gpu ({}, {} mode, GPU timestamps)",
                first.device,
                first.precision.name()
            )
        } else {
            format!(
                "{} ({} thread{})",
                first.backend.name(),
                first.threads,
                if first.threads == 1 { "" } else { "s" }
            )
        };
        let chosen = phobos_runtime::tune::Candidate {
            config: first.config.clone(),
            workgroup_size: first.workgroup_size,
        };
        println!(
            "{name} [{}; {}] on {on}: {}{})",
            chosen.describe(),
            crate::tune::describe(&first.tuning),
            times.summary(),
            first
                .compile_ms
                .map_or(String::new(), |ms| format!(", compiled in {ms:.2} ms")),
        );
        if a.run.explain {
            print!("{}", crate::run::explained(&first));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `bench --devices`: a warm-up split launch (which compiles on every
/// device), then `--runs` split launches timed by the wall clock, uploads
/// and read-backs included (each device's own time is in the report, from
/// the last launch).
#[allow(clippy::too_many_arguments)]
fn bench_split(
    a: &BenchArgs,
    program: &phobos_core::Program,
    name: &str,
    kernel: phobos_core::ir::Kernel,
    args: &mut [Arg],
    options: &phobos_runtime::Options,
    devices: &[phobos_runtime::split::DeviceSpec],
    bytes: usize,
) -> Result<ExitCode> {
    let (kernel, first, _) =
        crate::devices::launch(&a.run, program, name, kernel, args, options, devices)?;
    let measured;
    let devices = if a.measured_weights {
        // Measured on a launch after the warm-up, whose first dispatches
        // may include a driver's compilation.
        let probe = phobos_runtime::split::launch_split(&kernel, args, options, devices)?;
        measured = probe.measured_weights(devices);
        // Once more at the new weights, so that their parts are compiled.
        phobos_runtime::split::launch_split(&kernel, args, options, &measured)?;
        &measured[..]
    } else {
        devices
    };
    let mut secs = Vec::with_capacity(a.runs.max(1));
    let mut last = None;
    for _ in 0..a.runs.max(1) {
        let t = Instant::now();
        let run = phobos_runtime::split::launch_split(&kernel, args, options, devices)?;
        secs.push(t.elapsed().as_secs_f64());
        last = Some(run);
    }
    let last = last.expect("at least one run");
    let times = Times::new(secs, bytes);
    // The kernels alone, each device timed by itself.
    let kernels =
        phobos_runtime::split::time_split(&kernel, args, options, devices, a.runs.max(1) as u32)?;
    let kernels_s = kernels.seconds();
    if a.run.json {
        let mut report = json!({
            "kernel": name,
            "backend": "split",
            "device": first.device,
            "precision": first.precision.name(),
            "timing": "wall clock, uploads and read-backs included",
            "config": first.config.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "tuning": first.tuning.to_json(),
            "split": last.json(),
            "kernels": {
                "timing": "each device alone; the split's time is the slowest device's",
                "median_ms": kernels_s * 1e3,
                "median_gib_s": times.gib(kernels_s),
                "devices": kernels.parts.iter().map(|p| json!({
                    "device": p.device.to_string(),
                    "blocks": [p.blocks.start, p.blocks.end],
                    "median_ms": p.median() * 1e3,
                    "timing": p.timing,
                })).collect::<Vec<_>>(),
            },
        });
        times.add_to(&mut report);
        if a.run.explain {
            report["plan"] = serde_json::Value::Null;
        }
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{name} [{}] on {} (wall clock, uploads and read-backs included): {})",
            phobos_runtime::tune::Candidate {
                config: first.config.clone(),
                workgroup_size: None,
            }
            .describe(),
            first.device,
            times.summary(),
        );
        for line in crate::devices::lines(&last) {
            println!("  {line}");
        }
        println!(
            "kernels alone (each device timed by itself; the split takes the slowest's): {:.3} ms, {:.2} GiB/s",
            kernels_s * 1e3,
            times.gib(kernels_s)
        );
        for p in &kernels.parts {
            println!(
                "  {}: blocks {}..{}, median {:.3} ms ({})",
                p.device,
                p.blocks.start,
                p.blocks.end,
                p.median() * 1e3,
                p.timing
            );
        }
        if a.run.explain {
            print!("{}", crate::run::explained(&first));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A bench's launch times over `bytes` read plus written, fastest first.
struct Times {
    secs: Vec<f64>,
    bytes: usize,
}

impl Times {
    fn new(mut secs: Vec<f64>, bytes: usize) -> Times {
        secs.sort_by(f64::total_cmp);
        Times { secs, bytes }
    }

    fn median(&self) -> f64 {
        self.secs[self.secs.len() / 2]
    }

    fn fastest(&self) -> f64 {
        self.secs[0]
    }

    /// GiB/s of the bytes in `s` seconds.
    fn gib(&self, s: f64) -> f64 {
        self.bytes as f64 / s / (1u64 << 30) as f64
    }

    /// Adds `bytes`, `runs`, the median's and the fastest's ms and GiB/s
    /// to the JSON object `report`.
    fn add_to(&self, report: &mut serde_json::Value) {
        let (median, fastest) = (self.median(), self.fastest());
        if let Some(map) = report.as_object_mut() {
            for (k, v) in [
                ("bytes", json!(self.bytes)),
                ("runs", json!(self.secs.len())),
                ("median_ms", json!(median * 1e3)),
                ("fastest_ms", json!(fastest * 1e3)),
                ("median_gib_s", json!(self.gib(median))),
                ("fastest_gib_s", json!(self.gib(fastest))),
            ] {
                map.insert(k.into(), v);
            }
        }
    }

    /// `median … ms, … GiB/s; fastest … ms, … GiB/s (N bytes, R runs`,
    /// left open for the caller's last words.
    fn summary(&self) -> String {
        let (median, fastest) = (self.median(), self.fastest());
        format!(
            "median {:.3} ms, {:.2} GiB/s; fastest {:.3} ms, {:.2} GiB/s ({} bytes, {} runs",
            median * 1e3,
            self.gib(median),
            fastest * 1e3,
            self.gib(fastest),
            self.bytes,
            self.secs.len()
        )
    }
}
