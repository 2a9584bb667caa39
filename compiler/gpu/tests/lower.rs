//! Every ok fixture and example lowers to a naga module that naga validates
//! and writes as WGSL and SPIR-V, except the few listed in `UNSUPPORTED`
//! with the reason this first step of the GPU backend gives.

mod common;

use phobos_core::Program;
use phobos_gpu::{GpuOptions, LowerError, Precision, compile, spirv, wgsl};
use std::path::{Path, PathBuf};

/// (file stem, kernel, a phrase the `Unsupported` message must contain).
const UNSUPPORTED: &[(&str, &str, &str)] = &[
    // T1[r :+ R, :] = T1[r :+ R, 0 :+ 1] + 1.0 reads what other invocations
    // write: its value is staged in workgroup memory, whose size must be
    // constant, and its extent is symbolic until `specialize` (api.rs).
    ("in_place", "in_place", "depends on a dim"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["tests/fixtures/ok", "examples"] {
        for e in std::fs::read_dir(root().join(dir)).expect("the directory exists") {
            let p = e.expect("a directory entry").path();
            if p.extension().is_some_and(|x| x == "ph") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn program(path: &Path) -> Program {
    let text = std::fs::read_to_string(path).expect("readable source");
    let (program, diags) = Program::parse(&path.display().to_string(), &text);
    assert!(diags.is_empty(), "{}: {diags:?}", path.display());
    program
}

#[test]
fn every_fixture_and_example_lowers_and_validates() {
    let mut lowered = 0;
    let mut refused = Vec::new();
    for path in sources() {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let program = program(&path);
        for name in program.kernel_names() {
            for config in program.configs(name) {
                let kernel = program
                    .kernel(name, &config)
                    .unwrap_or_else(|d| panic!("{stem}/{name}: {d:?}"));
                let text = std::fs::read_to_string(&path).expect("readable source");
                let kernel = common::as_launched(kernel, &text);
                match lower_both(&kernel) {
                    Ok(()) => lowered += 1,
                    Err(LowerError::Unsupported(msg)) => {
                        let known = UNSUPPORTED
                            .iter()
                            .find(|(s, k, _)| *s == stem && *k == name)
                            .unwrap_or_else(|| panic!("{stem}/{name} unsupported: {msg}"));
                        assert!(msg.contains(known.2), "{stem}/{name}: {msg}");
                        refused.push(format!("{stem}/{name}"));
                    }
                    Err(e) => panic!("{stem}/{name}: {e}"),
                }
            }
        }
    }
    for (stem, name, _) in UNSUPPORTED {
        assert!(
            refused.contains(&format!("{stem}/{name}")),
            "{stem}/{name} is listed as unsupported but lowered: update the list"
        );
    }
    assert!(lowered >= 10, "only {lowered} kernels lowered");
}

/// Lowers in both precisions, the heuristic's workgroup size in exact mode
/// and 64 in fast mode; writes WGSL and SPIR-V and runs spirv-val.
fn lower_both(kernel: &phobos_core::ir::Kernel) -> Result<(), LowerError> {
    let name = &kernel.name;
    for options in [
        GpuOptions::for_kernel(kernel),
        GpuOptions {
            precision: Precision::Fast,
            ..GpuOptions::default()
        },
    ] {
        let phobos_gpu::Compiled { module, info, .. } = compile(kernel, &options)?;
        let text = wgsl(&module, &info);
        let size = format!("@compute @workgroup_size({}", options.workgroup_size);
        assert!(text.contains(&size), "{text}");
        let words = spirv(&module, &info, &options);
        assert_eq!(words[0], 0x0723_0203, "SPIR-V magic number");
        let file = format!("{name}_{:?}", options.precision);
        if let Some(Err(e)) = spirv_val(&file, &words) {
            panic!("spirv-val rejected {name} ({options:?}): {e}");
        }
    }
    Ok(())
}

fn dropout_rows_with(precision: Precision) -> (naga::Module, naga::valid::ModuleInfo) {
    let program = program(&root().join("examples/dropout_rows.ph"));
    let kernel = program.kernel("dropout_rows", &[]).expect("checks");
    let options = GpuOptions {
        precision,
        ..GpuOptions::default()
    };
    let c = compile(&kernel, &options).expect("lowers and validates");
    (c.module, c.info)
}

fn dropout_rows() -> (naga::Module, naga::valid::ModuleInfo) {
    dropout_rows_with(Precision::Exact)
}

#[test]
fn random_tile_wgsl_snapshot() {
    // The other example, in fast mode (exact mode adds the exact functions,
    // snapshotted once in `exact_division_and_sqrt_wgsl_snapshot`).
    let program = program(&root().join("examples/random_tile.ph"));
    let kernel = program.kernel("random_tile", &[]).expect("checks");
    let options = GpuOptions {
        precision: Precision::Fast,
        ..GpuOptions::for_kernel(&kernel)
    };
    let c = compile(&kernel, &options).expect("lowers and validates");
    insta::assert_snapshot!(wgsl(&c.module, &c.info));
}

#[test]
fn dropout_rows_wgsl_snapshot() {
    // Fast mode: the native `/`.
    let (module, info) = dropout_rows_with(Precision::Fast);
    insta::assert_snapshot!(wgsl(&module, &info));
}

#[test]
fn dropout_rows_uses_16_byte_loads_and_stores() {
    // Rows of 256 f32 from a block-aligned row: each invocation stores 4
    // elements with one vec4 store and reads X with one vec4 load.
    for precision in [Precision::Exact, Precision::Fast] {
        let (module, info) = dropout_rows_with(precision);
        let text = wgsl(&module, &info);
        assert!(text.contains("X: array<vec4<f32>>"), "{text}");
        assert!(text.contains("Y: array<vec4<f32>>"), "{text}");
        let stores: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("Y["))
            .collect();
        assert_eq!(stores.len(), 1, "{text}");
        assert!(stores[0].contains(">> 2u)] = vec4<f32>("), "{}", stores[0]);
        let loads = text.matches("= X[").count();
        assert_eq!(loads, 1, "{text}");
        assert!(
            !text.contains("][("),
            "no scalar access into a vec4: {text}"
        );
    }
}

/// The WGSL of the one kernel in `src`.
fn kernel_wgsl(src: &str) -> String {
    let (program, diags) = Program::parse("t.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    let name = src
        .split("kernel ")
        .nth(1)
        .and_then(|s| s.split('(').next())
        .unwrap();
    let kernel = program.kernel(name, &[]).unwrap();
    let c = compile(&kernel, &GpuOptions::default()).unwrap();
    wgsl(&c.module, &c.info)
}

#[test]
fn groups_of_4_only_where_rows_are_aligned() {
    // A column start that is not provably a multiple of 4: scalar.
    let t = kernel_wgsl(
        "kernel t(X: tensor<f32>[M, 8], Y: tensor<f32>[M, 8], c: i32) { Y[:, c :+ 4] = X[:, c :+ 4] }",
    );
    assert!(
        t.contains("Y: array<f32>") && t.contains("X: array<f32>"),
        "{t}"
    );
    // Rows of a symbolic length: scalar.
    let t = kernel_wgsl("kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X + 1.0 }");
    assert!(t.contains("Y: array<f32>"), "{t}");
    // A block-aligned start (a product with 8) and constant rows of 12:
    // grouped; a broadcast column operand stays scalar.
    let t = kernel_wgsl(
        "kernel t(X: tensor<i32>[M, 12], B: tensor<i32>[M, 1], Y: tensor<i32>[M, 12]) {\n  let r = ctx.block.x * 8\n  Y[r :+ 8, :] = X[r :+ 8, :] + B[r :+ 8, :]\n}",
    );
    assert!(t.contains("Y: array<vec4<i32>>"), "{t}");
    assert!(t.contains("X: array<vec4<i32>>"), "{t}");
    assert!(t.contains("B: array<i32>"), "{t}");
    // A 1-D fill from a block-aligned `let` start over constant rows.
    let t = kernel_wgsl(
        "kernel t(Y: tensor<u32>[1024]) {\n  let b = ctx.block.x * 256\n  Y[b :+ 256] = u32(b + iota(0))\n}",
    );
    assert!(t.contains("Y: array<vec4<u32>>"), "{t}");
    assert!(t.contains("= vec4<u32>("), "{t}");
    // A `let` start that is not provably a multiple of 4: scalar.
    let t = kernel_wgsl(
        "@grid(4)\nkernel t(Y: tensor<u32>[1024]) {\n  let b = ctx.block.x * 256 + 2\n  Y[b :+ 256] = u32(iota(0))\n}",
    );
    assert!(t.contains("Y: array<u32>"), "{t}");
    // A tensor stored by groups and also read element by element elsewhere:
    // `t[i >> 2][i & 3]`.
    let t = kernel_wgsl(
        "kernel t(Y: tensor<u32>[4, 4], Z: tensor<u32>[4, 3]) {\n  Y = u32(iota(1))\n  Z = Y[:, 1 :+ 3]\n}",
    );
    assert!(t.contains("Y: array<vec4<u32>>"), "{t}");
    assert!(t.contains("& 3u)]"), "{t}");
}

#[test]
fn exact_division_and_sqrt_wgsl_snapshot() {
    // Exact mode: `/` and `sqrt` call functions of integer operations.
    let (program, diags) = Program::parse(
        "t.ph",
        "kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = sqrt(X) / X }",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let kernel = program.kernel("t", &[]).unwrap();
    let phobos_gpu::Compiled { module, info, .. } =
        compile(&kernel, &GpuOptions::default()).unwrap();
    let text = wgsl(&module, &info);
    assert!(
        !text.contains(" sqrt(") && text.contains("exact_div("),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn dropout_rows_wgsl_parses_back() {
    // The emitted text is WGSL that naga's own front end accepts.
    let (module, info) = dropout_rows();
    let text = wgsl(&module, &info);
    let back = naga::front::wgsl::parse_str(&text).expect("the WGSL parses");
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&back)
    .expect("the parsed-back module validates");
}

/// Runs `spirv-val` on the words: `None` when it is not installed.
fn spirv_val(name: &str, words: &[u32]) -> Option<Result<(), String>> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let dir = std::env::temp_dir().join(format!("phobos-gpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.spv"));
    std::fs::write(&file, bytes).unwrap();
    let out = std::process::Command::new("spirv-val")
        .args(["--target-env", "vulkan1.1"])
        .arg(&file)
        .output()
        .ok()?;
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    })
}

#[test]
fn dropout_rows_spirv_passes_spirv_val() {
    let (module, info) = dropout_rows();
    match spirv_val(
        "dropout_rows",
        &spirv(&module, &info, &GpuOptions::default()),
    ) {
        None => eprintln!("skipped: spirv-val not found (apt-get install spirv-tools)"),
        Some(r) => r.expect("spirv-val accepts dropout_rows"),
    }
}

#[test]
fn symbolic_tiles_in_workgroup_memory_are_unsupported() {
    // Read through a slice, the tile is kept in workgroup memory, which
    // needs a constant size.
    let (program, diags) = Program::parse(
        "t.ph",
        "kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) {\n  let t = X[:]\n  Y[0 :+ 4] = t[0 :+ 4]\n}",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let kernel = program.kernel("t", &[]).unwrap();
    match phobos_gpu::lower(&kernel, &GpuOptions::default()) {
        Err(LowerError::Unsupported(m)) => assert!(m.contains("depends on dim N"), "{m}"),
        other => panic!("expected Unsupported, got {:?}", other.map(|_| ())),
    }
}

/// A `let` names a value and does not place it: read whole where it is
/// used, a tile over a dim is computed there, with no workgroup memory.
#[test]
fn a_let_tile_read_whole_is_inlined_and_needs_no_workgroup_memory() {
    let (program, diags) = Program::parse(
        "t.ph",
        "kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) {\n  let t = X[:] * 2.0\n  Y = t + 1.0\n}",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let kernel = program.kernel("t", &[]).unwrap();
    let c = phobos_gpu::compile(&kernel, &GpuOptions::default()).expect("lowers");
    assert_eq!(
        c.plan.values[0].home,
        phobos_gpu::plan::Home::Inline,
        "{}",
        c.explain()
    );
    assert_eq!(c.budget.total(), 0, "{}", c.explain());
    assert!(c.plan.kernel.body.len() == 1, "{}", c.plan.kernel.print());
}

#[test]
fn unsupported_types_are_named() {
    let (program, diags) = Program::parse(
        "t.ph",
        "kernel t(X: tensor<f64>[N], Y: tensor<f64>[N]) { Y = X * 2.0 }",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let kernel = program.kernel("t", &[]).unwrap();
    match phobos_gpu::lower(&kernel, &GpuOptions::default()) {
        Err(LowerError::Unsupported(m)) => assert!(m.contains("f64"), "{m}"),
        other => panic!("expected Unsupported, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn float_not_equal_is_true_for_nan() {
    // naga writes `!=` on floats as SPIR-V OpFOrdNotEqual (false for NaN);
    // ops.rs says NaN != x is true, so the lowering spells it `!(x == y)`.
    let (program, diags) = Program::parse(
        "t.ph",
        "kernel t(X: tensor<f32>[N], Y: tensor<i32>[N]) { Y = i32(X != 1.0) + i32(bool(X)) }",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let options = GpuOptions::default();
    let c = compile(&program.kernel("t", &[]).unwrap(), &options).unwrap();
    let (module, info) = (c.module, c.info);
    let text = wgsl(&module, &info);
    assert!(!text.contains("!= 1f") && !text.contains("!= 0f"), "{text}");
    assert_eq!(text.matches("!((").count(), 2, "{text}");
}

#[test]
fn exact_spirv_has_float_controls_and_no_contraction() {
    // a*b+c in exact mode: every float op decorated NoContraction, and the
    // module declares float controls; spirv-val accepts it.
    let (program, diags) = Program::parse(
        "t.ph",
        "kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X * X + X - 1.0 }",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let kernel = program.kernel("t", &[]).unwrap();
    let options = GpuOptions::default();
    let phobos_gpu::Compiled { module, info, .. } = compile(&kernel, &options).unwrap();
    let exact = spirv(&module, &info, &options);
    let fast = spirv(
        &module,
        &info,
        &GpuOptions {
            precision: Precision::Fast,
            ..options
        },
    );
    let ops = |words: &[u32]| {
        let mut v = Vec::new();
        let mut i = 5;
        while i < words.len() {
            let n = (words[i] >> 16) as usize;
            v.push(words[i..i + n].to_vec());
            i += n;
        }
        v
    };
    let (e, f) = (ops(&exact), ops(&fast));
    let float_ops: Vec<u32> = e
        .iter()
        .filter(|i| [129, 131, 133].contains(&(i[0] & 0xffff)))
        .map(|i| i[2])
        .collect();
    assert_eq!(float_ops.len(), 3, "one OpFMul, OpFAdd and OpFSub");
    for id in float_ops {
        assert!(
            e.contains(&vec![(3 << 16) | 71, id, 42]),
            "NoContraction on %{id}"
        );
    }
    assert!(e.contains(&vec![(2 << 16) | 17, 4464]), "DenormPreserve");
    assert!(
        e.contains(&vec![(2 << 16) | 17, 4466]),
        "SignedZeroInfNanPreserve"
    );
    assert_eq!(
        e.iter().filter(|i| i[0] & 0xffff == 16).count(),
        3,
        "LocalSize and two float modes"
    );
    assert_eq!(e.len(), f.len() + 3 + 2 + 1 + 2);
    // Idempotent.
    assert_eq!(phobos_gpu::spirv_exact(&exact), exact);
    if let Some(r) = spirv_val("exact_fma_shape", &exact) {
        r.expect("spirv-val accepts the post-processed module");
    }
}

#[test]
fn bool_tiles_in_workgroup_memory_are_u32() {
    // A workgroup `array<bool>` may be one byte per element, and
    // neighbouring invocations writing bytes of one word race (NVIDIA):
    // bool `let`/`var` tiles and bool staging tiles hold u32 0/1.
    let t = kernel_wgsl(
        "@grid(2)\nkernel t(X: tensor<u32>[8], Y: tensor<i32>[8]) {\n  let r = ctx.block.x * 4\n  var v: tile<bool>[4] = X[r :+ 4] > u32(3)\n  v = v[3 :+ 1] | v[3]\n  Y[r :+ 4] = i32(v)\n}",
    );
    let decl = t
        .lines()
        .find(|l| l.starts_with("var<workgroup> v_"))
        .unwrap_or_else(|| panic!("no workgroup tile for v: {t}"));
    assert!(decl.ends_with(": array<u32, 4>;"), "{t}");
    assert!(!t.contains("array<bool"), "{t}");
    assert!(t.contains("select(0u, 1u, "), "{t}");
    assert!(t.contains("!= 0u"), "{t}");
    // A bool staging tile (a store whose value reads its own destination).
    let t = kernel_wgsl(
        "kernel t(Y: tensor<i32>[4]) {\n  var v: tile<bool>[4] = iota(0) > 1\n  v[0 :+ 4] = !v[3 :+ 1]\n  Y = i32(v)\n}",
    );
    assert!(
        t.contains("var<workgroup> staging_bool: array<u32, 4>;"),
        "{t}"
    );
    assert!(!t.contains("array<bool"), "{t}");
}

/// Fused Tandem dropout and noise over rows of 256 (the kernels of the
/// H200 table in bench/RESULTS.md): their stores are stepped, so the
/// workgroup has one invocation per chunk task and the key comes from the
/// uniform block (derived by the host). Their first counter is a multiple
/// of 4 when the kernel is compiled (`ir::range`), so only the aligned
/// loop is emitted and the direct path not at all; with an offset the
/// compiler cannot see, the misaligned copy of the loop calls the direct
/// path once per lane of each word node.
#[test]
fn fused_tandem_draws_are_stepped() {
    let src = "
@autotune(R in [16, 64])
kernel tandem_dropout(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: u32, off: i32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = where(tandem_uniform(seed, (r + iota(0)) * 256 + iota(1) + OFF) >= 0.1, X[r :+ R, :] / 0.9, 0.0)
}
@autotune(R in [16, 64])
kernel tandem_noise(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: u32, off: i32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + 0.5 * tandem_normal(seed, (r + iota(0)) * 256 + iota(1) + OFF)
}
";
    for (offset, calls) in [("0", 0), ("off", 4)] {
        let (program, diags) = Program::parse("fused.ph", &src.replace("OFF", offset));
        assert!(diags.is_empty(), "{diags:?}");
        for (name, words) in [("tandem_dropout", 1), ("tandem_noise", 2)] {
            for (r, size) in [(16, 64), (64, 128)] {
                let kernel = program.kernel(name, &[("R".into(), r)]).expect("checks");
                assert_eq!(phobos_gpu::workgroup_size(&kernel), size, "{name} R={r}");
                let c = compile(&kernel, &GpuOptions::for_kernel(&kernel)).expect("lowers");
                let text = wgsl(&c.module, &c.info);
                assert!(
                    text.contains("seed_key3_"),
                    "{name}: the host derives the key"
                );
                let definition = usize::from(calls > 0);
                assert_eq!(
                    text.matches("tandem_word(").count(),
                    definition + calls * words,
                    "{name} R={r} + {offset}: the definition, and a call per lane and word in \
                     the misaligned copy, where there is one\n{text}"
                );
            }
        }
    }
}

/// On a device whose subgroups are 32 wide, the stepped loop of a fill
/// that loads nothing exchanges its words with two rounds of shuffles (one
/// vec4 each, two exchanges a round), behind a vote that sends a subgroup
/// whose lanes are out of order to the direct path; statements that load
/// (Tandem dropout) and tiles not made of whole groups of 8 chunks keep
/// the stepped loop. The modules validate, the WGSL parses back, and the
/// SPIR-V passes spirv-val where it is installed. (Their bits are checked
/// on the H200: lavapipe's subgroups are narrower, bench/RESULTS.md.)
#[test]
fn stepped_fills_exchange_words_in_subgroups_of_32() {
    let src = "
@autotune(R in [16, 64])
kernel fill_f32(Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_uniform(seed, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [16, 64])
kernel fill_normal(Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_normal(seed, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [16, 64])
kernel tandem_dropout(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = where(tandem_uniform(seed, (r + iota(0)) * 256 + iota(1)) >= 0.1, X[r :+ R, :] / 0.9, 0.0)
}
kernel rows_of_100(Y: tensor<u32>[M, 100], seed: u32) {
  let r = ctx.block.x * 16
  Y[r :+ 16, :] = tandem_u32(seed, (r + iota(0)) * 100 + iota(1))
}
";
    let (program, diags) = Program::parse("shuffled.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    for (name, r, shuffled) in [
        ("fill_f32", 16, true),
        ("fill_f32", 64, true),
        ("fill_normal", 16, true),
        ("tandem_dropout", 16, false),
        ("rows_of_100", 0, false),
    ] {
        let config: Vec<(String, i64)> = if r > 0 { vec![("R".into(), r)] } else { vec![] };
        let kernel = program.kernel(name, &config).expect("checks");
        let options = GpuOptions {
            subgroup_shuffle: true,
            ..GpuOptions::for_kernel(&kernel)
        };
        let c = compile(&kernel, &options).expect("lowers and validates");
        let text = wgsl(&c.module, &c.info);
        // 4 words of a block as one vec4: 2 rounds x 2 exchanges.
        let shuffles = if shuffled { 4 } else { 0 };
        assert_eq!(
            text.matches("subgroupShuffleXor(").count(),
            shuffles,
            "{name} R={r}\n{text}"
        );
        assert_eq!(text.contains("subgroupAll("), shuffled, "{name} R={r}");
        let back = naga::front::wgsl::parse_str(&text);
        assert!(back.is_ok(), "{name}: {back:?}\n{text}");
        let plain = compile(&kernel, &GpuOptions::for_kernel(&kernel)).expect("lowers");
        assert!(!wgsl(&plain.module, &plain.info).contains("subgroup"));
        let words = c.spirv();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let file = std::env::temp_dir().join(format!(
            "phobos-shuffled-{}-{name}-{r}.spv",
            std::process::id()
        ));
        std::fs::write(&file, bytes).expect("temp file");
        match std::process::Command::new("spirv-val")
            .args(["--target-env", "vulkan1.1"])
            .arg(&file)
            .output()
        {
            Ok(out) => assert!(
                out.status.success(),
                "{name} R={r}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(_) => eprintln!("skipped spirv-val: not installed (apt-get install spirv-tools)"),
        }
    }
}

/// A store to an f32 tensor makes any NaN the canonical one, except where
/// the value can only be that NaN or no NaN at all: exact mode's `/` and
/// `sqrt`, constants, and selects of those, as in `dropout`.
#[test]
fn stores_of_canonical_values_skip_the_nan_check() {
    let src = "
kernel drop(X: tensor<f32>[N], Y: tensor<f32>[N], p: f32) { Y = where(X > p, X / 0.9, 0.0) }
kernel root(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = where(X > 0.0, sqrt(X), f32(7)) }
kernel add(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X + 1.0 }
kernel pick(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = where(X > 0.0, X / 0.9, X) }
";
    let (program, diags) = Program::parse("canonical.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    let checks = |name: &str, precision: Precision| {
        let k = program.kernel(name, &[]).expect("checks");
        let options = GpuOptions {
            precision,
            ..GpuOptions::for_kernel(&k)
        };
        let c = compile(&k, &options).expect("lowers");
        let text = wgsl(&c.module, &c.info);
        // The store's check: `select(bits, 2143289344u, (bits & 2147483647u) > 2139095040u)`.
        let main = &text[text.find("fn main").expect("an entry point")..];
        main.contains("2143289344u")
    };
    assert!(!checks("drop", Precision::Exact));
    assert!(!checks("root", Precision::Exact));
    assert!(
        checks("drop", Precision::Fast),
        "the native `/` makes its own NaNs"
    );
    assert!(checks("add", Precision::Exact));
    assert!(
        checks("pick", Precision::Exact),
        "a loaded NaN keeps its bits"
    );
}

/// The reductions of the softmax and layer norm examples are computed by
/// the whole workgroup (`lower/coop_reduce.rs`): with subgroups of 32 the
/// levels below 32 are `subgroupShuffleXor`s behind a layout check made
/// uniform by `workgroupUniformLoad`, and the chunk loops wait at far fewer
/// barriers than one a tree level; without subgroups no subgroup operation
/// is emitted. The counts printed are the report's.
#[test]
fn example_reductions_take_the_cooperative_path() {
    for (file, name) in [
        ("softmax_dropout.ph", "softmax_dropout"),
        ("layernorm_dropout.ph", "layernorm_dropout"),
    ] {
        let p = program(&root().join("examples").join(file));
        let kernel = p.kernel(name, &[]).expect("checks");
        // A launch's specialisation: M = 64 rows of N = 4096 (the
        // reductions' extents become constant, so the workgroup computes
        // them, each lane's block in segments: `coop_warp.rs`).
        let kernel = phobos_gpu::specialize(&kernel, &[64, 4096]).into_owned();
        let base = GpuOptions::for_kernel(&kernel);
        assert_eq!(base.workgroup_size, 256, "{name}: the reduction heuristic");
        let shuffled = GpuOptions {
            subgroup_width: 32,
            workgroup_memory: 48 * 1024,
            ..base
        };
        for (options, subgroups) in [(shuffled, true), (base, false)] {
            let c = compile(&kernel, &options).expect("lowers and validates");
            let text = wgsl(&c.module, &c.info);
            let barriers = text.matches("workgroupBarrier()").count();
            let lines = text.lines().count();
            println!("{name} subgroups={subgroups}: {lines} lines, {barriers} barriers");
            let file = std::env::temp_dir().join(format!("phobos-coop-{name}-{subgroups}.wgsl"));
            std::fs::write(&file, &text).expect("the temporary directory is writable");
            assert!(text.contains("var<workgroup> reduce_f32"), "{name}\n{text}");
            assert_eq!(
                text.contains("subgroupShuffleXor("),
                subgroups,
                "{name}\n{text}"
            );
            assert_eq!(text.contains("workgroupUniformLoad("), subgroups, "{name}");
            // Each of the two reductions: lanes hold 4 segments of a row of
            // 4096 over 256 invocations, reduced by one transposing
            // butterfly (3 + 3 shuffles, not 4 x 5), then the tree over
            // the segments (2) and over the 8 subgroups (3).
            let shuffles = text.matches("subgroupShuffleXor(").count();
            assert_eq!(shuffles, if subgroups { 22 } else { 0 }, "{name}");
            // With subgroups, the values the reductions and the store share
            // stay in each lane's registers (`row_cache.rs`): `X` and
            // `exp(X - m)` for softmax, `X` and `X - mean` for layer norm.
            let kept = c
                .notes
                .iter()
                .any(|n| n.starts_with("rows: 2 value(s) kept"));
            assert_eq!(kept, subgroups, "{name}: {:?}", c.notes);
            assert_eq!(
                c.notes
                    .iter()
                    .any(|n| n.ends_with("stored over the kept rows' leaves")),
                subgroups,
                "{name}: {:?}",
                c.notes
            );
            let back = naga::front::wgsl::parse_str(&text);
            assert!(back.is_ok(), "{name}: {back:?}\n{text}");
        }
    }
}

/// A loop that folds each chunk's reduction into an accumulator takes one
/// barrier an iteration where a row has several subgroups: the levels
/// above them go through slots whose two halves successive reductions
/// alternate between (`coop_warp.rs`), so nothing waits after the reads.
/// The chunked softmax at R = 4 over 256 invocations gives each row 64.
#[test]
fn chunked_folds_take_one_barrier_an_iteration() {
    let p = program(&root().join("examples").join("softmax_dropout_chunked.ph"));
    let kernel = p
        .kernel("softmax_dropout_chunked", &[("R".to_string(), 4)])
        .expect("checks");
    let kernel = phobos_gpu::specialize(&kernel, &[64, 4096]).into_owned();
    let options = GpuOptions {
        subgroup_width: 32,
        subgroup_layout_known: true,
        workgroup_memory: 48 * 1024,
        workgroup_size: 256,
        ..GpuOptions::for_kernel(&kernel)
    };
    let c = compile(&kernel, &options).expect("lowers and validates");
    let text = wgsl(&c.module, &c.info);
    // The entry point's loops (exact mode's functions come before it).
    let entry = &text[text.find("@compute").expect("an entry point")..];
    std::fs::write(
        std::env::temp_dir().join("phobos-chunked-folds.wgsl"),
        &text,
    )
    .expect("the temporary directory is writable");
    // The two loops of chunk reductions.
    let folds: Vec<&str> = loop_bodies(entry)
        .into_iter()
        .filter(|l| l.contains("subgroupShuffleXor("))
        .collect();
    assert_eq!(folds.len(), 2, "{text}");
    for body in folds {
        assert_eq!(body.matches("workgroupBarrier()").count(), 1, "{body}");
    }
    assert!(text.contains("var<workgroup> warp_f32"), "{text}");
}

/// The outermost `loop { .. }` blocks of WGSL text, in order.
fn loop_bodies(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("loop {") {
        let body = &rest[at..];
        let mut depth = 0;
        let mut end = body.len();
        for (i, ch) in body.char_indices() {
            if ch == '{' {
                depth += 1;
            } else if ch == '}' {
                depth -= 1;
                if depth == 0 {
                    end = i + 1;
                    break;
                }
            }
        }
        out.push(&body[..end]);
        rest = &body[end..];
    }
    out
}

/// The rows' values are kept only within the registers a lane may spend
/// (64 words): rows of 8192 at R = 4 would need 256.
#[test]
fn kept_rows_stay_within_their_registers() {
    let p = program(&root().join("examples").join("softmax_dropout.ph"));
    for (r, kept) in [(1, true), (4, false)] {
        let kernel = p
            .kernel("softmax_dropout", &[("R".to_string(), r)])
            .expect("checks");
        let kernel = phobos_gpu::specialize(&kernel, &[64, 8192]).into_owned();
        let options = GpuOptions {
            subgroup_width: 32,
            workgroup_memory: 48 * 1024,
            ..GpuOptions::for_kernel(&kernel)
        };
        let c = compile(&kernel, &options).expect("lowers and validates");
        let note = c.notes.iter().find(|n| n.starts_with("rows: "));
        assert_eq!(note.is_some(), kept, "R = {r}: {:?}", c.notes);
        if let Some(n) = note {
            assert!(n.ends_with(" 64 words a lane"), "{n}");
        }
    }
}

/// The Tandem twins' stores: with subgroups, rows of 1024 at R = 1 (one
/// group of eight chunks) stage their words for the kept rows
/// (`tandem_draw/staged.rs`, `with_row_words`); longer tiles step them in
/// the store's own loop. Never the direct path: the counters
/// `(r + iota(0)) * N + iota(1)` multiply by the dim `N`, whose value a
/// specialised kernel has as a constant, so they are seen to run along
/// tiles of R rows too (R = 2 and 4 once went direct, 5x slower).
#[test]
fn tandem_twins_never_draw_words_directly() {
    for (file, name) in [
        ("softmax_dropout_tandem.ph", "softmax_dropout_tandem"),
        ("layernorm_dropout_tandem.ph", "layernorm_dropout_tandem"),
    ] {
        let p = program(&root().join("examples").join(file));
        for n in [1024, 2048] {
            for r in [1, 2, 4] {
                let kernel = p.kernel(name, &[("R".to_string(), r)]).expect("checks");
                let kernel = phobos_gpu::specialize(&kernel, &[64, n]).into_owned();
                let options = GpuOptions {
                    subgroup_width: 32,
                    workgroup_memory: 48 * 1024,
                    ..GpuOptions::for_kernel(&kernel)
                };
                let c = compile(&kernel, &options).expect("lowers and validates");
                let draws: Vec<&String> = c
                    .notes
                    .iter()
                    .filter(|n| n.contains("Tandem draws"))
                    .collect();
                let path = if n * r as u64 <= 1024 {
                    "staged: the tile's words"
                } else {
                    "stepped"
                };
                assert!(
                    draws.len() == 1 && draws[0].contains(path),
                    "{name}, N = {n}, R = {r}: {:?}",
                    c.notes
                );
            }
        }
    }
}

/// Fast mode calls the driver's `exp`, `log`, `cos`, `tanh` and
/// `inverseSqrt` for the standard library's `exp`, `log`, `cos`, `tanh` and
/// `rsqrt` (`Builtin::Native`); exact mode never does.
#[test]
fn fast_mode_calls_the_drivers_math_functions() {
    let src = "
kernel natives(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  Y = exp(X) + log(X) + cos(X) + tanh(X) + rsqrt(X)
}";
    let (program, diags) = Program::parse("natives.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    let k = program.kernel("natives", &[]).expect("checks");
    let text = |precision| {
        let options = GpuOptions {
            precision,
            ..GpuOptions::for_kernel(&k)
        };
        let c = compile(&k, &options).expect("lowers");
        wgsl(&c.module, &c.info)
    };
    // A call of `name`: the name, not the tail of a longer identifier.
    let calls = |text: &str, name: &str| {
        text.match_indices(&format!("{name}("))
            .any(|(i, _)| !text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
    };
    let (fast, exact) = (text(Precision::Fast), text(Precision::Exact));
    for name in ["exp", "log", "cos", "tanh", "inverseSqrt"] {
        assert!(calls(&fast, name), "fast mode calls {name}:\n{fast}");
        assert!(!calls(&exact, name), "exact mode calls {name}:\n{exact}");
    }
}

/// A matrix product says which path it takes, in the notes that
/// `phobosc build --explain` and a launch's provenance show.
#[test]
fn a_product_says_which_path_it_takes() {
    let p = program(&root().join("examples/matmul.ph"));
    let cfg = [("BM".to_string(), 16), ("BN".to_string(), 16)];
    let k = p.kernel("matmul", &cfg).expect("checks");
    let c = compile(&k, &GpuOptions::default()).expect("lowers");
    assert!(
        c.notes.iter().any(
            |n| n.contains(": `dot` of [16, K] by [K, 16] by the workgroup")
                && n.contains("staged in workgroup memory")
        ),
        "{:?}",
        c.notes
    );
    let mut per_element = GpuOptions::default();
    per_element.knobs.dot_ahead = false;
    let c = compile(&k, &per_element).expect("lowers");
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains(": `dot` of [16, K] by [K, 16]") && n.contains("portable path")),
        "{:?}",
        c.notes
    );
}
