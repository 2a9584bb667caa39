//! Metal and DirectX 12 get their shaders from naga's MSL and HLSL writers
//! (wgpu translates the naga module on those platforms). A lowering that
//! those writers reject would fail only on a Mac or on Windows, so every
//! kernel and configuration of every example and fixture, in exact and
//! fast mode, and every Tandem fill that needs no f64, is written here as
//! MSL 2.1 (what wgpu asks of Metal) and as HLSL for shader model 6.0 (DXC,
//! wgpu's DX12 compiler) on Linux.
//!
//! This checks the writers accept the modules, not that a Metal or DXC
//! compiler does; exact mode's SPIR-V post-processing (no contraction,
//! preserved subnormals) has no counterpart on those platforms, which is
//! why exact mode there is a question for the runtime, not this test.

use naga::back::{hlsl, msl};
use naga::valid::ModuleInfo;
use phobos_core::Program;
use phobos_gpu::tandem::{FillMap, fill_compiled, misses_compiled};
use phobos_gpu::{ENTRY_POINT, GpuOptions, LowerError, Precision, compile};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (label, module, info) for every kernel and configuration of every
/// example and fixture, exact and fast, as `phobosc build` lowers them (a
/// kernel that needs its dims first is specialized with every dim 64), and
/// the fills without f64.
fn modules() -> Vec<(String, naga::Module, ModuleInfo)> {
    let mut out = Vec::new();
    for dir in ["tests/fixtures/ok", "examples"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .expect("the directory exists")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "ph"))
            .collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p).expect("readable source");
            let stem = p.file_stem().unwrap().to_string_lossy().to_string();
            let (program, diags) = Program::parse(&stem, &text);
            assert!(diags.is_empty(), "{stem}: {diags:?}");
            for name in program.kernel_names() {
                for config in program.configs(name) {
                    let kernel = program.kernel(name, &config).expect("checks");
                    for precision in [Precision::Exact, Precision::Fast] {
                        let options = GpuOptions {
                            precision,
                            ..GpuOptions::for_kernel(&kernel)
                        };
                        let compiled = match compile(&kernel, &options) {
                            Err(LowerError::Unsupported(_)) => {
                                let dims = vec![64; kernel.dims.len()];
                                compile(&phobos_gpu::specialize(&kernel, &dims), &options)
                            }
                            other => other,
                        }
                        .unwrap_or_else(|e| panic!("{stem}/{name}: {e}"));
                        let label = format!("{stem}/{name} {config:?} {precision:?}");
                        out.push((label, compiled.module, compiled.info));
                    }
                }
            }
        }
    }
    for map in FillMap::ALL.into_iter().filter(|m| !m.needs_f64()) {
        let (module, info) = fill_compiled(map, 32).expect("the fill lowers");
        out.push((format!("fill {}", map.name()), module, info));
        if map.has_misses() {
            let (module, info) = misses_compiled(map).expect("the misses kernel lowers");
            out.push((format!("fill {} misses", map.name()), module, info));
        }
    }
    assert!(out.len() >= 30, "only {} modules", out.len());
    out
}

#[test]
fn every_module_writes_as_msl_and_hlsl() {
    let mut problems = Vec::new();
    let msl_options = msl::Options {
        lang_version: (2, 1),
        ..msl::Options::default()
    };
    let msl_pipeline = msl::PipelineOptions {
        entry_point: Some((naga::ShaderStage::Compute, ENTRY_POINT.to_string())),
        ..msl::PipelineOptions::default()
    };
    let hlsl_options = hlsl::Options {
        shader_model: hlsl::ShaderModel::V6_0,
        ..hlsl::Options::default()
    };
    let hlsl_pipeline = hlsl::PipelineOptions {
        entry_point: Some((naga::ShaderStage::Compute, ENTRY_POINT.to_string())),
    };
    let modules = modules();
    for (label, module, info) in &modules {
        match msl::write_string(module, info, &msl_options, &msl_pipeline) {
            Ok((text, _)) => assert!(text.contains("kernel void"), "{label}: {text}"),
            Err(e) => problems.push(format!("{label}: MSL: {e}")),
        }
        let mut text = String::new();
        match hlsl::Writer::new(&mut text, &hlsl_options, &hlsl_pipeline).write(module, info, None)
        {
            Ok(_) => assert!(text.contains("[numthreads("), "{label}: {text}"),
            Err(e) => problems.push(format!("{label}: HLSL: {e}")),
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} modules rejected:\n{}",
        problems.len(),
        modules.len(),
        problems.join("\n")
    );
}
