//! The on-disk pipeline cache: written after a build, read by the next
//! device (and not rewritten when nothing was added), and a damaged file
//! ignored with the same results. One test in its
//! own binary, because it sets `PHOBOS_CACHE_DIR` for the process.

use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_runtime::Precision;
use phobos_runtime::gpu::Gpu;

mod common;

const SOURCE: &str = "kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X / 3.0 + sqrt(X) }";

fn run(gpu: &Gpu) -> Vec<u32> {
    let (program, diags) = Program::parse("t.ph", SOURCE);
    assert!(diags.is_empty(), "{diags:?}");
    let kernel = program.kernel("t", &[]).expect("checks");
    let x = Tensor::from_fn(Scalar::F32, &[1000], |i| Value::F32(i as f32 * 0.37));
    let mut args = vec![
        Arg::Tensor(x),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[1000])),
    ];
    gpu.run(&kernel, &mut args, Precision::Exact).expect("runs");
    let Arg::Tensor(y) = &args[1] else {
        unreachable!()
    };
    let Data::F32(y) = &y.data else {
        unreachable!()
    };
    y.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn pipelines_are_cached_on_disk_and_damage_is_ignored() {
    let dir = std::env::temp_dir().join(format!("phobos-pipeline-cache-{}", std::process::id()));
    // SAFETY: this binary's only test, so no other thread reads the
    // environment while it changes.
    unsafe { std::env::set_var("PHOBOS_CACHE_DIR", &dir) };
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    if !gpu
        .device()
        .features()
        .contains(wgpu::Features::PIPELINE_CACHE)
    {
        eprintln!("skipped: {} has no pipeline cache", gpu.describe());
        return;
    }
    let want = run(&gpu);
    let files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the cache directory")
        .flatten()
        .collect();
    assert_eq!(files.len(), 1, "one cache file: {files:?}");
    let path = files[0].path();
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len > 24, "the file holds pipeline data ({len} bytes)");

    // A second device reads it and gives the same bits, and leaves the
    // file alone: every pipeline came from it, so there is nothing to add
    // (a rewrite would be a rename onto a new inode).
    drop(gpu);
    let inode =
        |p: &std::path::Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let before = inode(&path);
    assert_eq!(run(&Gpu::new().unwrap()), want);
    assert_eq!(inode(&path), before, "an unchanged cache is not rewritten");
    // A pipeline the file does not list is added to it.
    {
        let gpu = Gpu::new().unwrap();
        let (program, _) = Program::parse("u.ph", "kernel u(Y: tensor<f32>[N]) { Y = 2.5 }");
        let kernel = program.kernel("u", &[]).expect("checks");
        let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::F32, &[10]))];
        gpu.run(&kernel, &mut args, Precision::Exact).expect("runs");
    }
    assert_ne!(inode(&path), before, "a new pipeline is saved");

    // A damaged file is ignored (with a warning) and rewritten.
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(run(&Gpu::new().unwrap()), want);
    assert_ne!(std::fs::read(&path).unwrap(), bytes, "rewritten");
    std::fs::remove_dir_all(&dir).unwrap();
}
