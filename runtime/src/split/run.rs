//! Running a split launch: every device's blocks at once, then the
//! slabs they wrote gathered into the caller's tensors, all or nothing.
//!
//! Order of work, so that the host's tensors are read before anyone
//! writes them and written only once every device has finished:
//!
//! 1. each GPU is handed its part ([`super::part::part_kernel`]) and sent
//!    the slabs of the inputs its blocks read (every input read otherwise,
//!    whole) and of the outputs they write ([`super::writes::read_slabs`],
//!    [`super::writes::slabs`]), which are all its buffers hold of them; a
//!    refusal here names the device and nothing has run;
//! 2. each GPU waits for its part and reads back its slabs, on a thread of
//!    its own; each CPU device after the first runs its blocks on a copy of
//!    the arguments, on a thread of its own; the first CPU device runs its
//!    blocks in the caller's tensors, having kept what its slabs held;
//! 3. if any device failed, the first CPU device's slabs are put back and
//!    the error names the first device (in `--devices` order) that failed;
//!    else every other device's slabs are written into the caller's
//!    tensors.

use super::devices::{DeviceKind, DeviceSpec};
use super::part::{Slice, part_kernel};
use super::ranges::weighted;
use super::slab_io::{Piece, byte_span, gather, place, segments, slab_segments};
use super::writes::{Slab, read_slabs, slabs, split_axis};
use super::{PartRun, SplitError, SplitRun};
use crate::gpu::{Gpu, GpuError, Prepared};
use crate::{Backend, Options, Provenance, RuntimeError};
use phobos_core::ir::Kernel;
use phobos_core::launch::{Arg, bind};
use phobos_core::tensor::Tensor;
use std::ops::Range;
use std::time::Instant;

/// What one device made: a piece per slab, and its times.
struct Done {
    pieces: Vec<Piece>,
    ms: f64,
    compile_ms: Option<f64>,
    threads: usize,
    notes: Vec<String>,
    workgroup_size: Option<u32>,
}

/// What a split decides before anything runs: the grid axis, each
/// device's blocks, and the slabs of the outputs and inputs.
pub(super) struct Plan {
    pub bound: phobos_core::launch::Bound,
    pub axis: u8,
    pub whole: u64,
    pub ranges: Vec<Range<u64>>,
    pub slabs: Vec<Slab>,
    pub reads: Vec<Option<Slab>>,
}

/// The plan of `kernel` over `args` on `specs`, or why it cannot split.
pub(super) fn plan(
    kernel: &Kernel,
    args: &[Arg],
    specs: &[DeviceSpec],
) -> Result<Plan, SplitError> {
    let bound = bind(kernel, args).map_err(SplitError::Launch)?;
    let axis = split_axis(bound.grid);
    let whole = bound.grid[usize::from(axis)];
    let weights: Vec<f64> = specs.iter().map(|s| s.weight).collect();
    let ranges = weighted(whole, &weights);
    let slabs = slabs(kernel, &bound, axis, &ranges).map_err(SplitError::Refused)?;
    let reads = read_slabs(kernel, &bound, axis, &ranges);
    Ok(Plan {
        bound,
        axis,
        whole,
        ranges,
        slabs,
        reads,
    })
}

/// Device `i`'s error, naming it.
pub(super) fn failed(specs: &[DeviceSpec], i: usize, error: RuntimeError) -> SplitError {
    SplitError::Device {
        index: i,
        device: specs[i].kind.to_string(),
        error: Box::new(error),
    }
}

/// GPU `g`, device `i`, handed its part and sent its slabs; `None` where
/// its workgroup memory cannot hold the kernel's tiles (the note says so,
/// and the CPU backend runs its blocks instead, with the same bits, as a
/// launch on one GPU does).
#[allow(clippy::type_complexity)]
pub(super) fn prepare_gpu(
    kernel: &Kernel,
    args: &mut [Arg],
    options: &Options,
    plan: &Plan,
    specs: &[DeviceSpec],
    (i, g): (usize, &Gpu),
) -> Result<Result<(Prepared, Vec<Slice>), String>, SplitError> {
    let r = &plan.ranges[i];
    let cuts = slices(args, &plan.slabs, &plan.reads, i);
    let blocks = (r.start, r.end - r.start, plan.whole);
    let part = part_kernel(kernel, plan.axis, blocks, &plan.bound.dims, &cuts);
    // The rewrite keeps the IR's invariants, or it is a bug here and
    // nothing runs.
    let errors = phobos_core::ir::verify(&part);
    if let Some(e) = errors.first() {
        return Err(failed(
            specs,
            i,
            RuntimeError::Compile(format!(
                "internal error: the part of `{}` for this device does not verify \
                 ({} errors; {}: {})",
                kernel.name,
                errors.len(),
                e.entity,
                e.message
            )),
        ));
    }
    let w = tuned_size(g, options);
    let prepared = with_slabs(args, &cuts, |part_args| {
        g.prepare_with(&part, part_args, options.precision, w)
    });
    match prepared {
        Ok(p) => Ok(Ok((p, cuts))),
        Err(RuntimeError::Gpu(GpuError::WorkgroupMemory(why))) => Ok(Err(format!(
            "device {i} ({}): its blocks ran on the CPU backend instead (same bits): {why}",
            specs[i].kind
        ))),
        Err(e) => Err(failed(specs, i, e)),
    }
}

pub(super) fn run(
    kernel: &Kernel,
    args: &mut [Arg],
    options: &Options,
    specs: &[DeviceSpec],
    gpus: &[Option<&'static Gpu>],
    injected: Option<usize>,
) -> Result<SplitRun, SplitError> {
    let plan = plan(kernel, args, specs)?;
    let (bound, axis, ranges, slabs) = (&plan.bound, plan.axis, &plan.ranges, &plan.slabs);
    let names: Vec<String> = (specs.iter().zip(gpus))
        .map(|(s, g)| match g {
            Some(g) => format!("{} {}", s.kind, g.describe()),
            None => format!("cpu host CPU ({}, Cranelift JIT)", std::env::consts::ARCH),
        })
        .collect();
    let failed = |i: usize, error: RuntimeError| failed(specs, i, error);
    let cpus: Vec<usize> = (0..specs.len())
        .filter(|&i| specs[i].kind == DeviceKind::Cpu && !ranges[i].is_empty())
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu_threads = options
        .threads
        .unwrap_or((cores / cpus.len().max(1)).max(1));

    // 1. Uploads and pipelines, in order. A GPU whose workgroup memory
    // cannot hold the kernel's tiles has its blocks run by the CPU backend
    // instead, with the same bits, as a launch on one GPU does.
    let mut prepared: Vec<Option<(Prepared, Vec<Slice>)>> = Vec::new();
    let mut on_cpu_instead = Vec::new();
    let mut notes = Vec::new();
    for (i, g) in gpus.iter().enumerate() {
        let p = match g {
            Some(g) if !ranges[i].is_empty() => {
                match prepare_gpu(kernel, args, options, &plan, specs, (i, g))? {
                    Ok(p) => Some(p),
                    Err(note) => {
                        notes.push(note);
                        on_cpu_instead.push(i);
                        None
                    }
                }
            }
            _ => None,
        };
        prepared.push(p);
    }
    // The other CPU devices' own arguments.
    let mut copies: Vec<(usize, Vec<Arg>)> = (cpus.iter().skip(1).chain(&on_cpu_instead))
        .map(|&i| (i, args.to_vec()))
        .collect();

    // 2. Every device at once.
    let shapes = shapes_of(args);
    let in_place = cpus.first().copied();
    let mut kept: Vec<Piece> = Vec::new();
    let mut results: Vec<Option<Result<Done, RuntimeError>>> =
        (0..specs.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (i, p) in prepared.iter().enumerate() {
            let (Some((p, cuts)), Some(g)) = (p, gpus[i]) else {
                continue;
            };
            let (slabs, shapes) = (&slabs, &shapes);
            handles.push((
                i,
                s.spawn(move || gpu_part(g, kernel, p, cuts, slabs, i, shapes)),
            ));
        }
        for (i, own) in copies.iter_mut() {
            let (i, slabs) = (*i, &slabs);
            let range = ranges[i].clone();
            handles.push((
                i,
                s.spawn(move || cpu_part(kernel, own, cpu_threads, axis, range, slabs, i)),
            ));
        }
        if let Some(i) = in_place {
            kept = slabs
                .iter()
                .map(|slab| {
                    let Arg::Tensor(t) = &args[slab.param] else {
                        unreachable!("slabs are of tensors")
                    };
                    Piece::Elements(gather(&t.data, &slab_segments(slab, t, i)))
                })
                .collect();
            let started = Instant::now();
            let ran = phobos_cpu::run_blocks(
                kernel,
                args,
                Some(cpu_threads),
                Some((axis, ranges[i].clone())),
            );
            results[i] = Some(
                ran.map(|info| Done {
                    pieces: Vec::new(),
                    ms: (started.elapsed().as_secs_f64() * 1e3 - cpu_compile_ms(&info)).max(0.0),
                    compile_ms: Some(cpu_compile_ms(&info)),
                    threads: info.threads,
                    notes: Vec::new(),
                    workgroup_size: None,
                })
                .map_err(cpu_error),
            );
        }
        for (i, h) in handles {
            results[i] = Some(h.join().unwrap_or_else(|_| {
                Err(RuntimeError::Compile(format!(
                    "device {i} of the split panicked"
                )))
            }));
        }
    });
    if let Some(i) = injected
        && let Some(Some(Ok(_))) = results.get(i)
    {
        results[i] = Some(Err(RuntimeError::Compile(
            "a failure injected for tests (PHOBOS_SPLIT_FAIL)".to_string(),
        )));
    }

    // 3. All or nothing.
    if let Some(i) = (0..specs.len()).find(|&i| matches!(results[i], Some(Err(_)))) {
        if let Some(c) = in_place {
            for (slab, piece) in slabs.iter().zip(&kept) {
                let Arg::Tensor(t) = &mut args[slab.param] else {
                    unreachable!("slabs are of tensors")
                };
                let segs = slab_segments(slab, t, c);
                place(t, &segs, piece);
            }
        }
        let Some(Err(e)) = results[i].take() else {
            unreachable!("found as an error")
        };
        return Err(failed(i, e));
    }
    let mut parts = Vec::new();
    for (i, result) in results.into_iter().enumerate() {
        let done = result.and_then(Result::ok);
        if let Some(d) = &done
            && Some(i) != in_place
        {
            for (slab, piece) in slabs.iter().zip(&d.pieces) {
                let Arg::Tensor(t) = &mut args[slab.param] else {
                    unreachable!("slabs are of tensors")
                };
                let segs = slab_segments(slab, t, i);
                place(t, &segs, piece);
            }
        }
        if let Some(d) = &done {
            for n in &d.notes {
                if !notes.contains(n) {
                    notes.push(n.clone());
                }
            }
        }
        parts.push(PartRun {
            device: specs[i].kind,
            name: names[i].clone(),
            weight: specs[i].weight,
            blocks: ranges[i].clone(),
            ms: done.as_ref().map_or(0.0, |d| d.ms),
            compile_ms: done.as_ref().and_then(|d| d.compile_ms),
            threads: done.as_ref().map_or(0, |d| d.threads),
            workgroup_size: done.as_ref().and_then(|d| d.workgroup_size),
        });
    }
    let any_gpu = gpus.iter().any(Option::is_some);
    Ok(SplitRun {
        provenance: Provenance {
            backend: if any_gpu { Backend::Gpu } else { Backend::Cpu },
            device: format!(
                "split over {} devices along ctx.block.{}: {}",
                specs.len(),
                ["x", "y", "z"][usize::from(axis)],
                specs
                    .iter()
                    .map(|s| s.kind.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            threads: parts.iter().map(|p| p.threads).sum::<usize>().max(1),
            precision: if any_gpu {
                options.precision
            } else {
                crate::Precision::Exact
            },
            config: kernel.config.clone(),
            bound: bound.clone(),
            compile_ms: parts.iter().filter_map(|p| p.compile_ms).reduce(f64::max),
            cache_hit: None,
            lowering: notes,
            workgroup_size: None,
            plan: None,
            tuning: crate::tune::Tuning::default(),
        },
        axis,
        parts,
    })
}

/// The workgroup size for a GPU of the split: `options.workgroup_size`
/// (the tuner's choice, made on the process's shared device) on a device of
/// the same adapter and driver, else the device's own heuristic's (`None`).
fn tuned_size(g: &Gpu, options: &Options) -> Option<u32> {
    let w = options.workgroup_size?;
    let shared = Gpu::shared().ok()?;
    let (a, b) = (g.info(), shared.info());
    let same = (a.name == b.name && a.vendor == b.vendor && a.device == b.device)
        && (a.backend == b.backend && a.driver_info == b.driver_info);
    (same && w <= g.max_workgroup_size()).then_some(w)
}

/// The tensors device `i` holds only a slab of: each output's slab of
/// its blocks' writes, and each input's of their reads where every load of
/// it follows the blocks (`writes::read_slabs`); a slab that is the whole
/// tensor (or a tensor of rank 0) is not cut. Every other tensor is sent
/// whole (a weight, a bias, one read through a loop variable).
fn slices(args: &[Arg], slabs: &[Slab], reads: &[Option<Slab>], i: usize) -> Vec<Slice> {
    let reads = reads.iter().flatten();
    (slabs.iter().chain(reads))
        .filter_map(|slab| {
            let Arg::Tensor(t) = &args[slab.param] else {
                return None;
            };
            let extent = *t.shape.get(slab.axis)? as u64;
            let part = &slab.parts[i];
            (part.start > 0 || part.end < extent).then_some(Slice {
                param: slab.param,
                axis: slab.axis,
                lo: part.start,
                extent: part.end - part.start,
            })
        })
        .collect()
}

/// Calls `f` with `args` in which each tensor of `cuts` is replaced by its
/// slab (a copy of those elements); the other tensors are moved in and back
/// out, not copied.
fn with_slabs<T>(args: &mut [Arg], cuts: &[Slice], f: impl FnOnce(&[Arg]) -> T) -> T {
    let mut part_args: Vec<Arg> = Vec::with_capacity(args.len());
    for (p, a) in args.iter_mut().enumerate() {
        part_args.push(match (a, cuts.iter().find(|c| c.param == p)) {
            (Arg::Tensor(t), Some(c)) => {
                let mut shape = t.shape.clone();
                shape[c.axis] = c.extent as usize;
                let segs = segments(&t.shape, c.axis, &(c.lo..c.lo + c.extent));
                Arg::Tensor(Tensor {
                    shape,
                    data: gather(&t.data, &segs),
                })
            }
            (Arg::Tensor(t), None) => {
                let placeholder = Tensor::zeros(t.elem(), &[0]);
                Arg::Tensor(std::mem::replace(t, placeholder))
            }
            (Arg::Scalar(v), _) => Arg::Scalar(*v),
        });
    }
    let result = f(&part_args);
    for (p, (a, moved)) in args.iter_mut().zip(part_args).enumerate() {
        if let (Arg::Tensor(t), Arg::Tensor(m)) = (a, moved)
            && !cuts.iter().any(|c| c.param == p)
        {
            *t = m;
        }
    }
    result
}

fn cpu_error(e: phobos_cpu::RunError) -> RuntimeError {
    match e {
        phobos_cpu::RunError::Launch(e) => RuntimeError::Launch(e),
        phobos_cpu::RunError::Compile(e) => RuntimeError::Compile(e.to_string()),
    }
}

/// The shapes of the arguments' tensors (`None` for scalars).
fn shapes_of(args: &[Arg]) -> Vec<Option<Vec<usize>>> {
    args.iter()
        .map(|a| match a {
            Arg::Tensor(t) => Some(t.shape.clone()),
            Arg::Scalar(_) => None,
        })
        .collect()
}

/// A GPU's part: dispatch, wait, and read back its slabs.
fn gpu_part(
    g: &Gpu,
    kernel: &Kernel,
    p: &Prepared,
    cuts: &[Slice],
    slabs: &[Slab],
    i: usize,
    shapes: &[Option<Vec<usize>>],
) -> Result<Done, RuntimeError> {
    let started = Instant::now();
    let mut encoder = g.device().create_command_encoder(&Default::default());
    p.encode(&mut encoder, None);
    g.queue().submit([encoder.finish()]);
    g.wait()?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let mut pieces = Vec::new();
    for slab in slabs {
        let name = &kernel.params[slab.param].name;
        let shape = shapes[slab.param].as_ref().expect("slabs are of tensors");
        let size = kernel
            .place_elem(phobos_core::ir::Place::Param(slab.param))
            .size();
        let segs = segments(shape, slab.axis, &slab.parts[i]);
        let buffer = p.buffer(slab.param).ok_or_else(|| {
            RuntimeError::Compile(format!("`{name}` has no buffer on the device"))
        })?;
        // A cut tensor's buffer holds its slab alone, in the order of the
        // segments.
        if cuts.iter().any(|c| c.param == slab.param) {
            let bytes = (segs.iter().map(|r| r.len()).sum::<usize>() * size) as u64;
            let bytes = g.read_range(buffer, 0..bytes, name)?;
            pieces.push(Piece::Packed(bytes));
            continue;
        }
        let Some(span) = byte_span(&segs, size) else {
            pieces.push(Piece::Bytes {
                first: 0,
                bytes: Vec::new(),
            });
            continue;
        };
        let bytes = g.read_range(buffer, span.clone(), name)?;
        pieces.push(Piece::Bytes {
            first: span.start as usize,
            bytes,
        });
    }
    Ok(Done {
        pieces,
        ms,
        compile_ms: Some(p.compile_ms),
        threads: 1,
        notes: p.notes.clone(),
        workgroup_size: Some(p.workgroup_size),
    })
}

/// A CPU device's part on its own copy of the arguments.
fn cpu_part(
    kernel: &Kernel,
    own: &mut [Arg],
    threads: usize,
    axis: u8,
    range: Range<u64>,
    slabs: &[Slab],
    i: usize,
) -> Result<Done, RuntimeError> {
    let started = Instant::now();
    let info = phobos_cpu::run_blocks(kernel, own, Some(threads), Some((axis, range)))
        .map_err(cpu_error)?;
    let ms = (started.elapsed().as_secs_f64() * 1e3 - cpu_compile_ms(&info)).max(0.0);
    let pieces = slabs
        .iter()
        .map(|slab| {
            let Arg::Tensor(t) = &own[slab.param] else {
                unreachable!("slabs are of tensors")
            };
            Piece::Elements(gather(&t.data, &slab_segments(slab, t, i)))
        })
        .collect();
    Ok(Done {
        pieces,
        ms,
        compile_ms: Some(cpu_compile_ms(&info)),
        threads: info.threads,
        notes: Vec::new(),
        workgroup_size: None,
    })
}

/// What compiling cost this run: nothing when the process's cache served it.
fn cpu_compile_ms(info: &phobos_cpu::RunInfo) -> f64 {
    if info.cache_hit { 0.0 } else { info.compile_ms }
}
