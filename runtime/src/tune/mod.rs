//! Choosing a launch's configuration: the launch heuristic, and the tuner
//! with its cache on disk.
//!
//! A **configuration** ([`Candidate`]) is one value of each `@autotune`
//! parameter plus the lowering's own choices: on the GPU, the workgroup
//! size. None of them changes the bits (DESIGN.md: the counter of an
//! element is its logical index), only the speed.
//!
//! - [`heuristic`] picks one without measuring: the first configuration
//!   (in declared order, among the first [`HEURISTIC_LOOKS`]) whose grid
//!   has at least twice as many blocks as the device runs at once, else
//!   the one with the most blocks; on the GPU, the workgroup size of
//!   [`Gpu::heuristic_workgroup_size`] (docs/language.md, "The launch
//!   heuristic"). It is what runs on the interpreter, when tuning is off,
//!   and before anything is measured.
//! - [`tune`] measures: it checks every configuration, compiles those the
//!   cache has no time for (in parallel), times them in interleaved rounds
//!   after a warm-up (GPU timestamps, or wall time on the CPU), takes each
//!   one's median, and keeps the fastest. Its results go to the cache
//!   (`cache.rs`), per configuration and as one decision, so a later
//!   process reuses them at once and a changed `@autotune` list measures
//!   only the new configurations.
//! - [`choose`] is what a launch calls: the cached decision, else a tune,
//!   else (tuning off, the interpreter, no writable cache) the heuristic;
//!   the [`Tuning`] it returns goes into the provenance.

pub mod cache;
mod measure;
mod refusal;

use crate::gpu::Gpu;
use crate::{Backend, Options, RuntimeError};
use cache::{Lookup, NoCache, TuneCache};
use phobos_core::Program;
use phobos_core::bounds::{HEURISTIC_LOOKS, MAX_TUNE_TRIALS};
use phobos_core::ir::Kernel;
use phobos_core::launch::{Arg, ArgShape, Bound, bind_shapes};
use serde_json::{Value, json};
use std::time::Instant;

/// The fraction by which a configuration must beat the heuristic's median
/// to be chosen over it.
pub const KEEP_HEURISTIC_WITHIN: f64 = 0.02;

/// How a launch's configuration was chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// The launch heuristic, without measuring.
    #[default]
    Heuristic,
    /// The caller fixed it (`--config`).
    Fixed,
    /// The fastest measured, now or by an earlier process.
    Tuned,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Heuristic => "heuristic",
            Source::Fixed => "fixed",
            Source::Tuned => "tuned",
        }
    }
}

/// What the tuning cache did for a launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CacheUse {
    /// Not consulted (tuning off, the interpreter, a fixed configuration).
    #[default]
    NotUsed,
    /// The decision came from the cache: nothing was measured.
    Hit,
    /// `measured` configurations were timed now; `reused` times came from
    /// the cache.
    Miss { reused: usize, measured: usize },
    /// `PHOBOS_CACHE_DIR=off`, or no directory for one.
    Off,
    /// The directory could not be written (the message says why).
    Unwritable(String),
}

impl CacheUse {
    pub fn name(&self) -> &'static str {
        match self {
            CacheUse::NotUsed => "not used",
            CacheUse::Hit => "hit",
            CacheUse::Miss { .. } => "miss",
            CacheUse::Off => "off",
            CacheUse::Unwritable(_) => "unwritable",
        }
    }
}

/// How a launch's configuration was chosen, for the provenance.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tuning {
    pub source: Source,
    pub cache: CacheUse,
    /// Why the heuristic's choice ran when tuning was asked for, or other
    /// words worth showing (where the cache is).
    pub note: Option<String>,
    /// Milliseconds spent choosing: the cache lookup on a hit, the whole
    /// tune on a miss.
    pub ms: Option<f64>,
}

impl Tuning {
    pub fn fixed() -> Tuning {
        Tuning {
            source: Source::Fixed,
            ..Tuning::default()
        }
    }

    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "source": self.source.name(),
            "cache": self.cache.name(),
            "note": self.note,
            "ms": self.ms,
        });
        if let CacheUse::Miss { reused, measured } = self.cache {
            v["reused"] = json!(reused);
            v["measured"] = json!(measured);
        }
        v
    }
}

/// One point of a kernel's tuning space.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Candidate {
    /// A value for each `@autotune` parameter.
    pub config: Vec<(String, i64)>,
    /// Invocations per workgroup on the GPU; `None` elsewhere.
    pub workgroup_size: Option<u32>,
}

impl Candidate {
    /// `R=16, workgroup 64`; `(no parameters)` for an empty one.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .config
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if let Some(w) = self.workgroup_size {
            parts.push(format!("workgroup {w}"));
        }
        if parts.is_empty() {
            "(no parameters)".to_string()
        } else {
            parts.join(", ")
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "config": self.config.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "workgroup_size": self.workgroup_size,
        })
    }

    fn from_json(v: &Value) -> Option<Candidate> {
        let config = v
            .get("config")?
            .as_object()?
            .iter()
            .map(|(k, v)| Some((k.clone(), v.as_i64()?)))
            .collect::<Option<Vec<_>>>()?;
        let workgroup_size = match v.get("workgroup_size")? {
            Value::Null => None,
            w => Some(u32::try_from(w.as_u64()?).ok()?),
        };
        Some(Candidate {
            config,
            workgroup_size,
        })
    }
}

/// What became of one configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The median of `runs` timed launches; `cached` when an earlier
    /// process measured it.
    Timed {
        median_s: f64,
        runs: u32,
        cached: bool,
    },
    /// It could not run here: it does not check, does not fit these
    /// arguments, or the device refuses it (the message says which).
    Skipped(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    pub candidate: Candidate,
    pub outcome: Outcome,
}

impl Trial {
    pub fn median_s(&self) -> Option<f64> {
        match self.outcome {
            Outcome::Timed { median_s, .. } => Some(median_s),
            Outcome::Skipped(_) => None,
        }
    }
}

/// The result of a tune.
#[derive(Clone, Debug)]
pub struct Tuned {
    pub kernel: String,
    pub backend: Backend,
    pub device: String,
    /// `gpu timestamps` or `wall clock`.
    pub timing: &'static str,
    /// Each dim's shape bucket: the next power of two of its extent.
    pub bucket: Bucket,
    pub heuristic: Candidate,
    pub chosen: Candidate,
    /// Every configuration, in the order of the space.
    pub trials: Vec<Trial>,
    pub tuning: Tuning,
}

impl Tuned {
    /// The heuristic's median over the winner's, less one: 0.25 means the
    /// winner is 25% faster. `None` when the heuristic's configuration
    /// was not timed.
    pub fn margin(&self) -> Option<f64> {
        let time = |c: &Candidate| {
            self.trials
                .iter()
                .find(|t| &t.candidate == c)
                .and_then(Trial::median_s)
        };
        Some(time(&self.heuristic)? / time(&self.chosen)? - 1.0)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "kernel": self.kernel,
            "backend": self.backend.name(),
            "device": self.device,
            "timing": self.timing,
            "bucket": self.bucket.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "heuristic": self.heuristic.to_json(),
            "chosen": self.chosen.to_json(),
            "margin_over_heuristic": self.margin(),
            "tuning": self.tuning.to_json(),
            "trials": self.trials.iter().map(|t| {
                let mut v = t.candidate.to_json();
                match &t.outcome {
                    Outcome::Timed { median_s, runs, cached } => {
                        v["median_ms"] = json!(median_s * 1e3);
                        v["runs"] = json!(runs);
                        v["cached"] = json!(cached);
                    }
                    Outcome::Skipped(why) => v["skipped"] = json!(why),
                }
                v
            }).collect::<Vec<_>>(),
        })
    }
}

/// Progress of a tune, for a progress bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `done` of `total` configurations compiled.
    Compiled { done: usize, total: usize },
    /// `done` of `total` timing rounds run.
    Timed { done: u32, total: u32 },
}

/// The device a backend runs on, for cache keys and reports.
fn device_of(backend: Backend, options: &Options) -> Result<(String, Value), RuntimeError> {
    Ok(match backend {
        Backend::Gpu => {
            let g = Gpu::shared()?;
            let i = g.info();
            (
                g.describe(),
                json!({
                    "name": i.name, "vendor": i.vendor, "device": i.device,
                    "backend": format!("{:?}", i.backend),
                    "driver": i.driver, "driver_info": i.driver_info,
                    "wide_checks": g.wide_checks(), "max_binding": g.max_binding(),
                }),
            )
        }
        _ => {
            let threads = options.threads.unwrap_or_else(cores);
            let model = cpu_model();
            (
                format!("host CPU ({}, Cranelift JIT)", std::env::consts::ARCH),
                json!({"arch": std::env::consts::ARCH, "model": model, "threads": threads}),
            )
        }
    })
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPU's model name, where Linux says it.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_default()
}

fn shapes(args: &[Arg]) -> Vec<ArgShape<'_>> {
    args.iter()
        .map(|a| match a {
            Arg::Tensor(t) => ArgShape::Tensor {
                elem: t.elem(),
                shape: &t.shape,
            },
            Arg::Scalar(v) => ArgShape::Scalar(*v),
        })
        .collect()
}

/// How many blocks the device runs at once, for the heuristic: the
/// threads on the CPU, one on the interpreter, and on a GPU an assumed
/// 1,024 workgroups (WebGPU and wgpu report no count of compute units;
/// 1,024 is 132 SMs of an H200 with 8 workgroups resident on each, and
/// more blocks than a smaller GPU needs cost it nothing).
pub fn parallel_blocks(backend: Backend, options: &Options) -> u64 {
    match backend {
        Backend::Gpu => 1024,
        Backend::Interp => 1,
        _ => options.threads.unwrap_or_else(cores) as u64,
    }
}

/// The first configuration of `name`'s space checked, with the bound dims
/// of `args`: what the cache keys and the heuristic's look start from.
fn first_kernel(
    program: &Program,
    name: &str,
    args: &[Arg],
) -> Result<(Kernel, Bound), RuntimeError> {
    let kernel = program.kernel(name, &[]).map_err(|d| {
        RuntimeError::Compile(format!(
            "`{name}` does not check: {}",
            d.first().map_or(String::new(), |d| d.message.clone())
        ))
    })?;
    let bound = bind_shapes(&kernel, &shapes(args))?;
    Ok((kernel, bound))
}

/// The launch heuristic's configuration of `name` for `args` on the
/// backend `options` resolves to (see the module's documentation).
pub fn heuristic(
    program: &Program,
    name: &str,
    args: &[Arg],
    options: &Options,
) -> Result<Candidate, RuntimeError> {
    let backend = crate::resolve(options.backend, options.precision)?;
    let want = 2 * parallel_blocks(backend, options);
    let shapes = shapes(args);
    let mut best: Option<(u64, Kernel, Bound)> = None;
    for config in program.configs(name).into_iter().take(HEURISTIC_LOOKS) {
        let Ok(kernel) = program.kernel(name, &config) else {
            continue;
        };
        let Ok(bound) = bind_shapes(&kernel, &shapes) else {
            continue;
        };
        let blocks: u64 = bound.grid.iter().product();
        if blocks >= want {
            best = Some((blocks, kernel, bound));
            break;
        }
        if best.as_ref().is_none_or(|(b, _, _)| blocks > *b) {
            best = Some((blocks, kernel, bound));
        }
    }
    let (kernel, bound) = match best {
        Some((_, k, b)) => (k, b),
        // No configuration fits: the first one's error is the useful one.
        None => first_kernel(program, name, args)?,
    };
    let workgroup_size = match backend {
        Backend::Gpu => {
            let specialized = phobos_gpu::specialize(&kernel, &bound.dims);
            Some(Gpu::shared()?.heuristic_workgroup_size(&specialized, options.precision))
        }
        _ => None,
    };
    Ok(Candidate {
        config: kernel.config.clone(),
        workgroup_size,
    })
}

/// Each dim's shape bucket, by name.
type Bucket = Vec<(String, u64)>;

/// The keys a tune of `name` files its results under.
struct Keys {
    /// Fields every key shares: phobos's version, backend, precision,
    /// device and driver, shape bucket.
    common: Value,
}

impl Keys {
    /// The keys of `name` on `args` here, the shape bucket and the device's
    /// description.
    fn of(
        program: &Program,
        name: &str,
        args: &[Arg],
        backend: Backend,
        options: &Options,
    ) -> Result<(Keys, Bucket, String), RuntimeError> {
        let (first, bound) = first_kernel(program, name, args)?;
        let (device, device_key) = device_of(backend, options)?;
        let bucket: Vec<(String, u64)> = first
            .dims
            .iter()
            .zip(&bound.dims)
            .map(|(n, d)| (n.clone(), (*d).max(1).next_power_of_two()))
            .collect();
        let keys = Keys {
            common: json!({
                "phobos": env!("CARGO_PKG_VERSION"),
                "backend": backend.name(),
                "precision": options.precision.name(),
                "device": device_key,
                "bucket": bucket.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
                "workgroup_env": std::env::var("PHOBOS_WORKGROUP_SIZE").ok(),
                // What changes the GPU's code without changing the IR: the
                // lowering's knobs and its plan's revision.
                "lowering": format!("{:?} plan {}", phobos_gpu::Knobs::from_env(), phobos_gpu::plan::REVISION),
            }),
        };
        Ok((keys, bucket, device))
    }

    fn decision(&self, program: &Program, name: &str) -> Value {
        let source = program.sources.text(program.user);
        json!({
            "kind": "decision",
            "common": self.common,
            "source": format!("{:016x}", crate::gpu::disk_cache::fnv1a(source.as_bytes())),
            "kernel": name,
        })
    }

    fn trial(&self, kernel: &Kernel, workgroup_size: Option<u32>) -> Value {
        let ir = kernel.fingerprint();
        json!({
            "kind": "trial",
            "common": self.common,
            "ir": format!("{:016x}", crate::gpu::disk_cache::fnv1a(ir.as_bytes())),
            "config": Candidate { config: kernel.config.clone(), workgroup_size }.to_json(),
        })
    }
}

/// Measures every configuration of `name` on `args` (see the module's
/// documentation) and returns the table and the winner. Times the cache
/// holds are reused; new ones are stored. Tuning launches write the
/// kernel's outputs in `args` with the bits any configuration writes;
/// tensors it both reads and writes are copied first, so `args` is as if
/// nothing ran.
pub fn tune(
    program: &Program,
    name: &str,
    args: &mut [Arg],
    options: &Options,
    progress: &mut dyn FnMut(Step),
) -> Result<Tuned, RuntimeError> {
    tune_with(program, name, args, options, false, progress)
}

/// [`tune`], measuring every configuration again when `fresh` (the cache
/// is still written).
pub fn tune_with(
    program: &Program,
    name: &str,
    args: &mut [Arg],
    options: &Options,
    fresh: bool,
    progress: &mut dyn FnMut(Step),
) -> Result<Tuned, RuntimeError> {
    // Opening the device is the launch's cost, not the tune's.
    let backend = crate::resolve(options.backend, options.precision)?;
    let started = Instant::now();
    if backend == Backend::Interp {
        return Err(RuntimeError::Unavailable {
            backend,
            why:
                "the interpreter is the reference and is not tuned; tune with --backend cpu or gpu"
                    .to_string(),
        });
    }
    let cache = TuneCache::open();
    let (keys, bucket, device) = Keys::of(program, name, args, backend, options)?;
    let heuristic = heuristic(program, name, args, options)?;
    let timing = if backend == Backend::Gpu
        && Gpu::shared()?
            .device()
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        "gpu timestamps"
    } else {
        "wall clock"
    };

    // The space: each @autotune configuration checked, with the lowering
    // choices the device offers for it.
    let shapes_now = shapes(args);
    let mut rows: Vec<(Candidate, Result<Kernel, String>)> = Vec::new();
    let mut lowering: Vec<Vec<u32>> = Vec::new();
    for config in program.configs(name) {
        let checked = program
            .kernel(name, &config)
            .map_err(|d| {
                format!(
                    "does not check: {}",
                    d.first().map_or(String::new(), |d| d.message.clone())
                )
            })
            .and_then(|k| match bind_shapes(&k, &shapes_now) {
                Ok(b) => Ok((k, b)),
                Err(e) => Err(format!("does not fit these arguments: {e}")),
            });
        let sizes = match (&checked, backend) {
            (Ok((k, b)), Backend::Gpu) => {
                let specialized = phobos_gpu::specialize(k, &b.dims);
                Gpu::shared()?
                    .workgroup_sizes(&specialized, options.precision)
                    .into_iter()
                    .map(Some)
                    .collect()
            }
            _ => vec![None],
        };
        lowering.push(sizes.iter().flatten().copied().collect());
        for w in sizes {
            rows.push((
                Candidate {
                    config: config.clone(),
                    workgroup_size: w,
                },
                checked
                    .as_ref()
                    .map(|(k, _)| k.clone())
                    .map_err(Clone::clone),
            ));
        }
    }
    // Past MAX_TUNE_TRIALS: each @autotune configuration at the
    // heuristic's lowering first, then the winner's lowering choices.
    let staged = rows.len() as u64 > MAX_TUNE_TRIALS;
    let mut trials: Vec<Option<Trial>> = vec![None; rows.len()];
    let first_stage: Vec<usize> = (0..rows.len())
        .filter(|&i| !staged || i == 0 || rows[i].0.config != rows[i - 1].0.config)
        .collect();
    let mut counts = (0usize, 0usize);
    let stage = Stage {
        rows: &rows,
        keys: &keys,
        cache: &cache,
        fresh,
        backend,
        options,
    };
    stage.run(&first_stage, &mut trials, args, progress, &mut counts)?;
    if staged {
        let best = winner(&trials);
        if let Some(best) = best {
            let config = rows[best].0.config.clone();
            let second: Vec<usize> = (0..rows.len())
                .filter(|&i| rows[i].0.config == config && trials[i].is_none())
                .collect();
            stage.run(&second, &mut trials, args, progress, &mut counts)?;
        }
    }
    let trials: Vec<Trial> = trials.into_iter().flatten().collect();
    let fastest = trials
        .iter()
        .filter_map(|t| t.median_s().map(|s| (s, t)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    // The heuristic's configuration stays unless another beats it by more
    // than KEEP_HEURISTIC_WITHIN: a difference within the noise of the
    // medians is no reason to leave it.
    let heuristic_s = trials
        .iter()
        .find(|t| t.candidate == heuristic)
        .and_then(Trial::median_s);
    let Some(chosen) = fastest.map(|(s, t)| match heuristic_s {
        Some(h) if s >= h * (1.0 - KEEP_HEURISTIC_WITHIN) => heuristic.clone(),
        _ => t.candidate.clone(),
    }) else {
        return Err(RuntimeError::Compile(refusal::none_could_run(
            name, &trials,
        )));
    };
    let (reused, measured) = counts;
    let mut tuned = Tuned {
        kernel: name.to_string(),
        backend,
        device,
        timing,
        bucket,
        heuristic,
        chosen,
        trials,
        tuning: Tuning {
            source: Source::Tuned,
            cache: match &cache {
                Ok(_) if measured == 0 => CacheUse::Hit,
                Ok(_) => CacheUse::Miss { reused, measured },
                Err(NoCache::Off) => CacheUse::Off,
                Err(NoCache::Unwritable(why)) => CacheUse::Unwritable(why.clone()),
            },
            note: None,
            ms: None,
        },
    };
    tuned.tuning.ms = Some(started.elapsed().as_secs_f64() * 1e3);
    if let Ok(c) = &cache {
        let key = keys.decision(program, name);
        if let Err(e) = c.put(&key, tuned.to_json()) {
            warn_unsaved(c, &e);
        }
    }
    Ok(tuned)
}

fn warn_unsaved(c: &TuneCache, e: &std::io::Error) {
    eprintln!(
        "phobos: warning: could not save tuning results in {}: {e}",
        c.dir().display()
    );
}

/// The index of the fastest timed trial so far.
fn winner(trials: &[Option<Trial>]) -> Option<usize> {
    trials
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.as_ref()?.median_s().map(|s| (i, s)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// What one stage of a tune measures over.
struct Stage<'a> {
    /// Each configuration, with its checked kernel or why it has none.
    rows: &'a [(Candidate, Result<Kernel, String>)],
    keys: &'a Keys,
    cache: &'a Result<TuneCache, NoCache>,
    /// Measure again what the cache has.
    fresh: bool,
    backend: Backend,
    options: &'a Options,
}

impl Stage<'_> {
    /// Fills `trials[i]` for each `i` of `which`: from the cache, or measured
    /// now (and stored). `counts` adds (reused, measured).
    fn run(
        &self,
        which: &[usize],
        trials: &mut [Option<Trial>],
        args: &mut [Arg],
        progress: &mut dyn FnMut(Step),
        counts: &mut (usize, usize),
    ) -> Result<(), RuntimeError> {
        let Stage {
            rows,
            keys,
            cache,
            fresh,
            backend,
            options,
        } = *self;
        let mut jobs: Vec<(usize, Value)> = Vec::new();
        for &i in which {
            let (candidate, kernel) = &rows[i];
            let kernel = match kernel {
                Ok(k) => k,
                Err(why) => {
                    trials[i] = Some(Trial {
                        candidate: candidate.clone(),
                        outcome: Outcome::Skipped(why.clone()),
                    });
                    continue;
                }
            };
            let key = keys.trial(kernel, candidate.workgroup_size);
            let found = match cache {
                Ok(c) if !fresh => c.get(&key),
                _ => Lookup::Missing,
            };
            let cached = match found {
                Lookup::Found(v) => v.get("median_s").and_then(Value::as_f64).zip(
                    v.get("runs")
                        .and_then(Value::as_u64)
                        .and_then(|r| u32::try_from(r).ok()),
                ),
                _ => None,
            };
            match cached {
                Some((median_s, runs)) => {
                    counts.0 += 1;
                    trials[i] = Some(Trial {
                        candidate: candidate.clone(),
                        outcome: Outcome::Timed {
                            median_s,
                            runs,
                            cached: true,
                        },
                    });
                }
                None => jobs.push((i, key)),
            }
        }
        if jobs.is_empty() {
            return Ok(());
        }
        let work: Vec<measure::Job> = jobs
            .iter()
            .map(|(i, _)| measure::Job {
                kernel: rows[*i].1.as_ref().expect("only checked rows are measured"),
                workgroup_size: rows[*i].0.workgroup_size,
            })
            .collect();
        let outcomes = match backend {
            Backend::Gpu => measure::gpu(Gpu::shared()?, &work, args, options.precision, progress)?,
            _ => measure::cpu(&work, args, options.threads, progress)?,
        };
        let mut warned = false;
        for ((i, key), outcome) in jobs.into_iter().zip(outcomes) {
            if let (Outcome::Timed { median_s, runs, .. }, Ok(c)) = (&outcome, cache) {
                counts.1 += 1;
                if let Err(e) = c.put(&key, json!({"median_s": median_s, "runs": runs}))
                    && !warned
                {
                    warned = true;
                    warn_unsaved(c, &e);
                }
            } else if matches!(outcome, Outcome::Timed { .. }) {
                counts.1 += 1;
            }
            trials[i] = Some(Trial {
                candidate: rows[i].0.clone(),
                outcome,
            });
        }
        Ok(())
    }
}

/// The configuration a launch of `name` on `args` runs with, and how it
/// was chosen: with `tune` on, the cache's decision (one file read), else
/// a [`tune`] now; the heuristic's on the interpreter, with `tune` off, or
/// when the cache directory cannot be written (with a warning: DESIGN.md
/// asks for the run to go on untuned).
pub fn choose(
    program: &Program,
    name: &str,
    args: &mut [Arg],
    options: &Options,
    tune_on: bool,
    progress: &mut dyn FnMut(Step),
) -> Result<(Candidate, Tuning), RuntimeError> {
    // Opening the device is the launch's cost, not the lookup's.
    let backend = crate::resolve(options.backend, options.precision)?;
    let started = Instant::now();
    let untuned = |note: Option<String>, cache: CacheUse| -> Result<_, RuntimeError> {
        let c = heuristic(program, name, args, options)?;
        Ok((
            c,
            Tuning {
                source: Source::Heuristic,
                cache,
                note,
                ms: None,
            },
        ))
    };
    if !tune_on {
        return untuned(Some("tuning off".to_string()), CacheUse::NotUsed);
    }
    if backend == Backend::Interp {
        return untuned(
            Some("the interpreter is the reference and is not tuned".to_string()),
            CacheUse::NotUsed,
        );
    }
    let cache = match TuneCache::open() {
        Ok(c) => c,
        Err(NoCache::Off) => {
            return untuned(
                Some("the tuning cache is off (PHOBOS_CACHE_DIR=off)".to_string()),
                CacheUse::Off,
            );
        }
        Err(NoCache::Unwritable(why)) => {
            eprintln!(
                "phobos: warning: the tuning cache cannot be written ({why}); running untuned"
            );
            return untuned(
                Some(format!("the tuning cache cannot be written: {why}")),
                CacheUse::Unwritable(why),
            );
        }
    };
    // A space of one configuration (the CPU, one @autotune value) has
    // nothing to measure.
    if backend != Backend::Gpu && program.configs(name).len() <= 1 {
        return untuned(
            Some("one configuration: nothing to tune".to_string()),
            CacheUse::NotUsed,
        );
    }
    // The decision of an earlier process, when one is there for this
    // source, device and bucket.
    let (keys, _, _) = Keys::of(program, name, args, backend, options)?;
    if let Lookup::Found(v) = cache.get(&keys.decision(program, name))
        && let Some(chosen) = v.get("chosen").and_then(Candidate::from_json)
    {
        return Ok((
            chosen,
            Tuning {
                source: Source::Tuned,
                cache: CacheUse::Hit,
                note: Some(format!("from {}", cache.dir().display())),
                ms: Some(started.elapsed().as_secs_f64() * 1e3),
            },
        ));
    }
    let tuned = tune(program, name, args, options, progress)?;
    let mut tuning = tuned.tuning.clone();
    tuning.ms = Some(started.elapsed().as_secs_f64() * 1e3);
    Ok((tuned.chosen, tuning))
}

/// Checks `name` in `candidate`'s configuration and launches it there,
/// with its lowering choices; the provenance records `tuning`.
pub fn launch_candidate(
    program: &Program,
    name: &str,
    candidate: &Candidate,
    tuning: Tuning,
    args: &mut [Arg],
    options: &Options,
) -> Result<(Kernel, crate::Provenance), RuntimeError> {
    launch_candidate_kept(program, name, candidate, tuning, args, options, None)
        .map(|(kernel, prov, _)| (kernel, prov))
}

/// [`launch_candidate`], keeping the tensors' buffers on the GPU
/// afterwards (`crate::launch_kept`), for the check lines, and handing
/// `streaming`'s sink the stored tensors' bytes as the GPU reads them back
/// (`crate::launch_streaming`).
pub fn launch_candidate_kept(
    program: &Program,
    name: &str,
    candidate: &Candidate,
    tuning: Tuning,
    args: &mut [Arg],
    options: &Options,
    streaming: Option<crate::Transfers<'_>>,
) -> Result<(Kernel, crate::Provenance, Option<crate::gpu::Resident>), RuntimeError> {
    let kernel = program.kernel(name, &candidate.config).map_err(|d| {
        RuntimeError::Compile(format!(
            "`{name}` in {} does not check: {}",
            candidate.describe(),
            d.first().map_or(String::new(), |d| d.message.clone())
        ))
    })?;
    let options = Options {
        workgroup_size: candidate.workgroup_size,
        ..options.clone()
    };
    let (mut prov, resident) = crate::launch_streaming(&kernel, args, &options, streaming)?;
    prov.tuning = tuning;
    Ok((kernel, prov, resident))
}
