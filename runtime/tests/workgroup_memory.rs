//! A kernel whose `let`/`var` tiles need more workgroup memory than the
//! device has is refused before its pipeline is made, with an error that
//! names the tiles and the limit (SPIR-V passthrough skips wgpu's own
//! check, and lavapipe then runs out of memory instead of failing); a
//! launch through `phobos_runtime::launch` runs it on the CPU instead and
//! says so in the provenance, unless `Options::gpu_only` asks for the GPU
//! or nothing.

use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::Scalar;
use phobos_runtime::gpu::Gpu;
use phobos_runtime::{Backend, Options, Precision, launch};

mod common;

fn kernel(elements: u32) -> phobos_core::ir::Kernel {
    let src = format!(
        "kernel big(Y: tensor<f32>[N]) {{\n  var t: tile<f32>[{elements}] = f32(iota(0))\n  Y[0 :+ 4] = t[0 :+ 4]\n}}"
    );
    let (program, diags) = Program::parse("big.ph", &src);
    assert!(diags.is_empty(), "{diags:?}");
    program.kernel("big", &[]).expect("checks")
}

#[test]
fn workgroup_tiles_beyond_the_device_are_refused_by_name() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let limit = gpu.device().limits().max_compute_workgroup_storage_size;
    // One f32 more than the device holds.
    let too_many = limit / 4 + 1;
    let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::F32, &[4]))];
    let e = gpu
        .run(&kernel(too_many), &mut args, Precision::Exact)
        .expect_err("refused");
    let msg = e.to_string();
    assert!(
        msg.contains("workgroup memory")
            && msg.contains(&format!("more than the {limit} bytes"))
            && msg.contains(&format!(
                "`var t: tile<f32>[{too_many}]` {} bytes",
                too_many * 4
            )),
        "{msg}"
    );
    // A small tile of the same kernel runs.
    let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::F32, &[4]))];
    gpu.run(&kernel(64), &mut args, Precision::Exact)
        .expect("a small tile runs");
}

#[test]
fn a_launch_the_gpu_refuses_runs_on_the_cpu_and_says_so() {
    let gpu = match Gpu::shared() {
        Ok(gpu) => gpu,
        Err(e) if std::env::var_os("PHOBOS_REQUIRE_GPU").is_none() => {
            eprintln!("skipped: no GPU adapter ({e})");
            return;
        }
        Err(e) => panic!("PHOBOS_REQUIRE_GPU is set and there is no adapter: {e}"),
    };
    let limit = gpu.device().limits().max_compute_workgroup_storage_size;
    let k = kernel(limit / 4 + 1);
    let mut got = vec![Arg::Tensor(Tensor::zeros(Scalar::F32, &[4]))];
    let options = Options {
        backend: Backend::Gpu,
        ..Options::default()
    };
    let prov = launch(&k, &mut got, &options).expect("runs elsewhere");
    assert_eq!(prov.backend, Backend::Cpu);
    assert!(
        prov.lowering
            .iter()
            .any(|n| n.contains("ran on the CPU backend instead") && n.contains("workgroup memory")),
        "{:?}",
        prov.lowering
    );
    let mut want = vec![Arg::Tensor(Tensor::zeros(Scalar::F32, &[4]))];
    phobos_core::interp::run(&k, &mut want).unwrap();
    assert_eq!(got, want, "the interpreter's bits");
    // `gpu_only` (`phobosc bench --backend gpu`) refuses instead.
    let options = Options {
        gpu_only: true,
        ..options
    };
    let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::F32, &[4]))];
    let e = launch(&k, &mut args, &options).expect_err("the GPU only");
    let msg = e.to_string();
    assert!(
        msg.contains("workgroup memory") && msg.contains("`var t"),
        "{msg}"
    );
}
