//! `dot` and `trans`: `examples/matmul.ph` against a float64 reference, the
//! same bits on every backend (exact mode), the transpose and the
//! accumulator, and located errors for shapes that do not multiply.

use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::{Scalar, Value, half_bits, half_value};
use phobos_tests::{example_kernel, program, run_on_every_backend, tensor};

/// A tensor of `elem` with values in [-2, 2), from a fixed stream.
fn random(elem: Scalar, shape: &[usize], salt: u64) -> Tensor {
    Tensor::from_fn(elem, shape, |i| {
        let mut x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
        x ^= x >> 29;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^= x >> 32;
        let v = (x % 4096) as f32 / 1024.0 - 2.0;
        Value::F32(if elem.is_half() {
            half_value(elem, half_bits(elem, v))
        } else {
            v
        })
    })
}

fn f(t: &Tensor, i: usize) -> f64 {
    t.get(i).as_f64()
}

/// `matmul.ph` in each configuration, at shapes that do and do not divide
/// the tiles: the same f16 bits everywhere, within the f32 accumulation
/// and one f16 rounding of the float64 product.
#[test]
fn matmul_matches_float64_and_every_backend_agrees() {
    let k0 = example_kernel("matmul");
    let source = std::fs::read_to_string(phobos_tests::root().join("examples/matmul.ph")).unwrap();
    let p = program("matmul.ph", &source);
    for (m, n, kk) in [(64, 64, 64), (37, 70, 19), (16, 16, 1)] {
        for config in [[16, 16], [32, 64]] {
            let cfg = [("BM".to_string(), config[0]), ("BN".to_string(), config[1])];
            let k = p.kernel("matmul", &cfg).unwrap_or_else(|d| panic!("{d:?}"));
            assert_eq!(k.params.len(), k0.params.len());
            let a = random(Scalar::F16, &[m, kk], 1);
            let b = random(Scalar::F16, &[kk, n], 2);
            let inputs = vec![
                Arg::Tensor(a.clone()),
                Arg::Tensor(b.clone()),
                Arg::Tensor(Tensor::zeros(Scalar::F16, &[m, n])),
            ];
            let out = run_on_every_backend(&k, &inputs, &format!("matmul {m}x{n}x{kk} {config:?}"));
            let c = tensor(&out[2]);
            for i in 0..m {
                for j in 0..n {
                    let (mut want, mut mag) = (0.0f64, 0.0f64);
                    for q in 0..kk {
                        let p = f(&a, i * kk + q) * f(&b, q * n + j);
                        want += p;
                        mag += p.abs();
                    }
                    // f32 accumulation: at most K roundings of 2^-24 of the
                    // running magnitude; then one f16 rounding (2^-11).
                    let bound = mag * kk as f64 * 2f64.powi(-23) + want.abs() * 2f64.powi(-11);
                    let got = f(c, i * n + j);
                    assert!(
                        (got - want).abs() <= bound + 1e-7,
                        "C[{i}, {j}] = {got}, float64 {want} ({m}x{n}x{kk})"
                    );
                }
            }
        }
    }
}

/// `dot(a, trans(bt))` is `dot(a, b)` for `bt` the transpose of `b`, bit
/// for bit; `dot(a, b, acc)` starts from `acc`; every backend agrees.
#[test]
fn transpose_and_accumulator() {
    let src = r#"
kernel t(A: tensor<f32>[M, K], B: tensor<f32>[K, N], Bt: tensor<f32>[N, K],
         C: tensor<f32>[M, N], D: tensor<f32>[M, N], E: tensor<f32>[M, N]) {
  C[:, :] = dot(A[:, :], B[:, :])
  D[:, :] = dot(A[:, :], trans(Bt[:, :]))
  E[:, :] = dot(A[:, :], B[:, :], C[:, :] * 0.5 + 1.0)
}
"#;
    let k = program("t.ph", src).kernel("t", &[]).unwrap();
    let (m, n, kk) = (9, 13, 33);
    let b = random(Scalar::F32, &[kk, n], 4);
    let bt = Tensor::from_fn(Scalar::F32, &[n, kk], |i| b.get((i % kk) * n + i / kk));
    let inputs = vec![
        Arg::Tensor(random(Scalar::F32, &[m, kk], 3)),
        Arg::Tensor(b),
        Arg::Tensor(bt),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
    ];
    let out = run_on_every_backend(&k, &inputs, "trans");
    let (a, b) = (tensor(&out[0]), tensor(&out[1]));
    let (c, d, e) = (tensor(&out[3]), tensor(&out[4]), tensor(&out[5]));
    assert!(c.bits_eq(d), "dot(a, trans(bt)) differs from dot(a, b)");
    for i in 0..m {
        for j in 0..n {
            // The definition, step by step in f32.
            let mut s = f(c, i * n + j) as f32 * 0.5 + 1.0;
            for q in 0..kk {
                s += f(a, i * kk + q) as f32 * f(b, q * n + j) as f32;
            }
            assert_eq!(f(e, i * n + j) as f32, s, "E[{i}, {j}]");
        }
    }
}

#[test]
fn shapes_that_do_not_multiply_are_located() {
    let cases = [
        (
            "kernel k(A: tensor<f32>[4, 8], B: tensor<f32>[4, 8], C: tensor<f32>[4, 8]) { C[:, :] = dot(A[:, :], B[:, :]) }",
            "do not share their inner extent",
        ),
        (
            "kernel k(A: tensor<i32>[4, 4], C: tensor<f32>[4, 4]) { C[:, :] = dot(A[:, :], A[:, :]) }",
            "takes f32 tiles, not i32",
        ),
        (
            "kernel k(A: tensor<f32>[4], C: tensor<f32>[4]) { C[:] = trans(A[:]) }",
            "`trans` takes a 2-D tile",
        ),
        (
            "kernel k(A: tensor<f32>[4, 4], C: tensor<f32>[4, 4]) { C[:, :] = dot(A[:, :], A[:, :], A[0 :+ 2, :]) }",
            "broadcast",
        ),
    ];
    phobos_tests::assert_located_errors(&cases);
}
