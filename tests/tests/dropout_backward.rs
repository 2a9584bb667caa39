//! `examples/dropout_backward.ph` regenerates the forward mask of
//! `examples/dropout_rows.ph` under another tiling, and
//! `dropout_backward_tandem.ph` that of `dropout_rows_tandem.ph`: the forward kernels run
//! blocks of 16 whole rows, the backward ones blocks of 4 rows by 64
//! columns, and each is run on the interpreter, Cranelift and the GPU with
//! identical bits. The masks (the elements a nonzero input keeps) are then
//! compared bit for bit: forward against backward, and each against an
//! independent model of its draw, the plain-Rust `uniform` of
//! `src/model.rs` for `dropout` and the reference crate's `fill_f32` (what
//! `phobosc fill f32` writes) for `tandem_dropout`. Every kept gradient is
//! exactly `dy / (1 - p)`.

use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_tests::{model, program, root, tensor};

const P: f32 = 0.1;

/// Runs the kernel of `examples/NAME.ph` on every backend with `x` as its
/// first tensor and `draw` as its last argument; returns its output.
fn run(name: &str, x: &[f32], m: usize, draw: Value) -> Vec<f32> {
    let file = format!("{name}.ph");
    let text = std::fs::read_to_string(root().join("examples").join(&file)).unwrap();
    let k = program(&file, &text).kernel(name, &[]).unwrap();
    let inputs = vec![
        Arg::Tensor(Tensor {
            shape: vec![m, 256],
            data: Data::F32(x.to_vec()),
        }),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 256])),
        Arg::Scalar(draw),
    ];
    let args = phobos_tests::run_on_every_backend(&k, &inputs, &format!("`{name}`"));
    let Data::F32(y) = &tensor(&args[1]).data else {
        panic!("the output is f32")
    };
    y.clone()
}

/// Nonzero values (so a kept element is nonzero), varied by position.
fn values(m: usize, salt: u32) -> Vec<f32> {
    (0..m * 256)
        .map(|i| {
            let h = (i as u32 ^ salt).wrapping_mul(2_654_435_761) >> 9;
            let v = 0.5 + h as f32 / 8_388_608.0;
            if i % 3 == 0 { -v } else { v }
        })
        .collect()
}

fn mask(y: &[f32]) -> Vec<bool> {
    y.iter().map(|v| v.to_bits() != 0).collect()
}

#[test]
fn the_backward_pass_regenerates_the_forward_mask() {
    // 37 rows: the last forward block has 5 rows, the last backward one 1.
    let m = 37;
    let (x, dy) = (values(m, 0), values(m, 0x5bd1_e995));
    for (seed, key) in [(1234i32, 0xdead_beefu32), (-7, 0)] {
        for (fname, bname, draw, want) in [
            (
                "dropout_rows",
                "dropout_backward",
                Value::I32(seed),
                (0..m * 256)
                    .map(|i| model::uniform(seed, i as i32) >= P)
                    .collect::<Vec<bool>>(),
            ),
            (
                "dropout_rows_tandem",
                "dropout_backward_tandem",
                Value::U32(key),
                phobos_tests::tandem_uniforms(key, m * 256)
                    .iter()
                    .map(|u| *u >= P)
                    .collect(),
            ),
        ] {
            let y = run(fname, &x, m, draw);
            let dx = run(bname, &dy, m, draw);
            let (fm, bm) = (mask(&y), mask(&dx));
            assert_eq!(fm, bm, "`{bname}` does not regenerate `{fname}`'s mask");
            assert_eq!(fm, want, "`{fname}`'s mask is not its draw's");
            let kept = fm.iter().filter(|k| **k).count() as f64 / fm.len() as f64;
            assert!((0.85..0.95).contains(&kept), "`{fname}` keeps {kept}");
            for i in 0..m * 256 {
                if bm[i] {
                    assert_eq!(dx[i].to_bits(), (dy[i] / (1.0 - P)).to_bits());
                    assert_eq!(y[i].to_bits(), (x[i] / (1.0 - P)).to_bits());
                }
            }
        }
    }
}
