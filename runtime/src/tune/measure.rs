//! Timing configurations: compiled in parallel, then launched in
//! interleaved rounds after a warm-up, each one's median kept.
//!
//! On the GPU the arguments are uploaded once and every configuration is
//! bound to the same buffers ([`Gpu::prepare_on`]); each launch is timed
//! by GPU timestamps around its pass (wall time on a device without
//! them). On the CPU each round launches every configuration on the
//! host's tensors and takes its wall time. Rounds start one configuration
//! further along each time, so none always runs first after a pause.

use super::{Outcome, Step};
use crate::gpu::{Gpu, GpuArg, time_rounds};
use crate::{Precision, RuntimeError};
use phobos_core::ir::{Kernel, ParamKind};
use phobos_core::launch::Arg;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Timed rounds, of which the median is kept.
const ROUNDS: u32 = 7;
/// Fewer rounds when one launch took longer than this many seconds in the
/// warm-up: 3 rounds of a 0.2 s launch already take 0.6 s per configuration.
const SLOW_S: f64 = 0.05;
const SLOW_ROUNDS: u32 = 3;
/// The least time spent warming up (whole rounds, untimed): a GPU that was
/// idle runs slowly until its clocks come back up.
const WARM_UP_S: f64 = 0.1;

/// One configuration to time.
pub(super) struct Job<'k> {
    pub kernel: &'k Kernel,
    pub workgroup_size: Option<u32>,
}

/// Runs `f` on every job, on up to one thread per core, and returns the
/// results in order; `progress` hears of each one as it finishes. A job
/// that panics (a compiler bug) is an `Err` naming the panic, so that one
/// configuration cannot bring the tune down.
fn in_parallel<T: Send>(
    jobs: &[Job],
    f: impl Fn(&Job) -> T + Sync,
    progress: &mut dyn FnMut(Step),
) -> Vec<Result<T, String>> {
    let total = jobs.len();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<T, String>>>> =
        Mutex::new((0..total).map(|_| None).collect());
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(total)
        .max(1);
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, results, f) = (&next, &results, &f);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        break;
                    }
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&jobs[i])))
                        .map_err(|p| {
                            let why = p
                                .downcast_ref::<String>()
                                .map(String::as_str)
                                .or_else(|| p.downcast_ref::<&str>().copied())
                                .unwrap_or("a panic");
                            format!("internal compiler error (please report it): {why}")
                        });
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                    let _ = tx.send(());
                }
            });
        }
        drop(tx);
        let mut done = 0;
        while rx.recv().is_ok() {
            done += 1;
            progress(Step::Compiled { done, total });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

fn median(secs: &mut [f64]) -> f64 {
    secs.sort_by(f64::total_cmp);
    secs[secs.len() / 2]
}

/// Times each job on the GPU over `args` (uploaded once, never read back).
pub(super) fn gpu(
    gpu: &Gpu,
    jobs: &[Job],
    args: &[Arg],
    precision: Precision,
    progress: &mut dyn FnMut(Step),
) -> Result<Vec<Outcome>, RuntimeError> {
    let kernel = jobs[0].kernel;
    let mut buffers = Vec::new();
    for (p, a) in kernel.params.iter().zip(args) {
        buffers.push(match a {
            Arg::Tensor(t) => Some(gpu.upload(&p.name, t)?),
            Arg::Scalar(_) => None,
        });
    }
    let gpu_args: Vec<GpuArg> = args
        .iter()
        .zip(&buffers)
        .map(|(a, b)| match (a, b) {
            (Arg::Tensor(t), Some(buffer)) => GpuArg::Tensor {
                buffer,
                elem: t.elem(),
                shape: &t.shape,
            },
            (Arg::Scalar(v), _) => GpuArg::Scalar(*v),
            (Arg::Tensor(_), None) => unreachable!("every tensor was uploaded"),
        })
        .collect();
    let prepared: Vec<Result<_, String>> = in_parallel(
        jobs,
        |j| gpu.prepare_on(j.kernel, &gpu_args, precision, j.workgroup_size),
        progress,
    )
    .into_iter()
    .map(|r| r.and_then(|p| p.map_err(|e| e.to_string())))
    .collect();
    let ready: Vec<(usize, &crate::gpu::Prepared)> = prepared
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.as_ref().ok().map(|p| (i, p)))
        .collect();
    let mut outcomes: Vec<Outcome> = prepared
        .iter()
        .map(|p| match p {
            Ok(_) => Outcome::Skipped(String::new()),
            Err(e) => Outcome::Skipped(e.clone()),
        })
        .collect();
    if ready.is_empty() {
        return Ok(outcomes);
    }
    let launches: Vec<&crate::gpu::Prepared> = ready.iter().map(|(_, p)| *p).collect();
    let secs = time_rounds(
        gpu,
        &launches,
        ROUNDS,
        WARM_UP_S,
        (SLOW_S, SLOW_ROUNDS),
        &mut |done, total| progress(Step::Timed { done, total }),
    )?;
    for ((i, _), mut s) in ready.into_iter().zip(secs) {
        outcomes[i] = Outcome::Timed {
            median_s: median(&mut s),
            runs: s.len() as u32,
            cached: false,
        };
    }
    Ok(outcomes)
}

/// Times each job on the CPU backend by wall time, on `args`. Tensors the
/// kernel both reads and writes are copied first and restored after, so
/// that every launch sees the same inputs; the others are written with
/// the bits any configuration writes.
pub(super) fn cpu(
    jobs: &[Job],
    args: &mut [Arg],
    threads: Option<usize>,
    progress: &mut dyn FnMut(Step),
) -> Result<Vec<Outcome>, RuntimeError> {
    let kernel = jobs[0].kernel;
    let in_place: Vec<(usize, Arg)> = kernel
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            matches!(
                p.kind,
                ParamKind::Tensor {
                    read: true,
                    written: true,
                    ..
                }
            )
        })
        .map(|(i, _)| (i, args[i].clone()))
        .collect();
    let compiled: Vec<Result<_, String>> =
        in_parallel(jobs, |j| phobos_cpu::compile(j.kernel), progress)
            .into_iter()
            .map(|r| r.and_then(|c| c.map_err(|e| format!("does not compile: {}", e.0))))
            .collect();
    let mut outcomes: Vec<Outcome> = compiled
        .iter()
        .map(|c| match c {
            Ok(_) => Outcome::Skipped(String::new()),
            Err(e) => Outcome::Skipped(e.clone()),
        })
        .collect();
    let ready: Vec<usize> = (0..jobs.len()).filter(|&i| compiled[i].is_ok()).collect();
    if ready.is_empty() {
        return Ok(outcomes);
    }
    let launch = |i: usize, args: &mut [Arg]| -> Result<f64, RuntimeError> {
        for (p, saved) in &in_place {
            args[*p] = saved.clone();
        }
        let t = Instant::now();
        phobos_cpu::run(jobs[i].kernel, args, threads).map_err(|e| match e {
            phobos_cpu::RunError::Launch(e) => RuntimeError::Launch(e),
            phobos_cpu::RunError::Compile(e) => RuntimeError::Compile(e.to_string()),
        })?;
        Ok(t.elapsed().as_secs_f64())
    };
    let started = Instant::now();
    let mut slowest = 0.0f64;
    loop {
        for &i in &ready {
            slowest = slowest.max(launch(i, args)?);
        }
        if started.elapsed().as_secs_f64() >= WARM_UP_S {
            break;
        }
    }
    let rounds = if slowest > SLOW_S {
        SLOW_ROUNDS
    } else {
        ROUNDS
    };
    let mut secs = vec![Vec::new(); ready.len()];
    for r in 0..rounds {
        for k in 0..ready.len() {
            let at = (k + r as usize) % ready.len();
            secs[at].push(launch(ready[at], args)?);
        }
        progress(Step::Timed {
            done: r + 1,
            total: rounds,
        });
    }
    for (p, saved) in in_place {
        args[p] = saved;
    }
    for (at, i) in ready.into_iter().enumerate() {
        outcomes[i] = Outcome::Timed {
            median_s: median(&mut secs[at]),
            runs: rounds,
            cached: false,
        };
    }
    Ok(outcomes)
}
