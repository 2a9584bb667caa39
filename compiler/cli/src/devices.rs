//! `--devices` on `run`, `bench` and `fill`: the list read and checked
//! against this machine's adapters before anything runs, a launch split
//! across it (`phobos_runtime::split`), and the lines and JSON that say
//! which device ran which blocks in what time.

use crate::run::RunArgs;
use anyhow::{Result, anyhow};
use phobos_core::Program;
use phobos_core::ir::Kernel;
use phobos_core::launch::Arg;
use phobos_runtime::split::{DeviceKind, DeviceSpec, Devices, SplitRun, launch_split};
use phobos_runtime::{Backend, Options, Provenance};

/// The devices `--devices TEXT` names here; an adapter that is not there
/// is an error naming it and listing those that are.
pub fn resolve(text: &str) -> Result<Vec<DeviceSpec>> {
    let devices = Devices::parse(text).map_err(|e| anyhow!("{e}"))?;
    devices.resolve().map_err(|e| anyhow!("{e}"))
}

/// Launches `kernel` as `run` does (the configuration of `--config`, else
/// the tuner's or the heuristic's, chosen on the first device's backend)
/// split across `devices`. The configuration is one for every device,
/// since the blocks are cut from one grid.
pub fn launch(
    a: &RunArgs,
    program: &Program,
    name: &str,
    kernel: Kernel,
    args: &mut [Arg],
    options: &Options,
    devices: &[DeviceSpec],
) -> Result<(Kernel, Provenance, SplitRun)> {
    let first = Options {
        backend: match devices.first().map(|d| d.kind) {
            Some(DeviceKind::Gpu(_)) => Backend::Gpu,
            _ => Backend::Cpu,
        },
        ..options.clone()
    };
    let (candidate, tuning) = crate::tune::choose(a, program, name, &kernel, args, &first)?;
    let kernel = if candidate.config == kernel.config {
        kernel
    } else {
        program
            .kernel(name, &candidate.config)
            .map_err(|d| anyhow!("`{name}` in {}: {:?}", candidate.describe(), d.first()))?
    };
    // The tuner's workgroup size, for the devices of the adapter it measured.
    let options = Options {
        workgroup_size: candidate.workgroup_size,
        ..options.clone()
    };
    let mut run = phobos_runtime::phases::scoped("launch", || {
        launch_split(&kernel, args, &options, devices)
    })?;
    run.provenance.tuning = tuning;
    let prov = run.provenance.clone();
    Ok((kernel, prov, run))
}

/// One line per device: `device     gpu0 llvmpipe (...): blocks 0..5 of 10 (x), 1.23 ms`.
pub fn lines(run: &SplitRun) -> Vec<String> {
    let axis = ["x", "y", "z"][usize::from(run.axis)];
    let whole = run.provenance.bound.grid[usize::from(run.axis)];
    run.parts
        .iter()
        .map(|p| {
            format!(
                "device     {}: blocks {}..{} of {whole} along ctx.block.{axis} (weight {}{}), {:.2} ms{}",
                p.name,
                p.blocks.start,
                p.blocks.end,
                p.weight,
                p.workgroup_size
                    .map_or(String::new(), |w| format!(", workgroup {w}")),
                p.ms,
                p.compile_ms
                    .filter(|ms| *ms > 0.0)
                    .map_or(String::new(), |ms| format!(" after {ms:.2} ms compiling")),
            )
        })
        .collect()
}
