//! The in-memory pipeline cache is bounded: a process that builds kernel
//! after kernel keeps the `PIPELINES_KEPT` used last, and a kernel whose
//! pipeline was dropped builds again and gives the same result.

use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::Scalar;
use phobos_runtime::Precision;
use phobos_runtime::gpu::{Gpu, PIPELINES_KEPT};

mod common;

/// Runs the kernel that fills 16 elements with `i`: whether its pipeline
/// was cached, and the values.
fn fill(gpu: &Gpu, i: usize) -> (bool, Vec<f32>) {
    let source = format!("kernel k(Y: tensor<f32>[N]) {{ Y = {i}.0 }}");
    let (program, diags) = Program::parse("k.ph", &source);
    assert!(diags.is_empty(), "{diags:?}");
    let kernel = program.kernel("k", &[]).expect("checks");
    let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::F32, &[16]))];
    let run = gpu.run(&kernel, &mut args, Precision::Exact).expect("runs");
    let Arg::Tensor(y) = &args[0] else {
        unreachable!()
    };
    let Data::F32(y) = &y.data else {
        unreachable!()
    };
    (run.cache_hit, y.clone())
}

#[test]
fn the_least_recently_used_pipelines_go_first() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    assert_eq!(fill(&gpu, 0), (false, vec![0.0; 16]));
    assert_eq!(fill(&gpu, 0), (true, vec![0.0; 16]));
    // Kernel 1 is used again halfway, so it outlives kernel 0.
    for i in 1..=PIPELINES_KEPT {
        assert_eq!(fill(&gpu, i), (false, vec![i as f32; 16]), "kernel {i}");
        if i == PIPELINES_KEPT / 2 {
            assert!(fill(&gpu, 1).0, "kernel 1 is still cached");
        }
    }
    assert!(fill(&gpu, PIPELINES_KEPT).0, "the newest is cached");
    assert!(fill(&gpu, 1).0, "kernel 1, used halfway, is cached");
    assert_eq!(
        fill(&gpu, 0),
        (false, vec![0.0; 16]),
        "kernel 0, the least recently used, was dropped and builds again"
    );
}
