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
use phobos_runtime::split::{DeviceSpec, Devices, SplitError, launch_split};
use phobos_runtime::Options;
use phobos_tests::{fixture_dims, gpu_available, gpu_may_refuse, make_args, ph_files, root};

/// Examples whose pipelines take lavapipe about a minute each to build
/// (as `tuning.rs` says): split on the CPU only, and on the GPU two ways
/// with the CPU (one pipeline).
const SLOW_PIPELINES: [&str; 3] = [
    "matmul.ph",
    "attention_dropout.ph",
    "attention_dropout_backward.ph",
];

fn devices(text: &str) -> Vec<DeviceSpec> {
    match Devices::parse(text).expect("parses") {
        Devices::List(l) => l,
        other => other.resolve().expect("resolves"),
    }
}

/// The first element whose bits differ between two argument lists.
fn differs(want: &[Arg], got: &[Arg]) -> Option<String> {
    for (i, (a, b)) in want.iter().zip(got).enumerate() {
        if let (Arg::Tensor(a), Arg::Tensor(b)) = (a, b) {
            if a.shape != b.shape {
                return Some(format!("argument {i}: shapes differ"));
            }
            if let Some(j) = (0..a.len()).find(|&j| a.get(j).bits() != b.get(j).bits()) {
                return Some(format!(
                    "argument {i} element {j}: {} and {}",
                    a.get(j),
                    b.get(j)
                ));
            }
        }
    }
    None
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
        let dims = fixture_dims(&text);
        let program = phobos_tests::program(&path.display().to_string(), &text);
        for name in program.kernel_names() {
            let config = program.configs(name).into_iter().next().expect("a configuration");
            let kernel = program.kernel(name, &config).expect("checks");
            kernels += 1;
            let inputs = make_args(&kernel, &dims, &[]);
            let mut want = inputs.clone();
            let bound = phobos_core::interp::run(&kernel, &mut want).unwrap();
            let mut splits: Vec<&str> = cpu_splits.to_vec();
            if gpu {
                splits.extend(if slow { &gpu_splits[1..2] } else { &gpu_splits[..] });
            }
            for split in splits {
                let at = format!("{file} `{name}` grid {:?} on {split}", bound.grid);
                let mut got = inputs.clone();
                let t = std::time::Instant::now();
                match launch_split(&kernel, &mut got, &Options::default(), &devices(split)) {
                    Ok(run) => {
                        let covered: u64 = run.parts.iter().map(|p| p.blocks.end - p.blocks.start).sum();
                        assert_eq!(
                            covered,
                            bound.grid[usize::from(run.axis)],
                            "{at}: every block once"
                        );
                    }
                    Err(SplitError::Device { error, .. })
                        if gpu_may_refuse(&error.to_string()) =>
                    {
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
