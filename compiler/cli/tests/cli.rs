//! The `phobosc` command line, end to end: exit codes, the README's main
//! job, the seed's figure, `.npy` in and out, and errors for bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn phobosc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phobosc"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("PHOBOS_BACKEND")
        .output()
        .expect("phobosc runs")
}

/// A GPU run failed for want of an adapter: the test skips and says so,
/// unless `PHOBOS_REQUIRE_GPU=1` makes that a failure.
fn skip_gpu(err: &str) {
    assert!(
        std::env::var("PHOBOS_REQUIRE_GPU").map_or(true, |v| v != "1"),
        "PHOBOS_REQUIRE_GPU=1 but the GPU backend fails: {err}"
    );
    eprintln!("skipping the GPU: {err}");
}

/// `phobosc run` then `phobosc bench` with `args`, on the GPU with
/// `--json`: `run`'s JSON and what `bench` did, or `None` where `run`
/// found no GPU (a skip, unless `PHOBOS_REQUIRE_GPU=1`).
fn run_then_bench(args: &[&str]) -> Option<(serde_json::Value, (bool, String, String))> {
    let with = |cmd: &str| {
        let mut all = vec![cmd];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--backend", "gpu", "--json"]);
        outcome(&phobosc(&all))
    };
    let (ok, out, err) = with("run");
    if !ok {
        skip_gpu(&err);
        return None;
    }
    let run = serde_json::from_str(&out).expect("stdout is JSON");
    Some((run, with("bench")))
}

/// Whether a command succeeded, with its stdout and stderr.
fn outcome(o: &Output) -> (bool, String, String) {
    let (out, err) = text(o);
    (o.status.success(), out, err)
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn check_exit_codes() {
    let ok = phobosc(&[
        "check",
        "examples/dropout_rows.ph",
        "examples/random_tile.ph",
    ]);
    assert_eq!(ok.status.code(), Some(0), "{:?}", text(&ok));
    let bad = phobosc(&["check", "tests/fixtures/err/type_mismatch.ph"]);
    let (out, err) = text(&bad);
    assert_eq!(bad.status.code(), Some(1));
    assert!(out.is_empty());
    assert!(
        err.contains("[E0103]") && err.contains("type_mismatch.ph:2:7"),
        "{err}"
    );
    let missing = phobosc(&["check", "no/such/file.ph"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing).1.contains("cannot read no/such/file.ph"));
}

#[test]
fn dropout_rows_runs_on_a_ragged_size() {
    let o = phobosc(&["run", "examples/dropout_rows.ph", "--dim", "M=1000"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("grid       63 x 1 x 1 blocks"), "{out}");
    assert!(
        out.contains("check `kept fraction`: true for 229993 of 256000 elements (89.84%)"),
        "{out}"
    );
    assert!(out.contains("check `every kept value equals x / (1 - p)`: true for 256000 of 256000 elements (100.00%) (all)"), "{out}");
    assert!(out.contains("Y: 256000 counters"), "{out}");
}

#[test]
fn the_figure_prints_the_seed_caption() {
    let o = phobosc(&["run", "examples/random_tile.ph", "--arg", "seed=1"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("uniform: 256 counters, mean 0.513\n"), "{out}");
    assert!(out.contains("randn: 256 counters"), "{out}");
    assert!(out.contains("dropout: 256 counters"), "{out}");
    assert!(out.contains("██"), "the tile is drawn with shaded cells");
}

#[test]
fn json_reports_provenance_and_statistics() {
    let o = phobosc(&[
        "run",
        "examples/dropout_rows.ph",
        "--dim",
        "M=100",
        "--arg",
        "seed=7",
        "--json",
        "--backend",
        "interp",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("stdout is JSON");
    assert_eq!(v["provenance"]["backend"], "interp");
    assert_eq!(v["provenance"]["precision"], "exact");
    assert_eq!(v["provenance"]["config"]["R"], 16);
    assert_eq!(v["provenance"]["grid"][0], 7);
    assert_eq!(v["outputs"]["Y"]["count"], 25600);
    let kept = v["outputs"]["Y"]["nonzero_fraction"].as_f64().unwrap();
    assert!((0.88..0.92).contains(&kept), "{kept}");
    assert_eq!(v["checks"][1]["holds"], v["checks"][1]["total"]);
}

/// Check lines run on the backend that ran the kernel, compiled, and count
/// the same elements there as on the interpreter, including a check that
/// fails on some elements (`kept fraction`).
#[test]
fn checks_run_on_the_kernels_backend_with_the_same_counts() {
    let checks = |backend: &str| {
        let o = phobosc(&[
            "run",
            "examples/dropout_rows.ph",
            "--dim",
            "M=100",
            "--arg",
            "seed=7",
            "--json",
            "--backend",
            backend,
        ]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("stdout is JSON");
        v["checks"].as_array().expect("checks").clone()
    };
    let interp = checks("interp");
    let cpu = checks("cpu");
    assert_eq!(interp.len(), 2);
    for (i, c) in interp.iter().zip(&cpu) {
        assert_eq!(i["name"], c["name"]);
        assert_eq!(i["holds"], c["holds"]);
        assert_eq!(i["total"], c["total"]);
        assert_eq!(i["backend"], "interp");
        assert_eq!(c["backend"], "cpu", "{c}");
        assert!(c["fallback"].is_null(), "{c}");
    }
    assert_ne!(
        interp[0]["holds"], interp[0]["total"],
        "kept fraction fails on some"
    );
}

/// On the GPU, the check lines run on the buffers the kernel left there
/// (none uploaded again) while its output is saved, and count the elements
/// the interpreter counts. Skips without an adapter, unless
/// `PHOBOS_REQUIRE_GPU=1`.
#[test]
fn checks_run_on_the_gpu_while_the_output_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let y = dir.path().join("y.npy");
    let run = |backend: &str| {
        let o = phobosc(&[
            "run",
            "examples/dropout_rows.ph",
            "--dim",
            "M=300",
            "--arg",
            "seed=3",
            "--no-tune",
            "--json",
            "--backend",
            backend,
            "--output",
            &format!("Y={}", y.display()),
        ]);
        outcome(&o)
    };
    let (ok, out, err) = run("gpu");
    if !ok {
        skip_gpu(&err);
        return;
    }
    let gpu: serde_json::Value = serde_json::from_str(&out).expect("stdout is JSON");
    let saved_on_gpu = std::fs::read(&y).expect("Y saved");
    let (ok, out, err) = run("interp");
    assert!(ok, "{err}");
    let interp: serde_json::Value = serde_json::from_str(&out).expect("stdout is JSON");
    assert_eq!(std::fs::read(&y).expect("Y saved"), saved_on_gpu);
    let (g, i) = (
        gpu["checks"].as_array().unwrap(),
        interp["checks"].as_array().unwrap(),
    );
    assert_eq!(g.len(), 2);
    for (g, i) in g.iter().zip(i) {
        assert_eq!(g["backend"], "gpu", "{g}");
        assert!(g["fallback"].is_null(), "{g}");
        assert_eq!((&g["holds"], &g["total"]), (&i["holds"], &i["total"]));
    }
    assert_eq!(g[0]["total"], 300 * 256);
}

/// On the GPU an output is written to its file as it is read back, in
/// pieces (this one, of 68 MiB, in two): the file holds the CPU's bytes,
/// and the write shows under the read-back in `--verbose`. Skips without
/// an adapter, unless `PHOBOS_REQUIRE_GPU=1`.
#[test]
fn an_output_is_written_during_the_gpu_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let run = |backend: &str, file: &str| {
        let y = dir.path().join(file);
        let o = phobosc(&[
            "run",
            "examples/dropout_rows.ph",
            "--dim",
            "M=70000",
            "--no-tune",
            "--verbose",
            "--backend",
            backend,
            "--output",
            &format!("Y={}", y.display()),
        ]);
        let (_, err) = text(&o);
        (o.status.success(), err, y)
    };
    let (ok, err, on_gpu) = run("gpu", "gpu.npy");
    if !ok {
        skip_gpu(&err);
        return;
    }
    assert!(
        err.lines().any(|l| l.starts_with("time           write")),
        "the write is under the read-back:\n{err}"
    );
    let (ok, err, on_cpu) = run("cpu", "cpu.npy");
    assert!(ok, "{err}");
    let (g, c) = (
        std::fs::read(on_gpu).unwrap(),
        std::fs::read(on_cpu).unwrap(),
    );
    assert_eq!(g.len(), 128 + 70000 * 256 * 4);
    assert!(g == c, "the GPU's file differs from the CPU's");
}

/// `--verbose` says on stderr where the time went, phase by phase, with
/// the launch's and the checks' own phases under them, and leaves stdout
/// as it is without it.
#[test]
fn verbose_prints_the_phases_on_stderr_and_leaves_stdout_alone() {
    let dir = tempfile::tempdir().unwrap();
    let y = dir.path().join("y.npy");
    let out = format!("Y={}", y.display());
    let args = [
        "run",
        "examples/dropout_rows.ph",
        "--dim",
        "M=100",
        "--backend",
        "cpu",
        "--no-tune",
        "--output",
        &out,
    ];
    let plain = phobosc(&args);
    let verbose = phobosc(&[&args[..], &["--verbose"]].concat());
    let ((plain_out, plain_err), (out, err)) = (text(&plain), text(&verbose));
    assert!(plain.status.success() && verbose.status.success(), "{err}");
    // The same report but for the compile time, which varies run to run.
    let timeless = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.starts_with("compile "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        timeless(&out),
        timeless(&plain_out),
        "stdout is the same with --verbose"
    );
    assert!(out.contains("check `kept fraction`"), "{out}");
    assert!(!plain_err.contains("time "), "{plain_err}");
    let lines: Vec<(usize, &str, f64)> = err
        .lines()
        .filter_map(|l| l.strip_prefix("time       "))
        .map(|l| {
            let depth = l.len() - l.trim_start().len();
            let mut words: Vec<&str> = l.split_whitespace().collect();
            words.retain(|w| !w.starts_with('(') && !w.ends_with(')'));
            let secs = words[words.len() - 2].parse().expect("seconds");
            (depth / 2, words[0], secs)
        })
        .collect();
    let names: Vec<(usize, &str)> = lines.iter().map(|(d, n, _)| (*d, *n)).collect();
    for want in [
        (0, "inputs"),
        (0, "launch"),
        (1, "compile"),
        (1, "kernel"),
        (0, "write"),
        (0, "checks"),
        (0, "other"),
        (0, "total"),
    ] {
        assert!(names.contains(&want), "{want:?} in {names:?}\n{err}");
    }
    // The top-level phases and `other` add up to the total.
    let (top, total): (f64, f64) = (
        lines
            .iter()
            .filter(|(d, n, _)| *d == 0 && *n != "total")
            .map(|l| l.2)
            .sum(),
        lines.iter().find(|l| l.1 == "total").expect("a total").2,
    );
    assert!((top - total).abs() < 0.01, "{top} against {total}\n{err}");
}

#[test]
fn npy_round_trip_and_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let y = dir.path().join("y.npy");
    let y = y.to_str().unwrap();
    let o = phobosc(&[
        "run",
        "examples/dropout_rows.ph",
        "--dim",
        "M=20",
        "--output",
        &format!("Y={y}"),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(text(&o).0.contains("Y: saved to"));
    // Feed Y back as X: shape [20, 256] f32 is accepted and binds M.
    let o = phobosc(&[
        "run",
        "examples/dropout_rows.ph",
        "--input",
        &format!("X={y}"),
        "--json",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!(v["provenance"]["dims"]["M"], 20);
    // The wrong dtype names the parameter and what was expected.
    let t = dir.path().join("t.npy");
    let t = t.to_str().unwrap();
    let o = phobosc(&[
        "run",
        "tests/fixtures/ok/bits.ph",
        "--dim",
        "N=4",
        "--output",
        &format!("E={t}"),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = phobosc(&[
        "run",
        "examples/dropout_rows.ph",
        "--input",
        &format!("X={t}"),
    ]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.contains("`X`") && err.contains("expected dtype <f4 (f32), but the file holds <u4"),
        "{err}"
    );
    // The wrong shape too.
    let o = phobosc(&[
        "run",
        "tests/fixtures/ok/bits.ph",
        "--input",
        &format!("X={t}"),
        "--dim",
        "N=4",
    ]);
    assert!(
        text(&o).1.contains("`X` must hold f32") || text(&o).1.contains("expected dtype <f4"),
        "{:?}",
        text(&o)
    );
    let o = phobosc(&[
        "run",
        "examples/dropout_rows.ph",
        "--input",
        &format!("X={y}"),
        "--dim",
        "M=21",
    ]);
    assert!(
        text(&o)
            .1
            .contains("dimension `M` is 21 from --dim but 20 in"),
        "{:?}",
        text(&o)
    );
}

#[test]
fn bad_arguments_name_the_parameter() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--arg", "sed=1"],
            "--arg sed: `dropout_rows` has no parameter `sed`; its scalar parameters are seed",
        ),
        (&["--arg", "seed"], "--arg `seed`: expected NAME=VALUE"),
        (
            &["--arg", "seed=1.5"],
            "--arg seed: `1.5` is not a valid i32",
        ),
        (
            &["--arg", "X=1"],
            "--arg X: `X` is a tensor; pass it with --input X=FILE.npy",
        ),
        (
            &["--dim", "N=5"],
            "--dim N: `dropout_rows` has no dimension `N`; its dimensions are M",
        ),
        (
            &["--dim", "M=-5"],
            "--dim M: `-5` is not a non-negative integer",
        ),
        (
            &[],
            "dimension `M` of `dropout_rows` is not bound: pass --dim M=N",
        ),
        (
            &["--dim", "M=4", "--output", "X=x.npy"],
            "--output X: `X` is not written by `dropout_rows`; its outputs are Y",
        ),
        (
            &["--dim", "M=4", "--config", "Q=3"],
            "`Q` is not a tuning parameter of `dropout_rows`",
        ),
        (
            &["--dim", "M=4", "--kernel", "nope"],
            "no kernel named `nope`",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["run", "examples/dropout_rows.ph"];
        args.extend_from_slice(extra);
        let o = phobosc(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {err}");
        assert!(err.contains(want), "{extra:?}:\n{err}");
    }
}

/// Without a Vulkan driver, `--backend gpu` says how to get one and `auto`
/// falls back to the CPU backend.
#[test]
fn no_gpu_adapter_is_a_clear_error() {
    let run = |backend: &str| {
        Command::new(env!("CARGO_BIN_EXE_phobosc"))
            .args([
                "run",
                "examples/dropout_rows.ph",
                "--dim",
                "M=4",
                "--json",
                "--backend",
                backend,
            ])
            .current_dir(root())
            .env("WGPU_BACKEND", "vulkan")
            .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
            .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
            .env_remove("PHOBOS_BACKEND")
            .output()
            .expect("phobosc runs")
    };
    let o = run("gpu");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("backend `gpu` is not available: no GPU adapter found"),
        "{err}"
    );
    assert!(err.contains("mesa-vulkan-drivers"), "{err}");
    let o = run("auto");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("\"backend\": \"cpu\""), "{out}");
}

#[test]
fn several_kernels_need_a_choice() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("two.ph");
    std::fs::write(
        &f,
        "kernel a(Y: tensor<i32>[4]) { Y = 1 }\nkernel b(Y: tensor<i32>[4]) { Y = 2 }\n",
    )
    .unwrap();
    let o = phobosc(&["run", f.to_str().unwrap()]);
    assert!(
        text(&o)
            .1
            .contains("defines several kernels (a, b); choose one with --kernel")
    );
    let o = phobosc(&["run", f.to_str().unwrap(), "--kernel", "b", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!(v["outputs"]["Y"]["mean"], 2.0);
}

#[test]
fn cpu_backend_gives_the_interpreter_bits() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for backend in ["interp", "cpu"] {
        let y = dir.path().join(format!("{backend}.npy"));
        let o = phobosc(&[
            "run",
            "examples/dropout_rows.ph",
            "--dim",
            "M=333",
            "--arg",
            "seed=-5",
            "--backend",
            backend,
            "--output",
            &format!("Y={}", y.display()),
            "--json",
        ]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["provenance"]["backend"], backend);
        if backend == "cpu" {
            let ms = v["provenance"]["compile_ms"]
                .as_f64()
                .expect("the cpu backend reports its compile time");
            assert!(ms > 0.0);
        }
        files.push(std::fs::read(y).unwrap());
    }
    assert!(files[0] == files[1], "cpu and interp outputs differ");
}

/// `PHOBOS_WORKGROUP_SIZE` beyond what the lowering accepts is ignored with
/// a warning that names it, once; the run still succeeds at the heuristic's
/// size. Skips without an adapter, unless `PHOBOS_REQUIRE_GPU=1`.
#[test]
fn a_workgroup_size_out_of_range_warns() {
    let run = |size: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_phobosc"))
            .args(["run", "examples/dropout_rows.ph", "--dim", "M=64"])
            .args(["--no-tune", "--backend", "gpu", "--json"])
            .current_dir(root())
            .env("NO_COLOR", "1")
            .env("PHOBOS_WORKGROUP_SIZE", size)
            .env("PHOBOS_CACHE_DIR", "off")
            .output()
            .expect("phobosc runs");
        outcome(&o)
    };
    let (ok, _, err) = run("4096");
    if !ok {
        skip_gpu(&err);
        return;
    }
    let warned = |err: &str| {
        err.lines()
            .filter(|l| l.contains("warning: PHOBOS_WORKGROUP_SIZE=\"4096\""))
            .count()
    };
    assert_eq!(warned(&err), 1, "one warning:\n{err}");
    let (ok, _, err) = run("128");
    assert!(ok, "{err}");
    assert!(!err.contains("PHOBOS_WORKGROUP_SIZE"), "no warning:\n{err}");
}

/// `phobosc bench --backend gpu` on a kernel whose tiles the device cannot
/// hold fails at a fixed configuration, naming the tile, where `run` runs
/// it on the CPU backend: a bench of the GPU never times the CPU in its
/// place.
#[test]
fn bench_on_the_gpu_refuses_a_kernel_the_gpu_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("big.ph");
    // 16 MiB of workgroup memory: more than any device has.
    std::fs::write(
        &src,
        "kernel big(Y: tensor<f32>[N]) {\n  var t: tile<f32>[4194304] = f32(iota(0))\n  Y[0 :+ 4] = t[0 :+ 4]\n}\n",
    )
    .unwrap();
    let path = src.to_str().unwrap();
    // A fixed configuration, as `--config` gives: the tuner would refuse
    // a kernel no configuration of which fits.
    let Some((run, (ok, _, err))) = run_then_bench(&[path, "--dim", "N=4", "--no-tune"]) else {
        return;
    };
    assert_eq!(run["provenance"]["backend"], "cpu", "{run}");
    assert!(!ok, "bench timed something: {err}");
    assert!(
        err.contains("workgroup memory") && err.contains("`var t: tile<f32>[4194304]`"),
        "{err}"
    );
}

/// `phobosc bench --json` says how the kernel was lowered, as `run
/// --json`'s provenance does (the plan's notes: reductions, kept rows,
/// stores). Skips without an adapter, unless `PHOBOS_REQUIRE_GPU=1`.
#[test]
fn bench_reports_the_lowering_as_run_does() {
    let Some((run, (ok, out, err))) = run_then_bench(&[
        "examples/softmax_dropout.ph",
        "--dim",
        "M=8",
        "--dim",
        "N=1024",
        "--arg",
        "seed=1",
        "--config",
        "R=1",
    ]) else {
        return;
    };
    assert!(ok, "{err}");
    let bench: serde_json::Value = serde_json::from_str(&out).expect("stdout is JSON");
    let lowering = bench["lowering"].as_array().expect("a lowering key");
    assert!(
        lowering.iter().any(|n| n
            .as_str()
            .is_some_and(|n| n.contains("`max` over 1024 elements"))),
        "{bench}"
    );
    assert_eq!(bench["lowering"], run["provenance"]["lowering"]);
}
