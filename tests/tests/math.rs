//! The math builtins and `std/math.ph`'s functions through the public
//! surface: identical bits on the interpreter, Cranelift and the GPU
//! (lavapipe in CI), their special values, and their accuracy against
//! correctly rounded references (Rust's f64 `exp`, `tanh`, `sqrt`, the
//! `libm` crate's `erf`, and `f32::mul_add`, which is IEEE's fused
//! multiply-add).
//!
//! The accuracy test samples every `PHOBOS_MATH_STEP`-th f32 of each
//! function's range (default 251) on Cranelift; `PHOBOS_MATH_STEP=1` checks
//! every f32 in it (minutes in a release build:
//! `cargo test --release -p phobos-tests --test math`).

use phobos_core::ir::Kernel;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::Scalar;
use phobos_runtime::{Backend, Options, launch};
use phobos_tests::{program, tensor};

/// Every function over the same inputs: one output each.
const ALL: &str = "
kernel math(X: tensor<f32>[N], W: tensor<f32>[N], V: tensor<f32>[N],
            E: tensor<f32>[N], T: tensor<f32>[N], F: tensor<f32>[N], R: tensor<f32>[N],
            S: tensor<f32>[N], A: tensor<f32>[N], MN: tensor<f32>[N], MX: tensor<f32>[N],
            CL: tensor<f32>[N], FM: tensor<f32>[N], L: tensor<f32>[N], AI: tensor<i32>[N],
            CI: tensor<i32>[N]) {
  E = exp(X)
  T = tanh(X)
  F = erf(X)
  R = rsqrt(X)
  S = sqrt(X)
  A = abs(X)
  MN = min(X, W)
  MX = max(X, W)
  CL = clamp(X, -1.5, W)
  FM = fma(X, W, V)
  L = log(X)
  AI = abs(i32(W * 1000.0))
  CI = clamp(i32(X), -3, 7)
}
";

const OUTPUTS: [&str; 13] = [
    "E", "T", "F", "R", "S", "A", "MN", "MX", "CL", "FM", "L", "AI", "CI",
];

fn f32s(args: &[Arg], i: usize) -> Vec<f32> {
    match &tensor(&args[i]).data {
        Data::F32(v) => v.clone(),
        _ => panic!("not f32"),
    }
}

fn i32s(args: &[Arg], i: usize) -> Vec<i32> {
    match &tensor(&args[i]).data {
        Data::I32(v) => v.clone(),
        _ => panic!("not i32"),
    }
}

fn input(v: Vec<f32>) -> Arg {
    Arg::Tensor(Tensor {
        shape: vec![v.len()],
        data: Data::F32(v),
    })
}

/// Special values, thresholds and their neighbours.
fn specials() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
        3e-40,
        f32::MAX,
        f32::MIN,
        88.72283,
        88.72284,
        89.0,
        -87.33655,
        -103.97207,
        -103.97208,
        -104.0,
        0.625,
        0.84375,
        4.0,
        3.92,
        2.4414062e-4,
        9.01,
        1e-10,
        -1e-10,
        1e30,
        -1e30,
    ];
    let n = v.len();
    for i in 0..n {
        let x = v[i];
        if x.is_finite() && x != 0.0 {
            v.push(f32::from_bits(x.to_bits() + 1));
            v.push(f32::from_bits(x.to_bits() - 1));
        }
    }
    v
}

/// Specials, then random bit patterns and random values of moderate size.
fn inputs(n_random: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut xs = specials();
    let s = xs.len();
    // Every special against every special in the two-argument functions.
    let mut ws: Vec<f32> = (0..s).map(|i| xs[(i * 7 + 3) % s]).collect();
    let mut vs: Vec<f32> = (0..s).map(|i| xs[(i * 13 + 5) % s]).collect();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..n_random {
        let r = next();
        let pick = |r: u64| -> f32 {
            if i % 2 == 0 {
                f32::from_bits(r as u32)
            } else {
                // Moderate: sign, exponent in [-30, 30], any significand.
                let e = ((r >> 32) % 61) as u32 + 97;
                f32::from_bits(((r >> 63) as u32) << 31 | e << 23 | (r as u32 & 0x7f_ffff))
            }
        };
        let (a, b) = (pick(r), pick(next()));
        xs.push(a);
        ws.push(b);
        // A third of the addends nearly cancel the product.
        let c = if i % 3 == 0 {
            -(a * b) * (1.0 + (next() % 8) as f32 * f32::EPSILON)
        } else {
            pick(next())
        };
        vs.push(c);
    }
    (xs, ws, vs)
}

fn all_args(xs: &[f32], ws: &[f32], vs: &[f32]) -> Vec<Arg> {
    let n = xs.len();
    let mut args = vec![input(xs.to_vec()), input(ws.to_vec()), input(vs.to_vec())];
    for name in OUTPUTS {
        let elem = if name.ends_with('I') {
            Scalar::I32
        } else {
            Scalar::F32
        };
        args.push(Arg::Tensor(Tensor::zeros(elem, &[n])));
    }
    args
}

fn kernel(text: &str, name: &str) -> Kernel {
    program("math.ph", text).kernel(name, &[]).unwrap()
}

/// The bits a stored f32 has: any NaN is the canonical one.
fn stored(v: f32) -> u32 {
    if v.is_nan() { 0x7FC0_0000 } else { v.to_bits() }
}

#[test]
fn every_backend_gives_the_same_bits() {
    let (xs, ws, vs) = inputs(20_000);
    let k = kernel(ALL, "math");
    let inputs = all_args(&xs, &ws, &vs);
    // Interpreter against Cranelift and the GPU, bit for bit.
    let args = phobos_tests::run_on_every_backend(&k, &inputs, "math");
    check_values(&xs, &ws, &vs, &args);
}

/// The defined values: special cases exactly, `abs`/`min`/`max`/`clamp`/
/// `sqrt`/`fma` against their definitions, the others within their bounds.
fn check_values(xs: &[f32], ws: &[f32], vs: &[f32], args: &[Arg]) {
    let out = |name: &str| f32s(args, 3 + OUTPUTS.iter().position(|o| *o == name).unwrap());
    let (e, t, f, r, s, a) = (out("E"), out("T"), out("F"), out("R"), out("S"), out("A"));
    let (mn, mx, cl, fm) = (out("MN"), out("MX"), out("CL"), out("FM"));
    let ai = i32s(args, 3 + 11);
    let ci = i32s(args, 3 + 12);
    for (i, ((&x, &w), &v)) in xs.iter().zip(ws).zip(vs).enumerate() {
        let x64 = x as f64;
        let same = |got: f32, want: f32, what: &str| {
            assert_eq!(
                got.to_bits(),
                stored(want),
                "{what}({x:e}, {w:e}, {v:e}) = {got:e}, want {want:e}"
            )
        };
        same(s[i], x.sqrt(), "sqrt");
        same(a[i], x.abs(), "abs");
        same(mn[i], if w < x { w } else { x }, "min");
        same(mx[i], if w > x { w } else { x }, "max");
        let lo = if -1.5 > x { -1.5 } else { x };
        same(cl[i], if w < lo { w } else { lo }, "clamp");
        assert_eq!(ai[i], ((w * 1000.0) as i32).wrapping_abs(), "abs(i32)");
        assert_eq!(ci[i], (x as i32).clamp(-3, 7), "clamp(i32)");
        // fma: IEEE's fused multiply-add, except a subnormal result from a
        // product below 2^-100, rounded twice (within 1 ulp).
        let want = x.mul_add(w, v);
        let twice = want.abs() < f32::MIN_POSITIVE && (x as f64 * w as f64).abs() < 2f64.powi(-100);
        if !(twice && ulps(fm[i], x64 * w as f64 + v as f64) < 1.0) {
            same(fm[i], want, "fma");
        }
        if x.is_nan() {
            for (g, name) in [
                (e[i], "exp"),
                (t[i], "tanh"),
                (f[i], "erf"),
                (r[i], "rsqrt"),
            ] {
                assert!(g.is_nan(), "{name}(NaN) = {g}");
            }
            continue;
        }
        assert!(ulps(e[i], x64.exp()) <= 1.0, "exp({x:e}) = {:e}", e[i]);
        assert!(ulps(t[i], x64.tanh()) <= 1.5, "tanh({x:e}) = {:e}", t[i]);
        assert!(ulps(f[i], libm::erf(x64)) <= 1.5, "erf({x:e}) = {:e}", f[i]);
        assert!(
            ulps(r[i], 1.0 / x64.sqrt()) <= 1.5,
            "rsqrt({x:e}) = {:e}",
            r[i]
        );
        if x == 0.0 || x.is_infinite() {
            // Signs of zeros and infinities exactly.
            same(e[i], x64.exp() as f32, "exp");
            same(t[i], x64.tanh() as f32, "tanh");
            same(f[i], libm::erf(x64) as f32, "erf");
            same(r[i], (1.0 / x64.sqrt()) as f32, "rsqrt");
        }
    }
}

/// The error of `got` in units in the last place of f32 at `exact`: 0 when
/// equal (NaN to NaN, infinity to an exact value that rounds to it).
fn ulps(got: f32, exact: f64) -> f64 {
    if got.to_bits() == (exact as f32).to_bits() || (got.is_nan() && exact.is_nan()) {
        return 0.0;
    }
    if !got.is_finite() || exact.is_nan() {
        return f64::INFINITY;
    }
    let e = (exact.abs().max(f32::MIN_POSITIVE as f64)).log2().floor() as i32;
    let ulp = 2f64.powi((e - 23).max(-149));
    (got as f64 - exact).abs() / ulp
}

/// Every `step`-th f32 from `lo` up to `hi` (both finite), handed to `f`
/// in chunks of 2^22, so that a run over every f32 needs little memory.
fn in_chunks(lo: f32, hi: f32, step: u32, mut f: impl FnMut(&[f32])) {
    let mut chunk = Vec::with_capacity(1 << 22);
    let mut x = lo;
    while x <= hi {
        chunk.push(x);
        if chunk.len() == 1 << 22 {
            f(&chunk);
            chunk.clear();
        }
        let b = x.to_bits();
        x = if x > 0.0 || b == 0 {
            f32::from_bits(b + step)
        } else if b >= 0x8000_0000 + step {
            f32::from_bits(b - step)
        } else {
            f32::from_bits(0)
        };
    }
    f(&chunk);
}

/// Runs one unary function of `std/math.ph` on Cranelift over `xs`.
fn on_cpu(f: &str, xs: &[f32]) -> Vec<f32> {
    let text = format!("kernel k(X: tensor<f32>[N], Y: tensor<f32>[N]) {{\n  Y = {f}(X)\n}}\n");
    let k = kernel(&text, "k");
    let mut args = vec![input(xs.to_vec()), input(vec![0.0; xs.len()])];
    let options = Options {
        backend: Backend::Cpu,
        ..Options::default()
    };
    launch(&k, &mut args, &options).unwrap();
    f32s(&args, 1)
}

#[test]
fn accuracy_over_dense_ranges() {
    let step: u32 = std::env::var("PHOBOS_MATH_STEP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(251);
    // (function, range, reference, bound in ulp): the bounds docs/language.md states.
    type Reference = fn(f64) -> f64;
    let cases: [(&str, f32, f32, Reference, f64); 4] = [
        ("exp", -110.0, 90.0, f64::exp, 1.0),
        ("tanh", -12.0, 12.0, f64::tanh, 1.5),
        ("erf", -5.0, 5.0, libm::erf, 1.5),
        ("rsqrt", 0.0, f32::MAX, |x| 1.0 / x.sqrt(), 1.5),
    ];
    for (f, lo, hi, reference, bound) in cases {
        let (mut worst, mut at, mut correct, mut n) = (0.0f64, 0.0f32, 0usize, 0usize);
        in_chunks(lo, hi, step, |chunk| {
            let ys = on_cpu(f, chunk);
            for (&x, &y) in chunk.iter().zip(&ys) {
                let u = ulps(y, reference(x as f64));
                if u == 0.0 {
                    correct += 1;
                }
                if u > worst {
                    (worst, at) = (u, x);
                }
            }
            n += chunk.len();
        });
        let line = format!(
            "{f} on 1 in {step} f32s of [{lo:e}, {hi:e}] ({n} values): max {worst:.3} ulp at {at:e}, {:.2}% correctly rounded",
            100.0 * correct as f64 / n as f64
        );
        eprintln!("{line}");
        assert!(worst <= bound, "{line}; the bound is {bound}");
    }
}

#[test]
fn fma_is_the_fused_multiply_add() {
    // Random triples over the whole exponent range and near-cancelling
    // ones, on Cranelift, against IEEE's fusedMultiplyAdd (f32::mul_add).
    let (xs, ws, vs) = inputs(400_000);
    let text = "kernel k(X: tensor<f32>[N], W: tensor<f32>[N], V: tensor<f32>[N], Y: tensor<f32>[N]) {\n  Y = fma(X, W, V)\n}\n";
    let k = kernel(text, "k");
    let n = xs.len();
    let mut args = vec![
        input(xs.clone()),
        input(ws.clone()),
        input(vs.clone()),
        input(vec![0.0; n]),
    ];
    let options = Options {
        backend: Backend::Cpu,
        ..Options::default()
    };
    launch(&k, &mut args, &options).unwrap();
    let ys = f32s(&args, 3);
    let (mut twice, mut worst) = (0usize, 0.0f64);
    for i in 0..n {
        let (a, b, c) = (xs[i], ws[i], vs[i]);
        let want = a.mul_add(b, c);
        if ys[i].to_bits() == stored(want) {
            continue;
        }
        // The one documented exception: a subnormal result of a product
        // below 2^-100, rounded twice.
        let exact = a as f64 * b as f64 + c as f64;
        let u = ulps(ys[i], exact);
        assert!(
            want.abs() < f32::MIN_POSITIVE
                && (a as f64 * b as f64).abs() < 2f64.powi(-100)
                && u < 1.0,
            "fma({a:e}, {b:e}, {c:e}) = {:e}, want {want:e}",
            ys[i]
        );
        twice += 1;
        worst = worst.max(u);
    }
    eprintln!("fma: {n} triples, {twice} subnormal results rounded twice (max {worst:.3} ulp)");
}

#[test]
fn math_functions_take_f32() {
    let (p, mut d) = phobos_core::Program::parse(
        "m.ph",
        "kernel k(X: tensor<f64>[N], Y: tensor<f64>[N]) {\n  Y = exp(X)\n}\n",
    );
    d.extend(p.check());
    let text = phobos_core::render(&d, &p.sources, false);
    assert!(text.contains("must be f32, not f64"), "{text}");
}

/// `--precision fast` computes `exp`, `log`, `cos`, `tanh` and `rsqrt` with
/// the driver's functions (`Builtin::Native`), within the accuracy WGSL
/// requires of them, which the lowering's tests see in the WGSL. Skips
/// without a GPU.
#[test]
fn fast_mode_uses_the_drivers_functions_within_their_accuracy() {
    if !phobos_tests::gpu_available() {
        return;
    }
    let src = "
kernel natives(X: tensor<f32>[N], E: tensor<f32>[N], L: tensor<f32>[N], C: tensor<f32>[N],
               T: tensor<f32>[N], R: tensor<f32>[N]) {
  E = exp(X * 10.0 - 5.0)
  L = log(X * 100.0 + 0.01)
  C = cos(X * 6.2831855 - 3.1415927)
  T = tanh(X * 12.0 - 6.0)
  R = rsqrt(X * 100.0 + 0.01)
}";
    let k = kernel(src, "natives");
    let n = 4099;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 / (n - 1) as f32).collect();
    let mut args = vec![input(xs.clone())];
    args.extend((0..5).map(|_| Arg::Tensor(Tensor::zeros(Scalar::F32, &[n]))));
    let options = Options {
        backend: Backend::Gpu,
        precision: phobos_runtime::Precision::Fast,
        ..Options::default()
    };
    launch(&k, &mut args, &options).expect("fast mode runs");
    let out = |i: usize| f32s(&args, i);
    let (e, l, c, t, r) = (out(1), out(2), out(3), out(4), out(5));
    for (i, &x) in xs.iter().enumerate() {
        // The arguments as the kernel rounds them (exact f32 operations).
        let (xe, xl) = ((x * 10.0 - 5.0) as f64, (x * 100.0 + 0.01) as f64);
        let xc = (x * std::f32::consts::TAU - std::f32::consts::PI) as f64;
        let xt = (x * 12.0 - 6.0) as f64;
        // WGSL: exp 3 + 2|x| ulp; log 3 ulp, or 2^-21 absolute in [0.5, 2];
        // cos 2^-11 absolute in [-pi, pi]; inverseSqrt 2 ulp; tanh follows
        // from exp (within 1e-5 absolute here).
        assert!(
            ulps(e[i], xe.exp()) <= 3.0 + 2.0 * xe.abs(),
            "exp({xe}) = {}",
            e[i]
        );
        let log_ok = ulps(l[i], xl.ln()) <= 3.0 || (l[i] as f64 - xl.ln()).abs() <= 2f64.powi(-21);
        assert!(log_ok, "log({xl}) = {}", l[i]);
        assert!(
            (c[i] as f64 - xc.cos()).abs() <= 2f64.powi(-11),
            "cos({xc}) = {}",
            c[i]
        );
        assert!(
            (t[i] as f64 - xt.tanh()).abs() <= 1e-5,
            "tanh({xt}) = {}",
            t[i]
        );
        assert!(ulps(r[i], 1.0 / xl.sqrt()) <= 2.0, "rsqrt({xl}) = {}", r[i]);
    }
}
