//! `phobosc`: check and run Phobos kernels. Argument parsing, files and exit
//! codes live here; everything clever lives in the libraries.

mod bench;
mod build;
mod check;
mod devices;
mod fill;
mod preview;
mod run;
mod serve;
mod source;
mod tune;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "phobosc",
    version,
    about = "The Phobos tile-language compiler and runner"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check files and print their diagnostics; exit 1 if there are any.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Lower kernels to WGSL and SPIR-V, with a manifest.json of bindings, grid and tuning space.
    Build(build::BuildArgs),
    /// Run a kernel on given or generated inputs, then preview or save its outputs.
    Run(run::RunArgs),
    /// Time a kernel: a warm-up launch, then the median of --runs launches, in GiB/s.
    Bench(bench::BenchArgs),
    /// Time every configuration of a kernel (cached per device and shape bucket), print the table and the winner.
    Tune(tune::TuneArgs),
    /// Write a Tandem random stream (raw little-endian or .npy) to a file or stdout.
    Fill(fill::FillArgs),
    /// Serve the playground page (built into this binary) on loopback.
    Serve(serve::ServeArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum BackendArg {
    Auto,
    Interp,
    Cpu,
    Gpu,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PrecisionArg {
    Exact,
    Fast,
}

impl From<PrecisionArg> for phobos_core::Precision {
    fn from(p: PrecisionArg) -> Self {
        match p {
            PrecisionArg::Exact => phobos_core::Precision::Exact,
            PrecisionArg::Fast => phobos_core::Precision::Fast,
        }
    }
}

fn main() -> ExitCode {
    // Mesa's Vulkan device-select layer prints a harmless XDG_RUNTIME_DIR
    // error when it probes for a display; Phobos never presents, so skip it.
    if std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: at the top of main, before any other thread exists.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { files } => check::check(&files),
        Command::Build(args) => build::build(&args),
        Command::Run(args) => run::run(&args),
        Command::Bench(args) => bench::bench(&args),
        Command::Fill(args) => fill::fill(&args),
        Command::Tune(args) => tune::tune(&args),
        Command::Serve(args) => serve::serve(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
