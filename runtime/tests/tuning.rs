//! The tuner and its cache on disk: a miss measures and stores, a second
//! lookup is a hit, damaged files are ignored and rebuilt, a changed
//! `@autotune` list measures only what is new, a changed kernel measures
//! everything again, and a directory that cannot be written leaves the
//! launch untuned. One test in its own binary, because it sets
//! `PHOBOS_CACHE_DIR` for the process.

use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::{Scalar, Value};
use phobos_runtime::tune::{self, CacheUse, Candidate, Outcome, Source, Trial, Tuning};
use phobos_runtime::{Backend, Options, launch};

fn source(values: &str, body: &str) -> String {
    format!(
        "@autotune(R in [{values}])
kernel k(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 64]) {{
  let r = ctx.block.x * R
  Y[r :+ R, :] = {body}
}}"
    )
}

fn args() -> Vec<Arg> {
    let x = Tensor::from_fn(Scalar::F32, &[256, 64], |i| Value::F32(i as f32 * 0.25));
    vec![
        Arg::Tensor(x),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[256, 64])),
    ]
}

fn choose(text: &str, backend: Backend) -> (Candidate, Tuning) {
    let (program, diags) = Program::parse("k.ph", text);
    assert!(diags.is_empty(), "{diags:?}");
    let options = Options {
        backend,
        ..Options::default()
    };
    tune::choose(&program, "k", &mut args(), &options, true, &mut |_| {}).expect("chooses")
}

fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir.join("tuning"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn miss(reused: usize, measured: usize) -> CacheUse {
    CacheUse::Miss { reused, measured }
}

#[test]
fn the_tuning_cache_hits_misses_rebuilds_and_degrades() {
    let dir = std::env::temp_dir().join(format!("phobos-tuning-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // SAFETY: this binary's only test, so no other thread reads the
    // environment while it changes.
    unsafe { std::env::set_var("PHOBOS_CACHE_DIR", &dir) };
    let body = "X[r :+ R, :] * 2.0 + 1.0";
    let two = source("4, 8", body);

    // A miss measures both configurations and stores them and a decision.
    let (first, t) = choose(&two, Backend::Cpu);
    assert_eq!(t.source, Source::Tuned);
    assert_eq!(t.cache, miss(0, 2));
    assert!(
        ["R"]
            .iter()
            .all(|p| first.config.iter().any(|(n, _)| n == p))
    );
    assert_eq!(first.workgroup_size, None, "no lowering choices on the CPU");
    assert_eq!(files(&dir).len(), 3, "two trials and one decision");

    // The next lookup reads the decision: nothing is measured.
    let (again, t) = choose(&two, Backend::Cpu);
    assert_eq!(
        (again.clone(), t.cache.clone()),
        (first.clone(), CacheUse::Hit)
    );
    assert!(t.ms.is_some_and(|ms| ms < 1000.0));

    // Every file damaged: ignored (with a warning) and rebuilt.
    for f in files(&dir) {
        let mut bytes = std::fs::read(&f).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 0x20;
        std::fs::write(&f, bytes).unwrap();
    }
    let (_, t) = choose(&two, Backend::Cpu);
    assert_eq!(t.cache, miss(0, 2));
    assert_eq!(choose(&two, Backend::Cpu).1.cache, CacheUse::Hit);

    // A truncated decision alone: the trials are still sound and reused.
    for f in files(&dir) {
        let text = std::fs::read_to_string(&f).unwrap();
        if text.contains("\"decision\"") {
            std::fs::write(&f, &text[..text.len() / 2]).unwrap();
        }
    }
    assert_eq!(choose(&two, Backend::Cpu).1.cache, CacheUse::Hit);

    // One value added to the list: only it is measured.
    let three = source("4, 8, 16", body);
    assert_eq!(choose(&three, Backend::Cpu).1.cache, miss(2, 1));
    // A changed kernel: every configuration is measured again.
    let changed = source("4, 8, 16", "X[r :+ R, :] * 3.0");
    assert_eq!(choose(&changed, Backend::Cpu).1.cache, miss(0, 3));

    // Every configuration gives the bits of the heuristic's.
    let (program, _) = Program::parse("k.ph", &three);
    let mut want = args();
    let k = program.kernel("k", &[]).unwrap();
    launch(&k, &mut want, &Options::default()).unwrap();
    for config in program.configs("k") {
        let mut got = args();
        let k = program.kernel("k", &config).unwrap();
        launch(&k, &mut got, &Options::default()).unwrap();
        assert_eq!(got, want, "{config:?}");
    }

    // The interpreter is not tuned; tuning off is the heuristic.
    let (_, t) = choose(&two, Backend::Interp);
    assert_eq!((t.source, t.cache), (Source::Heuristic, CacheUse::NotUsed));
    let (program, _) = Program::parse("k.ph", &two);
    let opts = Options {
        backend: Backend::Cpu,
        ..Options::default()
    };
    let (h, t) = tune::choose(&program, "k", &mut args(), &opts, false, &mut |_| {}).unwrap();
    assert_eq!(t.source, Source::Heuristic);
    assert_eq!(h, tune::heuristic(&program, "k", &args(), &opts).unwrap());

    // A directory that cannot be written: a warning, and the heuristic.
    let blocked = dir.join("a-file");
    std::fs::write(&blocked, b"not a directory").unwrap();
    unsafe { std::env::set_var("PHOBOS_CACHE_DIR", &blocked) };
    let (c, t) = choose(&two, Backend::Cpu);
    assert_eq!(t.source, Source::Heuristic);
    assert!(matches!(t.cache, CacheUse::Unwritable(_)), "{:?}", t.cache);
    assert_eq!(c, h);
    // Off: the heuristic, quietly.
    unsafe { std::env::set_var("PHOBOS_CACHE_DIR", "off") };
    assert_eq!(choose(&two, Backend::Cpu).1.cache, CacheUse::Off);

    // A configuration that does not fit the arguments (a parameter in a
    // tensor's shape) is reported in the table and skipped.
    unsafe { std::env::set_var("PHOBOS_CACHE_DIR", &dir) };
    let shaped = "@autotune(C in [64, 32])
kernel k(X: tensor<f32>[M, C], Y: tensor<f32>[M, C]) {
  let r = ctx.block.x * 4
  Y[r :+ 4, :] = X[r :+ 4, :] + 1.0
}";
    let (program, diags) = Program::parse("k.ph", shaped);
    assert!(diags.is_empty(), "{diags:?}");
    let tuned = tune::tune(&program, "k", &mut args(), &opts, &mut |_| {}).unwrap();
    assert_eq!(tuned.chosen.config, [("C".to_string(), 64)]);
    match &tuned.trials[1].outcome {
        Outcome::Skipped(why) => assert!(why.contains("does not fit these arguments"), "{why}"),
        other => panic!("C=32 does not fit [256, 64] tensors, yet {other:?}"),
    }

    // On the GPU the workgroup size is part of the configuration.
    match phobos_runtime::gpu::Gpu::shared() {
        Ok(gpu) => {
            let (program, _) = Program::parse("k.ph", &two);
            let opts = Options {
                backend: Backend::Gpu,
                ..Options::default()
            };
            let tuned = tune::tune(&program, "k", &mut args(), &opts, &mut |_| {}).unwrap();
            let k = program.kernel("k", &[]).unwrap();
            let sizes = gpu.workgroup_sizes(&k, opts.precision).len();
            assert_eq!(tuned.trials.len(), 2 * sizes, "{:?}", tuned.trials);
            assert!(
                tuned
                    .trials
                    .iter()
                    .all(|t| t.candidate.workgroup_size.is_some())
            );
            assert_eq!(tuned.timing, "gpu timestamps");
            let (c, t) =
                tune::choose(&program, "k", &mut args(), &opts, true, &mut |_| {}).unwrap();
            assert_eq!(
                (c.clone(), t.cache.clone()),
                (tuned.chosen.clone(), CacheUse::Hit)
            );
            let mut got = args();
            let (_, prov) = tune::launch_candidate(&program, "k", &c, t, &mut got, &opts).unwrap();
            assert_eq!(prov.workgroup_size, c.workgroup_size);
            assert_eq!(prov.tuning.source, Source::Tuned);
            let mut want = args();
            launch(
                &program.kernel("k", &c.config).unwrap(),
                &mut want,
                &Options::default(),
            )
            .unwrap();
            assert_eq!(got, want);

            // A configuration over the device's workgroup memory (a 2 MiB
            // tile) is skipped, with the device's reason, at every
            // workgroup size; the other one wins.
            let big = "@autotune(R in [8, 8192])
kernel k(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 64]) {
  let r = ctx.block.x * R
  var t: tile<f32>[R, 64] = X[r :+ R, :] * 2.0
  Y[r :+ R, :] = t[0 :+ R, :] + 1.0
}";
            let (program, diags) = Program::parse("k.ph", big);
            assert!(diags.is_empty(), "{diags:?}");
            let tuned = tune::tune(&program, "k", &mut args(), &opts, &mut |_| {}).unwrap();
            assert_eq!(tuned.chosen.config, [("R".to_string(), 8)]);
            let skipped: Vec<&Trial> = tuned
                .trials
                .iter()
                .filter(|t| t.candidate.config == [("R".to_string(), 8192)])
                .collect();
            assert!(!skipped.is_empty());
            for t in skipped {
                match &t.outcome {
                    Outcome::Skipped(why) => assert!(why.contains("workgroup memory"), "{why}"),
                    other => panic!("R=8192 fits no workgroup memory, yet {other:?}"),
                }
            }
        }
        Err(e) => {
            assert!(
                std::env::var_os("PHOBOS_REQUIRE_GPU").is_none(),
                "PHOBOS_REQUIRE_GPU is set and there is no adapter: {e}"
            );
            eprintln!("skipped the GPU part: {e}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
