//! Products computed ahead by the workgroup on the GPU
//! (`compiler/gpu/src/lower/dot_ahead.rs`, `dot_regs.rs`) give the
//! interpreter's bits: K in chunks with a short last one, tiles cut by the
//! tensor's edge, an accumulator, and the three ways a block's invocations
//! hold the product (an element each, register tiles of 1 x 4 and 2 x 4).
//!
//! The runtime leaves the path off on lavapipe, whose LLVM takes minutes
//! to compile the examples' exact kernels with it (`Gpu::set_dot_ahead`);
//! this test, alone in its process, turns it on for small f32 products.

use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::{Scalar, Value};
use phobos_runtime::gpu::Gpu;
use phobos_runtime::{Backend, Options, launch};
use phobos_tests::{gpu_available, program, run_everywhere};

const SOURCE: &str = r#"
kernel products(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N],
                D: tensor<f32>[M, N]) {
  let i = ctx.block.x * 16
  let j = ctx.block.y * 16
  C[i :+ 16, j :+ 16] = dot(A[i :+ 16, :], B[:, j :+ 16])
  D[i :+ 16, j :+ 16] = dot(A[i :+ 16, :], B[:, j :+ 16], C[i :+ 16, j :+ 16] * 0.5)
}
"#;

fn random(shape: &[usize], salt: u32) -> Tensor {
    Tensor::from_fn(Scalar::F32, shape, |i| {
        let x = (i as u32 + 1).wrapping_mul(2_654_435_761) ^ salt;
        let x = (x ^ (x >> 15)).wrapping_mul(0x2c1b_3c6d);
        // Values whose products and sums round: the order shows in the bits.
        Value::F32((x >> 8) as f32 / 16_777_216.0 * 3.0 - 1.5)
    })
}

#[test]
fn staged_products_keep_the_interpreters_bits() {
    if !gpu_available() {
        return;
    }
    Gpu::shared().unwrap().set_dot_ahead(Some(true));
    let k = program("products.ph", SOURCE)
        .kernel("products", &[])
        .unwrap_or_else(|d| panic!("{d:?}"));
    let (m, n, kk) = (37, 20, 40);
    let inputs = vec![
        Arg::Tensor(random(&[m, kk], 1)),
        Arg::Tensor(random(&[kk, n], 2)),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
    ];
    let mut want = inputs.clone();
    run_everywhere(&k, &mut want);
    for (workgroup, held) in [
        (256, "products added in order"),
        (64, "1 x 4"),
        (32, "2 x 4"),
    ] {
        let mut got = inputs.clone();
        let options = Options {
            backend: Backend::Gpu,
            workgroup_size: Some(workgroup),
            ..Options::default()
        };
        let prov = launch(&k, &mut got, &options).unwrap_or_else(|e| panic!("{e}"));
        let notes: Vec<&String> = prov
            .lowering
            .iter()
            .filter(|n| n.contains("`dot`"))
            .collect();
        assert_eq!(notes.len(), 2, "{:?}", prov.lowering);
        assert!(
            notes
                .iter()
                .all(|n| n.contains("by the workgroup") && n.contains(held)),
            "workgroup {workgroup}: {notes:?}"
        );
        for (p, (a, b)) in want.iter().zip(&got).enumerate().skip(2) {
            let (Arg::Tensor(a), Arg::Tensor(b)) = (a, b) else {
                unreachable!("outputs are tensors")
            };
            if let Some(j) = (0..a.len()).find(|&j| a.get(j).bits() != b.get(j).bits()) {
                panic!(
                    "workgroup {workgroup}: `{}` element {j}: interp {} but gpu {}",
                    k.params[p].name,
                    a.get(j),
                    b.get(j)
                );
            }
        }
    }
}
