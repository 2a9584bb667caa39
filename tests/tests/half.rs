//! f16 and bf16 tensors: loads widen exactly, stores and `f16(x)`/`bf16(x)`
//! round to nearest even, and every backend gives the interpreter's bits,
//! on every 16-bit pattern, at tile edges where two elements of a word
//! belong to different invocations, and on odd element counts.

use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::{Scalar, Value, half_bits, half_value};
use phobos_tests::{program, run_on_every_backend, tensor};

const SOURCE: &str = r#"
@autotune(R in [1, 3])
kernel halves(X: tensor<f16>[M, N], B: tensor<bf16>[M, N], Y: tensor<f16>[M, N],
              Z: tensor<f32>[M, N], W: tensor<bf16>[M, N]) {
  let r = ctx.block.x * R
  let x = X[r :+ R, :]
  Y[r :+ R, :] = x * 3.0 + B[r :+ R, :]
  Z[r :+ R, :] = f16(x * 1.1) + bf16(B[r :+ R, :] / 3.0) + f16(r + iota(0))
  W[r :+ R, :] = x * B[r :+ R, :]
}
"#;

fn kernel(r: i64) -> phobos_core::ir::Kernel {
    program("halves.ph", SOURCE)
        .kernel("halves", &[("R".to_string(), r)])
        .unwrap_or_else(|d| panic!("{d:?}"))
}

/// A tensor of `elem` whose element `i` has the bits `bits(i)`.
fn from_bits(elem: Scalar, shape: &[usize], bits: impl Fn(usize) -> u16) -> Tensor {
    Tensor::from_fn(elem, shape, |i| Value::F32(half_value(elem, bits(i))))
}

fn inputs(m: usize, n: usize) -> Vec<Arg> {
    let shape = [m, n];
    // Every pattern once (for m * n = 65536), in two different orders.
    let x = from_bits(Scalar::F16, &shape, |i| i as u16);
    let b = from_bits(Scalar::BF16, &shape, |i| (i as u16).wrapping_mul(40_503));
    vec![
        Arg::Tensor(x),
        Arg::Tensor(b),
        Arg::Tensor(Tensor::zeros(Scalar::F16, &shape)),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &shape)),
        Arg::Tensor(Tensor::zeros(Scalar::BF16, &shape)),
    ]
}

/// The meaning, element by element, from the core's conversions.
fn expected(args: &[Arg], i: usize, n: usize) -> (u16, u32, u16) {
    let x = tensor(&args[0]).get(i).as_f64() as f32;
    let b = tensor(&args[1]).get(i).as_f64() as f32;
    let round = |elem, v: f32| half_value(elem, half_bits(elem, v));
    let canonical = |v: f32| if v.is_nan() { f32::NAN } else { v };
    let y = half_bits(Scalar::F16, canonical(x * 3.0 + b));
    let row = (i / n) as f32;
    let z = round(Scalar::F16, x * 1.1) + round(Scalar::BF16, b / 3.0) + round(Scalar::F16, row);
    let z = if z.is_nan() { 0x7fc0_0000 } else { z.to_bits() };
    let w = half_bits(Scalar::BF16, canonical(x * b));
    (y, z, w)
}

#[test]
fn every_16_bit_pattern_converts_as_the_core_defines_on_every_backend() {
    // 65536 elements: every f16 and every bf16 pattern; then an odd
    // count, whose last word is half used.
    for (m, n, r) in [(1024, 64, 1), (1024, 64, 3), (7, 33, 3)] {
        let k = kernel(r);
        let inputs = inputs(m, n);
        let out = run_on_every_backend(&k, &inputs, &format!("halves {m}x{n} R={r}"));
        for i in 0..m * n {
            let (y, z, w) = expected(&out, i, n);
            let got_y = half_bits(Scalar::F16, tensor(&out[2]).get(i).as_f64() as f32);
            assert_eq!(got_y, y, "Y[{i}] at {m}x{n}");
            assert_eq!(tensor(&out[3]).get(i).bits() as u32, z, "Z[{i}] at {m}x{n}");
            let got_w = half_bits(Scalar::BF16, tensor(&out[4]).get(i).as_f64() as f32);
            assert_eq!(got_w, w, "W[{i}] at {m}x{n}");
        }
    }
}

/// 16-bit types are storage types: where a value would have one, the
/// checker says so at the type, and conversions that would round twice
/// are refused.
#[test]
fn sixteen_bit_values_are_refused_with_their_location() {
    let cases = [
        (
            "kernel k(X: tensor<f32>[4], s: f16) { X[:] = X[:] }",
            "a scalar parameter cannot be f16",
        ),
        (
            "kernel k(X: tensor<f32>[4]) { var t: tile<bf16>[4] = 0.0\n X[:] = t }",
            "a `var` tile cannot be bf16",
        ),
        (
            "kernel k(X: tensor<f64>[4], Y: tensor<f32>[4]) { Y[:] = f16(X[:]) }",
            "cannot convert f64 to f16",
        ),
        (
            "kernel k(X: tensor<i32>[4], Y: tensor<f32>[4]) { Y[:] = bf16(X[:]) }",
            "cannot convert i32 to bf16",
        ),
    ];
    phobos_tests::assert_located_errors(&cases);
}

const WIDEN: &str = r#"
kernel widen(X: tensor<f16>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 256
  Y[i :+ 256] = X[i :+ 256]
}
"#;

/// Fast mode widens f16 loads with the hardware's `unpack2x16float`: every
/// pattern gives the core's value, but a NaN (any NaN) and a subnormal,
/// which a driver may flush to a zero of its sign.
#[test]
fn fast_mode_widens_every_f16_as_the_core_does() {
    if !phobos_tests::gpu_available() {
        return;
    }
    let k = program("widen.ph", WIDEN)
        .kernel("widen", &[])
        .unwrap_or_else(|d| panic!("{d:?}"));
    let mut args = vec![
        Arg::Tensor(from_bits(Scalar::F16, &[65536], |i| i as u16)),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[65536])),
    ];
    let options = phobos_runtime::Options {
        backend: phobos_runtime::Backend::Gpu,
        precision: phobos_runtime::Precision::Fast,
        ..phobos_runtime::Options::default()
    };
    phobos_runtime::launch(&k, &mut args, &options).unwrap_or_else(|e| panic!("{e}"));
    let y = tensor(&args[1]);
    for bits in 0..=u16::MAX {
        let want = half_value(Scalar::F16, bits);
        let got = y.get(usize::from(bits)).as_f64() as f32;
        let subnormal = bits & 0x7c00 == 0 && bits & 0x03ff != 0;
        let ok = match () {
            _ if want.is_nan() => got.is_nan(),
            _ if subnormal => {
                got == want || (got == 0.0 && got.is_sign_negative() == want.is_sign_negative())
            }
            _ => got.to_bits() == want.to_bits(),
        };
        assert!(ok, "f16 {bits:#06x}: {want} but fast mode gave {got}");
    }
}
