//! `--devices` on `phobosc run`, `bench` and `fill` (issue 32): a split
//! launch or fill writes the bytes of one device; a device that does not
//! exist, a kernel whose blocks write overlapping rows, and a device that
//! fails mid-run are errors that name what is wrong and leave no output
//! file. The GPU cases use devices opened on one adapter (lavapipe in CI)
//! and skip without one unless `PHOBOS_REQUIRE_GPU=1`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn phobosc(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_phobosc"));
    c.args(args).env("NODEVICE_SELECT", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("runs phobosc")
}

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

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .display()
        .to_string()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phobos-devices-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `run --output` on `devices` (or on the interpreter), the file's bytes.
fn run_bytes(file: &str, dims: &[&str], devices: Option<&str>, out: &str) -> Vec<u8> {
    let path = temp(out);
    let mut args = vec!["run", file, "--no-tune"];
    for d in dims {
        args.extend(["--dim", d]);
    }
    let output = format!("Y={}", path.display());
    args.extend(["--output", &output]);
    match devices {
        Some(d) => args.extend(["--devices", d]),
        None => args.extend(["--backend", "interp"]),
    }
    let o = phobosc(&args, &[]);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    if devices.is_some() {
        assert!(text.contains("device     "), "{text}");
    }
    std::fs::read(&path).unwrap()
}

#[test]
fn a_split_run_writes_the_interpreters_bytes() {
    let gpu = gpu_available();
    for (file, dims) in [
        ("dropout_rows.ph", &["M=37"][..]),
        ("softmax_dropout_tandem.ph", &["M=37", "N=300"][..]),
        ("layernorm_dropout.ph", &["M=20", "N=300"][..]),
    ] {
        let want = run_bytes(&example(file), dims, None, "want.npy");
        let mut splits = vec!["cpu,cpu", "cpu:1,cpu:1,cpu:2"];
        if gpu {
            splits.extend(["0,0", "gpu0,cpu,gpu0:2", "all", "1"]);
        }
        for split in splits {
            let got = run_bytes(&example(file), dims, Some(split), "got.npy");
            assert!(want == got, "{file} on {split}: the bytes differ");
        }
    }
}

#[test]
fn run_json_lists_each_device_with_its_blocks_and_time() {
    let o = phobosc(
        &[
            "run",
            &example("dropout_rows.ph"),
            "--no-tune",
            "--dim",
            "M=256",
            "--devices",
            "cpu:1,cpu:3",
            "--json",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let devices = v["split"]["devices"].as_array().expect("a list");
    assert_eq!(devices.len(), 2);
    assert_eq!(devices[0]["blocks"], serde_json::json!([0, 4]));
    assert_eq!(devices[1]["blocks"], serde_json::json!([4, 16]));
    assert!(devices.iter().all(|d| d["ms"].as_f64().is_some()));
    assert_eq!(v["split"]["axis"], "x");
}

#[test]
fn a_device_that_does_not_exist_is_an_error_before_anything_runs() {
    let out = temp("never.npy");
    let output = format!("Y={}", out.display());
    for (cmd, devices) in [("run", "cpu,gpu42"), ("bench", "gpu42"), ("run", "tpu")] {
        let o = phobosc(
            &[
                cmd,
                &example("dropout_rows.ph"),
                "--dim",
                "M=8",
                "--output",
                &output,
                "--devices",
                devices,
            ],
            &[],
        );
        assert!(!o.status.success());
        let e = stderr(&o);
        assert!(e.contains("--devices"), "{e}");
        if devices.contains("gpu42") {
            assert!(e.contains("`gpu42`: there is no adapter 42"), "{e}");
        }
        assert!(!out.exists(), "{cmd} {devices}: no output file");
    }
    let raw = temp("never.raw");
    let o = phobosc(
        &[
            "fill",
            "u32",
            "--key",
            "1",
            "--count",
            "10",
            "--devices",
            "cpu,gpu42",
            "-o",
            &raw.display().to_string(),
        ],
        &[],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("`gpu42`"), "{}", stderr(&o));
    assert!(!raw.exists());
}

#[test]
fn a_kernel_whose_blocks_write_overlapping_rows_is_refused() {
    let src = temp("overlap.ph");
    std::fs::write(
        &src,
        "@grid(cdiv(M, 2))\nkernel overlap(X: tensor<f32>[M], Y: tensor<f32>[M]) {\n  \
         let r = ctx.block.x * 2\n  Y[r :+ 4] = X[r :+ 4] + 1.0\n}\n",
    )
    .unwrap();
    let out = temp("overlap.npy");
    let output = format!("Y={}", out.display());
    let o = phobosc(
        &[
            "run",
            &src.display().to_string(),
            "--dim",
            "M=16",
            "--output",
            &output,
            "--devices",
            "cpu,cpu",
        ],
        &[],
    );
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("cannot split this launch"), "{e}");
    assert!(e.contains("overlapping"), "{e}");
    assert!(!out.exists());
}

#[test]
fn a_device_failing_mid_run_fails_the_run_naming_it_and_writes_nothing() {
    let out = temp("failed.npy");
    let output = format!("Y={}", out.display());
    let o = phobosc(
        &[
            "run",
            &example("dropout_rows.ph"),
            "--no-tune",
            "--dim",
            "M=256",
            "--output",
            &output,
            "--devices",
            "cpu,cpu",
        ],
        &[("PHOBOS_SPLIT_FAIL", "1")],
    );
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("device 1 of the split (cpu) failed"), "{e}");
    assert!(!out.exists(), "no partial output");
    let raw = temp("failed.raw");
    let o = phobosc(
        &[
            "fill",
            "f32",
            "--key",
            "1",
            "--count",
            "1000",
            "--devices",
            "cpu,cpu",
            "-o",
            &raw.display().to_string(),
        ],
        &[("PHOBOS_SPLIT_FAIL", "0")],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("device 0 of the split (cpu) failed"),
        "{}",
        stderr(&o)
    );
    assert!(!raw.exists(), "no partial fill");
}

#[test]
fn a_split_fill_writes_the_single_device_fill() {
    let gpu = gpu_available();
    let mut splits = vec!["cpu,cpu", "cpu:1,cpu:2,cpu:3"];
    if gpu {
        splits.extend(["0,0", "gpu0,cpu,gpu0"]);
    }
    for ty in ["u32", "normal_f32", "bool", "below:-10:21"] {
        let args = [
            "--key", "9", "--start", "7", "--count", "100003", "--format", "npy",
        ];
        let one = phobosc(&[&["fill", ty][..], &args[..]].concat(), &[]);
        assert!(one.status.success(), "{}", stderr(&one));
        for split in &splits {
            let got = phobosc(
                &[&["fill", ty][..], &args[..], &["--devices", split][..]].concat(),
                &[],
            );
            assert!(got.status.success(), "{ty} on {split}: {}", stderr(&got));
            assert!(
                one.stdout == got.stdout,
                "{ty} on {split}: the bytes differ"
            );
        }
    }
}

#[test]
fn bench_reports_each_device() {
    let o = phobosc(
        &[
            "bench",
            &example("dropout_rows.ph"),
            "--no-tune",
            "--dim",
            "M=64",
            "--runs",
            "2",
            "--devices",
            "cpu,cpu",
            "--json",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["backend"], "split");
    assert_eq!(v["split"]["devices"].as_array().map(Vec::len), Some(2));
    // The kernels alone: each device's median, the split's the slowest's.
    let kernels = &v["kernels"];
    let each: Vec<f64> = (kernels["devices"].as_array().expect("a list").iter())
        .map(|d| d["median_ms"].as_f64().expect("a time"))
        .collect();
    assert_eq!(each.len(), 2);
    assert_eq!(kernels["median_ms"].as_f64(), Some(each[0].max(each[1])));
    let o = phobosc(
        &[
            "bench",
            &example("dropout_rows.ph"),
            "--no-tune",
            "--dim",
            "M=256",
            "--runs",
            "2",
            "--devices",
            "cpu,cpu",
            "--measured-weights",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.matches("device     cpu").count(), 2, "{text}");
}
