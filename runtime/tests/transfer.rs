//! Tensors larger than one transfer piece (64 MiB) go to and from the GPU
//! in pieces (uploads through a ring of mapped staging buffers), and an
//! all-zero tensor is not copied at all (wgpu zero-fills buffers): the
//! results are the same bits as on the CPU. Skips without a
//! GPU adapter unless `PHOBOS_REQUIRE_GPU` is set.

use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::{Scalar, Value};
use phobos_runtime::{Backend, Options, launch};

#[test]
fn large_tensors_move_in_pieces_with_the_same_bits() {
    if let Err(e) = phobos_runtime::gpu::Gpu::shared() {
        assert!(
            std::env::var_os("PHOBOS_REQUIRE_GPU").is_none(),
            "PHOBOS_REQUIRE_GPU is set and there is no adapter: {e}"
        );
        eprintln!("skipped: no GPU adapter ({e})");
        return;
    }
    // Y is only written and W is read and written, both in part of each
    // block: their zeros must survive where nothing writes.
    // Blocks of 1024 elements: on lavapipe an invocation's loop stops after
    // about 65,535 iterations (llvmpipe bounds loops; it looks like
    // gallivm's LP_MAX_TGSI_LOOP_ITERATIONS), so one block over 2^24
    // elements with 256 invocations loses its last 256 elements, and with
    // 64 invocations three quarters of them. Not a problem of transfers.
    let src =
        "kernel k(X: tensor<u32>[N], Y: tensor<u32>[N], W: tensor<u32>[N], Z: tensor<u32>[N]) {
  let b = ctx.block.x * 1024
  Y[b :+ 8] = X[b :+ 8]
  W[b + 8 :+ 4] = W[b + 8 :+ 4] + X[b :+ 4]
  Z[b :+ 1024] = X[b :+ 1024] * 3 + 1
}";
    let (program, diags) = Program::parse("k.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    let k = program.kernel("k", &[]).unwrap();
    // 70 MiB each: one full piece and a partial one.
    let n = 70 << 18;
    let x = Tensor::from_fn(Scalar::U32, &[n], |i| {
        Value::U32((i as u32).wrapping_mul(2654435761))
    });
    // W is zero but for its last element, which nothing writes: the zero
    // check (a scan on several threads that stops at a nonzero byte) must
    // see it and upload W.
    let w = Tensor::from_fn(Scalar::U32, &[n], |i| {
        Value::U32(if i == n - 1 { 7 } else { 0 })
    });
    let args = vec![
        Arg::Tensor(x),
        Arg::Tensor(Tensor::zeros(Scalar::U32, &[n])),
        Arg::Tensor(w),
        Arg::Tensor(Tensor::zeros(Scalar::U32, &[n])),
    ];
    let mut want = args.clone();
    let cpu = Options {
        backend: Backend::Cpu,
        ..Options::default()
    };
    launch(&k, &mut want, &cpu).unwrap();
    let mut got = args;
    let gpu = Options {
        backend: Backend::Gpu,
        ..Options::default()
    };
    launch(&k, &mut got, &gpu).unwrap();
    for (p, (a, b)) in want.iter().zip(&got).enumerate() {
        let (Arg::Tensor(a), Arg::Tensor(b)) = (a, b) else {
            continue;
        };
        let bad = (0..a.len()).find(|&i| a.get(i) != b.get(i));
        assert_eq!(
            bad.map(|i| (i, a.get(i), b.get(i))),
            None,
            "parameter {p}: the GPU's bits differ from the CPU's"
        );
    }
}
