//! Tandem draws inside kernels: the fused noise kernel
//! `Y = X + s * tandem_normal(key, i)` with contiguous counters (the
//! compiler steps chunks: on the CPU each group of eight chunks once per
//! thread, on the GPU the chunks of a window of counters once per
//! workgroup, into workgroup memory) against the same kernel with the
//! counters loaded from a tensor (which the compiler cannot see are
//! contiguous, so every draw seeds its own chunk). All give the same bits
//! as the reference crate's `Bulk` normal fill plus a Rust add (checked).
//!
//! `cargo run --release -p phobos-bench --bin phobos-bench-tandem-draw [-- LOG2_N [THREADS]]`
//! times the CPU backend: one warm-up, then the median of 11 timed runs, as
//! nanoseconds and millions of elements per second, and `Bulk` plus the add.
//!
//! `cargo run --release -p phobos-bench --bin phobos-bench-tandem-draw -- gpu [LOG2_N]`
//! (default 28) times the GPU backend (exact mode: the only one with the
//! reference's bits) at R = 4, 16 and 64 rows of 256 per block: half a second
//! of warm-up launches, then the median (and fastest) of 21 GPU timestamps
//! around the pass, as GiB/s of the bytes each kernel reads and writes
//! (X and Y: 8 per element; the tensor of counters adds 4) and as a share
//! of the copy ceiling (`ceiling.rs`: hand-written WGSL of the true shape,
//! same bytes of X and Y) measured in the same run. The output of the timed
//! runs is compared with the CPU fill plus the add on every element.
//! A benchmark, not a test.

#[path = "ceiling.rs"]
mod ceiling;
#[path = "common.rs"]
mod common;

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
    let mut argv = std::env::args().skip(1).peekable();
    if argv.peek().is_some_and(|a| a == "gpu") {
        argv.next();
        let log2: u32 = argv.next().map_or(28, |a| a.parse().expect("LOG2_N"));
        gpu::run(log2);
        return;
    }
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

/// The GPU mode.
mod gpu {
    use crate::ceiling::Ceilings;
    use crate::common::{RUNS, WARM_UP_S, gib, timestamps};
    use phobos_core::Program;
    use phobos_core::launch::Arg;
    use phobos_core::tensor::{Data, Tensor};
    use phobos_core::types::Value;
    use phobos_runtime::Precision;
    use phobos_runtime::gpu::Gpu;
    use phobos_tandem::{Bulk, Key, Tandem};

    const KERNELS: &str = "
@autotune(R in [4, 16, 64])
kernel stepped(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], s: f32, key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + s * tandem_normal(key, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [4, 16, 64])
kernel direct(X: tensor<f32>[M, 256], C: tensor<i32>[M, 256], Y: tensor<f32>[M, 256], s: f32, key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + s * tandem_normal(key, C[r :+ R, :])
}
@autotune(R in [4, 16, 64])
kernel map_only(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], s: f32, key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + s * _tandem_box_muller((u32((r + iota(0)) * 256 + iota(1)) * 2654435761) ^ key, (u32((r + iota(0)) * 256 + iota(1)) * 2246822519) ^ key, u32(iota(1)) & 1)
}
";

    /// Elements of output `o` of `args` whose bits differ from `want`.
    fn differing(args: &[Arg], o: usize, want: &[f32]) -> usize {
        let Arg::Tensor(Tensor {
            data: Data::F32(y), ..
        }) = &args[o]
        else {
            unreachable!("Y is an f32 tensor")
        };
        y.iter()
            .zip(want)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count()
    }

    pub fn run(log2: u32) {
        let n = 1usize << log2;
        let rows = n / 256;
        let (s, key) = (0.25f32, 32u32);
        let gpu = Gpu::shared().unwrap_or_else(|e| panic!("{e}"));
        let (program, diags) = Program::parse("bench.ph", KERNELS);
        assert!(diags.is_empty(), "{diags:?}");
        let x: Vec<f32> = (0..n).map(|i| 1.0 + (i % 1000) as f32 * 1e-3).collect();
        let bulk = Bulk::new(Tandem::new(Key::from_seed(u64::from(key))));
        let mut z = vec![0f32; n];
        bulk.fill_normal_f32(&mut z, 0).expect("fills");
        let want: Vec<f32> = x.iter().zip(&z).map(|(xi, zi)| xi + s * zi).collect();
        drop(z);
        let xt = Tensor {
            shape: vec![rows, 256],
            data: Data::F32(x),
        };
        // Poisoned, so that a kernel that writes nothing fails the check.
        let poison = Tensor {
            shape: vec![rows, 256],
            data: Data::F32(vec![f32::from_bits(0x7fba_d000); n]),
        };
        let counters = Tensor {
            shape: vec![rows, 256],
            data: Data::I32((0..n as i32).collect()),
        };
        let stepped_args = vec![
            Arg::Tensor(xt.clone()),
            Arg::Tensor(poison.clone()),
            Arg::Scalar(Value::F32(s)),
            Arg::Scalar(Value::U32(key)),
        ];
        let direct_args = vec![
            Arg::Tensor(xt),
            Arg::Tensor(counters),
            Arg::Tensor(poison),
            Arg::Scalar(Value::F32(s)),
            Arg::Scalar(Value::U32(key)),
        ];
        println!("device: {}", gpu.describe());
        println!(
            "Y = X + s * tandem_normal(key, i) on [2^{} rows, 256] = 2^{log2} elements, exact mode; median (fastest) of {RUNS} GPU timestamps after {WARM_UP_S} s of warm-up\n",
            log2 - 8
        );
        let bytes = 4 * n as u64;
        let mut ceilings = Ceilings::new(gpu);
        let copy = ceilings.copy(bytes);
        let zero = ceilings.zero(bytes);
        println!("| what | ms median | GiB/s median (fastest) | % of copy | bits vs fill + add |");
        println!("|---|---|---|---|---|");
        println!(
            "| copy ceiling (X to Y, WGSL of the true shape) | {:.3} | {:.0} ({:.0}) | 100 | |",
            copy.0 * 1e3,
            gib(2 * bytes, copy.0),
            gib(2 * bytes, copy.1)
        );
        println!(
            "| zero-fill ceiling (Y only) | {:.3} | {:.0} ({:.0}) | | |",
            zero.0 * 1e3,
            gib(bytes, zero.0),
            gib(bytes, zero.1)
        );
        let mut medians = Vec::new();
        for config in program.configs("stepped") {
            let r = config[0].1;
            for (kname, name, args, out, moved) in [
                (
                    "stepped",
                    "contiguous counters (stepped)",
                    &stepped_args,
                    1,
                    2 * bytes,
                ),
                (
                    "direct",
                    "counters from a tensor (seeded per draw)",
                    &direct_args,
                    2,
                    3 * bytes,
                ),
                (
                    "map_only",
                    "the normal map alone on hashed words (floor)",
                    &stepped_args,
                    0,
                    2 * bytes,
                ),
            ] {
                let kernel = program.kernel(kname, &config).expect("checks");
                let prepared = gpu
                    .prepare(&kernel, args, Precision::Exact)
                    .expect("prepare");
                let t = timestamps(gpu, |enc, ts| prepared.encode(enc, ts));
                let mut got = args.clone();
                gpu.read_back(&kernel, &prepared, &mut got)
                    .expect("read back");
                let bad = if out == 0 {
                    0
                } else {
                    differing(&got, out, &want)
                };
                let (median, fastest) = (t[t.len() / 2], t[0]);
                medians.push((r, out, median));
                println!(
                    "| R={r} {name}, workgroup {} | {:.3} | {:.0} ({:.0}) | {:.1} | {} |",
                    phobos_runtime::gpu::workgroup_size(&kernel),
                    median * 1e3,
                    gib(moved, median),
                    gib(moved, fastest),
                    100.0 * gib(moved, median) / gib(2 * bytes, copy.0),
                    if out == 0 {
                        "not the stream".to_string()
                    } else if bad == 0 {
                        "equal".to_string()
                    } else {
                        format!("{bad} of {n} differ")
                    }
                );
            }
        }
        for (r, _, stepped) in medians.iter().filter(|m| m.1 == 1) {
            if let Some(m) = medians.iter().find(|m| m.0 == *r && m.1 == 0) {
                println!(
                    "R={r}: the normal map alone takes {:.0}% of the stepped kernel's time",
                    100.0 * m.2 / stepped
                );
            }
            let direct = medians
                .iter()
                .find(|m| m.0 == *r && m.1 == 2)
                .map_or(f64::NAN, |m| m.2);
            println!(
                "R={r}: stepped is {:.1}x faster than seeded per draw",
                direct / stepped
            );
        }
    }
}
