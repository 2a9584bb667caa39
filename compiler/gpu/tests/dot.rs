//! `dot` computed ahead by the workgroup (`lower/dot_ahead.rs`) and, in
//! fast mode on a device with cooperative matrices, on tensor cores
//! (`lower/dot_coop.rs`): which path each example's products take, and
//! that the cooperative modules validate and pass `spirv-val` (no device
//! here has cooperative matrices, so their bits are checked on the H200
//! only, by `bench/attention-h200.sh`).

mod common;

use phobos_core::Program;
use phobos_gpu::{GpuOptions, Precision, compile, uses_cooperative_matrices};
use std::path::Path;

/// An example's file, kernel and configuration.
type Case<'a> = (&'a str, &'a str, &'a [(&'a str, i64)]);

fn kernel(file: &str, name: &str, config: &[(&str, i64)]) -> phobos_core::ir::Kernel {
    kernel_at(&format!("examples/{file}"), name, config)
}

/// [`kernel`] from the file at `path` under the repository's root.
fn kernel_at(path: &str, name: &str, config: &[(&str, i64)]) -> phobos_core::ir::Kernel {
    let file = Path::new(path).file_name().unwrap().to_str().unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    let text = std::fs::read_to_string(&path).expect("the file exists");
    let (program, diags) = Program::parse(file, &text);
    assert!(diags.is_empty(), "{file}: {diags:?}");
    let config: Vec<(String, i64)> = config.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let k = program.kernel(name, &config).expect("the kernel checks");
    common::as_launched(k, &text)
}

/// The options of an H200: 48 KiB of workgroup memory, subgroups of 32,
/// and cooperative matrices where `coop`.
fn device(precision: Precision, coop: bool) -> GpuOptions {
    GpuOptions {
        precision,
        workgroup_size: 128,
        subgroup_width: 32,
        workgroup_memory: 48 * 1024,
        cooperative: coop,
        heavy_groups: true,
        ..Default::default()
    }
}

fn notes_of(file: &str, name: &str, config: &[(&str, i64)], options: &GpuOptions) -> Vec<String> {
    let k = kernel(file, name, config);
    let c = compile(&k, options).unwrap_or_else(|e| panic!("{file}: {e}"));
    c.notes
        .into_iter()
        .filter(|n| n.contains("`dot`"))
        .collect()
}

#[test]
fn products_are_computed_ahead_by_the_workgroup() {
    for precision in [Precision::Exact, Precision::Fast] {
        let notes = notes_of(
            "matmul.ph",
            "matmul",
            &[("BM", 32), ("BN", 64)],
            &device(precision, false),
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("by the workgroup") && notes[0].contains("added in order"),
            "{notes:?}"
        );
    }
    let notes = notes_of(
        "attention_dropout.ph",
        "attention_dropout",
        &[("BM", 16), ("BN", 32)],
        &device(Precision::Exact, false),
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes.iter().all(|n| n.contains("by the workgroup")),
        "{notes:?}"
    );
}

#[test]
fn exact_mode_never_takes_cooperative_matrices() {
    let k = kernel("matmul.ph", "matmul", &[("BM", 32), ("BN", 64)]);
    let c = compile(&k, &device(Precision::Exact, true)).unwrap();
    assert!(!uses_cooperative_matrices(&c.module));
    assert!(
        c.notes.iter().all(|n| !n.contains("cooperative")),
        "{:?}",
        c.notes
    );
}

#[test]
fn fast_mode_products_take_cooperative_matrices_and_pass_spirv_val() {
    let cases: &[Case] = &[
        ("matmul.ph", "matmul", &[("BM", 32), ("BN", 64)]),
        ("matmul.ph", "matmul", &[("BM", 16), ("BN", 16)]),
        (
            "attention_dropout.ph",
            "attention_dropout",
            &[("BM", 16), ("BN", 32)],
        ),
        (
            "attention_dropout_backward.ph",
            "attention_dropout_backward_kv",
            &[("BM", 32), ("BN", 16)],
        ),
        (
            "attention_dropout_backward.ph",
            "attention_dropout_backward_q",
            &[("BM", 16), ("BN", 16)],
        ),
    ];
    for (file, name, config) in cases {
        let k = kernel(file, name, config);
        let c =
            compile(&k, &device(Precision::Fast, true)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            uses_cooperative_matrices(&c.module),
            "{name}: {:?}",
            c.notes
        );
        assert!(
            c.notes.iter().any(|n| n.contains("cooperative matrices")),
            "{name}: {:?}",
            c.notes
        );
        spirv_val(name, &c);
    }
}

/// `spirv-val` accepts module `c` (skipped where it is missing or
/// predates cooperative matrices).
fn spirv_val(name: &str, c: &phobos_gpu::Compiled) {
    let dir = std::env::temp_dir().join(format!("phobos-dot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes: Vec<u8> = c.spirv().iter().flat_map(|w| w.to_le_bytes()).collect();
    let file = dir.join(format!("{name}.spv"));
    std::fs::write(&file, bytes).unwrap();
    let out = match std::process::Command::new("spirv-val")
        .args(["--target-env", "vulkan1.3"])
        .arg(&file)
        .output()
    {
        Ok(o) => o,
        Err(_) => {
            eprintln!("skipped: spirv-val not found (apt-get install spirv-tools)");
            return;
        }
    };
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    if said.contains("Invalid capability operand: 6022") {
        // CooperativeMatrixKHR: Debian 12's SPIRV-Tools (2023.1)
        // predates SPV_KHR_cooperative_matrix; naga's validation above
        // still ran.
        eprintln!("skipped: this spirv-val does not know CooperativeMatrixKHR");
        return;
    }
    assert!(out.status.success(), "spirv-val rejected {name}: {said}");
}

/// The plan's tensor-core products load f16 slices straight from their
/// tensors (bound as `array<f16>`), and a subgroup keeps a block of tiles
/// whose fragments it loads once a step; the module still validates.
#[test]
fn tensor_core_operands_are_loaded_straight_from_f16_tensors() {
    let k = kernel("matmul.ph", "matmul", &[("BM", 64), ("BN", 64)]);
    let c = compile(&k, &device(Precision::Fast, true)).expect("it lowers");
    let p = &c.plan.products;
    assert_eq!(p.len(), 1, "{p:?}");
    // 128 invocations: four subgroups, each a block of 2 x 2 tiles.
    assert_eq!(p[0].block, Some([2, 2]));
    let direct: Vec<(usize, bool)> = p[0]
        .direct
        .iter()
        .map(|d| d.map(|d| (d.param, d.transposed)).expect("both are direct"))
        .collect();
    assert_eq!(direct, [(0, false), (1, false)]);
    assert_eq!(c.plan.native_halves, [true, true, false]);
    let note = c
        .notes
        .iter()
        .find(|n| n.contains("`dot`"))
        .expect("a note");
    assert!(
        note.contains("a block of 2 x 2 tiles a subgroup")
            && note.contains("`A` and `B` loaded straight from the tensor"),
        "{note}"
    );
    // The store takes the tiles as the subgroups finish them: no array of
    // the whole result, one 16 x 16 slot a subgroup.
    assert!(p[0].from_tiles);
    assert!(note.contains("stored from each subgroup's tiles"), "{note}");
    let items: Vec<(&str, u64)> = c
        .budget
        .items
        .iter()
        .map(|i| (i.name.as_str(), i.bytes))
        .collect();
    assert!(
        items.iter().all(|(name, _)| !name.contains("dot_result")),
        "{items:?}"
    );
    assert!(
        items.contains(&("`dot_tile` (made by the compiler)", 4 * 256 * 4)),
        "{items:?}"
    );
    let wgsl = c.wgsl();
    assert!(wgsl.contains("array<f16>"), "{wgsl}");
    // The written tensor stays words, written atomically.
    assert!(wgsl.contains("array<atomic<u32>>"), "{wgsl}");

    // Attention: `Q` and `trans(K)` straight (K read column by column),
    // then `dot(d, V)` with `d` staged and `V` straight.
    let k = kernel(
        "attention_dropout.ph",
        "attention_dropout",
        &[("BM", 16), ("BN", 32)],
    );
    let c = compile(&k, &device(Precision::Fast, true)).expect("it lowers");
    let shapes: Vec<[Option<(usize, bool)>; 2]> = c
        .plan
        .products
        .iter()
        .map(|p| p.direct.map(|d| d.map(|d| (d.param, d.transposed))))
        .collect();
    assert_eq!(
        shapes,
        [
            [Some((0, false)), Some((1, true))],
            [None, Some((2, false))]
        ]
    );
    assert_eq!(c.plan.native_halves[..4], [true, true, true, false]);

    // Exact mode, or no cooperative matrices: words, staged.
    for options in [
        device(Precision::Exact, true),
        device(Precision::Fast, false),
    ] {
        let c = compile(&k, &options).expect("it lowers");
        assert!(c.plan.native_halves.iter().all(|n| !n));
        assert!(c.plan.products.iter().all(|p| p.direct == [None, None]));
    }
}

/// Triton's loop over K (`acc = dot(A[.., k :+ 32], B[k :+ 32, ..], acc)`):
/// the loop carries the accumulators in cooperative matrices, loaded once
/// before it and stored once after it.
#[test]
fn a_loop_over_k_carries_its_accumulators_in_cooperative_matrices() {
    let k = kernel(
        "../bench/s15/matmul_spellings.ph",
        "matmul_loop",
        &[("BM", 64), ("BN", 64)],
    );
    let c = compile(&k, &device(Precision::Fast, true)).expect("it lowers");
    let p = &c.plan.products;
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].carried.is_some() && !p[0].from_tiles, "{p:?}");
    assert!(p[0].direct.iter().all(Option::is_some), "{p:?}");
    let note = c
        .notes
        .iter()
        .find(|n| n.contains("stay in the subgroups' cooperative matrices"))
        .unwrap_or_else(|| panic!("{:?}", c.notes));
    assert!(note.contains("into `acc`"), "{note}");
    // The tile is read into the accumulators once before the loop and
    // written once after it: four tiles a subgroup each way.
    let wgsl = c.wgsl();
    let loads = wgsl.matches("coopLoadT<coop_mat16x16<f32,C>>").count();
    let stores = wgsl.matches("coopStoreT(").count();
    assert_eq!((loads, stores), (4, 4), "{wgsl}");
    // Exact mode keeps the tile.
    let c = compile(&k, &device(Precision::Exact, true)).expect("it lowers");
    assert!(c.plan.products.iter().all(|p| p.carried.is_none()));
}

/// An f16 tensor that the tensor cores read straight and the store reads
/// element by element too (bound as `array<f16>`, widened per element), at
/// specialised and symbolic dims: the module validates, and the store
/// still takes the product's tiles.
#[test]
fn a_direct_tensor_read_elsewhere_too_validates() {
    let src = "@autotune(BM in [64], BN in [32])\n\
        kernel mixed(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f32>[M, N]) {\n\
          let i = ctx.block.x * BM\n\
          let j = ctx.block.y * BN\n\
          C[i :+ BM, j :+ BN] = dot(A[i :+ BM, :], B[:, j :+ BN]) + f32(A[i :+ BM, 0 :+ BN]) * 2.0\n\
        }\n";
    let (program, diags) = Program::parse("mixed.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    let config = vec![("BM".to_string(), 64), ("BN".to_string(), 32)];
    let k = program.kernel("mixed", &config).expect("it checks");
    for k in [
        k.clone(),
        phobos_gpu::specialize(&k, &[100, 48, 80]).into_owned(),
    ] {
        let c = compile(&k, &device(Precision::Fast, true)).expect("it lowers and validates");
        assert_eq!(c.plan.native_halves, [true, true, false]);
        assert!(c.plan.products[0].from_tiles, "{:?}", c.plan.products);
        assert!(c.wgsl().contains("array<f16>"));
    }
}

/// At a launch's dims where every block's slices lie inside their tensors
/// (2048^3 by 64 x 64), the plan knows it: no test, no staging arrays, no
/// staged path. At ragged dims the test and the staged path stay.
#[test]
fn the_plan_knows_when_every_block_loads_straight() {
    let k = kernel("matmul.ph", "matmul", &[("BM", 64), ("BN", 64)]);
    let options = device(Precision::Fast, true);
    let square = phobos_gpu::specialize(&k, &[2048, 2048, 2048]);
    let c = compile(&square, &options).expect("it lowers");
    assert!(c.plan.products[0].always_direct(), "{:?}", c.plan.products);
    assert!(
        c.budget.items.iter().all(|i| !i.name.contains("dot_a16")),
        "{:?}",
        c.budget
    );
    // No staging, and no test of the slices' alignment either.
    assert!(!c.wgsl().contains("dot_a16"));
    assert!(!c.wgsl().contains("% 8u)"), "{}", c.wgsl());
    for dims in [[200, 72, 136], [2048, 2040, 2048], [2048, 2048, 2040]] {
        let ragged = phobos_gpu::specialize(&k, &dims);
        let c = compile(&ragged, &options).expect("it lowers");
        assert!(!c.plan.products[0].always_direct(), "{dims:?}");
        assert!(c.wgsl().contains("dot_a16"), "{dims:?}");
        assert!(c.wgsl().contains("% 8u)"), "{dims:?}");
    }
    // Symbolic dims: not known.
    let c = compile(&k, &options).expect("it lowers");
    assert!(!c.plan.products[0].always_direct());

    // Triton's loop over K: `k = kb * 32` for `kb` below `K / 32` stays
    // inside, so the carried loop has no test and no staging either.
    let k = kernel(
        "../bench/s15/matmul_spellings.ph",
        "matmul_loop",
        &[("BM", 64), ("BN", 64)],
    );
    for dims in [[2048, 2048, 2048], [2048, 2040, 2048]] {
        let c = compile(&phobos_gpu::specialize(&k, &dims), &options).expect("it lowers");
        let p = &c.plan.products[0];
        assert!(p.always_direct() && p.carried.is_some(), "{dims:?}: {p:?}");
        assert!(!c.wgsl().contains("dot_a16"), "{dims:?}");
    }
    // One chunk past the end: not known.
    let src = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../bench/s15/matmul_spellings.ph"),
    )
    .unwrap()
    .replace("for kb in 0 .. K / 32 {", "for kb in 0 .. K / 32 + 1 {");
    let (program, diags) = Program::parse("past.ph", &src);
    assert!(diags.is_empty(), "{diags:?}");
    let config = vec![("BM".to_string(), 64), ("BN".to_string(), 64)];
    let k = program.kernel("matmul_loop", &config).expect("it checks");
    let c = compile(&phobos_gpu::specialize(&k, &[2048, 2048, 2048]), &options).expect("it lowers");
    assert!(!c.plan.products[0].always_direct());
}

/// The attention forward with 64 query rows a block, at a launch's dims:
/// its two products are stored from the subgroups' tiles into its `var`
/// tiles (`var s = where(.., dot(Q, trans(K)) * scale, ..)` and `acc = acc
/// * alpha + dot(d, V)`), with no array of either whole result; `Q`, `K`
/// and `V` are proven inside at every block and iteration, so only `d`
/// is staged, and the module validates and passes `spirv-val`.
#[test]
fn attention_products_are_stored_from_tiles_into_var_tiles() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/attention_dropout.ph");
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.replace("@autotune(BM in [16]", "@autotune(BM in [16, 64]");
    assert!(
        text.contains("BM in [16, 64]"),
        "the example's @autotune line moved"
    );
    let (program, diags) = Program::parse("attention_dropout.ph", &text);
    assert!(diags.is_empty(), "{diags:?}");
    let k = program
        .kernel("attention_dropout", &[("BM".into(), 64), ("BN".into(), 32)])
        .unwrap();
    // BH, S, D.
    let k = phobos_gpu::specialize(&k, &[4, 1024, 64]).into_owned();
    let c = compile(&k, &device(Precision::Fast, true)).unwrap();
    let stored: Vec<&String> = c
        .notes
        .iter()
        .filter(|n| n.contains("stored from each subgroup's tiles"))
        .collect();
    assert_eq!(stored.len(), 2, "{:?}", c.notes);
    assert!(
        stored.iter().all(|n| n.contains("no staging")),
        "{stored:?}"
    );
    let names: Vec<&str> = c.budget.items.iter().map(|i| i.name.as_str()).collect();
    assert!(!names.iter().any(|n| n.contains("dot_result")), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("dot_b16")), "{names:?}");
    assert_eq!(
        names.iter().filter(|n| n.contains("dot_a16")).count(),
        1,
        "{names:?}"
    );
    assert_eq!(
        names.iter().filter(|n| n.contains("dot_tile")).count(),
        1,
        "one set of slots for both products: {names:?}"
    );
    spirv_val("attention_bm64", &c);
    // At the example's 16 rows, the scores' two tiles do not split evenly
    // over four subgroups: the first two keep one each and the others
    // idle, and both products are still stored from their tiles, through
    // one slot for each of the four subgroups that keep a tile.
    let k = kernel(
        "attention_dropout.ph",
        "attention_dropout",
        &[("BM", 16), ("BN", 32)],
    );
    let c = compile(&k, &device(Precision::Fast, true)).unwrap();
    let stored = c
        .notes
        .iter()
        .filter(|n| n.contains("stored from each subgroup's tiles"))
        .count();
    assert_eq!(stored, 2, "{:?}", c.notes);
    let slots: Vec<u64> = c
        .budget
        .items
        .iter()
        .filter(|i| i.name.contains("dot_tile"))
        .map(|i| i.bytes)
        .collect();
    assert_eq!(slots, [4 * 16 * 16 * 4], "{:?}", c.budget.items);
    spirv_val("attention_bm16", &c);
}

/// `let` tiles and `dot`'s accumulator plan as the example's `var`s
/// (`tests/spellings/attention.ph`): each product is computed once, not
/// in every statement that reads a `let` of it, and stored from the
/// subgroups' tiles; Triton's `acc = dot(p, V, acc)` starts the
/// accumulators from `acc`'s tile. The workgroup memory is the example's.
#[test]
fn attention_spellings_plan_as_the_example() {
    let options = device(Precision::Fast, true);
    let config = [("BM", 16), ("BN", 32)];
    let example = kernel("attention_dropout.ph", "attention_dropout", &config);
    let want = compile(&example, &options).unwrap().budget.total();
    for name in ["att_let", "att_triton"] {
        let k = kernel_at("tests/spellings/attention.ph", name, &config);
        let c = compile(&k, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let products: Vec<&String> = c.notes.iter().filter(|n| n.contains("`dot`")).collect();
        assert_eq!(products.len(), 2, "{name}: {products:?}");
        assert!(
            products
                .iter()
                .all(|n| n.contains("stored from each subgroup's tiles")),
            "{name}: {products:?}"
        );
        assert_eq!(c.budget.total(), want, "{name}: {}", c.budget.list());
        spirv_val(name, &c);
    }
}
