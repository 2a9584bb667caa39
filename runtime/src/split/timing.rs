//! A split launch's kernels timed alone, without the uploads, read-backs
//! and gather that a whole split launch's wall clock includes: what
//! `phobosc bench --devices` reports beside it, and what a scaling
//! measurement needs.
//!
//! Each device's part is prepared once (its slabs uploaded, its pipeline
//! built) and then run `runs` times: a GPU's timed by the device's
//! timestamps where it has them ([`crate::gpu::time_passes`], after half a
//! second of warm-up launches), else by the wall clock from submission to
//! completion; a CPU's by the wall clock, on its own copy of the
//! arguments. Devices are timed one after another, each alone, so the
//! split's time is the slowest device's: right for devices on separate
//! hardware, which run at once without sharing anything; devices that
//! share hardware (`0,0` on one GPU, lavapipe beside `cpu`) would share it
//! in a real launch, so for them it is a lower bound.

use super::devices::{DeviceKind, DeviceSpec, open};
use super::run::{failed, plan, prepare_gpu};
use super::{DevicesError, SplitError};
use crate::Options;
use phobos_core::ir::Kernel;
use phobos_core::launch::Arg;
use std::ops::Range;
use std::time::Instant;

/// One device's kernel times.
#[derive(Clone, Debug, PartialEq)]
pub struct PartTiming {
    pub device: DeviceKind,
    /// The blocks it ran, along the split axis.
    pub blocks: Range<u64>,
    /// Seconds of each run, sorted (empty for a device without blocks).
    pub seconds: Vec<f64>,
    /// `gpu timestamps` or `wall clock`.
    pub timing: &'static str,
}

impl PartTiming {
    /// The median run, in seconds (0 without runs).
    pub fn median(&self) -> f64 {
        self.seconds
            .get(self.seconds.len() / 2)
            .copied()
            .unwrap_or(0.0)
    }
}

/// Every device's kernel times, in `--devices` order.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitTiming {
    pub parts: Vec<PartTiming>,
}

impl SplitTiming {
    /// The split's kernel time: the slowest device's median (module doc).
    pub fn seconds(&self) -> f64 {
        self.parts
            .iter()
            .map(PartTiming::median)
            .fold(0.0, f64::max)
    }
}

/// Times `kernel`'s parts on `devices` over `args`, `runs` times each
/// (module doc). The arguments are left as they were.
pub fn time_split(
    kernel: &Kernel,
    args: &mut [Arg],
    options: &Options,
    devices: &[DeviceSpec],
    runs: u32,
) -> Result<SplitTiming, SplitError> {
    if devices.is_empty() {
        return Err(DevicesError("a split needs at least one device".to_string()).into());
    }
    let gpus = open(devices)?;
    let plan = plan(kernel, args, devices)?;
    let runs = runs.max(1);
    let mut parts = Vec::new();
    for (i, g) in gpus.iter().enumerate() {
        let blocks = plan.ranges[i].clone();
        let mut part = PartTiming {
            device: devices[i].kind,
            blocks: blocks.clone(),
            seconds: Vec::new(),
            timing: "wall clock",
        };
        if blocks.is_empty() {
            parts.push(part);
            continue;
        }
        let prepared = match g {
            Some(g) => match prepare_gpu(kernel, args, options, &plan, devices, (i, g))? {
                Ok((p, _)) => Some((g, p)),
                Err(_) => None,
            },
            None => None,
        };
        match prepared {
            Some((g, p)) => {
                let timed = crate::gpu::time_passes(g, runs, 0.5, |enc, ts| p.encode(enc, ts));
                (part.seconds, part.timing) = match timed {
                    Ok(s) => (s, "gpu timestamps"),
                    Err(_) => (
                        wall(runs, || {
                            let mut enc = g.device().create_command_encoder(&Default::default());
                            p.encode(&mut enc, None);
                            g.queue().submit([enc.finish()]);
                            g.wait().map_err(crate::RuntimeError::from)
                        })
                        .map_err(|e| failed(devices, i, e))?,
                        "wall clock",
                    ),
                };
            }
            None => {
                let mut own = args.to_vec();
                let threads = options.threads;
                let mut once = || {
                    phobos_cpu::run_blocks(
                        kernel,
                        &mut own,
                        threads,
                        Some((plan.axis, blocks.clone())),
                    )
                    .map(|_| ())
                    .map_err(|e| crate::RuntimeError::Compile(e.to_string()))
                };
                // The first run compiles.
                once().map_err(|e| failed(devices, i, e))?;
                part.seconds = wall(runs, once).map_err(|e| failed(devices, i, e))?;
            }
        }
        parts.push(part);
    }
    Ok(SplitTiming { parts })
}

/// `runs` calls of `f`, each timed by the wall clock, sorted.
fn wall(
    runs: u32,
    mut f: impl FnMut() -> Result<(), crate::RuntimeError>,
) -> Result<Vec<f64>, crate::RuntimeError> {
    let mut out = Vec::with_capacity(runs as usize);
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        out.push(t.elapsed().as_secs_f64());
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}
