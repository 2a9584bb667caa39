//! Tuning never changes bits: every `@autotune` configuration of every
//! example and fixture, and on the GPU every workgroup size the tuner may
//! choose, gives the interpreter's bits, and the interpreter gives the same
//! bits in every configuration whose tensors have the same shapes.
//! Without a GPU adapter the GPU part skips and says so
//! (`PHOBOS_REQUIRE_GPU=1` makes that a failure).

use phobos_core::launch::{Arg, bind};
use phobos_runtime::gpu::Gpu;
use phobos_runtime::{Backend, Options, launch};
use phobos_tests::{
    differs, fixture_dims, gpu_available, gpu_may_refuse, make_args, ph_files, root,
};

/// Examples whose pipelines take lavapipe 11-30 s each to build at a
/// workgroup size other than the heuristic's (1 s at it), measured at
/// M = N = 37 on the chunked kernels: `softmax_dropout_tandem` (30 s at 32,
/// 128 and 256 each) and `layernorm_dropout_tandem` (11 s); their plain
/// twins since they take whole rows with three configurations each. On the
/// GPU they run at two sizes
/// here, the heuristic's and the largest (the tuner's choice for both on
/// the H200, bench/RESULTS.md), rather than at every size; their
/// reductions' workgroup trees at every size are `reductions.rs`'s, and
/// their masks against the Tandem reference are `softmax.rs`'s and
/// `layernorm.rs`'s. Every configuration still runs on the interpreter and
/// the CPU.
const HEAVY_PIPELINES: [&str; 4] = [
    "softmax_dropout.ph",
    "softmax_dropout_tandem.ph",
    "layernorm_dropout.ph",
    "layernorm_dropout_tandem.ph",
];

/// Examples whose pipelines take lavapipe about a minute each to build
/// with a cold shader cache (exact `exp`, `log` and division inside the
/// loops of a matrix product, 16-bit conversions): on the GPU they run at
/// the heuristic's workgroup size only. Their bits against the interpreter
/// at every configuration are also `matmul.rs`'s and `attention.rs`'s.
const SLOW_PIPELINES: [&str; 3] = [
    "matmul.ph",
    "attention_dropout.ph",
    "attention_dropout_backward.ph",
];

#[test]
fn every_configuration_and_workgroup_size_gives_the_same_bits_on_every_backend() {
    let gpu = gpu_available().then(|| Gpu::shared().expect("available"));
    let mut files = ph_files(&root().join("tests/fixtures/ok"));
    files.extend(ph_files(&root().join("examples")));
    let (mut configs, mut gpu_runs, mut refused) = (0, 0, 0);
    let mut heavy_seen = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let file_name = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
        let heavy = HEAVY_PIPELINES.contains(&file_name);
        let slow = SLOW_PIPELINES.contains(&file_name);
        heavy_seen += usize::from(heavy);
        let dims = fixture_dims(&text);
        let program = phobos_tests::program(&path.display().to_string(), &text);
        for name in program.kernel_names() {
            let mut first: Option<Vec<Arg>> = None;
            for config in program.configs(name) {
                configs += 1;
                let at = format!("{} `{name}` {config:?}", path.display());
                let started = std::time::Instant::now();
                let kernel = program.kernel(name, &config).expect("checks");
                let inputs = make_args(&kernel, &dims, &[]);
                let mut want = inputs.clone();
                let bound = phobos_core::interp::run(&kernel, &mut want)
                    .unwrap_or_else(|e| panic!("{at}: interp: {e}"));
                match &first {
                    None => first = Some(want.clone()),
                    Some(f) => {
                        let same_shapes = f.iter().zip(&want).all(|(a, b)| match (a, b) {
                            (Arg::Tensor(a), Arg::Tensor(b)) => a.shape == b.shape,
                            _ => true,
                        });
                        if same_shapes && let Some(d) = differs(f, &want) {
                            panic!(
                                "{at}: the interpreter differs from the first configuration: {d}"
                            );
                        }
                    }
                }
                let mut cpu = inputs.clone();
                let options = Options {
                    backend: Backend::Cpu,
                    ..Options::default()
                };
                launch(&kernel, &mut cpu, &options).unwrap_or_else(|e| panic!("{at}: cpu: {e}"));
                if let Some(d) = differs(&want, &cpu) {
                    panic!("{at}: cpu: {d}");
                }
                let Some(gpu) = gpu else { continue };
                assert_eq!(bind(&kernel, &inputs).unwrap(), bound);
                let specialized = phobos_gpu::specialize(&kernel, &bound.dims);
                let mut sizes = gpu.workgroup_sizes(&specialized, phobos_gpu::Precision::Exact);
                assert!(sizes.len() >= 2, "{at}: the tuner has a choice: {sizes:?}");
                if slow {
                    sizes.truncate(1);
                } else if heavy {
                    // The heuristic's size comes first; keep it and the largest.
                    let largest = *sizes.iter().max().expect("at least two");
                    sizes = vec![sizes[0], largest];
                    sizes.dedup();
                }
                for w in sizes {
                    let mut got = inputs.clone();
                    let options = Options {
                        backend: Backend::Gpu,
                        workgroup_size: Some(w),
                        ..Options::default()
                    };
                    let t = std::time::Instant::now();
                    let ran = launch(&kernel, &mut got, &options);
                    if t.elapsed().as_secs_f64() > 5.0 {
                        eprintln!(
                            "{at}: gpu, workgroup {w}: {:.1} s",
                            t.elapsed().as_secs_f64()
                        );
                    }
                    match ran {
                        Ok(prov) => assert_eq!(prov.workgroup_size, Some(w), "{at}"),
                        Err(e) if gpu_may_refuse(&e.to_string()) => {
                            refused += 1;
                            break;
                        }
                        Err(e) => panic!("{at}: gpu, workgroup {w}: {e}"),
                    }
                    gpu_runs += 1;
                    if let Some(d) = differs(&want, &got) {
                        panic!("{at}: gpu, workgroup {w}: {d}");
                    }
                }
                eprintln!("{at}: {:.1} s", started.elapsed().as_secs_f64());
            }
        }
    }
    eprintln!(
        "{configs} configurations; {gpu_runs} GPU launches; {refused} refused by the GPU (types it has no storage for)"
    );
    assert!(configs >= 15, "the fixtures have configurations: {configs}");
    assert_eq!(
        heavy_seen,
        HEAVY_PIPELINES.len(),
        "every file of HEAVY_PIPELINES exists (remove a name when its file goes)"
    );
    if gpu.is_some() {
        assert!(gpu_runs >= 4 * configs / 2, "{gpu_runs} GPU launches");
    }
}
