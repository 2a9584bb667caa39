//! The CPU benchmark of issue 4, in one run on this machine's cores:
//! `dropout_rows` and a `hash32` u32 fill compiled by Phobos's Cranelift
//! backend, against the same computations as plain Rust loops compiled by
//! rustc (release), and a uniform f32 fill against NumPy's
//! `default_rng().random(dtype=float32, out=...)` when NumPy is installed.
//!
//! `cargo run --release -p phobos-bench --bin phobos-bench-cpu [-- LOG2_N [THREADS]]`
//!
//! Each row: warm-up, then the median (and fastest) of 21 timed runs, as
//! GiB/s of bytes read + written, with every output checked against the
//! reference first. This is a benchmark, not a test: CI does not run it.

use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_runtime::{Backend, Options, launch};
use std::process::Command;
use std::time::Instant;

const RUNS: usize = 21;

const FILLS: &str = "
@autotune(B in [4096])
kernel hash_fill(Y: tensor<u32>[N]) {
  let b = ctx.block.x * B
  Y[b :+ B] = u32(hash32(b + iota(0)))
}
@autotune(B in [4096])
kernel uniform_fill(U: tensor<f32>[N], seed: i32) {
  let b = ctx.block.x * B
  U[b :+ B] = uniform(seed, b + iota(0))
}
";

/// Median and fastest seconds of `RUNS` runs after one warm-up.
fn time(mut f: impl FnMut()) -> (f64, f64) {
    f();
    let mut t: Vec<f64> = (0..RUNS)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[RUNS / 2], t[0])
}

fn gib(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / (1u64 << 30) as f64
}

fn hash32(x: i32) -> i32 {
    let mut x = x as u32;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x as i32
}

fn uniform(seed: i32, c: i32) -> f32 {
    // f32::EPSILON is 2^-23, the grid of the seed's uniform.
    ((hash32(c ^ hash32(seed)) & 0x7f_ffff) as f32) * f32::EPSILON
}

/// Runs `f(chunk_start, chunk)` over `threads` contiguous chunks of `out`.
fn par<T: Send>(out: &mut [T], threads: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let chunk = out.len().div_ceil(threads);
    std::thread::scope(|s| {
        for (i, c) in out.chunks_mut(chunk).enumerate() {
            let f = &f;
            s.spawn(move || f(i * chunk, c));
        }
    });
}

fn tensor_mut(a: &mut Arg) -> &mut Tensor {
    match a {
        Arg::Tensor(t) => t,
        Arg::Scalar(_) => unreachable!(),
    }
}

struct Row {
    name: String,
    phobos: f64,
    peer: Option<f64>,
    peer_name: String,
}

fn main() {
    let log2n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(26);
    let n = 1usize << log2n;
    let threads = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |t| t.get()));
    println!("2^{log2n} elements, {threads} threads on both sides");
    let mut rows = Vec::new();
    let seed = 7;

    // dropout_rows: reads x, writes y.
    let src = include_str!("../../examples/dropout_rows.ph");
    let (p, _) = Program::parse("dropout_rows.ph", src);
    let k = p.kernel("dropout_rows", &[]).expect("dropout_rows checks");
    let x: Vec<f32> = (0..n).map(|i| 1.0 + (i % 1000) as f32 / 1000.0).collect();
    let mut args = vec![
        Arg::Tensor(Tensor {
            shape: vec![n / 256, 256],
            data: Data::F32(x.clone()),
        }),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[n / 256, 256])),
        Arg::Scalar(Value::I32(seed)),
    ];
    let scale = 1.0f32 - 0.1f32;
    let mut want = vec![0f32; n];
    let rust_dropout = |start: usize, y: &mut [f32]| {
        for (j, v) in y.iter_mut().enumerate() {
            let i = start + j;
            *v = if uniform(seed, i as i32) >= 0.1 {
                x[i] / scale
            } else {
                0.0
            };
        }
    };
    let (rust, _) = time(|| par(&mut want, threads, rust_dropout));
    let opts = Options {
        backend: Backend::Cpu,
        threads: Some(threads),
        ..Options::default()
    };
    let first = launch(&k, &mut args, &opts).expect("runs");
    let Data::F32(got) = &tensor_mut(&mut args[1]).data else {
        unreachable!()
    };
    assert!(
        got.iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "dropout_rows differs from the Rust loop"
    );
    let (ph, _) = time(|| {
        launch(&k, &mut args, &opts).expect("runs");
    });
    println!(
        "dropout_rows: JIT compile {:.2} ms, {} threads, grid {}",
        first.compile_ms.unwrap_or(0.0),
        first.threads,
        first.bound.grid[0]
    );
    rows.push(Row {
        name: format!("dropout_rows, 2^{log2n} f32"),
        phobos: gib(8 * n, ph),
        peer: Some(gib(8 * n, rust)),
        peer_name: "plain Rust loop".into(),
    });

    // hash32 u32 fill: writes y.
    let (p, _) = Program::parse("fills.ph", FILLS);
    let k = p.kernel("hash_fill", &[]).expect("checks");
    let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::U32, &[n]))];
    let mut want = vec![0u32; n];
    let (rust, _) = time(|| {
        par(&mut want, threads, |s, y| {
            for (j, v) in y.iter_mut().enumerate() {
                *v = hash32((s + j) as i32) as u32;
            }
        })
    });
    launch(&k, &mut args, &opts).expect("runs");
    let Data::U32(got) = &tensor_mut(&mut args[0]).data else {
        unreachable!()
    };
    assert_eq!(got, &want, "hash fill differs from the Rust loop");
    let (ph, _) = time(|| {
        launch(&k, &mut args, &opts).expect("runs");
    });
    rows.push(Row {
        name: format!("hash32 u32 fill, 2^{log2n}"),
        phobos: gib(4 * n, ph),
        peer: Some(gib(4 * n, rust)),
        peer_name: "plain Rust loop".into(),
    });

    // uniform f32 fill against NumPy.
    let k = p.kernel("uniform_fill", &[]).expect("checks");
    let mut args = vec![
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
        Arg::Scalar(Value::I32(seed)),
    ];
    let (ph, _) = time(|| {
        launch(&k, &mut args, &opts).expect("runs");
    });
    rows.push(Row {
        name: format!("uniform f32 fill, 2^{log2n}"),
        phobos: gib(4 * n, ph),
        peer: numpy(n),
        peer_name: "NumPy default_rng().random(float32)".into(),
    });

    println!("\n| what | Phobos cpu GiB/s | peer GiB/s | ratio | peer |");
    println!("|---|---|---|---|---|");
    for r in rows {
        let (peer, ratio) = match r.peer {
            Some(p) => (format!("{p:.2}"), format!("{:.2}x", r.phobos / p)),
            None => ("n/a".into(), "n/a".into()),
        };
        println!(
            "| {} | {:.2} | {peer} | {ratio} | {} |",
            r.name, r.phobos, r.peer_name
        );
    }
}

/// NumPy's uniform f32 fill, median of the same number of runs, in GiB/s.
fn numpy(n: usize) -> Option<f64> {
    let script = format!(
        "import numpy as np, time\n\
         g = np.random.default_rng(7); out = np.empty({n}, dtype=np.float32)\n\
         g.random(dtype=np.float32, out=out)\n\
         t = []\n\
         for _ in range({RUNS}):\n    s = time.perf_counter(); g.random(dtype=np.float32, out=out); t.append(time.perf_counter() - s)\n\
         t.sort(); print(t[len(t) // 2])\n"
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .output()
        .ok()?;
    let secs: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some(gib(4 * n, secs))
}
