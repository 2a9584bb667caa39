//! `examples/layernorm_dropout.ph` (and `layernorm_dropout_chunked.ph`)
//! against an independent reference: layer
//! norm computed in f64 in plain Rust, and the dropout mask from the plain
//! Rust model of `uniform` (`src/model.rs`). The kernel runs on the
//! interpreter, the CPU backend and the GPU (lavapipe here) with identical
//! bits; the interpreter's output is then checked element by element:
//! - a dropped element (`uniform(seed, counter) < 0.1`) is exactly 0;
//! - a kept one is within `4 ulp(max |x|) * rstd * |g| / 0.9 + 8 ulp(result)`
//!   of the f64 reference divided by `1 - 0.1f32`. The first term is the
//!   cancellation in `x - mean` computed in f32: an error of a few ulp of
//!   the row's largest input (the mean's pairwise sum is most of it),
//!   scaled like the deviation; the second is the rounding of the last few
//!   operations. The worst element measured here uses about a third of it.
//!
//! Rows of 256, 1000 (a partial last chunk) and 8192 elements. The Tandem
//! variant drops exactly where `phobosc fill f32` is below p and keeps the
//! same bits elsewhere (`phobos_tests::check_tandem_variant`).

use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::Scalar;
use phobos_tests::{example_kernel, model, tensor};

const SEED: i32 = 1234;
const P: f32 = 0.1;
/// The key of the Tandem variant.
const KEY: u32 = 0xdead_beef;

fn f32s(a: &Arg) -> Vec<f32> {
    match &tensor(a).data {
        Data::F32(v) => v.clone(),
        other => panic!("not f32: {other:?}"),
    }
}

/// Deterministic inputs: rows with different means and scales.
fn inputs(m: usize, n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut x: u32 = 0x9e37_79b9;
    let mut next = || {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (x >> 8) as f32 / (1u32 << 24) as f32
    };
    let xs = (0..m * n)
        .map(|i| {
            let row = (i / n) as f32;
            (next() - 0.5) * (1.0 + row) + 3.0 * row - 10.0
        })
        .collect();
    let g = (0..n).map(|_| 0.5 + next()).collect();
    let b = (0..n).map(|_| next() - 0.5).collect();
    (xs, g, b)
}

fn ulp(x: f64) -> f64 {
    let x = (x as f32).abs();
    f64::from(f32::from_bits(x.to_bits() + 1) - x)
}

#[test]
fn layernorm_dropout_matches_an_f64_reference() {
    check(
        "layernorm_dropout",
        Some("layernorm_dropout_tandem"),
        &[(6, 256), (7, 1000), (5, 8192)],
    );
}

/// The chunked kernel, whose tiles are [R, 256] at any row length.
#[test]
fn layernorm_dropout_chunked_matches_an_f64_reference() {
    check(
        "layernorm_dropout_chunked",
        None,
        &[(6, 256), (7, 1000), (5, 8192)],
    );
}

fn check(name: &str, twin: Option<&str>, shapes: &[(usize, usize)]) {
    let k = example_kernel(name);
    let tandem = twin.map(example_kernel);
    let mut worst: f64 = 0.0;
    for &(m, n) in shapes {
        let (xs, g, b) = inputs(m, n);
        let mut args = vec![
            Arg::Tensor(Tensor {
                shape: vec![m, n],
                data: Data::F32(xs.clone()),
            }),
            Arg::Tensor(Tensor {
                shape: vec![n],
                data: Data::F32(g.clone()),
            }),
            Arg::Tensor(Tensor {
                shape: vec![n],
                data: Data::F32(b.clone()),
            }),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
            Arg::Scalar(phobos_core::types::Value::I32(SEED)),
        ];
        let inputs = args.clone();
        phobos_tests::run_everywhere(&k, &mut args);
        if phobos_tests::gpu_available() {
            let ran = phobos_tests::matches_on_gpu(&k, &inputs, &args)
                .unwrap_or_else(|e| panic!("rows of {n}: {e}"));
            assert!(ran, "the GPU refused an f32 kernel");
        }
        let y = f32s(&args[3]);
        let mut kept = 0;
        for r in 0..m {
            let row: Vec<f64> = xs[r * n..(r + 1) * n]
                .iter()
                .map(|v| f64::from(*v))
                .collect();
            let mean = row.iter().sum::<f64>() / n as f64;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
            let rstd = 1.0 / (var + f64::from(0.00001f32)).sqrt();
            let largest = row.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            let input_err = 4.0 * ulp(largest) * rstd;
            for c in 0..n {
                let i = r * n + c;
                let got = f64::from(y[i]);
                if model::uniform(SEED, i as i32) < P {
                    assert_eq!(
                        y[i].to_bits(),
                        0,
                        "rows of {n}: element ({r}, {c}) is dropped"
                    );
                    continue;
                }
                kept += 1;
                let norm = (row[c] - mean) * rstd * f64::from(g[c]) + f64::from(b[c]);
                let want = norm / f64::from(1.0 - P);
                let err = (got - want).abs();
                let bound =
                    input_err * f64::from(g[c]).abs() / f64::from(1.0 - P) + 8.0 * ulp(want);
                worst = worst.max(err / bound);
                assert!(
                    err <= bound,
                    "rows of {n}: element ({r}, {c}) is {got}, the reference {want} (error {err:e})"
                );
            }
        }
        let frac = kept as f64 / (m * n) as f64;
        assert!((0.85..0.95).contains(&frac), "rows of {n}: kept {frac}");
        let Some(tandem) = &tandem else { continue };
        let mut tandem_inputs = inputs;
        tandem_inputs[4] = Arg::Scalar(phobos_core::types::Value::U32(KEY));
        let kept = phobos_tests::check_tandem_variant(
            tandem,
            &tandem_inputs,
            3,
            (KEY, SEED, P),
            tensor(&args[3]),
        );
        let frac = kept as f64 / (m * n) as f64;
        assert!(
            (0.85..0.95).contains(&frac),
            "Tandem, rows of {n}: kept {frac}"
        );
    }
    eprintln!("worst error: {worst:.3} of the bound");
}
