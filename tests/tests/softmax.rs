//! `examples/softmax_dropout.ph` and `softmax_dropout_chunked.ph` against
//! an independent float64 reference:
//! the same bits on the interpreter, Cranelift and the GPU, every dropped
//! element where the seed's `uniform` says (the plain-Rust model of
//! `tests/src/model.rs`), and every kept one within the stated error of
//! `exp(x - max) / sum / (1 - p)` computed in f64, for rows of 256, 1000
//! (a masked tail chunk) and 8192 elements. The Tandem variant drops
//! exactly where `phobosc fill f32` is below p and keeps the same bits
//! elsewhere (`phobos_tests::check_tandem_variant`).
//!
//! The bound: `exp` is within 1 ulp (docs/language.md), each of the
//! chunked pairwise sums of n positive terms within ceil(log2 n) + 1
//! roundings, and the two divisions half an ulp each; so the relative error
//! is below (ceil(log2 n) + 6) * 2^-24, with room to spare.

use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_tests::{example_kernel, model, tensor};

#[test]
fn softmax_dropout_matches_a_float64_reference() {
    check(
        "softmax_dropout",
        Some("softmax_dropout_tandem"),
        &[(6, 256), (5, 1000), (4, 8192)],
    );
}

/// The chunked kernel, whose tiles are [R, 256] at any row length.
#[test]
fn softmax_dropout_chunked_matches_a_float64_reference() {
    check(
        "softmax_dropout_chunked",
        None,
        &[(6, 256), (5, 1000), (4, 8192)],
    );
}

fn check(name: &str, twin: Option<&str>, shapes: &[(usize, usize)]) {
    let k = example_kernel(name);
    let tandem = twin.map(example_kernel);
    let (seed, drop) = (77i32, 0.1f32);
    for &(m, n) in shapes {
        // Values in [-8, 8) from a hash of the position, plus ties and zeros.
        let mut xs: Vec<f32> = (0..m * n)
            .map(|i| {
                let h = (i as u32).wrapping_mul(2_654_435_761) >> 8;
                -8.0 + 16.0 * h as f32 / 16_777_216.0
            })
            .collect();
        xs[..6].copy_from_slice(&[0.0, -0.0, 7.99, 7.99, -8.0, 1e-30]);
        let inputs = vec![
            Arg::Tensor(Tensor {
                shape: vec![m, n],
                data: Data::F32(xs.clone()),
            }),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
            Arg::Scalar(Value::I32(seed)),
        ];
        let args = phobos_tests::run_on_every_backend(&k, &inputs, &format!("{name}, n = {n}"));
        let Data::F32(ys) = &tensor(&args[1]).data else {
            panic!("Y is f32")
        };
        let bound = (f64::from((n as u32).next_power_of_two().trailing_zeros()) + 6.0)
            * f64::from(f32::EPSILON)
            / 2.0;
        let mut worst = 0.0f64;
        for row in 0..m {
            let x = &xs[row * n..(row + 1) * n];
            let max = x
                .iter()
                .fold(f64::NEG_INFINITY, |a, &v| a.max(f64::from(v)));
            let sum: f64 = x.iter().map(|&v| (f64::from(v) - max).exp()).sum();
            for (j, &v) in x.iter().enumerate() {
                let i = row * n + j;
                let y = ys[i];
                if model::uniform(seed, i as i32) < drop {
                    assert_eq!(y.to_bits(), 0, "n = {n}: element {i} should be dropped");
                    continue;
                }
                let exact = (f64::from(v) - max).exp() / sum / (1.0 - f64::from(drop));
                let rel = (f64::from(y) - exact).abs() / exact;
                worst = worst.max(rel);
                assert!(
                    rel <= bound,
                    "n = {n}, element {i}: {y} against {exact} (relative error {rel:e} over {bound:e})"
                );
            }
        }
        eprintln!("n = {n}: worst relative error {worst:e} (bound {bound:e})");
        let Some(tandem) = &tandem else { continue };
        let mut tandem_inputs = inputs;
        tandem_inputs[2] = Arg::Scalar(Value::U32(KEY));
        let kept = phobos_tests::check_tandem_variant(
            tandem,
            &tandem_inputs,
            1,
            (KEY, seed, drop),
            tensor(&args[1]),
        );
        assert!((0.85..0.95).contains(&(kept as f64 / (m * n) as f64)));
    }
}

/// The key of the Tandem variant.
const KEY: u32 = 0xdead_beef;
