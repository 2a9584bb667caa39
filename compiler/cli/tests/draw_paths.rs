//! `phobosc run --backend gpu --json`: the provenance says how each
//! statement's Tandem draws were lowered (stepped, staged, or direct and
//! why), and every path gives the interpreter's bits.
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

const KERNELS: &str = "
@autotune(R in [4])
kernel stepped(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + tandem_normal(key, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [3])
kernel stepped_rows(Z: tensor<f32>[M, 37], key: u32) {
  let r = ctx.block.x * R
  Z[r :+ R, :] = tandem_normal(key, u32((r + iota(0)) * 37 + iota(1)))
}
kernel staged(Z: tensor<f32>[M, 37], key: u32) {
  Z[:, :] = tandem_normal(key, u32(iota(0) * 37 + iota(1)))
}
@autotune(R in [4])
kernel direct(X: tensor<f32>[M, 256], C: tensor<i32>[M, 256], Y: tensor<f32>[M, 256], key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + tandem_normal(key, C[r :+ R, :])
}
";

/// A directory holding `KERNELS` as `k.ph`, where there is an adapter.
fn kernels_dir() -> Option<tempfile::TempDir> {
    if !gpu_available() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.ph"), KERNELS).unwrap();
    Some(dir)
}

fn run(dir: &std::path::Path, kernel: &str, backend: &str) -> (serde_json::Value, Vec<u8>) {
    let out_npy = dir.join(format!("{kernel}-{backend}.npy"));
    let output = if kernel.starts_with("st") && kernel != "stepped" {
        "Z"
    } else {
        "Y"
    };
    let o = Command::new(env!("CARGO_BIN_EXE_phobosc"))
        .args([
            "run",
            dir.join("k.ph").to_str().unwrap(),
            "--kernel",
            kernel,
        ])
        .args([
            "--dim",
            "M=9",
            "--arg",
            "key=5",
            "--backend",
            backend,
            "--json",
            // The heuristic's workgroup size, so the lowering notes are known.
            "--no-tune",
        ])
        .arg("--output")
        .arg(format!("{output}={}", out_npy.display()))
        .output()
        .expect("runs phobosc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    (json, std::fs::read(out_npy).expect("the output was saved"))
}

#[test]
fn provenance_names_each_draw_path_and_bits_agree() {
    let Some(dir) = kernels_dir() else {
        return;
    };
    for (kernel, want, packed) in [
        // Blocks of 32 stepped invocations run two to a workgroup.
        ("stepped", "statement 2: Tandem draws stepped", true),
        // Rows of 37 are not groups of 4: stepped one element at a time.
        ("stepped_rows", "statement 2: Tandem draws stepped", true),
        // A tile whose extent is a dim: windows in workgroup memory.
        ("staged", "statement 1: Tandem draws staged", false),
        (
            "direct",
            "statement 2: Tandem draws direct (slower): their counters are not seen",
            false,
        ),
    ] {
        let (gpu, gpu_bytes) = run(dir.path(), kernel, "gpu");
        let (_, interp_bytes) = run(dir.path(), kernel, "interp");
        let lowering = gpu["provenance"]["lowering"]
            .as_array()
            .unwrap_or_else(|| panic!("{kernel}: no lowering in {gpu}"));
        assert_eq!(
            lowering.len(),
            1 + usize::from(packed),
            "{kernel}: {lowering:?}"
        );
        let note = lowering[0].as_str().unwrap();
        assert!(note.starts_with(want), "{kernel}: {note}");
        if packed {
            let note = lowering[1].as_str().unwrap();
            assert!(note.starts_with("2 blocks a workgroup"), "{kernel}: {note}");
        }
        assert_eq!(gpu_bytes, interp_bytes, "{kernel}: the GPU's bits");
    }
}

/// `phobosc run --explain` (and `bench --explain`) prints the plan of the
/// GPU module that ran, with this device's choices (the draws' path, the
/// workgroup size launched), in text and in the JSON; on the CPU backend
/// it says there is none and why.
#[test]
fn run_explain_prints_the_plan_of_the_module_that_ran() {
    let Some(dir) = kernels_dir() else {
        return;
    };
    let run = |backend: &str, json: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_phobosc"));
        c.args(["run", dir.path().join("k.ph").to_str().unwrap()])
            .args(["--kernel", "stepped", "--dim", "M=9", "--arg", "key=5"])
            .args(["--backend", backend, "--no-tune", "--explain"]);
        if json {
            c.arg("--json");
        }
        let o = c.output().expect("runs phobosc");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).expect("UTF-8")
    };
    let text = run("gpu", false);
    let plan = text
        .split_once("plan of the module that ran (")
        .unwrap_or_else(|| panic!("no plan in:\n{text}"))
        .1;
    for want in [
        "kernel stepped [R=4]: ",
        "values:",
        "statement 2: Tandem draws stepped",
        "workgroup memory: ",
    ] {
        assert!(plan.contains(want), "`{want}` missing from:\n{plan}");
    }
    let json: serde_json::Value = serde_json::from_str(&run("gpu", true)).expect("JSON");
    let wg = json["provenance"]["workgroup_size"]
        .as_u64()
        .expect("a size");
    let plan = json["plan"].as_str().expect("the plan");
    assert!(
        plan.contains(&format!(": {wg} invocations a workgroup")),
        "the plan of {wg} invocations:\n{plan}"
    );
    let text = run("cpu", false);
    assert!(
        text.contains("plan: none, since the kernel ran on the cpu backend"),
        "{text}"
    );
    // `bench` takes `run`'s flags, `--explain` among them.
    let o = Command::new(env!("CARGO_BIN_EXE_phobosc"))
        .args(["bench", dir.path().join("k.ph").to_str().unwrap()])
        .args(["--kernel", "stepped", "--dim", "M=9", "--arg", "key=5"])
        .args(["--backend", "gpu", "--no-tune", "--runs", "1", "--explain"])
        .output()
        .expect("runs phobosc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).expect("UTF-8");
    assert!(
        text.contains("plan of the module that ran (") && text.contains("kernel stepped [R=4]: "),
        "{text}"
    );
}
