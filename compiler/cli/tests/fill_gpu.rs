//! `phobosc fill --backend gpu`: the same bytes as the CPU fill for every
//! type, at unaligned starts and at the stream's end.
//! Skips without an adapter unless `PHOBOS_REQUIRE_GPU=1`.

use std::process::Command;

fn gpu_available() -> bool {
    match phobos_runtime::gpu::Gpu::shared() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var("PHOBOS_REQUIRE_GPU").map_or(true, |v| v != "1"),
                "PHOBOS_REQUIRE_GPU=1 but the GPU backend is not available: {e}"
            );
            eprintln!("skipping the GPU: {e}");
            false
        }
    }
}

fn fill(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_phobosc"))
        .arg("fill")
        .args(args)
        .output()
        .expect("runs phobosc")
}

#[test]
fn gpu_fill_equals_cpu_fill() {
    if !gpu_available() {
        return;
    }
    for ty in [
        "u8",
        "u16",
        "u32",
        "u64",
        "f16",
        "f32",
        "f64",
        "bool",
        "below:6",
        "below:0x80000001",
        "below:-10:21",
        "below:-0x10000000000:6",
        "below:0xfffffffffffffffe",
        "below:-5:0x10000000000",
        "choice:1,2,0,4.5",
        "normal_f32",
        "exp_f32",
        "exp_f64",
        "normal_f64",
    ] {
        for (start, count) in [("0", "1"), ("7", "100003"), ("0xfffffffffffffff0", "16")] {
            let args = ["--key", "3", "--start", start, "--count", count];
            let gpu = fill(&[&[ty, "--backend", "gpu"], &args[..]].concat());
            let cpu = fill(&[&[ty, "--backend", "cpu"], &args[..]].concat());
            assert!(
                gpu.status.success(),
                "{ty}: {}",
                String::from_utf8_lossy(&gpu.stderr)
            );
            assert!(cpu.status.success());
            assert!(
                gpu.stdout == cpu.stdout,
                "{ty} --start {start} --count {count}: the GPU bytes differ"
            );
        }
    }
    // .npy output too.
    let gpu = fill(&[
        "f32",
        "--key",
        "9",
        "--count",
        "1000",
        "--format",
        "npy",
        "--backend",
        "gpu",
    ]);
    let cpu = fill(&["f32", "--key", "9", "--count", "1000", "--format", "npy"]);
    assert!(gpu.status.success() && gpu.stdout == cpu.stdout);
}
