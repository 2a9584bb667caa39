//! One launch, or one fill, split across several devices, with the bits of
//! one (issue 32).
//!
//! A launch's blocks are independent of the device that computes them:
//! counters are logical indices, and every backend gives the
//! interpreter's bits. So a grid can be cut into contiguous ranges of
//! blocks along one axis ([`writes::split_axis`]), one range per device,
//! in proportion to the devices' weights ([`ranges::weighted`]); each
//! device runs the same kernel over its range ([`part::part_kernel`] on a
//! GPU, `phobos_cpu::run_blocks` on the CPU) and the slabs of the outputs
//! its blocks write ([`writes::slabs`]) are gathered into the caller's
//! tensors (`run.rs`). The result is the single-device result bit for bit
//! whenever the slabs of different devices are disjoint and no device reads
//! rows another writes; a kernel for which that cannot be shown is refused
//! before anything runs ([`SplitError::Refused`]).
//!
//! Stages, one module each:
//!
//! - `devices.rs`: `--devices` read ([`Devices::parse`]), checked against
//!   the adapters present ([`Devices::resolve`]) and opened, several
//!   devices on one adapter if named more than once ([`devices::open`]);
//! - `ranges.rs`: contiguous weighted ranges of blocks (or elements);
//! - `writes.rs`: which slab of each output a range of blocks writes (and
//!   of each input it reads), and the refusal of slabs that meet;
//! - `part.rs`: a GPU's part as a kernel of its own;
//! - `run.rs` and `slab_io.rs`: running the parts at once, all or nothing,
//!   and moving the slabs;
//! - `fill.rs`: a Tandem fill's elements cut the same way;
//! - `timing.rs`: each device's part timed alone, without transfers.
//!
//! What is copied: a GPU holds of each output only the slab its blocks
//! write, and of each input only the rows its blocks read, where every load
//! of it follows the blocks along one axis ([`writes::read_slabs`]); every
//! other input whole (a weight, a bias, a tensor read through a loop
//! variable). Its part addresses the slabs as tensors of their own
//! ([`part::part_kernel`]), so a device's memory follows its share. A CPU
//! device reads the host's tensors where they are (the first in place,
//! others from a copy). The `@autotune` configuration is one for every
//! device (the grid must be one grid); a GPU of the adapter the tuner
//! measured takes the tuner's workgroup size, any other its own
//! heuristic's.

pub mod devices;
pub mod fill;
mod part;
pub mod ranges;
mod run;
mod slab_io;
pub mod timing;
pub mod writes;

pub use devices::{DeviceKind, DeviceSpec, Devices, DevicesError};
pub use fill::{FillShare, SplitFill, fill};
pub use part::{Slice, part_kernel};
pub use timing::{PartTiming, SplitTiming, time_split};

use crate::{Options, Provenance, RuntimeError};
use phobos_core::ir::Kernel;
use phobos_core::launch::{Arg, LaunchError};
use std::fmt;
use std::ops::Range;

/// One device's share of a split launch, for provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct PartRun {
    pub device: DeviceKind,
    /// The device as `phobosc run` prints it: `gpu0 llvmpipe (...)`.
    pub name: String,
    pub weight: f64,
    /// The blocks it ran, along the split axis ([`SplitRun::axis`]).
    pub blocks: Range<u64>,
    /// Milliseconds computing its blocks: on a GPU, the dispatch and the
    /// wait (the upload before and the read-back after are not in it); on
    /// the CPU, the run less its compilation.
    pub ms: f64,
    /// Milliseconds compiling its kernel (0 when cached).
    pub compile_ms: Option<f64>,
    /// CPU threads it used (1 for a GPU).
    pub threads: usize,
    /// Invocations per workgroup, on a GPU.
    pub workgroup_size: Option<u32>,
}

/// What a split launch did.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitRun {
    /// The launch as a whole: the bound grid and dims, the configuration,
    /// the devices in `device`, the GPUs' lowering notes.
    pub provenance: Provenance,
    /// The grid axis the blocks were cut along (0 for `x`).
    pub axis: u8,
    /// Every device in `--devices` order, with its range and time.
    pub parts: Vec<PartRun>,
}

impl SplitRun {
    /// The devices as JSON, each with its blocks, weight and times: the
    /// `split` of `phobosc run --json` and of Python's `Run.provenance`.
    pub fn json(&self) -> serde_json::Value {
        let axis = ["x", "y", "z"][usize::from(self.axis)];
        let devices: Vec<serde_json::Value> = self
            .parts
            .iter()
            .map(|p| {
                serde_json::json!({
                    "device": p.device.to_string(),
                    "name": p.name,
                    "weight": p.weight,
                    "blocks": [p.blocks.start, p.blocks.end],
                    "ms": p.ms,
                    "compile_ms": p.compile_ms,
                    "threads": p.threads,
                    "workgroup_size": p.workgroup_size,
                })
            })
            .collect();
        serde_json::json!({ "axis": axis, "devices": devices })
    }

    /// `devices` (this run's, in its order) weighted by the speed this run
    /// measured, blocks per millisecond, so that a next launch gives each
    /// device a share it finishes in about the same time. A device that ran
    /// no blocks, or too fast to time, keeps its weight scaled to the
    /// others' mean, so that it is tried again.
    pub fn measured_weights(&self, devices: &[DeviceSpec]) -> Vec<DeviceSpec> {
        let speed = |p: &PartRun| {
            let blocks = (p.blocks.end - p.blocks.start) as f64;
            (blocks > 0.0 && p.ms > 1e-3).then(|| blocks / p.ms)
        };
        let known: Vec<(f64, f64)> = (self.parts.iter().zip(devices))
            .filter_map(|(p, d)| speed(p).map(|s| (s, d.weight)))
            .collect();
        // Blocks per millisecond for each unit of declared weight.
        let per_weight = if known.is_empty() {
            1.0
        } else {
            known.iter().map(|(s, w)| s / w).sum::<f64>() / known.len() as f64
        };
        (self.parts.iter().zip(devices))
            .map(|(p, d)| DeviceSpec {
                kind: d.kind,
                weight: speed(p).unwrap_or(d.weight * per_weight),
            })
            .collect()
    }
}

#[derive(Debug)]
pub enum SplitError {
    /// `--devices` does not parse, names an adapter that is not there, or a
    /// device would not open.
    Devices(DevicesError),
    /// The arguments do not bind to the kernel.
    Launch(LaunchError),
    /// The kernel's writes cannot be shown to follow its blocks, so a split
    /// might not give one device's bits; nothing ran.
    Refused(String),
    /// Device `index` of the list (`device`, as `gpu0` or `cpu`) failed;
    /// the caller's tensors are as they were before the launch.
    Device {
        index: usize,
        device: String,
        error: Box<RuntimeError>,
    },
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::Devices(e) => write!(f, "{e}"),
            SplitError::Launch(e) => write!(f, "{e}"),
            SplitError::Refused(why) => write!(f, "cannot split this launch: {why}"),
            SplitError::Device {
                index,
                device,
                error,
            } => write!(
                f,
                "device {index} of the split ({device}) failed, so no results were kept: {error}"
            ),
        }
    }
}

impl std::error::Error for SplitError {}

impl From<DevicesError> for SplitError {
    fn from(e: DevicesError) -> Self {
        SplitError::Devices(e)
    }
}

/// Runs `kernel` over `args` split across `devices` (module doc); the
/// tensors it stores hold the results afterwards, the same bits as on one
/// device. `options.precision` and `options.threads` (each CPU device's
/// threads; default: the cores shared among them) apply; `backend` does
/// not (each device is its own backend); `workgroup_size`, the tuner's
/// choice on the process's shared GPU, applies to the devices of that
/// adapter, and the others take their own heuristic's. Every device is checked and
/// opened, and the split checked, before anything runs; a device that
/// fails afterwards fails the launch, naming it, and leaves `args` as
/// they were.
pub fn launch_split(
    kernel: &Kernel,
    args: &mut [Arg],
    options: &Options,
    devices: &[DeviceSpec],
) -> Result<SplitRun, SplitError> {
    if devices.is_empty() {
        return Err(DevicesError("a split needs at least one device".to_string()).into());
    }
    let injected = std::env::var("PHOBOS_SPLIT_FAIL")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    launch_split_failing(kernel, args, options, devices, injected)
}

/// [`launch_split`] with device `fail` (by its place in `devices`) failing
/// once its blocks have run, as a device lost mid-run would: for tests of
/// the all-or-nothing rule. `PHOBOS_SPLIT_FAIL=<index>` makes
/// [`launch_split`] do the same (for tests of `phobosc`).
#[doc(hidden)]
pub fn launch_split_failing(
    kernel: &Kernel,
    args: &mut [Arg],
    options: &Options,
    devices: &[DeviceSpec],
    fail: Option<usize>,
) -> Result<SplitRun, SplitError> {
    if devices.is_empty() {
        return Err(DevicesError("a split needs at least one device".to_string()).into());
    }
    let gpus = devices::open(devices)?;
    run::run(kernel, args, options, devices, &gpus, fail)
}
