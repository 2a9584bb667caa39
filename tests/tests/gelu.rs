//! `examples/bias_gelu_dropout.ph` against an independent float64 reference:
//! the same bits on the interpreter, Cranelift and the GPU, every dropped
//! element where the seed's `uniform` says (the plain-Rust model of
//! `tests/src/model.rs`), and every kept one within the stated error of
//! `gelu(x + b) / (1 - p)` computed in f64 with `libm::erf`. The Tandem
//! variant drops exactly where `phobosc fill f32` is below p and keeps the
//! same bits elsewhere (`phobos_tests::check_tandem_variant`).

use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_tests::{model, program, root, tensor};

#[test]
fn bias_gelu_dropout_matches_a_float64_reference() {
    let text = std::fs::read_to_string(root().join("examples/bias_gelu_dropout.ph")).unwrap();
    let p = program("bias_gelu_dropout.ph", &text);
    let k = p.kernel("bias_gelu_dropout", &[]).unwrap();
    let (m, seed, drop) = (203usize, 1234i32, 0.1f32);
    // X spans [-8, 8) on a fine grid plus a few specials; B a ramp.
    let mut xs: Vec<f32> = (0..m * 256)
        .map(|i| -8.0 + 16.0 * ((i as u32).wrapping_mul(2_654_435_761) >> 8) as f32 / 16_777_216.0)
        .collect();
    xs[..8].copy_from_slice(&[0.0, -0.0, 1e-30, -1e-30, 20.0, -20.0, 1e-3, -1e-3]);
    let bs: Vec<f32> = (0..256).map(|j| (j as f32 - 128.0) / 256.0).collect();
    let inputs = vec![
        Arg::Tensor(Tensor {
            shape: vec![m, 256],
            data: Data::F32(xs.clone()),
        }),
        Arg::Tensor(Tensor {
            shape: vec![256],
            data: Data::F32(bs.clone()),
        }),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 256])),
        Arg::Scalar(Value::I32(seed)),
    ];
    let args = phobos_tests::run_on_every_backend(&k, &inputs, "gelu");
    let Data::F32(ys) = &tensor(&args[2]).data else {
        panic!("Y is f32")
    };
    let (mut worst_ulps, mut worst_abs) = (0.0f64, 0.0f64);
    for (i, (&x, &y)) in xs.iter().zip(ys).enumerate() {
        let counter = i as i32;
        let kept = model::uniform(seed, counter) >= drop;
        if !kept {
            assert_eq!(y.to_bits(), 0, "element {i} should be dropped");
            continue;
        }
        let v = (x + bs[i % 256]) as f64;
        let exact = 0.5 * v * (1.0 + libm::erf(v / std::f64::consts::SQRT_2)) / (1.0 - drop as f64);
        let err = (y as f64 - exact).abs();
        let ulp = f64::from(f32::EPSILON) * exact.abs().max(f64::from(f32::MIN_POSITIVE));
        // Where erf(v / sqrt 2) is near -1 (v below about -2), 1 + erf
        // cancels: erf's error (1.5 ulp of a value near 1, 2^-24 each) is
        // then absolute, times v / 2 / (1 - p).
        let bound = 4.0 * ulp + 2f64.powi(-23) * 0.5 * v.abs() / (1.0 - drop as f64);
        assert!(
            err <= bound,
            "element {i}: gelu({v:e}) / 0.9 = {y:e}, exactly {exact:e}"
        );
        if v >= 0.0 {
            worst_ulps = worst_ulps.max(err / ulp);
        } else {
            worst_abs = worst_abs.max(err);
        }
    }
    eprintln!("v >= 0: {worst_ulps:.2} ulp at worst; v < 0: {worst_abs:e} absolute at worst");
    let text =
        std::fs::read_to_string(root().join("examples/bias_gelu_dropout_tandem.ph")).unwrap();
    let tandem = program("bias_gelu_dropout_tandem.ph", &text)
        .kernel("bias_gelu_dropout_tandem", &[])
        .unwrap();
    let mut tandem_inputs = inputs;
    tandem_inputs[3] = Arg::Scalar(Value::U32(KEY));
    let kept = phobos_tests::check_tandem_variant(
        &tandem,
        &tandem_inputs,
        2,
        (KEY, seed, drop),
        tensor(&args[2]),
    );
    assert!((0.85..0.95).contains(&(kept as f64 / (m * 256) as f64)));
}

/// The key of the Tandem variant.
const KEY: u32 = 0xdead_beef;
