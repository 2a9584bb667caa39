//! `phobosc tune`, and the tuning at first launch that `run` and `bench`
//! share: which configuration runs, how it was chosen, and the progress
//! bar while it is measured (on a terminal only; never with `--json` or
//! when stdout is piped).

use crate::run::{Prepared, RunArgs, prepare};
use crate::{BackendArg, PrecisionArg};
use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use phobos_core::Program;
use phobos_core::ir::Kernel;
use phobos_core::launch::Arg;
use phobos_runtime::gpu::Resident;
use phobos_runtime::tune::{self, CacheUse, Candidate, Outcome, Source, Step, Tuned, Tuning};
use phobos_runtime::{Options, Provenance, Transfers};
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct TuneArgs {
    /// The .ph file.
    file: PathBuf,
    /// The kernel to tune; may be left out when the file has one.
    #[arg(long)]
    kernel: Option<String>,
    /// The extent of a symbolic dimension, NAME=N (the shape bucket tuned for).
    #[arg(long = "dim", value_name = "NAME=N")]
    dims: Vec<String>,
    /// A scalar argument, NAME=VALUE; scalars not given are 0.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    args: Vec<String>,
    /// A tensor argument from a .npy file, NAME=PATH; tensors not given are generated.
    #[arg(long = "input", value_name = "NAME=PATH")]
    inputs: Vec<String>,
    /// Where to tune: `cpu` (wall time) or `gpu` (GPU timestamps); `auto` picks the best present.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// `exact` gives the reference's bits; `fast` allows native approximations.
    #[arg(long, value_enum, default_value = "exact")]
    precision: PrecisionArg,
    /// Threads for the CPU backend (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the table as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Measure every configuration again, even those the cache has a time for.
    #[arg(long)]
    fresh: bool,
}

/// A progress bar on stderr when both stdout and stderr are terminals and
/// the output is not JSON; otherwise one that draws nothing.
fn bar(json: bool) -> ProgressBar {
    let shown = !json && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let bar = ProgressBar::with_draw_target(
        Some(1),
        if shown {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{prefix:>9} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix("tuning");
    bar
}

/// A spinner naming what `run` is doing, on stderr once the run has taken
/// a second (when both stdout and stderr are terminals and the output is
/// not JSON); quick runs never show it.
pub struct Activity {
    bar: ProgressBar,
}

impl Activity {
    pub fn start(json: bool) -> Activity {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("a valid template"),
        );
        if !json && std::io::stdout().is_terminal() && std::io::stderr().is_terminal() {
            let later = bar.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_secs(1));
                if !later.is_finished() {
                    later.set_draw_target(ProgressDrawTarget::stderr());
                    later.enable_steady_tick(std::time::Duration::from_millis(120));
                }
            });
        }
        Activity { bar }
    }

    pub fn phase(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// Runs `f` with the spinner hidden (for work that draws its own bar).
    pub fn suspend<T>(&self, f: impl FnOnce() -> T) -> T {
        self.bar.suspend(f)
    }

    pub fn done(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Moves `bar` along with the tuner's steps.
fn follow(bar: &ProgressBar) -> impl FnMut(Step) + '_ {
    move |step| match step {
        Step::Compiled { done, total } => {
            bar.set_prefix("compiling");
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
        Step::Timed { done, total } => {
            bar.set_prefix("timing");
            bar.set_length(u64::from(total));
            bar.set_position(u64::from(done));
        }
    }
}

/// Launches `name` as `run` does: in the `--config` given (fixed), else in
/// the configuration the tuner chooses (from the cache, or measured now),
/// or the launch heuristic's with `--no-tune`. On the GPU the tensors stay
/// on the device afterwards, for the check lines, and `streaming` takes the
/// stored tensors' bytes as they are read back.
pub fn launch(
    a: &RunArgs,
    program: &Program,
    name: &str,
    kernel: Kernel,
    args: &mut [Arg],
    options: &Options,
    streaming: Option<Transfers<'_>>,
) -> Result<(Kernel, Provenance, Option<Resident>)> {
    let (candidate, tuning) = phobos_runtime::phases::scoped("tuning", || {
        choose(a, program, name, &kernel, args, options)
    })?;
    Ok(phobos_runtime::phases::scoped("launch", || {
        tune::launch_candidate_kept(program, name, &candidate, tuning, args, options, streaming)
    })?)
}

/// The configuration `run` and `bench` launch, and how it was chosen.
pub fn choose(
    a: &RunArgs,
    program: &Program,
    name: &str,
    kernel: &Kernel,
    args: &mut [Arg],
    options: &Options,
) -> Result<(Candidate, Tuning)> {
    if !a.config.is_empty() {
        // The caller fixed the @autotune values; the lowering keeps the
        // heuristic's choices.
        return Ok((
            Candidate {
                config: kernel.config.clone(),
                workgroup_size: None,
            },
            Tuning::fixed(),
        ));
    }
    let bar = bar(a.json);
    let chosen = tune::choose(program, name, args, options, !a.no_tune, &mut follow(&bar));
    bar.finish_and_clear();
    Ok(chosen?)
}

/// One line for the text report: `tuned (cache hit, 0.41 ms)`.
pub fn describe(t: &Tuning) -> String {
    let mut parts = match &t.cache {
        CacheUse::NotUsed => Vec::new(),
        CacheUse::Miss { reused, measured } => vec![format!(
            "cache miss: {measured} measured, {reused} from the cache"
        )],
        c => vec![format!("cache {}", c.name())],
    };
    if let Some(ms) = t.ms {
        parts.push(format!("{ms:.2} ms"));
    }
    if let Some(note) = &t.note {
        parts.push(note.clone());
    }
    if parts.is_empty() {
        t.source.name().to_string()
    } else {
        format!("{} ({})", t.source.name(), parts.join(", "))
    }
}

pub fn tune(a: &TuneArgs) -> Result<ExitCode> {
    let run = RunArgs::for_tuning(
        a.file.clone(),
        a.kernel.clone(),
        a.dims.clone(),
        a.args.clone(),
        a.inputs.clone(),
        a.backend,
        a.precision,
        a.threads,
    );
    let Prepared {
        program,
        name,
        mut args,
        options,
        ..
    } = match prepare(&run)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let bar = bar(a.json);
    let tuned = tune::tune_with(
        &program,
        &name,
        &mut args,
        &options,
        a.fresh,
        &mut follow(&bar),
    );
    bar.finish_and_clear();
    let tuned = tuned?;
    let text = if a.json {
        format!("{}\n", serde_json::to_string_pretty(&tuned.to_json())?)
    } else {
        report(&tuned)
    };
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// The text table of a tune.
fn report(t: &Tuned) -> String {
    let mut out = String::new();
    let bucket: Vec<String> = t.bucket.iter().map(|(k, v)| format!("{k}<={v}")).collect();
    let _ = writeln!(
        out,
        "{} on {} ({}; {}), shape bucket {}",
        t.kernel,
        t.backend.name(),
        t.device,
        t.timing,
        if bucket.is_empty() {
            "(no dims)".to_string()
        } else {
            bucket.join(", ")
        }
    );
    let width = t
        .trials
        .iter()
        .map(|r| r.candidate.describe().len())
        .max()
        .unwrap_or(0)
        .max("configuration".len());
    let _ = writeln!(
        out,
        "  {:<width$}  {:>12}  {:>4}",
        "configuration", "median", "runs"
    );
    for trial in &t.trials {
        let mark = if trial.candidate == t.chosen {
            "*"
        } else {
            " "
        };
        let mut notes = Vec::new();
        if trial.candidate == t.heuristic {
            notes.push("heuristic".to_string());
        }
        let (time, runs) = match &trial.outcome {
            Outcome::Timed {
                median_s,
                runs,
                cached,
            } => {
                if *cached {
                    notes.push("cached".to_string());
                }
                (format!("{:.4} ms", median_s * 1e3), runs.to_string())
            }
            Outcome::Skipped(why) => {
                notes.push(format!("skipped: {why}"));
                ("-".to_string(), "-".to_string())
            }
        };
        let _ = writeln!(
            out,
            "{mark} {:<width$}  {time:>12}  {runs:>4}  {}",
            trial.candidate.describe(),
            notes.join(", ")
        );
    }
    let _ = write!(out, "winner: {}", t.chosen.describe());
    match t.margin() {
        Some(_) if t.chosen == t.heuristic => {
            let _ = writeln!(
                out,
                " (the heuristic's choice: nothing beat it by more than {:.0}%)",
                tune::KEEP_HEURISTIC_WITHIN * 100.0
            );
        }
        Some(m) => {
            let _ = writeln!(
                out,
                ", {:.1}% faster than the heuristic's {}",
                m * 100.0,
                t.heuristic.describe()
            );
        }
        None => {
            let _ = writeln!(
                out,
                " (the heuristic's {} was not timed)",
                t.heuristic.describe()
            );
        }
    }
    let _ = writeln!(
        out,
        "tuned in {:.0} ms; {}",
        t.tuning.ms.unwrap_or(0.0),
        match &t.tuning.cache {
            CacheUse::Miss { reused, measured } =>
                format!("{measured} measured, {reused} from the cache"),
            CacheUse::Hit => "every time from the cache".to_string(),
            CacheUse::Off => "the cache is off (PHOBOS_CACHE_DIR=off)".to_string(),
            CacheUse::Unwritable(why) => format!("nothing saved: {why}"),
            CacheUse::NotUsed => "no cache".to_string(),
        }
    );
    debug_assert_eq!(t.tuning.source, Source::Tuned);
    out
}
