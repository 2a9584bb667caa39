//! Known answers: the stdlib as compiled from `std/random.ph` and
//! `std/math.ph` against the plain-Rust model in `src/model.rs`, bit for
//! bit, over many seeds and counters including the extremes of i32.

use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::Scalar;
use phobos_tests::{model, program, tensor};

const KAT: &str = "
kernel kat(C: tensor<i32>[N], S: tensor<i32>[N], X: tensor<f32>[N],
           H: tensor<i32>[N], U: tensor<f32>[N], G: tensor<f32>[N], D: tensor<f32>[N]) {
  H = hash32(C)
  U = uniform(S, C)
  G = randn(S, C)
  D = dropout(X, 0.3, S, C)
}
";

/// Seeds and counters: small, negative, extreme, and scattered.
fn cases() -> Vec<(i32, i32)> {
    let mut specials: Vec<i32> = vec![
        0,
        1,
        2,
        3,
        -1,
        -2,
        255,
        256,
        65535,
        65536,
        i32::MAX,
        i32::MIN,
        i32::MIN + 1,
        i32::MAX - 1,
    ];
    let mut x: u32 = 0x1234_5678;
    for _ in 0..40 {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        specials.push(x as i32);
    }
    let mut out = Vec::new();
    for &s in &specials {
        for c in 0..64 {
            out.push((s, c));
        }
        for &c in &specials {
            out.push((s, c));
        }
    }
    out
}

#[test]
fn stdlib_random_matches_the_model() {
    let p = program("kat.ph", KAT);
    let k = p.kernel("kat", &[]).unwrap();
    let cases = cases();
    let n = cases.len();
    let xs: Vec<f32> = (0..n).map(|i| 0.5 + i as f32 / 7.0).collect();
    let mut args = vec![
        Arg::Tensor(Tensor {
            shape: vec![n],
            data: Data::I32(cases.iter().map(|c| c.1).collect()),
        }),
        Arg::Tensor(Tensor {
            shape: vec![n],
            data: Data::I32(cases.iter().map(|c| c.0).collect()),
        }),
        Arg::Tensor(Tensor {
            shape: vec![n],
            data: Data::F32(xs.clone()),
        }),
        Arg::Tensor(Tensor::zeros(Scalar::I32, &[n])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
    ];
    phobos_tests::run_everywhere(&k, &mut args);
    let (h, u, g, d) = (
        tensor(&args[3]),
        tensor(&args[4]),
        tensor(&args[5]),
        tensor(&args[6]),
    );
    let mut bad = Vec::new();
    for (i, &(s, c)) in cases.iter().enumerate() {
        let want = [
            ("hash32", model::hash32(c) as u32, h.get(i).bits() as u32),
            (
                "uniform",
                model::uniform(s, c).to_bits(),
                u.get(i).bits() as u32,
            ),
            (
                "randn",
                model::randn(s, c).to_bits(),
                g.get(i).bits() as u32,
            ),
            (
                "dropout",
                model::dropout(xs[i], 0.3, s, c).to_bits(),
                d.get(i).bits() as u32,
            ),
        ];
        for (f, w, got) in want {
            if w != got {
                bad.push(format!(
                    "{f}(seed {s}, counter {c}): want {w:#010x}, got {got:#010x}"
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches, first: {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

#[test]
fn hash32_known_values() {
    // lowbias32, computed independently (Python, unbounded integers masked to 32 bits).
    for (x, want) in [
        (0u32, 0u32),
        (1, 0x6889_90c0),
        (2, 0xd113_2181),
        (0xffff_ffff, 0x6768_824a),
        (0x8000_0000, 0xcc4b_4124),
        (12345, 0x912e_fcf7),
    ] {
        assert_eq!(model::hash32(x as i32) as u32, want, "hash32({x:#x})");
    }
}

#[test]
fn the_seed_figure_caption() {
    // The seed's page: "uniform: 256 counters, mean 0.513" under seed 1.
    let mean: f64 = (0..256).map(|c| model::uniform(1, c) as f64).sum::<f64>() / 256.0;
    assert_eq!(format!("{mean:.3}"), "0.513");
}

const MATH: &str = "
kernel math(X: tensor<f32>[N], L: tensor<f32>[N], C: tensor<f32>[N]) {
  L = log(X)
  C = cos(X)
}
";

fn ulps(a: f32, exact: f64) -> f64 {
    let e = exact as f32;
    if a == e || (a.is_nan() && exact.is_nan()) {
        return 0.0;
    }
    let ulp = f32::from_bits(e.abs().to_bits() + 1) - e.abs();
    ((a as f64 - exact) / ulp as f64).abs()
}

#[test]
fn exact_log_and_cos_are_accurate_and_match_the_model() {
    let mut xs: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        1e-45,
        3e-40,
        f32::MAX,
        0.5,
        2.0,
        3.0,
        1e-10,
        1e10,
        std::f32::consts::TAU,
        std::f32::consts::PI,
        std::f32::consts::FRAC_PI_2,
        100.0,
        8191.0,
    ];
    let mut x: u32 = 7;
    for _ in 0..20000 {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        xs.push(f32::from_bits(x >> 1));
        xs.push((x >> 8) as f32 / 16_777_216.0 * 6.3);
    }
    let p = program("math.ph", MATH);
    let k = p.kernel("math", &[]).unwrap();
    let n = xs.len();
    let mut args = vec![
        Arg::Tensor(Tensor {
            shape: vec![n],
            data: Data::F32(xs.clone()),
        }),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
    ];
    phobos_tests::run_everywhere(&k, &mut args);
    let (l, c) = (tensor(&args[1]), tensor(&args[2]));
    let (mut worst_log, mut worst_cos) = (0.0f64, 0.0f64);
    for (i, &x) in xs.iter().enumerate() {
        let (lg, cs) = (l.get(i).as_f64() as f32, c.get(i).as_f64() as f32);
        // A NaN stored to a tensor is the canonical quiet NaN (ops.rs);
        // the model computes on the host, whose NaNs may differ.
        let stored = |v: f32| if v.is_nan() { 0x7FC0_0000 } else { v.to_bits() };
        assert_eq!(
            lg.to_bits(),
            stored(model::log(x)),
            "log({x:e}) differs from the model"
        );
        assert_eq!(
            cs.to_bits(),
            stored(model::cos(x)),
            "cos({x:e}) differs from the model"
        );
        if x > 0.0 && x.is_finite() {
            worst_log = worst_log.max(ulps(lg, (x as f64).ln()));
        }
        if x.abs() < 8192.0 {
            let exact = (x as f64).cos();
            assert!(
                (cs as f64 - exact).abs() < 1.2e-7,
                "cos({x:e}) = {cs:e}, exactly {exact:e}"
            );
            if exact.abs() > 0.01 {
                worst_cos = worst_cos.max(ulps(cs, exact));
            }
        }
    }
    assert!(worst_log <= 1.0, "log is {worst_log} ulp off");
    assert!(worst_cos <= 2.0, "cos is {worst_cos} ulp off");
    let at = |v: f32| xs.iter().position(|&x| x.to_bits() == v.to_bits()).unwrap();
    assert_eq!(l.get(at(0.0)).as_f64(), f64::NEG_INFINITY);
    assert!(l.get(at(-1.0)).as_f64().is_nan());
    assert_eq!(l.get(at(f32::INFINITY)).as_f64(), f64::INFINITY);
    assert!(c.get(at(f32::INFINITY)).as_f64().is_nan());
    assert_eq!(c.get(at(0.0)).as_f64(), 1.0);
}

/// A `let`/`var` tile whose extent is a dim bound to 0 is empty on every
/// backend: reading its element 0 reads outside it, which gives 0, as a
/// tensor's does. On the GPU `lower::specialize` keeps the extent 0 (the
/// workgroup array alone has one element, which nothing reads), and tile
/// loops over it run no times without dividing by the constant 0 (`v2`,
/// whose inner extent is the divisor). Found by
/// the kernel generator (seeds 5511 of h14b's, 8550 of the merged one).
#[test]
fn an_empty_tile_reads_zero_on_every_backend() {
    let p = program(
        "empty.ph",
        "kernel k(T1: tensor<f32>[M], T2: tensor<f32>[3]) {
  var v1: tile<f32>[M] = f32(T1[0 :+ M]) + 3.0e38
  let w = T1[0 :+ M] + 5.0
  var v2: tile<f32>[2, M] = 7.0
  T2[0] = v1[0]
  T2[1] = w[0]
  T2[2] = v2[1, 0]
}",
    );
    let k = p.kernel("k", &[]).unwrap();
    for (m, want) in [(0usize, [0.0f32, 0.0, 0.0]), (1, [3.0e38, 5.0, 7.0])] {
        let inputs = vec![
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m])),
            Arg::Tensor(Tensor {
                shape: vec![3],
                data: Data::F32(vec![-1.0; 3]),
            }),
        ];
        let mut args = inputs.clone();
        phobos_tests::run_everywhere(&k, &mut args);
        let Data::F32(got) = &tensor(&args[1]).data else {
            panic!("T2 is f32")
        };
        assert_eq!(got.as_slice(), want.as_slice(), "M = {m}");
        if phobos_tests::gpu_available() {
            assert_eq!(
                phobos_tests::matches_on_gpu(&k, &inputs, &args),
                Ok(true),
                "the GPU differs at M = {m}"
            );
        }
    }
}
