//! Tandem draws inside kernels on the CPU backend: the fused noise kernel
//! `Y = X + s * tandem_normal(key, i)` with contiguous counters (the
//! compiler steps each group of eight chunks once and reads its words in
//! order) against the same kernel with the counters loaded from a tensor
//! (which the compiler cannot see are contiguous, so every draw seeds its
//! own chunk), and the reference crate's `Bulk` normal fill plus a Rust add.
//! All three give the same bits (checked before timing).
//!
//! `cargo run --release -p phobos-bench --bin phobos-bench-tandem-draw [-- LOG2_N [THREADS]]`
//!
//! Each row: one warm-up, then the median of 11 timed runs, as nanoseconds
//! and millions of elements per second. A benchmark, not a test.

use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_tandem::{Bulk, Key, Tandem};
use std::time::Instant;

const RUNS: usize = 11;

const KERNELS: &str = "
@autotune(R in [16])
kernel stepped(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], s: f32, key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + s * tandem_normal(key, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [16])
kernel direct(X: tensor<f32>[M, 256], C: tensor<i32>[M, 256], Y: tensor<f32>[M, 256], s: f32, key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + s * tandem_normal(key, C[r :+ R, :])
}
";

fn median(mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[RUNS / 2]
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let log2: u32 = argv.next().map_or(22, |a| a.parse().expect("LOG2_N"));
    let threads: Option<usize> = argv.next().map(|a| a.parse().expect("THREADS"));
    let n = 1usize << log2;
    let rows = n / 256;
    let (s, key) = (0.25f32, 32u32);
    let (program, diags) = Program::parse("bench.ph", KERNELS);
    assert!(diags.is_empty(), "{diags:?}");
    let stepped = program.kernel("stepped", &[]).expect("checks");
    let direct = program.kernel("direct", &[]).expect("checks");
    let x: Vec<f32> = (0..n).map(|i| 1.0 + (i % 1000) as f32 * 1e-3).collect();
    let xt = Tensor {
        shape: vec![rows, 256],
        data: Data::F32(x.clone()),
    };
    let zeros = Tensor::zeros(Scalar::F32, &[rows, 256]);
    let counters = Tensor {
        shape: vec![rows, 256],
        data: Data::I32((0..n as i32).collect()),
    };
    let mut a_stepped = vec![
        Arg::Tensor(xt.clone()),
        Arg::Tensor(zeros.clone()),
        Arg::Scalar(Value::F32(s)),
        Arg::Scalar(Value::U32(key)),
    ];
    let mut a_direct = vec![
        Arg::Tensor(xt),
        Arg::Tensor(counters),
        Arg::Tensor(zeros),
        Arg::Scalar(Value::F32(s)),
        Arg::Scalar(Value::U32(key)),
    ];
    let bulk = Bulk::new(Tandem::new(Key::from_seed(u64::from(key))));
    let fill_add = |z: &mut [f32], y: &mut [f32]| {
        bulk.fill_normal_f32(z, 0).expect("fills");
        for ((yi, xi), zi) in y.iter_mut().zip(&x).zip(z.iter()) {
            *yi = xi + s * zi;
        }
    };
    let (mut z, mut y) = (vec![0f32; n], vec![0f32; n]);
    fill_add(&mut z, &mut y);
    let want = Data::F32(y.clone());
    phobos_cpu::run(&stepped, &mut a_stepped, threads).expect("runs");
    phobos_cpu::run(&direct, &mut a_direct, threads).expect("runs");
    for (name, out) in [("stepped", &a_stepped[1]), ("direct", &a_direct[2])] {
        let Arg::Tensor(t) = out else { unreachable!() };
        assert!(t.data == want, "{name} equals the fill plus the add");
    }
    let t_stepped = median(|| {
        phobos_cpu::run(&stepped, &mut a_stepped, threads).expect("runs");
    });
    let t_direct = median(|| {
        phobos_cpu::run(&direct, &mut a_direct, threads).expect("runs");
    });
    let t_bulk = median(|| fill_add(&mut z, &mut y));
    println!(
        "Y = X + s * tandem_normal(key, i), {n} elements (2^{log2}), threads {threads:?}, bits equal to the fill plus the add"
    );
    for (name, t) in [
        ("kernel, contiguous counters (group stepped)", t_stepped),
        ("kernel, counters from a tensor (seeded per draw)", t_direct),
        ("Bulk::fill_normal_f32 + add (reference crate)", t_bulk),
    ] {
        println!(
            "  {name:<50} {:>8.2} ms  {:>7.2} ns/element  {:>8.1} M elements/s",
            t * 1e3,
            t * 1e9 / n as f64,
            n as f64 / t / 1e6
        );
    }
    println!(
        "  stepped is {:.1}x faster than seeded per draw",
        t_direct / t_stepped
    );
}
