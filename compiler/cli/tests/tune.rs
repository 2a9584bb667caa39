//! `phobosc tune`, tuning at first launch and `build --tuned`, end to end:
//! the table and its JSON, a second process served by the cache (and its
//! provenance saying so), damaged entries, bad input. Each test has its own
//! cache directory. The GPU tests run on whatever adapter wgpu finds
//! (lavapipe in CI) and skip without one, unless `PHOBOS_REQUIRE_GPU=1`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn phobosc(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phobosc"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env("PHOBOS_CACHE_DIR", cache)
        .env_remove("PHOBOS_BACKEND")
        .env_remove("PHOBOS_WORKGROUP_SIZE")
        .output()
        .expect("phobosc runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn json(o: &Output) -> Value {
    let (out, err) = text(o);
    assert!(o.status.success(), "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn cache_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("phobos-cli-tune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Whether `--backend gpu` works here; a skip says so.
fn gpu(cache: &Path) -> bool {
    let o = phobosc(
        cache,
        &[
            "run",
            "examples/dropout_rows.ph",
            "--dim",
            "M=16",
            "--backend",
            "gpu",
            "--no-tune",
        ],
    );
    if o.status.success() {
        return true;
    }
    assert!(
        std::env::var("PHOBOS_REQUIRE_GPU").map_or(true, |v| v != "1"),
        "PHOBOS_REQUIRE_GPU=1 but the GPU backend fails: {}",
        text(&o).1
    );
    eprintln!("skipping the GPU: {}", text(&o).1);
    false
}

const TWO: &str = "@autotune(R in [4, 8])
kernel k(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 64]) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] * 2.0
}
";

#[test]
fn dropout_rows_tunes_on_the_gpu_and_a_second_process_reuses_it() {
    let cache = cache_dir("gpu");
    if !gpu(&cache) {
        return;
    }
    let t = json(&phobosc(
        &cache,
        &[
            "tune",
            "examples/dropout_rows.ph",
            "--dim",
            "M=65536",
            "--backend",
            "gpu",
            "--json",
        ],
    ));
    let trials = t["trials"].as_array().unwrap();
    assert!(trials.len() >= 4, "{t:#}");
    assert!(
        trials
            .iter()
            .all(|r| r["median_ms"].as_f64().unwrap() > 0.0 && r["cached"] == false)
    );
    let sizes: Vec<u64> = trials
        .iter()
        .map(|r| r["workgroup_size"].as_u64().unwrap())
        .collect();
    assert!(sizes.contains(&32) && sizes.contains(&256), "{sizes:?}");
    assert_eq!(t["tuning"]["cache"], "miss");
    assert_eq!(t["tuning"]["measured"], trials.len());
    assert_eq!(t["timing"], "gpu timestamps");
    assert!(t["margin_over_heuristic"].as_f64().unwrap() >= 0.0);
    assert_eq!(t["bucket"]["M"], 65536);

    // A second process, at another M of the same bucket, is served by the
    // cache and says so; it runs the winner.
    let r = json(&phobosc(
        &cache,
        &[
            "run",
            "examples/dropout_rows.ph",
            "--dim",
            "M=40000",
            "--backend",
            "gpu",
            "--json",
        ],
    ));
    let p = &r["provenance"];
    assert_eq!(p["tuning"]["source"], "tuned", "{p:#}");
    assert_eq!(p["tuning"]["cache"], "hit");
    assert_eq!(p["tuning_cache"], "hit");
    assert_eq!(p["workgroup_size"], t["chosen"]["workgroup_size"]);
    assert_eq!(p["config"], t["chosen"]["config"]);
    assert!(p["tuning"]["ms"].as_f64().unwrap() < 50.0, "{p:#}");
    // The checks hold as on every configuration.
    assert_eq!(r["checks"][1]["holds"], r["checks"][1]["total"]);

    // --no-tune runs the heuristic's configuration, which the table marked.
    let h = json(&phobosc(
        &cache,
        &[
            "run",
            "examples/dropout_rows.ph",
            "--dim",
            "M=40000",
            "--backend",
            "gpu",
            "--json",
            "--no-tune",
        ],
    ));
    assert_eq!(h["provenance"]["tuning"]["source"], "heuristic");
    assert_eq!(
        h["provenance"]["workgroup_size"],
        t["heuristic"]["workgroup_size"]
    );
    // Same bits, whatever the configuration: the same statistics.
    assert_eq!(h["outputs"], r["outputs"]);

    // `build --tuned` writes the table and the winner's shaders.
    let out = cache.join("build");
    let b = phobosc(
        &cache,
        &[
            "build",
            "examples/dropout_rows.ph",
            "-o",
            out.to_str().unwrap(),
            "--tuned",
            "--dim",
            "M=65536",
            "--backend",
            "gpu",
        ],
    );
    assert!(b.status.success(), "{}", text(&b).1);
    let tuning: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("tuning.json")).unwrap()).unwrap();
    let k = &tuning["kernels"][0];
    assert_eq!(k["chosen"], t["chosen"]);
    assert_eq!(
        k["tuning"]["cache"], "hit",
        "the build reused the tune's times"
    );
    for f in k["files"].as_array().unwrap() {
        assert!(out.join(f.as_str().unwrap()).exists(), "{f}");
    }
    std::fs::remove_dir_all(&cache).unwrap();
}

#[test]
fn the_cpu_tunes_by_wall_time_and_damage_is_rebuilt_with_a_warning() {
    let cache = cache_dir("cpu");
    std::fs::create_dir_all(&cache).unwrap();
    let file = cache.join("two.ph");
    std::fs::write(&file, TWO).unwrap();
    let f = file.to_str().unwrap();
    let first = phobosc(&cache, &["tune", f, "--dim", "M=512", "--backend", "cpu"]);
    let (out, err) = text(&first);
    assert!(first.status.success(), "{err}");
    assert!(
        out.contains("  configuration") && out.contains("R=4") && out.contains("R=8"),
        "{out}"
    );
    assert!(out.contains("winner: R="), "{out}");
    assert!(out.contains("2 measured, 0 from the cache"), "{out}");
    // Piped stdout: no progress bar on stderr.
    assert!(
        !err.contains("compiling") && !err.contains("timing"),
        "{err}"
    );

    let run = json(&phobosc(
        &cache,
        &["run", f, "--dim", "M=512", "--backend", "cpu", "--json"],
    ));
    assert_eq!(run["provenance"]["tuning"]["cache"], "hit");
    assert_eq!(run["provenance"]["workgroup_size"], Value::Null);

    // Damage every entry: a warning names each, and the tune measures again.
    for e in std::fs::read_dir(cache.join("tuning")).unwrap().flatten() {
        std::fs::write(e.path(), b"phobos-tune 1 0000\n{}").unwrap();
    }
    let again = phobosc(
        &cache,
        &["run", f, "--dim", "M=512", "--backend", "cpu", "--json"],
    );
    let (_, err) = text(&again);
    assert!(
        err.contains("is damaged") && err.contains("ignored and rebuilt"),
        "{err}"
    );
    let again = json(&again);
    assert_eq!(again["provenance"]["tuning"]["cache"], "miss");
    assert_eq!(again["provenance"]["tuning"]["measured"], 2);
    assert_eq!(again["outputs"], run["outputs"]);

    // A fixed configuration is not tuned.
    let fixed = json(&phobosc(
        &cache,
        &[
            "run",
            f,
            "--dim",
            "M=512",
            "--backend",
            "cpu",
            "--json",
            "--config",
            "R=8",
        ],
    ));
    assert_eq!(fixed["provenance"]["tuning"]["source"], "fixed");
    assert_eq!(fixed["provenance"]["tuning_cache"], "not used");

    // A cache directory that cannot be written: a warning, and the run
    // goes on untuned.
    let blocked = cache.join("two.ph").join("sub");
    let o = Command::new(env!("CARGO_BIN_EXE_phobosc"))
        .args(["run", f, "--dim", "M=512", "--backend", "cpu", "--json"])
        .env("PHOBOS_CACHE_DIR", &blocked)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("cannot be written") && err.contains("running untuned"),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["provenance"]["tuning"]["source"], "heuristic");
    assert_eq!(v["provenance"]["tuning"]["cache"], "unwritable");
    std::fs::remove_dir_all(&cache).unwrap();
}

#[test]
fn processes_tuning_at_once_leave_a_sound_cache() {
    let cache = cache_dir("race");
    std::fs::create_dir_all(&cache).unwrap();
    let file = cache.join("two.ph");
    std::fs::write(&file, TWO).unwrap();
    let f = file.to_str().unwrap();
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_phobosc"))
            .args(["tune", f, "--dim", "M=512", "--backend", "cpu", "--json"])
            .env("PHOBOS_CACHE_DIR", &cache)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("phobosc starts")
    };
    let racers: Vec<_> = (0..4).map(|_| spawn()).collect();
    for r in racers {
        let o = r.wait_with_output().unwrap();
        let (_, err) = text(&o);
        assert!(o.status.success(), "{err}");
        assert!(!err.contains("damaged") && !err.contains("stale"), "{err}");
    }
    // Whole files only (no temporary left behind), and a later process is
    // served by them without a warning.
    let names: Vec<String> = std::fs::read_dir(cache.join("tuning"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.ends_with(".json")), "{names:?}");
    assert_eq!(names.len(), 3, "two trials and a decision: {names:?}");
    let o = phobosc(
        &cache,
        &["run", f, "--dim", "M=512", "--backend", "cpu", "--json"],
    );
    assert!(!text(&o).1.contains("warning"), "{}", text(&o).1);
    assert_eq!(json(&o)["provenance"]["tuning"]["cache"], "hit");
    std::fs::remove_dir_all(&cache).unwrap();
}

#[test]
fn bad_tune_requests_are_errors_that_say_why() {
    let cache = cache_dir("bad");
    let interp = phobosc(
        &cache,
        &[
            "tune",
            "examples/dropout_rows.ph",
            "--dim",
            "M=16",
            "--backend",
            "interp",
        ],
    );
    assert_eq!(interp.status.code(), Some(1));
    assert!(
        text(&interp)
            .1
            .contains("the interpreter is the reference and is not tuned")
    );
    let fixed = phobosc(
        &cache,
        &[
            "tune",
            "examples/dropout_rows.ph",
            "--dim",
            "M=16",
            "--config",
            "R=16",
        ],
    );
    // `tune` takes no --config (clap's usage error, exit 2).
    assert_eq!(fixed.status.code(), Some(2));
    assert!(text(&fixed).1.contains("--config"), "{}", text(&fixed).1);
    let unbound = phobosc(&cache, &["tune", "examples/dropout_rows.ph"]);
    assert_eq!(unbound.status.code(), Some(1));
    assert!(
        text(&unbound)
            .1
            .contains("dimension `M` of `dropout_rows` is not bound")
    );
    let _ = std::fs::remove_dir_all(&cache);
}
