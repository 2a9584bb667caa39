//! Issue 32: one launch split across several devices gives the bits of
//! one. Every kernel of every example runs split two and three ways —
//! CPU with CPU, several devices opened on one GPU adapter (lavapipe in
//! CI), and a GPU with the CPU — with equal and unequal weights, and every
//! tensor is compared bit for bit with the interpreter's. A split Tandem
//! fill equals the single-device fill; bad device lists and kernels whose
//! blocks write overlapping rows are refused before anything runs; a
//! device that fails mid-run fails the launch, naming it, and leaves the
//! arguments as they were. Without a GPU adapter the GPU splits skip and
//! say so (`PHOBOS_REQUIRE_GPU=1` makes that a failure).

use phobos_core::launch::Arg;
use phobos_runtime::Options;
use phobos_runtime::split::{DeviceSpec, Devices, SplitError, launch_split};
use phobos_tests::{
    differs, fixture_dims, gpu_available, gpu_may_refuse, make_args, ph_files, root,
};

/// Examples whose pipelines take lavapipe about a minute each to build
/// with a cold shader cache (as `tuning.rs` says): split on the GPU two
/// ways with the CPU only (one pipeline; `attention_dropout`'s took 15 s
/// here), so that a product and 16-bit tensors are cut on the GPU.
const SLOW_PIPELINES: [&str; 2] = ["matmul.ph", "attention_dropout.ph"];

/// Split on the CPU only: one GPU part of each of its two kernels took
/// lavapipe 30 and 64 s to build cold, and `attention_dropout` has their
/// kinds of statement.
const CPU_ONLY: [&str; 1] = ["attention_dropout_backward.ph"];

/// Examples whose parts take lavapipe 9 to 20 s each to build cold (the
/// chunked kernels' loops): split on the GPU three ways only, two GPU
/// parts and a CPU one.
const HEAVY_PIPELINES: [&str; 2] = ["softmax_dropout_chunked.ph", "layernorm_dropout_chunked.ph"];

fn devices(text: &str) -> Vec<DeviceSpec> {
    match Devices::parse(text).expect("parses") {
        Devices::List(l) => l,
        other => other.resolve().expect("resolves"),
    }
}

#[test]
fn every_example_split_two_and_three_ways_gives_the_interpreters_bits() {
    let gpu = gpu_available();
    let cpu_splits = ["cpu,cpu", "cpu,cpu,cpu", "cpu:1,cpu:3"];
    let gpu_splits = ["gpu0,gpu0", "gpu0,cpu", "cpu:2,gpu0,gpu0:3"];
    let (mut runs, mut kernels) = (0, 0);
    for path in ph_files(&root().join("examples")) {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
        let slow = SLOW_PIPELINES.contains(&file);
        let heavy = HEAVY_PIPELINES.contains(&file);
        let dims = fixture_dims(&text);
        let program = phobos_tests::program(&path.display().to_string(), &text);
        for name in program.kernel_names() {
            let config = program
                .configs(name)
                .into_iter()
                .next()
                .expect("a configuration");
            let kernel = program.kernel(name, &config).expect("checks");
            kernels += 1;
            let inputs = make_args(&kernel, &dims, &[]);
            let mut want = inputs.clone();
            let bound = phobos_core::interp::run(&kernel, &mut want).unwrap();
            let mut splits: Vec<&str> = cpu_splits.to_vec();
            if gpu && !CPU_ONLY.contains(&file) {
                splits.extend(match (slow, heavy) {
                    (true, _) => &gpu_splits[1..2],
                    (_, true) => &gpu_splits[2..],
                    _ => &gpu_splits[..],
                });
            }
            for split in splits {
                let at = format!("{file} `{name}` grid {:?} on {split}", bound.grid);
                let mut got = inputs.clone();
                let t = std::time::Instant::now();
                match launch_split(&kernel, &mut got, &Options::default(), &devices(split)) {
                    Ok(run) => {
                        let covered: u64 = run
                            .parts
                            .iter()
                            .map(|p| p.blocks.end - p.blocks.start)
                            .sum();
                        assert_eq!(
                            covered,
                            bound.grid[usize::from(run.axis)],
                            "{at}: every block once"
                        );
                    }
                    Err(SplitError::Device { error, .. }) if gpu_may_refuse(&error.to_string()) => {
                        continue;
                    }
                    Err(e) => panic!("{at}: {e}"),
                }
                runs += 1;
                if let Some(d) = differs(&want, &got) {
                    panic!("{at}: {d}");
                }
                eprintln!("{at}: {:.2} s", t.elapsed().as_secs_f64());
            }
        }
    }
    eprintln!("{kernels} kernels, {runs} split launches");
    assert!(kernels >= 16, "the examples have kernels: {kernels}");
}

/// A split fill is the single-device fill: every device's range of every
/// piece, put end to end, for maps with rejection, pairs and bits.
#[test]
fn a_fill_split_two_and_three_ways_is_the_single_device_fill() {
    use phobos_runtime::fills::{Engine, parse_type};
    use phobos_tandem::{Bulk, Key, Tandem};
    let gpu = gpu_available();
    let rng = Tandem::new(Key::from_seed(0x5eed));
    let mut splits = vec!["cpu,cpu", "cpu:1,cpu:2,cpu:5"];
    if gpu {
        splits.extend(["gpu0,gpu0", "gpu0,cpu", "cpu:3,gpu0,gpu0"]);
    }
    for ty in [
        "u32",
        "f32",
        "normal_f32",
        "bool",
        "below:1000",
        "u16",
        "normal_f64",
    ] {
        let dist = parse_type(ty).unwrap();
        let size = dist.elem_size();
        // An odd count from an odd start, so that ranges cut inside chunks,
        // groups and Box-Muller pairs.
        let (start, n) = (12_345u64, 10_007usize);
        let mut want = vec![0u8; n * size];
        Engine::Fast(Bulk::new(rng))
            .fill(&dist, start, &mut want)
            .unwrap();
        for split in &splits {
            let s = phobos_runtime::split::fill(&dist, rng, &devices(split), None);
            let s = match s {
                Ok(s) => s,
                // A map without a GPU fill is refused before anything runs.
                Err(e) if split.contains("gpu") && e.to_string().contains("GPU") => continue,
                Err(e) => panic!("{ty} on {split}: {e}"),
            };
            let engine = Engine::Split(s);
            let mut got = vec![0u8; n * size];
            engine
                .fill(&dist, start, &mut got)
                .unwrap_or_else(|e| panic!("{ty} on {split}: {e}"));
            assert!(want == got, "{ty} on {split}: the bits differ");
            let Engine::Split(s) = &engine else {
                unreachable!()
            };
            let shares = s.shares();
            assert_eq!(
                shares.iter().map(|s| s.elements).sum::<u64>(),
                n as u64,
                "{ty} on {split}: every element once"
            );
        }
    }
}

const OVERLAPPING: &str = "@grid(cdiv(M, 2))
kernel overlapping(X: tensor<f32>[M], Y: tensor<f32>[M]) {
  let r = ctx.block.x * 2
  Y[r :+ 4] = X[r :+ 4] + 1.0
}";

const SAME_ROWS: &str = "@grid(4)
kernel same_rows(X: tensor<f32>[M], Y: tensor<f32>[M]) {
  Y = X * 2.0
}";

const IN_PLACE: &str = "@autotune(R in [4])
kernel in_place(Y: tensor<f32>[M]) {
  let r = ctx.block.x * R
  Y[r :+ R] = Y[r :+ R] + 1.0
}";

/// Each block reads the first row of the next block's, which another
/// device may write.
const READS_NEXT: &str = "@autotune(R in [4])
kernel reads_next(Y: tensor<f32>[M]) {
  let r = ctx.block.x * R
  Y[r :+ R] = Y[r + 1 :+ R] + 1.0
}";

const ROWS: &str = "@autotune(R in [4])
kernel rows(X: tensor<f32>[M], Y: tensor<f32>[M]) {
  let r = ctx.block.x * R
  Y[r :+ R] = X[r :+ R] * 3.0
}";

fn kernel_of(src: &str) -> (phobos_core::ir::Kernel, Vec<Arg>) {
    let program = phobos_tests::program("split.ph", src);
    let name = program.kernel_names()[0].to_string();
    let config = program.configs(&name).into_iter().next().unwrap();
    let k = program.kernel(&name, &config).expect("checks");
    let args = make_args(&k, &[("M".to_string(), 37)], &[]);
    (k, args)
}

#[test]
fn kernels_whose_blocks_write_the_same_rows_are_refused_before_anything_runs() {
    for (src, phrase) in [
        (OVERLAPPING, "overlapping"),
        (SAME_ROWS, "do not follow"),
        (READS_NEXT, "both read and written"),
    ] {
        let (k, args) = kernel_of(src);
        let mut got = args.clone();
        let e = launch_split(&k, &mut got, &Options::default(), &devices("cpu,cpu"))
            .expect_err("refused");
        assert!(matches!(e, SplitError::Refused(_)), "{e}");
        assert!(e.to_string().contains(phrase), "{e}");
        assert!(differs(&args, &got).is_none(), "nothing ran: {e}");
        // On one device there is nothing to refuse.
        launch_split(&k, &mut got, &Options::default(), &devices("cpu"))
            .unwrap_or_else(|e| panic!("{phrase} on one device: {e}"));
    }
}

#[test]
fn a_device_that_does_not_exist_is_named_before_anything_runs() {
    let e = Devices::parse("cpu,gpu7").unwrap().resolve().unwrap_err();
    assert!(
        e.to_string().contains("`gpu7`: there is no adapter 7"),
        "{e}"
    );
    let e = Devices::parse("64").unwrap().resolve().unwrap_err();
    assert!(e.to_string().contains("64 devices asked for"), "{e}");
    // The same through the launch, with a list that skips `resolve`.
    let (k, args) = kernel_of(ROWS);
    let mut got = args.clone();
    let specs = devices("cpu,gpu99");
    let e = launch_split(&k, &mut got, &Options::default(), &specs).unwrap_err();
    assert!(matches!(e, SplitError::Devices(_)), "{e}");
    assert!(e.to_string().contains("gpu99"), "{e}");
    assert!(differs(&args, &got).is_none());
}

#[test]
fn a_device_failing_mid_run_fails_the_launch_and_keeps_no_results() {
    let (k, args) = kernel_of(ROWS);
    let mut splits = vec!["cpu,cpu", "cpu,cpu,cpu"];
    if gpu_available() {
        splits.extend(["gpu0,cpu", "cpu,gpu0"]);
    }
    for split in splits {
        let specs = devices(split);
        for fail in 0..specs.len() {
            let mut got = args.clone();
            let e = phobos_runtime::split::launch_split_failing(
                &k,
                &mut got,
                &Options::default(),
                &specs,
                Some(fail),
            )
            .unwrap_err();
            let SplitError::Device { index, device, .. } = &e else {
                panic!("{split}: {e}");
            };
            assert_eq!(*index, fail, "{split}: {e}");
            assert_eq!(device, &specs[fail].kind.to_string());
            assert!(e.to_string().contains(&format!("({device}) failed")), "{e}");
            assert!(
                differs(&args, &got).is_none(),
                "{split}, device {fail} failing: the arguments changed"
            );
        }
        // And without the failure, the results.
        let mut got = args.clone();
        let run = launch_split(&k, &mut got, &Options::default(), &specs).unwrap();
        assert_eq!(run.parts.len(), specs.len());
        let mut want = args.clone();
        phobos_core::interp::run(&k, &mut want).unwrap();
        assert!(differs(&want, &got).is_none(), "{split}");
    }
}

/// The provenance lists every device with its range, which together cover
/// the grid in order, as the weights say.
#[test]
fn provenance_lists_each_device_its_blocks_and_time() {
    let (k, args) = kernel_of(ROWS);
    let mut got = args.clone();
    let run = launch_split(&k, &mut got, &Options::default(), &devices("cpu:1,cpu:3")).unwrap();
    let blocks: Vec<_> = run.parts.iter().map(|p| p.blocks.clone()).collect();
    // 37 rows of 4: 10 blocks, a quarter and three quarters.
    assert_eq!(blocks, vec![0..2, 2..10]);
    assert!(
        run.parts
            .iter()
            .all(|p| p.ms >= 0.0 && p.name.starts_with("cpu"))
    );
    assert!(
        run.provenance.device.contains("split over 2 devices"),
        "{}",
        run.provenance.device
    );
    // A grid without blocks gives every device none.
    let empty = make_args(&k, &[("M".to_string(), 0)], &[]);
    let run0 = launch_split(
        &k,
        &mut empty.clone(),
        &Options::default(),
        &devices("cpu,cpu"),
    )
    .unwrap();
    assert!(run0.parts.iter().all(|p| p.blocks.is_empty()));
    // Measured weights: blocks per millisecond, so the faster device gets
    // more; a device that ran nothing keeps its share of the mean.
    let mut timed = run.clone();
    timed.parts[0].ms = 1.0; // 2 blocks: 2 a millisecond
    timed.parts[1].ms = 16.0; // 8 blocks: 0.5 a millisecond
    let w = timed.measured_weights(&devices("cpu:1,cpu:3"));
    assert_eq!((w[0].weight, w[1].weight), (2.0, 0.5));
    timed.parts[0].blocks = 0..0;
    let w = timed.measured_weights(&devices("cpu:1,cpu:3"));
    // The other device's speed is 0.5 a millisecond for weight 3.
    assert!((w[0].weight - 0.5 / 3.0).abs() < 1e-12, "{w:?}");
}

/// A device is sent the rows of an input its blocks read, and a tensor
/// every block reads whole (a bias) whole.
#[test]
fn inputs_read_by_rows_are_sliced_and_biases_sent_whole() {
    use phobos_runtime::split::writes::{read_slabs, slabs};
    let path = root().join("examples/bias_gelu_dropout.ph");
    let text = std::fs::read_to_string(&path).unwrap();
    let program = phobos_tests::program("bias_gelu_dropout.ph", &text);
    let k = program.kernel("bias_gelu_dropout", &[]).expect("checks");
    let args = make_args(&k, &[("M".to_string(), 40)], &[]);
    let bound = phobos_core::launch::bind(&k, &args).unwrap();
    // R = 16: 3 blocks, the last of 8 rows.
    assert_eq!(bound.grid, [3, 1, 1]);
    let ranges = vec![0..1, 1..3];
    let reads = read_slabs(&k, &bound, 0, &ranges);
    let x = reads[0].as_ref().expect("X is read by rows");
    assert_eq!((x.axis, x.parts.clone()), (0, vec![0..16, 16..40]));
    assert!(reads[1].is_none(), "B is read whole by every block");
    let writes = slabs(&k, &bound, 0, &ranges).unwrap();
    assert_eq!(writes.len(), 1);
    assert_eq!(
        (writes[0].param, writes[0].parts.clone()),
        (2, vec![0..16, 16..40])
    );
    // The second device's part holds rows 16..40 of X and Y, and B whole.
    use phobos_core::ir::ParamKind;
    use phobos_core::types::Dim;
    use phobos_runtime::split::{Slice, part_kernel};
    let cut = |param| Slice {
        param,
        axis: 0,
        lo: 16,
        extent: 24,
    };
    let part = part_kernel(&k, 0, (1, 2, 3), &bound.dims, &[cut(0), cut(2)]);
    let shapes: Vec<Vec<Dim>> = (part.params.iter())
        .filter_map(|p| match &p.kind {
            ParamKind::Tensor { shape, .. } => Some(shape.clone()),
            ParamKind::Scalar(_) => None,
        })
        .collect();
    let rows = [Dim::Const(24), Dim::Const(256)];
    assert_eq!(
        shapes,
        vec![rows.to_vec(), vec![Dim::Const(256)], rows.to_vec()]
    );
    let errors = phobos_core::ir::verify(&part);
    assert!(errors.is_empty(), "the part verifies: {errors:?}");
}

/// The ok fixtures on two and three devices: each gives the
/// interpreter's bits or is refused before anything runs (a fixture may
/// write overlapping rows or read what it writes), and most split.
#[test]
fn every_fixture_splits_with_the_interpreters_bits_or_is_refused() {
    let gpu = gpu_available();
    let (mut split, mut refused) = (0, Vec::new());
    for path in ph_files(&root().join("tests/fixtures/ok")) {
        let text = std::fs::read_to_string(&path).unwrap();
        let dims = fixture_dims(&text);
        let program = phobos_tests::program(&path.display().to_string(), &text);
        for name in program.kernel_names() {
            let config = program
                .configs(name)
                .into_iter()
                .next()
                .expect("a configuration");
            let kernel = program.kernel(name, &config).expect("checks");
            let inputs = make_args(&kernel, &dims, &[]);
            let mut want = inputs.clone();
            phobos_core::interp::run(&kernel, &mut want).unwrap();
            let mut splits = vec!["cpu,cpu", "cpu:2,cpu,cpu:3"];
            if gpu {
                // One GPU part (its pipeline takes lavapipe about 3 s cold), the
                // second, whose slabs start past row 0.
                splits.push("cpu,gpu0");
            }
            for devices_text in splits {
                let at = format!("{} `{name}` on {devices_text}", path.display());
                let mut got = inputs.clone();
                match launch_split(
                    &kernel,
                    &mut got,
                    &Options::default(),
                    &devices(devices_text),
                ) {
                    Ok(_) => {
                        split += 1;
                        if let Some(d) = differs(&want, &got) {
                            panic!("{at}: {d}");
                        }
                    }
                    Err(SplitError::Device { error, .. }) if gpu_may_refuse(&error.to_string()) => {
                    }
                    Err(SplitError::Refused(why)) => {
                        assert!(
                            differs(&inputs, &got).is_none(),
                            "{at}: refused after running"
                        );
                        refused.push(format!("{at}: {why}"));
                    }
                    Err(e) => panic!("{at}: {e}"),
                }
            }
        }
    }
    for r in &refused {
        eprintln!("refused: {r}");
    }
    eprintln!("{split} split launches, {} refused", refused.len());
    assert!(split > 2 * refused.len(), "most fixtures split");
}

/// A tensor read and written in the rows each block writes splits, on the
/// CPU and on the GPU, with the interpreter's bits.
#[test]
fn a_tensor_updated_in_place_by_rows_splits() {
    let (k, args) = kernel_of(IN_PLACE);
    let mut want = args.clone();
    phobos_core::interp::run(&k, &mut want).unwrap();
    let mut splits = vec!["cpu,cpu", "cpu,cpu:2,cpu"];
    if gpu_available() {
        splits.extend(["gpu0,gpu0", "cpu,gpu0", "gpu0,cpu:2,gpu0"]);
    }
    for split in splits {
        let mut got = args.clone();
        launch_split(&k, &mut got, &Options::default(), &devices(split))
            .unwrap_or_else(|e| panic!("{split}: {e}"));
        assert!(
            differs(&want, &got).is_none(),
            "{split}: {:?}",
            differs(&want, &got)
        );
    }
}

/// A GPU whose workgroup memory cannot hold the kernel's tiles has its
/// blocks run by the CPU backend, with the same bits, and the provenance
/// says so (as a launch on one GPU does).
#[test]
fn a_gpu_refusing_the_tiles_has_its_blocks_run_on_the_cpu() {
    if !gpu_available() {
        return;
    }
    let limit = phobos_runtime::gpu::Gpu::shared()
        .expect("available")
        .device()
        .limits()
        .max_compute_workgroup_storage_size;
    let too_many = limit / 4 + 1;
    let src = format!(
        "@autotune(R in [4])
kernel big(X: tensor<f32>[M], Y: tensor<f32>[M]) {{
  var t: tile<f32>[{too_many}] = f32(iota(0))
  let r = ctx.block.x * R
  Y[r :+ R] = X[r :+ R] + t[0 :+ R]
}}"
    );
    let (k, args) = kernel_of(&src);
    let mut want = args.clone();
    phobos_core::interp::run(&k, &mut want).unwrap();
    let mut got = args.clone();
    let run = launch_split(&k, &mut got, &Options::default(), &devices("gpu0,cpu,gpu0"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(differs(&want, &got).is_none(), "{:?}", differs(&want, &got));
    let notes = run.provenance.lowering.join("\n");
    assert!(
        notes.contains("device 0 (gpu0): its blocks ran on the CPU backend instead")
            && notes.contains("device 2 (gpu0)"),
        "{notes}"
    );
}

/// The tuner's workgroup size (`Options::workgroup_size`, chosen on the
/// shared device) applies to the devices of that adapter.
#[test]
fn the_tuners_workgroup_size_applies_to_devices_of_its_adapter() {
    if !gpu_available() {
        return;
    }
    let (k, args) = kernel_of(ROWS);
    let options = Options {
        workgroup_size: Some(32),
        ..Options::default()
    };
    let run = launch_split(&k, &mut args.clone(), &options, &devices("gpu0,cpu,gpu0")).unwrap();
    let sizes: Vec<_> = run.parts.iter().map(|p| p.workgroup_size).collect();
    // Adapter 0 is the shared device's where it is the only one (CI).
    let shared = phobos_runtime::gpu::Gpu::shared()
        .expect("available")
        .info()
        .clone();
    let first = phobos_runtime::gpu::Gpu::adapters()[0].clone();
    if (first.name, first.driver_info) == (shared.name, shared.driver_info) {
        assert_eq!(sizes, vec![Some(32), None, Some(32)]);
    } else {
        assert_eq!(sizes[1], None);
    }
}

/// The kernels alone: each device's part timed by itself, the split's time
/// the slowest's, and the arguments as they were.
#[test]
fn each_devices_kernel_is_timed_alone() {
    let (k, args) = kernel_of(ROWS);
    let mut splits = vec!["cpu,cpu:3"];
    if gpu_available() {
        splits.push("gpu0,cpu");
    }
    for split in splits {
        let mut got = args.clone();
        let t = phobos_runtime::split::time_split(
            &k,
            &mut got,
            &Options::default(),
            &devices(split),
            3,
        )
        .unwrap_or_else(|e| panic!("{split}: {e}"));
        assert_eq!(t.parts.len(), 2);
        assert!(
            t.parts
                .iter()
                .all(|p| p.seconds.len() == 3 && p.median() >= 0.0)
        );
        assert_eq!(t.seconds(), t.parts[0].median().max(t.parts[1].median()));
        assert!(
            differs(&args, &got).is_none(),
            "{split}: the arguments changed"
        );
    }
}

/// Two stores to one tensor whose slices of neighbouring blocks meet
/// (`r :+ 4` and `r + 1 :+ 4`): the CPU backend runs such blocks in order,
/// as the interpreter does, rather than on threads whose order would decide
/// the element they share; a split refuses them.
#[test]
fn stores_whose_blocks_meet_run_in_order_on_the_cpu() {
    let src = "@grid(cdiv(M, 4))
kernel two(X: tensor<f32>[M], Y: tensor<f32>[M]) {
  let r = ctx.block.x * 4
  Y[r :+ 4] = X[r :+ 4]
  Y[r + 1 :+ 4] = X[r :+ 4] * 2.0
}";
    let program = phobos_tests::program("two.ph", src);
    let k = program.kernel("two", &[]).expect("checks");
    let args = make_args(&k, &[("M".to_string(), 1 << 16)], &[]);
    let mut want = args.clone();
    phobos_core::interp::run(&k, &mut want).unwrap();
    for _ in 0..4 {
        let mut got = args.clone();
        let cpu = Options {
            backend: phobos_runtime::Backend::Cpu,
            threads: Some(2),
            ..Options::default()
        };
        phobos_runtime::launch(&k, &mut got, &cpu).unwrap();
        assert!(differs(&want, &got).is_none(), "{:?}", differs(&want, &got));
    }
    let e = launch_split(
        &k,
        &mut args.clone(),
        &Options::default(),
        &devices("cpu,cpu"),
    )
    .expect_err("refused");
    assert!(e.to_string().contains("overlapping"), "{e}");
}
