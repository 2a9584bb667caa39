//! `phobosc build`: the WGSL, SPIR-V and manifest it writes, and its errors.

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
        .output()
        .expect("phobosc runs")
}

/// Runs spirv-val on `file`; without spirv-val the check is skipped and
/// says so, except in CI (`CI=true`), where `.ci/run` installs it.
fn spirv_val(file: &Path) {
    match Command::new("spirv-val")
        .args(["--target-env", "vulkan1.1"])
        .arg(file)
        .output()
    {
        Ok(o) => assert!(
            o.status.success(),
            "spirv-val rejects {}: {}{}",
            file.display(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            assert!(
                std::env::var("CI").is_err(),
                "spirv-val is missing in CI: {e}"
            );
            eprintln!("skipping spirv-val (not installed: {e})");
        }
    }
}

#[test]
fn dropout_rows_builds_to_wgsl_spirv_and_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for precision in ["exact", "fast"] {
        let o = phobosc(&[
            "build",
            "examples/dropout_rows.ph",
            "-o",
            out,
            "--precision",
            precision,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let wgsl = std::fs::read_to_string(dir.path().join("dropout_rows.R16.wgsl")).unwrap();
        let module = naga::front::wgsl::parse_str(&wgsl).expect("naga parses the WGSL");
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .expect("naga validates the WGSL");
        let spv = dir.path().join("dropout_rows.R16.spv");
        let bytes = std::fs::read(&spv).unwrap();
        assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes(), "SPIR-V magic");
        spirv_val(&spv);
        // Exact mode's SPIR-V asks for float controls; fast mode's does not.
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let denorm_preserve = words.windows(2).any(|w| w == [0x0002_0011, 4464]);
        assert_eq!(denorm_preserve, precision == "exact", "{precision}");

        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("manifest.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(manifest["precision"], precision);
        let k = &manifest["kernels"][0];
        assert_eq!(k["name"], "dropout_rows");
        assert_eq!(k["tuning_space"]["R"], serde_json::json!([16]));
        assert_eq!(k["params"][1]["name"], "Y");
        assert_eq!(k["params"][1]["written"], true);
        let c = &k["configurations"][0];
        assert_eq!(c["config"]["R"], 16);
        assert_eq!(c["grid"][0], "cdiv(M, 16)");
        assert_eq!(c["wgsl"], "dropout_rows.R16.wgsl");
        assert_eq!(c["spirv"], "dropout_rows.R16.spv");
        let fields: Vec<&str> = c["layout"]["uniform_fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert_eq!(fields, ["seed", "dim_M", "grid_x", "grid_y", "grid_z"]);
        let bindings: Vec<(String, u64, bool)> = c["layout"]["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_string(),
                    t["binding"].as_u64().unwrap(),
                    t["read_only"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            bindings,
            [("X".to_string(), 1, true), ("Y".to_string(), 2, false)]
        );
    }
}

#[test]
fn every_configuration_is_built_and_config_filters() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("two.ph");
    std::fs::write(
        &src,
        "@autotune(B in [64, 128])\nkernel two(Y: tensor<u32>[N]) {\n  let b = ctx.block.x * B\n  Y[b :+ B] = u32(hash32(b + iota(0)))\n}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = phobosc(&[
        "build",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--target",
        "wgsl",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("two.B64.wgsl").exists() && out.join("two.B128.wgsl").exists());
    assert!(
        !out.join("two.B64.spv").exists(),
        "--target wgsl writes no SPIR-V"
    );

    let out = dir.path().join("one");
    let o = phobosc(&[
        "build",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--config",
        "B=128",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("two.B128.spv").exists() && !out.join("two.B64.spv").exists());
}

#[test]
fn bad_build_requests_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (&["--config", "R=8"], "`R` takes the values [16]"),
        (&["--config", "Q=8"], "no @autotune parameter `Q`"),
        (&["--kernel", "nope"], "--kernel nope"),
        (&["--target", "ptx"], "invalid value 'ptx'"),
        (
            &["--dim", "Q=8"],
            "--dim Q: no kernel built here has a dim `Q`",
        ),
        (
            &["--dim", "M=x"],
            "--dim M: `x` is not a non-negative integer",
        ),
        (&["--dim", "M"], "--dim `M`: expected NAME=VALUE"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["build", "examples/dropout_rows.ph", "-o", out];
        args.extend_from_slice(extra);
        let o = phobosc(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{extra:?} should fail");
        assert!(err.contains(want), "{extra:?}: {err}");
    }
    // A file with errors prints its diagnostics and writes nothing.
    let o = phobosc(&["build", "tests/fixtures/err/type_mismatch.ph", "-o", out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!dir.path().join("manifest.json").exists());
}

/// `--explain` prints where each value lives and why, and the workgroup
/// memory item by item; `--dim` specialises as a launch does and the
/// manifest records it with the limits planned for; a kernel that cannot
/// fit them is refused with its arrays named.
#[test]
fn explain_dims_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let o = phobosc(&[
        "build",
        "tests/spellings/softmax.ph",
        "-o",
        out,
        "--kernel",
        "div_triton",
        "--config",
        "R=4",
        "--dim",
        "M=64",
        "--dim",
        "N=1024",
        "--explain",
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stderr}");
    for want in [
        "(specialised for M=64, N=1024: the plan a launch at these dims follows)",
        "kernel div_triton [R=4]",
        "let x: f32[4, 1024]: inline",
        "let e: f32[4, 1024]: inline",
        "let _sum: f32[4, 1]: workgroup memory (16 bytes): it reduces",
        "workgroup memory: ",
        " of 16384 bytes",
    ] {
        assert!(stdout.contains(want), "{want:?} not in:\n{stdout}");
    }
    let manifest = std::fs::read_to_string(dir.path().join("manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(m["limits"]["max_compute_workgroup_storage_size"], 16384);
    assert_eq!(m["dims"]["N"], 1024);
    // Beyond the limit planned for: refused, naming the array and the limit.
    let o = phobosc(&[
        "build",
        "tests/spellings/softmax.ph",
        "-o",
        out,
        "--kernel",
        "inv_inline",
        "--config",
        "R=4",
        "--dim",
        "M=64",
        "--dim",
        "N=1024",
        "--workgroup-memory",
        "32",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    for want in [
        "[E0140] Error: kernel `inv_inline` [R=4] needs 48 bytes of workgroup memory, more than the target's 32",
        "tests/spellings/softmax.ph:13:3",
        "`let m: tile<f32>[4, 1]` is kept in workgroup memory: 16 bytes",
    ] {
        assert!(stderr.contains(want), "{want:?} not in:\n{stderr}");
    }
}

/// A kernel whose values cannot fit the target's workgroup memory however
/// they are placed gets a located error (E0140): the value's `let`/`var`
/// statement underlined, its bytes, the limit and what to do, rendered by
/// the compiler's one renderer; no module is written.
#[test]
fn values_that_cannot_fit_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("big.ph");
    std::fs::write(
        &src,
        "kernel big(Y: tensor<f32>[N], s: f32) {\n  \
         let small = s * 2.0\n  \
         var t: tile<f32>[8192] = f32(iota(0)) + small\n  \
         Y[0 :+ 4] = t[0 :+ 4]\n}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = phobosc(&["build", src.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(!out.join("manifest.json").exists() && !out.join("big.wgsl").exists());
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0],
        "[E0140] Error: kernel `big` needs 32768 bytes of workgroup memory, more than the target's 16384",
        "{stderr}"
    );
    // Located at the `var`'s line, column 3, with the statement underlined.
    assert!(lines[1].ends_with("big.ph:3:3 ]"), "{stderr}");
    let at = lines
        .iter()
        .position(|l| l.contains(" 3 |   var t: tile<f32>[8192]"));
    let at = at.unwrap_or_else(|| panic!("the `var` line is not shown:\n{stderr}"));
    assert!(lines[at + 1].contains("   ^^^^"), "{stderr}");
    assert!(
        lines[at + 2].ends_with(
            "`var t: tile<f32>[8192]` is kept in workgroup memory: 32768 bytes, alone more than the 16384"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("Help: use smaller tiles"), "{stderr}");
    // The scalar `let` lives in registers: not named.
    assert!(!stderr.contains("small:"), "{stderr}");
    // Given the device's limit, it builds.
    let o = phobosc(&[
        "build",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--workgroup-memory",
        "32768",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A kernel of more tensors than the target's storage buffers a shader
/// stage (WebGPU's default 8) is refused (E0141) with the tensors past the
/// limit labelled at their parameters; the manifest records the limit.
#[test]
fn more_tensors_than_storage_buffers_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("many.ph");
    let names = ["A", "B", "C", "D", "E", "F", "G", "H", "I"];
    let params: Vec<String> = names
        .iter()
        .map(|n| format!("{n}: tensor<f32>[N]"))
        .collect();
    let stores: String = names[1..]
        .iter()
        .map(|n| format!("  {n} = A + 1.0\n"))
        .collect();
    std::fs::write(
        &src,
        format!(
            "kernel many({},\n  J: tensor<f32>[N]) {{\n{stores}  J = A\n}}\n",
            params.join(", ")
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let build = |extra: &[&str]| {
        let mut args = vec!["build", src.to_str().unwrap(), "-o", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        phobosc(&args)
    };
    let o = build(&[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(!out.join("manifest.json").exists());
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0],
        "[E0141] Error: kernel `many` binds 10 storage buffers, more than the target's 8 a shader stage",
        "{stderr}"
    );
    // The ninth tensor, `I`, is the first past the limit, on line 1.
    let at = params[..8].iter().map(|p| p.len() + 2).sum::<usize>() + "kernel many(".len() + 1;
    assert!(lines[1].ends_with(&format!("many.ph:1:{at} ]")), "{stderr}");
    for want in [
        "storage buffer 9 of 10: `I`",
        "storage buffer 10 of 10: `J`",
        "Help: split the kernel",
    ] {
        assert!(stderr.contains(want), "{want:?} not in:\n{stderr}");
    }
    let o = build(&["--storage-buffers", "10"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(m["limits"]["max_storage_buffers_per_shader_stage"], 10);
}

/// A tile kept in workgroup memory whose extent is a dim gets a located
/// error (E0142) naming the dim and the flag that gives it, where it once
/// got "not supported on the GPU backend yet" and no location; with
/// `--dim` it builds as a launch at that extent does.
#[test]
fn tiles_over_a_dim_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("rows.ph");
    std::fs::write(
        &src,
        "kernel rows(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {\n  \
         let r = ctx.block.x\n  \
         var x: tile<f32>[1, N] = X[r :+ 1, :]\n  \
         Y[r :+ 1, :] = x[0 :+ 1, :] * 2.0\n}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = phobosc(&["build", src.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(!out.join("manifest.json").exists(), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0],
        "[E0142] Error: kernel `rows` keeps a tile whose extent depends on `N` in workgroup memory",
        "{stderr}"
    );
    assert!(lines[1].ends_with("rows.ph:3:3 ]"), "{stderr}");
    assert!(
        stderr.contains("`x: f32[1, N]` is kept in workgroup memory (read through a slice"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`phobosc build --dim N=<extent>`"),
        "{stderr}"
    );
    assert!(!stderr.contains("not supported"), "{stderr}");
    let o = phobosc(&[
        "build",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--dim",
        "N=256",
        "--dim",
        "M=8",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("rows.wgsl").exists());
}

/// A `var` tile that is never assigned after its declaration names a
/// value as a `let` does: `--explain` shows it computed where it is read,
/// with no workgroup memory, even where it names `iota` (the chunked
/// examples' masked chunks).
#[test]
fn a_var_never_assigned_again_is_planned_as_a_let() {
    let dir = tempfile::tempdir().unwrap();
    let o = phobosc(&[
        "build",
        "examples/softmax_dropout_chunked.ph",
        "-o",
        dir.path().to_str().unwrap(),
        "--explain",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for var in ["var t: f32[4, 256]: inline", "var e: f32[4, 256]: inline"] {
        assert!(stdout.contains(var), "{var:?} not in:\n{stdout}");
    }
    assert!(
        stdout.contains(
            "var m: f32[4, 1]: workgroup memory (16 bytes): a `var` tile: assigned in place"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("4096 bytes"), "{stdout}");
}
