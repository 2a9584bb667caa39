//! Products computed ahead by the workgroup on the GPU
//! (`compiler/gpu/src/lower/dot_ahead.rs`, `dot_regs.rs`) give the
//! interpreter's bits: K in chunks with a short last one, tiles cut by the
//! tensor's edge, an accumulator, and the three ways a block's invocations
//! hold the product (an element each, register tiles of 1 x 4 and 2 x 4).
//!
//! Triton's spelling, `acc = dot(a, b, acc)` over blocks of K with an
//! accumulator tile, is computed in place in the tile: no staging tile and
//! no copy, and the bits of one `dot` over the whole of K.
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

/// Kernel `name` of `source`, with products staged on this GPU.
fn staged_kernel(file: &str, source: &str, name: &str) -> phobos_core::ir::Kernel {
    Gpu::shared().unwrap().set_dot_ahead(Some(true));
    program(file, source)
        .kernel(name, &[])
        .unwrap_or_else(|d| panic!("{d:?}"))
}

/// `A [m, k]`, `B [k, n]` (random, from `salt`) and two zero `[m, n]`
/// outputs.
fn operands(m: usize, n: usize, k: usize, salt: u32) -> Vec<Arg> {
    vec![
        Arg::Tensor(random(&[m, k], salt)),
        Arg::Tensor(random(&[k, n], salt + 1)),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
    ]
}

/// The outputs (parameters 2 and 3) of `got` have `want`'s bits.
fn same_outputs(k: &phobos_core::ir::Kernel, want: &[Arg], got: &[Arg], what: &str) {
    for p in [2, 3] {
        let (Arg::Tensor(a), Arg::Tensor(b)) = (&want[p], &got[p]) else {
            unreachable!("outputs are tensors")
        };
        if let Some(j) = (0..a.len()).find(|&j| a.get(j).bits() != b.get(j).bits()) {
            panic!(
                "{what}: `{}` element {j}: interp {} but gpu {}",
                k.params[p].name,
                a.get(j),
                b.get(j)
            );
        }
    }
}

#[test]
fn staged_products_keep_the_interpreters_bits() {
    if !gpu_available() {
        return;
    }
    let k = staged_kernel("products.ph", SOURCE, "products");
    let inputs = operands(37, 20, 40, 1);
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
        same_outputs(&k, &want, &got, &format!("workgroup {workgroup}"));
    }
}

const LOOP: &str = r#"
kernel loop_k(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N],
              D: tensor<f32>[M, N]) {
  let i = ctx.block.x * 16
  let j = ctx.block.y * 32
  var acc: tile<f32>[16, 32] = 0.0
  for kb in 0 .. K / 16 {
    let k = kb * 16
    acc = dot(A[i :+ 16, k :+ 16], B[k :+ 16, j :+ 32], acc)
  }
  C[i :+ 16, j :+ 32] = acc
  D[i :+ 16, j :+ 32] = dot(A[i :+ 16, :], B[:, j :+ 32])
}
"#;

#[test]
fn tritons_loop_over_k_accumulates_in_place_with_the_bits_of_one_product() {
    if !gpu_available() {
        return;
    }
    let k = staged_kernel("loop_k.ph", LOOP, "loop_k");
    let inputs = operands(37, 45, 48, 3);
    let mut want = inputs.clone();
    run_everywhere(&k, &mut want);
    let (Arg::Tensor(c), Arg::Tensor(d)) = (&want[2], &want[3]) else {
        unreachable!("outputs are tensors")
    };
    assert!(
        (0..c.len()).all(|j| c.get(j).bits() == d.get(j).bits()),
        "the loop over K adds what one product over K adds, in the same order"
    );
    let mut got = inputs.clone();
    let options = Options {
        backend: Backend::Gpu,
        ..Options::default()
    };
    let prov = launch(&k, &mut got, &options).unwrap_or_else(|e| panic!("{e}"));
    let note = prov
        .lowering
        .iter()
        .find(|n| n.starts_with("statement 5:"))
        .unwrap_or_else(|| panic!("{:?}", prov.lowering));
    assert!(
        note.contains("`dot` of [16, 16] by [16, 32] by the workgroup"),
        "{note}"
    );
    // In place: the workgroup holds `acc` and the two chunks, no staging
    // tile for the store and no result array to copy from.
    let mut gpu_options = phobos_gpu::GpuOptions::for_kernel(&k);
    gpu_options.knobs.dot_ahead = true;
    let compiled = phobos_gpu::compile(&k, &gpu_options).unwrap_or_else(|e| panic!("{e}"));
    let plan = compiled.explain();
    // (`D`'s product goes to `dot_result`, read by its store.)
    assert!(!plan.contains("staging"), "{plan}");
    assert_eq!(plan.matches("`dot_result`").count(), 1, "{plan}");
    assert!(plan.contains("workgroup memory: 7168 of"), "{plan}");
    same_outputs(&k, &want, &got, "the loop over K");
}
