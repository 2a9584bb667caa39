//! The Phobos side of issue 11's one table, in one run on one adapter:
//! Tandem fills, the seed's `dropout_rows`, and kernels with Tandem draws,
//! each as GiB/s and as a share of the true ceiling (`ceiling.rs`) measured
//! in the same run, and the cold and warm compile of each kernel to its
//! first dispatch. `bench/table.sh` runs it with `bench/peers/peers.py`
//! and prints both sides in one table.
//!
//! `phobos-bench-table [LOG2_N] [--tsv PATH] [--no-ablations] [--no-compile]`
//!
//! Rows, 2^LOG2_N elements (default 28):
//! - fills u32, f32, f64, normal_f32, normal_f64, exp_f32 of
//!   `Tandem::new(Key::from_seed(1))` through `Gpu::prepare_fill`, GiB/s of
//!   bytes written, against the zero fill of the same bytes; the output is
//!   compared with `Bulk::fill_bytes` on every element;
//! - `examples/dropout_rows.ph` in exact mode at R = 16 and 64, against the
//!   copy; compared with the CPU backend on every element;
//! - Tandem dropout `Y = where(tandem_uniform(seed, i) >= 0.1, X / 0.9, 0.0)`
//!   and Tandem noise `Y = X + 0.5 * tandem_normal(seed, i)`, exact mode,
//!   R = 16 and 64, counters `(r + iota(0)) * 256 + iota(1)` as in
//!   `dropout_rows`, against the copy; compared with `Bulk::fill_f32` or
//!   `Bulk::fill_normal_f32` and the map written in Rust on every element;
//! - the u32, f32 and normal fills written as Phobos kernels
//!   (`Y[r :+ R, :] = tandem_u32(seed, (r + iota(0)) * 256 + iota(1))`, ...),
//!   compiled by the ordinary pipeline, R = 16 and 64, against the zero fill
//!   of the same bytes; compared with `Bulk` on every element.
//!
//! Kernels count the bytes of X and Y (8 per element). Each row: output
//! poisoned, half a second of warm-up launches, then the median (and
//! fastest) of 21 GPU timestamps around the pass.
//!
//! Compile rows: wall milliseconds from `Program::parse` to the completion
//! of the first dispatch (exact mode, on buffers made and cleared before
//! the clock starts; opening the device is not counted), each in a fresh
//! process of this binary: cold (`PHOBOS_CACHE_DIR`, `XDG_CACHE_HOME` and
//! NVIDIA's `__GL_SHADER_DISK_CACHE_PATH` all empty temporary directories),
//! warm from Phobos's pipeline cache that the cold run wrote (the driver's
//! cache empty again), and warm from both.
//!
//! `--tsv PATH` also writes the figures as tab-separated lines for
//! `peers.py --table --phobos PATH`. A benchmark, not a test: CI does not
//! run it.

#[path = "ceiling.rs"]
mod ceiling;
#[path = "common.rs"]
mod common;

use ceiling::Ceilings;
use common::{RUNS, WARM_UP_S, differing, gib, poison, read_back, storage, timestamps};
use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_runtime::gpu::{Gpu, GpuArg, fill_map};
use phobos_runtime::{Backend, Options, Precision, launch};
use phobos_tandem::{Bulk, Dist, Key, Tandem};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The seed of every row (`Key::from_seed(1)`, the fills' key).
const SEED: u32 = 1;

/// The kernels with Tandem draws, written as a user would.
const TANDEM_KERNELS: &str = "
@autotune(R in [16, 64])
kernel tandem_dropout(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = where(tandem_uniform(seed, (r + iota(0)) * 256 + iota(1)) >= 0.1, X[r :+ R, :] / 0.9, 0.0)
}
@autotune(R in [16, 64])
kernel tandem_noise(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + 0.5 * tandem_normal(seed, (r + iota(0)) * 256 + iota(1))
}
";

/// The fills written as Phobos kernels, compiled by the ordinary pipeline.
const FILL_KERNELS: &str = "
@autotune(R in [16, 64])
kernel fill_u32(Y: tensor<u32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_u32(seed, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [16, 64])
kernel fill_f32(Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_uniform(seed, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [16, 64])
kernel fill_normal(Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_normal(seed, (r + iota(0)) * 256 + iota(1))
}
";

/// The floor of the compile rows: a copy, the least a kernel can be, so
/// what its pipeline costs is the driver's own.
const COPY_KERNEL: &str = "
@autotune(R in [16, 64])
kernel copy(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256]) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :]
}
";

/// The block sizes of the kernel rows.
const RS: [i64; 2] = [16, 64];

/// A kernel of the table: its source file and name.
#[derive(Clone, Copy, PartialEq)]
enum Which {
    /// `examples/dropout_rows.ph` (the seed's `uniform`), seed an `i32`.
    DropoutRows,
    TandemDropout,
    TandemNoise,
    /// The fills of [`FILL_KERNELS`]: no X, Y of the fill's type.
    FillU32,
    FillF32,
    FillNormal,
    /// [`COPY_KERNEL`]: only a compile row.
    Copy,
}

impl Which {
    const ALL: [Which; 3] = [Which::DropoutRows, Which::TandemDropout, Which::TandemNoise];
    const FILLS: [Which; 3] = [Which::FillU32, Which::FillF32, Which::FillNormal];
    /// The kernels of the compile rows.
    const COMPILED: [Which; 4] = [
        Which::DropoutRows,
        Which::TandemDropout,
        Which::TandemNoise,
        Which::Copy,
    ];

    fn is_fill(self) -> bool {
        Which::FILLS.contains(&self)
    }

    fn kernel_name(self) -> &'static str {
        match self {
            Which::DropoutRows => "dropout_rows",
            Which::TandemDropout => "tandem_dropout",
            Which::TandemNoise => "tandem_noise",
            Which::FillU32 => "fill_u32",
            Which::FillF32 => "fill_f32",
            Which::FillNormal => "fill_normal",
            Which::Copy => "copy",
        }
    }

    /// The row's name, as `peers.py --table` knows it.
    fn row(self, r: i64) -> String {
        match self {
            Which::DropoutRows => format!("dropout_rows exact R={r}"),
            Which::TandemDropout => format!("tandem dropout R={r}"),
            Which::TandemNoise => format!("tandem noise R={r}"),
            Which::FillU32 => format!("u32 as a Phobos kernel R={r}"),
            Which::FillF32 => format!("f32 as a Phobos kernel R={r}"),
            Which::FillNormal => format!("normal_f32 as a Phobos kernel R={r}"),
            Which::Copy => format!("copy (the floor) R={r}"),
        }
    }

    fn parse(name: &str) -> Option<Which> {
        Which::COMPILED
            .into_iter()
            .find(|w| w.kernel_name() == name)
    }

    /// The program's file name and text, with every R of [`RS`] declared.
    fn source(self) -> (&'static str, String) {
        match self {
            Which::DropoutRows => {
                let text = include_str!("../../examples/dropout_rows.ph");
                let declared = "@autotune(R in [16])";
                assert!(
                    text.contains(declared),
                    "examples/dropout_rows.ph no longer declares `{declared}`; update the bench"
                );
                (
                    "dropout_rows.ph",
                    text.replace(declared, "@autotune(R in [16, 64])"),
                )
            }
            Which::TandemDropout | Which::TandemNoise => {
                ("tandem_kernels.ph", TANDEM_KERNELS.to_string())
            }
            Which::FillU32 | Which::FillF32 | Which::FillNormal => {
                ("fill_kernels.ph", FILL_KERNELS.to_string())
            }
            Which::Copy => ("copy.ph", COPY_KERNEL.to_string()),
        }
    }

    fn seed(self) -> Value {
        match self {
            Which::DropoutRows => Value::I32(SEED as i32),
            _ => Value::U32(SEED),
        }
    }

    /// The checked kernel at `R = r`; parse errors and diagnostics panic
    /// with their text (the sources are fixed).
    fn kernel(self, r: i64) -> phobos_core::ir::Kernel {
        let (file, text) = self.source();
        let (program, diags) = Program::parse(file, &text);
        assert!(diags.is_empty(), "{file}: {diags:?}");
        program
            .kernel(self.kernel_name(), &[("R".to_string(), r)])
            .unwrap_or_else(|d| panic!("{file}: {d:?}"))
    }
}

/// The X of every kernel row: values in [1, 2), none zero.
fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| 1.0 + (i % 1000) as f32 * 1e-3).collect()
}

/// What Tandem dropout and noise must give for `x`, from the reference
/// crate's fills and the map written in Rust (f32, no contraction, as in
/// exact mode).
fn tandem_reference(which: Which, x: &[f32]) -> Vec<f32> {
    let bulk = Bulk::new(Tandem::new(Key::from_seed(u64::from(SEED))));
    let mut draws = vec![0f32; x.len()];
    match which {
        Which::TandemDropout => {
            bulk.fill_f32(&mut draws, 0).expect("fills");
            x.iter()
                .zip(&draws)
                .map(|(&x, &u)| if u >= 0.1 { x / 0.9 } else { 0.0 })
                .collect()
        }
        Which::TandemNoise => {
            bulk.fill_normal_f32(&mut draws, 0).expect("fills");
            x.iter().zip(&draws).map(|(&x, &z)| x + 0.5 * z).collect()
        }
        Which::DropoutRows | Which::FillU32 | Which::FillF32 | Which::FillNormal | Which::Copy => {
            unreachable!("only the Tandem kernels read X")
        }
    }
}

/// The bits a fill kernel must write over `n` elements: the reference
/// crate's fill.
fn fill_reference(which: Which, n: usize) -> Vec<u32> {
    let bulk = Bulk::new(Tandem::new(Key::from_seed(u64::from(SEED))));
    match which {
        Which::FillU32 => {
            let mut v = vec![0u32; n];
            bulk.fill_u32(&mut v, 0).expect("fills");
            v
        }
        Which::FillF32 | Which::FillNormal => {
            let mut v = vec![0f32; n];
            if which == Which::FillF32 {
                bulk.fill_f32(&mut v, 0).expect("fills");
            } else {
                bulk.fill_normal_f32(&mut v, 0).expect("fills");
            }
            v.iter().map(|x| x.to_bits()).collect()
        }
        Which::DropoutRows | Which::TandemDropout | Which::TandemNoise | Which::Copy => {
            unreachable!("not a fill")
        }
    }
}

/// The bits of a u32 or f32 tensor.
fn bits(t: &Tensor) -> Vec<u32> {
    match &t.data {
        Data::U32(v) => v.clone(),
        Data::F32(v) => v.iter().map(|x| x.to_bits()).collect(),
        _ => unreachable!("outputs are u32 or f32"),
    }
}

fn f32s(t: &Tensor) -> &[f32] {
    match &t.data {
        Data::F32(v) => v,
        _ => unreachable!("X and Y are f32"),
    }
}

/// The arguments of a kernel row over `x` (`[n / 256, 256]`), Y poisoned;
/// a fill kernel has only Y (of `x`'s length) and the seed.
fn kernel_args(which: Which, x: &[f32]) -> Vec<Arg> {
    let shape = vec![x.len() / 256, 256];
    if which.is_fill() {
        let data = match which {
            Which::FillU32 => Data::U32(vec![0xdead_beef; x.len()]),
            _ => Data::F32(vec![f32::from_bits(0x7fba_d000); x.len()]),
        };
        return vec![
            Arg::Tensor(Tensor { shape, data }),
            Arg::Scalar(which.seed()),
        ];
    }
    vec![
        Arg::Tensor(Tensor {
            shape: shape.clone(),
            data: Data::F32(x.to_vec()),
        }),
        Arg::Tensor(Tensor {
            shape,
            data: Data::F32(vec![f32::from_bits(0x7fba_d000); x.len()]),
        }),
        Arg::Scalar(which.seed()),
    ]
}

/// The reference output of a kernel row: the CPU backend for
/// `dropout_rows`, the reference crate otherwise.
fn reference(which: Which, r: i64, x: &[f32]) -> Vec<f32> {
    if which != Which::DropoutRows {
        return tandem_reference(which, x);
    }
    let kernel = which.kernel(r);
    let mut args = kernel_args(which, x);
    let options = Options {
        backend: Backend::Cpu,
        ..Options::default()
    };
    launch(&kernel, &mut args, &options).expect("the CPU backend runs dropout_rows");
    let Arg::Tensor(y) = &args[1] else {
        unreachable!("Y is a tensor")
    };
    f32s(y).to_vec()
}

/// Elements of `got` whose bits differ from `want`.
fn differing_f32(got: &[f32], want: &[f32]) -> usize {
    got.iter()
        .zip(want)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count()
}

/// Before any GPU: the CPU backend against the reference crate for the
/// Tandem kernels, on 2^16 elements, so that a wrong reference (or a
/// kernel that no longer parses) shows without a device.
fn cpu_precheck() -> String {
    let x = input(1 << 16);
    let mut out = Vec::new();
    for which in [Which::TandemDropout, Which::TandemNoise] {
        for r in RS {
            let kernel = which.kernel(r);
            let mut args = kernel_args(which, &x);
            let options = Options {
                backend: Backend::Cpu,
                ..Options::default()
            };
            launch(&kernel, &mut args, &options).expect("the CPU backend runs it");
            let Arg::Tensor(y) = &args[1] else {
                unreachable!("Y is a tensor")
            };
            let bad = differing_f32(f32s(y), &tandem_reference(which, &x));
            out.push(format!(
                "{}: {}",
                which.row(r),
                if bad == 0 {
                    "equal".to_string()
                } else {
                    format!("{bad} of {} differ", x.len())
                }
            ));
        }
    }
    out.join("; ")
}

/// One measured row.
struct Row {
    name: String,
    bytes: u64,
    median: f64,
    fastest: f64,
    /// "zero" or "copy", and its GiB/s over the same bytes in this run.
    ceiling: (&'static str, f64),
    check: String,
}

impl Row {
    fn gib(&self) -> f64 {
        gib(self.bytes, self.median)
    }

    fn share(&self) -> f64 {
        100.0 * self.gib() / self.ceiling.1
    }
}

fn check_text(bad: usize, of: u64, against: &str) -> String {
    if bad == 0 {
        format!("all {of} equal to {against}")
    } else {
        format!("{bad} of {of} differ from {against}")
    }
}

/// The fill rows.
fn fills(gpu: &Gpu, ceilings: &mut Ceilings, n: u64) -> Vec<Row> {
    let dists = [
        ("u32", Dist::U32),
        ("f32", Dist::F32),
        ("f64", Dist::F64),
        ("normal_f32", Dist::NormalF32),
        ("normal_f64", Dist::NormalF64),
        ("exp_f32", Dist::ExponentialF32),
    ];
    // Whole stream blocks are written: the buffer holds the last block's.
    let covered = |dist: &Dist| {
        let size = dist.elem_size() as u64;
        let per_block = fill_map(dist).map_or(1, |m| u64::from(m.out_words()) * 4 / size);
        n.div_ceil(per_block) * per_block * size
    };
    let max = dists.iter().map(|(_, d)| covered(d)).max().unwrap_or(16);
    let dst = storage(gpu, max.next_multiple_of(256));
    let rng = Tandem::new(Key::from_seed(u64::from(SEED)));
    let (mut got, mut want) = (Vec::new(), Vec::new());
    let mut rows = Vec::new();
    for (name, dist) in dists {
        let size = dist.elem_size();
        let bytes = n * size as u64;
        poison(gpu, &dst, covered(&dist));
        let prepared = match gpu.prepare_fill(&dist, rng, 0, n, &dst) {
            Ok(p) => p,
            Err(e) => {
                println!("{name}: n/a ({e})");
                continue;
            }
        };
        let t = timestamps(gpu, |enc, ts| prepared.encode(enc, ts));
        read_back(gpu, &dst, bytes, &mut got);
        want.resize(bytes as usize, 0);
        Bulk::new(rng)
            .fill_bytes(&dist, 0, &mut want)
            .expect("cpu fill");
        let bad = differing(&got, &want, size);
        let zero = ceilings.zero(bytes);
        rows.push(Row {
            name: name.to_string(),
            bytes,
            median: t[t.len() / 2],
            fastest: t[0],
            ceiling: ("zero", gib(bytes, zero.0)),
            check: check_text(bad, n, "Bulk::fill_bytes"),
        });
    }
    rows
}

/// The kernel rows, each in exact mode.
fn kernels(gpu: &Gpu, ceilings: &mut Ceilings, n: usize) -> Vec<Row> {
    let x = input(n);
    let bytes = 4 * n as u64;
    let mut rows = Vec::new();
    for which in Which::ALL.into_iter().chain(Which::FILLS) {
        if which.is_fill() {
            rows.extend(fill_kernel_rows(gpu, ceilings, which, &x));
            continue;
        }
        // The same output at every R.
        let mut want = None;
        for r in RS {
            let kernel = which.kernel(r);
            let args = kernel_args(which, &x);
            let prepared = match gpu.prepare(&kernel, &args, Precision::Exact) {
                Ok(p) => p,
                Err(e) => {
                    println!("{}: n/a ({e})", which.row(r));
                    continue;
                }
            };
            let t = timestamps(gpu, |enc, ts| prepared.encode(enc, ts));
            let mut got = args;
            gpu.read_back(&kernel, &prepared, &mut got)
                .expect("read back");
            let dispatched = prepared.workgroups();
            drop(prepared);
            let Arg::Tensor(y) = &got[1] else {
                unreachable!("Y is a tensor")
            };
            let want = want.get_or_insert_with(|| reference(which, r, &x));
            let bad = differing_f32(f32s(y), want);
            let against = if which == Which::DropoutRows {
                "the CPU backend"
            } else {
                "the reference fill + map"
            };
            let copy = ceilings.copy(bytes);
            rows.push(Row {
                name: which.row(r),
                bytes: 2 * bytes,
                median: t[t.len() / 2],
                fastest: t[0],
                ceiling: ("copy", gib(2 * bytes, copy.0)),
                check: format!(
                    "{}; workgroup {}, dispatch {dispatched:?}",
                    check_text(bad, n as u64, against),
                    phobos_runtime::gpu::workgroup_size(&kernel)
                ),
            });
        }
    }
    rows
}

/// The rows of one fill kernel at each R: bytes written against the zero
/// fill of the same bytes, every element compared with the reference fill.
fn fill_kernel_rows(gpu: &Gpu, ceilings: &mut Ceilings, which: Which, x: &[f32]) -> Vec<Row> {
    let n = x.len();
    let bytes = 4 * n as u64;
    let want = fill_reference(which, n);
    let mut rows = Vec::new();
    for r in RS {
        let kernel = which.kernel(r);
        let args = kernel_args(which, x);
        let prepared = match gpu.prepare(&kernel, &args, Precision::Exact) {
            Ok(p) => p,
            Err(e) => {
                println!("{}: n/a ({e})", which.row(r));
                continue;
            }
        };
        let t = timestamps(gpu, |enc, ts| prepared.encode(enc, ts));
        let mut got = args;
        gpu.read_back(&kernel, &prepared, &mut got)
            .expect("read back");
        let dispatched = prepared.workgroups();
        drop(prepared);
        let Arg::Tensor(y) = &got[0] else {
            unreachable!("Y is a tensor")
        };
        let bad = bits(y).iter().zip(&want).filter(|(a, b)| a != b).count();
        let zero = ceilings.zero(bytes);
        rows.push(Row {
            name: which.row(r),
            bytes,
            median: t[t.len() / 2],
            fastest: t[0],
            ceiling: ("zero fill", gib(bytes, zero.0)),
            check: format!(
                "{}; workgroup {}, dispatch {dispatched:?}",
                check_text(bad, n as u64, "the reference fill"),
                phobos_runtime::gpu::workgroup_size(&kernel)
            ),
        });
    }
    rows
}

/// One compile measurement in this process (the child of
/// [`compile_rows`]): prints `COMPILE\t<wall ms>\t<runtime's compile ms>\t<device open ms>\t<parse
/// and check ms>\t<ms until the dispatch was submitted>\t<ms of a second launch>\t<lowering
/// ms>\t<SPIR-V ms>\t<layouts ms>\t<shader module ms>\t<pipeline ms>`, all from before the
/// parse but the device's opening, the second launch and the last five (`BuildPhases`).
fn compile_child(which: Which, r: i64, log2: u32) {
    let opened = Instant::now();
    let gpu = Gpu::new().unwrap_or_else(|e| panic!("{e}"));
    let open_ms = opened.elapsed().as_secs_f64() * 1e3;
    let n = 1usize << log2;
    let shape = [n / 256, 256];
    let bytes = 4 * n as u64;
    let (x, y) = (storage(&gpu, bytes), storage(&gpu, bytes));
    // Cleared now, so that wgpu's lazy zero-initialisation is not timed.
    let mut enc = gpu.device().create_command_encoder(&Default::default());
    enc.clear_buffer(&x, 0, None);
    enc.clear_buffer(&y, 0, None);
    gpu.queue().submit([enc.finish()]);
    gpu.wait().expect("clears");
    let tensors = [&x, &y].map(|buffer| GpuArg::Tensor {
        buffer,
        elem: Scalar::F32,
        shape: &shape,
    });
    if std::env::var_os("PHOBOS_BENCH_PREWARM").is_some() {
        // Measurement only: a copy's pipeline first, so that what the
        // driver does once per process is not in the timed kernel's build.
        let copy = Which::Copy.kernel(16);
        gpu.dispatch(&copy, &tensors, Precision::Exact)
            .unwrap_or_else(|e| panic!("{e}"));
        gpu.wait().expect("the copy");
    }

    let t0 = Instant::now();
    let kernel = which.kernel(r);
    let parse_ms = t0.elapsed().as_secs_f64() * 1e3;
    let mut args = tensors.to_vec();
    if which != Which::Copy {
        args.push(GpuArg::Scalar(which.seed()));
    }
    let run = gpu
        .dispatch(&kernel, &args, Precision::Exact)
        .unwrap_or_else(|e| panic!("{e}"));
    let submitted_ms = t0.elapsed().as_secs_f64() * 1e3;
    gpu.wait().expect("the first dispatch");
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    // The same launch again, from its dispatch to its completion: what the
    // first launch costs beyond the kernel's own run.
    let again = Instant::now();
    gpu.dispatch(&kernel, &args, Precision::Exact)
        .unwrap_or_else(|e| panic!("{e}"));
    gpu.wait().expect("the second dispatch");
    let again_ms = again.elapsed().as_secs_f64() * 1e3;
    let p = run.build_phases.unwrap_or_default();
    println!(
        "COMPILE\t{ms:.2}\t{:.2}\t{open_ms:.0}\t{parse_ms:.2}\t{submitted_ms:.2}\t{again_ms:.2}\t{:.2}\t{:.2}\t{:.2}\t{:.2}\t{:.2}",
        run.compile_ms, p.lower_ms, p.spirv_ms, p.layout_ms, p.module_ms, p.pipeline_ms
    );
}

/// One child run of [`compile_child`] with the caches in `caches`:
/// The times of [`compile_child`], or why not.
fn spawn_compile(
    which: Which,
    r: i64,
    log2: u32,
    phobos_cache: &Path,
    driver_cache: &Path,
) -> Result<Compile, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args([
            "--compile-child",
            which.kernel_name(),
            &r.to_string(),
            &log2.to_string(),
        ])
        .env("PHOBOS_CACHE_DIR", phobos_cache)
        .env("XDG_CACHE_HOME", driver_cache.join("xdg"))
        .env("__GL_SHADER_DISK_CACHE_PATH", driver_cache.join("nv"))
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().find_map(|l| l.strip_prefix("COMPILE\t"));
    match line {
        Some(l) if out.status.success() => {
            let f: Vec<f64> = l.split('\t').filter_map(|v| v.parse().ok()).collect();
            match f[..] {
                [
                    wall,
                    pipeline,
                    open,
                    parse,
                    submitted,
                    again,
                    lower,
                    spirv,
                    layouts,
                    module,
                    driver,
                ] => Ok(Compile {
                    wall,
                    pipeline,
                    open,
                    parse,
                    submitted,
                    again,
                    phases: [lower, spirv, layouts, module, driver],
                }),
                _ => Err(format!("unreadable child output: {l}")),
            }
        }
        _ => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let why = stderr.lines().rev().find(|l| !l.trim().is_empty());
            Err(format!(
                "{}: {}",
                out.status,
                why.unwrap_or("no output").replace('|', "/")
            ))
        }
    }
}

/// The times of one compile child, in ms.
struct Compile {
    /// From the parse to the first dispatch's completion.
    wall: f64,
    /// The runtime's lowering and pipeline creation.
    pipeline: f64,
    /// Opening the device (before the wall time starts).
    open: f64,
    /// Parsing and checking the source.
    parse: f64,
    /// From the parse to the dispatch's submission.
    submitted: f64,
    /// A second launch of the same pipeline, from its dispatch to its
    /// completion.
    again: f64,
    /// `pipeline` as the lowering, the SPIR-V, the layouts, the shader
    /// module and the compute pipeline (`BuildPhases`).
    phases: [f64; 5],
}

/// A compile row: cold, warm from Phobos's cache, warm from both caches.
struct CompileRow {
    name: String,
    cold: Result<Compile, String>,
    warm: Result<Compile, String>,
    warm_both: Result<Compile, String>,
    /// Whether the cold run left a file in Phobos's cache directory.
    cache_written: bool,
}

fn compile_rows(log2: u32) -> Vec<CompileRow> {
    let root: PathBuf =
        std::env::temp_dir().join(format!("phobos-bench-compile-{}", std::process::id()));
    let mut rows = Vec::new();
    for which in Which::COMPILED {
        for r in RS {
            let dir = root.join(format!("{}-R{r}", which.kernel_name()));
            let phobos = dir.join("phobos");
            let cold = spawn_compile(which, r, log2, &phobos, &dir.join("driver-cold"));
            let cache_written = std::fs::read_dir(&phobos).is_ok_and(|mut d| d.next().is_some());
            let warm = spawn_compile(which, r, log2, &phobos, &dir.join("driver-empty"));
            let warm_both = spawn_compile(which, r, log2, &phobos, &dir.join("driver-cold"));
            rows.push(CompileRow {
                name: format!("compile {}", which.row(r)),
                cold,
                warm,
                warm_both,
                cache_written,
            });
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    rows
}

fn ms_cell(r: &Result<Compile, String>) -> String {
    match r {
        Ok(c) => format!(
            "{:.1} (parse {:.1}, pipeline {:.1} = lower {:.1} + SPIR-V {:.1} + layouts {:.1} + module {:.1} + \
             driver {:.1}, submitted at {:.1}; a second launch {:.1})",
            c.wall,
            c.parse,
            c.pipeline,
            c.phases[0],
            c.phases[1],
            c.phases[2],
            c.phases[3],
            c.phases[4],
            c.submitted,
            c.again
        ),
        Err(e) => format!("n/a ({e})"),
    }
}

fn ms_tsv(r: &Result<Compile, String>) -> String {
    match r {
        Ok(c) => format!("{:.2}", c.wall),
        Err(_) => "n/a".to_string(),
    }
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let mut log2 = 28u32;
    let mut tsv: Option<PathBuf> = None;
    let (mut ablations, mut compile) = (true, true);
    while let Some(a) = argv.next() {
        match a.as_str() {
            "--compile-child" => {
                let which = argv.next().and_then(|w| Which::parse(&w)).expect("KERNEL");
                let r = argv.next().and_then(|v| v.parse().ok()).expect("R");
                let log2 = argv.next().and_then(|v| v.parse().ok()).expect("LOG2_N");
                compile_child(which, r, log2);
                return;
            }
            "--tsv" => tsv = Some(argv.next().expect("--tsv PATH").into()),
            "--no-ablations" => ablations = false,
            "--no-compile" => compile = false,
            _ => {
                log2 = a
                    .parse()
                    .expect("LOG2_N (at least 8), --tsv PATH, --no-ablations or --no-compile")
            }
        }
    }
    assert!((8..=30).contains(&log2), "LOG2_N from 8 to 30");
    let begun = Instant::now();
    let n = 1usize << log2;
    println!(
        "CPU backend against the reference crate, 2^16 elements: {}",
        cpu_precheck()
    );
    let gpu = Gpu::shared().unwrap_or_else(|e| panic!("{e}"));
    println!("device: {}", gpu.describe());
    println!(
        "2^{log2} elements (f32 kernels: [2^{} rows, 256]), seed {SEED}, exact mode; median (fastest) of {RUNS} \
         GPU timestamps after {WARM_UP_S} s of warm-up; fills count bytes written, kernels bytes read + written; \
         ceilings: `ceiling.rs`'s true shape over the same bytes in this run\n",
        log2 - 8
    );
    let mut tsv_text = String::new();
    let _ = writeln!(tsv_text, "device\t{}", gpu.describe());
    let _ = writeln!(tsv_text, "elements\t{n}");
    let bytes = 4 * n as u64;
    let mut ceilings = Ceilings::new(gpu);
    let first = [
        ("zero", bytes, ceilings.zero(bytes)),
        ("zero", 2 * bytes, ceilings.zero(2 * bytes)),
        ("copy", bytes, ceilings.copy(bytes)),
    ];
    if ablations {
        ceiling::print_ablations(gpu, bytes);
    }
    let mut rows = fills(gpu, &mut ceilings, n as u64);
    rows.extend(kernels(gpu, &mut ceilings, n));
    // The ceilings again, measured afresh: how far the card drifted.
    let last: Vec<(f64, f64)> = first
        .iter()
        .map(|&(kind, b, _)| {
            let v = if kind == "zero" {
                ceiling::TRUE_ZERO
            } else {
                ceiling::TRUE_COPY
            };
            ceiling::measure(gpu, &v, b)
        })
        .collect();
    let compiles = if compile {
        compile_rows(log2)
    } else {
        Vec::new()
    };

    println!(
        "| row | bytes | GiB/s median (fastest) | ceiling of this run, same bytes | % of ceiling | output |"
    );
    println!("|---|---|---|---|---|---|");
    for ((kind, b, t), again) in first.iter().zip(&last) {
        let moved = if *kind == "copy" { 2 * b } else { *b };
        let name = format!(
            "{} ceiling, {b} bytes out",
            if *kind == "copy" { "copy" } else { "zero-fill" }
        );
        println!(
            "| {name} | {moved} | {:.0} ({:.0}) | | | measured again at the end: {:.0} |",
            gib(moved, t.0),
            gib(moved, t.1),
            gib(moved, again.0)
        );
        let _ = writeln!(
            tsv_text,
            "ceiling\t{kind} {b}\t{:.1}\t{:.1}\t{:.1}",
            gib(moved, t.0),
            gib(moved, t.1),
            gib(moved, again.0)
        );
    }
    for r in &rows {
        println!(
            "| {} | {} | {:.0} ({:.0}) | {} {:.0} | {:.1}% | {} |",
            r.name,
            r.bytes,
            r.gib(),
            gib(r.bytes, r.fastest),
            r.ceiling.0,
            r.ceiling.1,
            r.share(),
            r.check
        );
        let _ = writeln!(
            tsv_text,
            "row\t{}\t{}\t{:.1}\t{:.1}\t{}\t{:.1}\t{}",
            r.name,
            r.bytes,
            r.gib(),
            gib(r.bytes, r.fastest),
            r.ceiling.0,
            r.ceiling.1,
            r.check
        );
    }
    if !compiles.is_empty() {
        println!(
            "\nCompile to the first dispatch's completion, wall ms from Program::parse (in parentheses: the \
             parse and check, the runtime's lowering + pipeline creation, and when the dispatch was \
             submitted), each in a fresh process, exact mode, 2^{log2} elements\n"
        );
        println!(
            "| kernel | cold (empty caches) | warm from Phobos's pipeline cache (driver's empty) | warm from both | device open, ms |"
        );
        println!("|---|---|---|---|---|");
        for c in &compiles {
            let open = c
                .cold
                .as_ref()
                .map_or(String::from("n/a"), |t| format!("{:.0}", t.open));
            println!(
                "| {} | {} | {}{} | {} | {open} |",
                c.name,
                ms_cell(&c.cold),
                ms_cell(&c.warm),
                if c.cache_written {
                    ""
                } else {
                    " (the cold run wrote no cache file)"
                },
                ms_cell(&c.warm_both),
            );
            let _ = writeln!(
                tsv_text,
                "compile\t{}\t{}\t{}\t{}",
                c.name,
                ms_tsv(&c.cold),
                ms_tsv(&c.warm),
                ms_tsv(&c.warm_both)
            );
        }
    }
    if let Some(path) = tsv {
        std::fs::write(&path, tsv_text)
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
    println!(
        "\n{} rows in {:.0} s",
        rows.len(),
        begun.elapsed().as_secs_f64()
    );
}
