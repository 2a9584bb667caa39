//! Spellings of one computation (`tests/spellings/*.ph`, issue 28): the
//! examples' fused softmax and layer norm written with `let` tiles of
//! loads, `let` tiles of expressions, reciprocals written inside the store,
//! and Triton's `e / sum(e)`.
//!
//! - Bits: every spelling gives the interpreter's bits on the CPU backend
//!   and, where there is an adapter, on the GPU (lavapipe in CI); and
//!   spellings of the same maths with the same roundings agree with each
//!   other (`inv_*` and `ln_*` with the examples, `div_*` among
//!   themselves).
//! - Plan: the GPU keeps no tile of a row in workgroup memory for any of
//!   them (only values of one element a row: reductions and per-row
//!   scales), so a `let` places nothing; the workgroup memory stays within
//!   WebGPU's default limit, and they build without a launch's dims.

use phobos_core::Program;
use phobos_core::types::{Dim, Value};
use phobos_gpu::plan::Home;
use phobos_tests::{make_args, program, root, run_on_every_backend, tensor};

fn spellings(file: &str) -> (Program, Vec<String>) {
    let path = root().join("tests/spellings").join(file);
    let text = std::fs::read_to_string(&path).expect("readable");
    let p = program(file, &text);
    let names = p.kernel_names().into_iter().map(String::from).collect();
    (p, names)
}

/// Runs kernel `name` of `p` (from `file`) at `R` over `[m, n]` on every
/// backend (each must give the interpreter's bits) and returns `Y`'s bits,
/// which must not all be zero.
fn y_bits_everywhere(
    p: &Program,
    file: &str,
    name: &str,
    (m, n, r): (usize, usize, i64),
) -> Vec<u32> {
    let k = p
        .kernel(name, &[("R".to_string(), r)])
        .unwrap_or_else(|d| panic!("{name}: {d:?}"));
    let dims = [("M".to_string(), m), ("N".to_string(), n)];
    let inputs = make_args(&k, &dims, &[("seed", Value::I32(11))]);
    let what = format!("{file} `{name}` R={r} [{m}, {n}]");
    let out = run_on_every_backend(&k, &inputs, &what);
    let y = k.params.iter().position(|q| q.name == "Y").expect("Y");
    let t = tensor(&out[y]);
    let bits: Vec<u32> = (0..t.len()).map(|j| t.get(j).bits() as u32).collect();
    assert!(bits.iter().any(|&b| b != 0), "{what}: Y is all zeros");
    bits
}

/// Runs every kernel of `file` at `R` over `[m, n]` on every backend and
/// checks that kernels whose names start alike (`inv_`, `div_`, `ln_`)
/// write the same `Y`.
fn same_bits_within_groups(file: &str, m: usize, n: usize, r: i64) {
    let (p, names) = spellings(file);
    let mut groups: Vec<(String, String, Vec<u32>)> = Vec::new();
    for name in &names {
        let bits = y_bits_everywhere(&p, file, name, (m, n, r));
        let group = name.split('_').next().expect("a prefix").to_string();
        if let Some((_, first, want)) = groups.iter().find(|(g, ..)| *g == group) {
            if let Some(j) = (0..bits.len()).find(|&j| bits[j] != want[j]) {
                panic!("{file} `{name}` R={r} [{m}, {n}]: element {j} differs from `{first}`'s");
            }
        } else {
            groups.push((group, name.clone(), bits));
        }
    }
}

#[test]
fn softmax_spellings_agree_on_every_backend() {
    for (m, n, r) in [(5, 1000, 1), (3, 2048, 2), (6, 256, 4)] {
        same_bits_within_groups("softmax.ph", m, n, r);
    }
}

#[test]
fn layernorm_spellings_agree_on_every_backend() {
    for (m, n, r) in [(5, 1000, 1), (3, 2048, 2), (6, 256, 4)] {
        same_bits_within_groups("layernorm.ph", m, n, r);
    }
}

/// The chunked loops (`tests/spellings/chunked/loops.ph`): loops over a
/// row's chunks with accumulators folded into each chunk's reduction
/// (`plan::folds`), and the online softmax, give the interpreter's bits on
/// every backend, at row lengths that are and are not a multiple of the
/// chunk and with one and several rows a block. `softmax_chunks` assumes
/// `N` a multiple of 256. Rows of 4096 (8 and 16 chunks) stay loops in
/// exact mode (`plan::unroll` writes loops out in fast mode only: the
/// next test).
#[test]
fn chunked_loops_give_the_interpreters_bits_on_every_backend() {
    let path = root().join("tests/spellings/chunked/loops.ph");
    let text = std::fs::read_to_string(&path).expect("readable");
    let p = program("chunked/loops.ph", &text);
    for name in p.kernel_names() {
        for (m, n, r) in [(3, 512, 1), (5, 1000, 2), (3, 4096, 2)] {
            if name == "softmax_chunks" && n % 256 != 0 {
                continue;
            }
            y_bits_everywhere(&p, "chunked/loops.ph", name, (m, n, r));
        }
    }
}

/// In fast mode the GPU plan writes a launch's chunked loops out (up to 8
/// iterations a loop, `plan::unroll`) and keeps their chunks in
/// registers; exact mode keeps them as loops, so the bit-for-bit test
/// above never runs the written-out code. Here it runs, on the GPU in fast
/// mode, against the interpreter: the same elements are dropped, and the
/// rest are within fast mode's error (the driver's `exp` and `/`).
#[test]
fn chunked_loops_written_out_in_fast_mode_keep_the_interpreters_values() {
    use phobos_runtime::{Backend, Options, Precision, launch};
    if !phobos_tests::gpu_available() {
        return;
    }
    let path = root().join("tests/spellings/chunked/loops.ph");
    let text = std::fs::read_to_string(&path).expect("readable");
    let p = program("chunked/loops.ph", &text);
    let mut written = 0;
    for name in p.kernel_names() {
        for (m, n, r) in [(3, 1024, 1), (5, 2048, 2), (4, 2048, 4)] {
            let what = format!("`{name}` R={r} [{m}, {n}]");
            let k = p.kernel(name, &[("R".to_string(), r)]).expect("checks");
            let launched = phobos_gpu::specialize(&k, &[m as u64, n as u64]);
            written +=
                usize::from(phobos_gpu::plan::unroll::unroll(&launched, Precision::Fast).is_some());
            let dims = [("M".to_string(), m), ("N".to_string(), n)];
            let mut want = make_args(&k, &dims, &[("seed", Value::I32(11))]);
            let mut got = want.clone();
            phobos_core::interp::run(&k, &mut want).unwrap_or_else(|e| panic!("{what}: {e}"));
            let options = Options {
                backend: Backend::Gpu,
                precision: Precision::Fast,
                ..Options::default()
            };
            launch(&k, &mut got, &options).unwrap_or_else(|e| panic!("{what}: gpu: {e}"));
            let y = k.params.iter().position(|q| q.name == "Y").expect("Y");
            let (want, got) = (tensor(&want[y]), tensor(&got[y]));
            let scale = (0..want.len())
                .map(|j| want.get(j).as_f64().abs())
                .fold(0.0, f64::max);
            assert!(scale > 0.0, "{what}: Y is all zeros");
            for j in 0..want.len() {
                let (a, b) = (want.get(j).as_f64(), got.get(j).as_f64());
                assert_eq!(
                    a == 0.0,
                    b == 0.0,
                    "{what}: element {j} dropped in one only ({a}, {b})"
                );
                assert!(
                    (a - b).abs() <= 1e-4 * scale,
                    "{what}: element {j}: interp {a}, gpu fast {b}"
                );
            }
        }
    }
    // softmax_chunks and layernorm_chunks at three shapes, the chunks of
    // 512 at three: the test runs written-out code.
    assert!(written >= 6, "{written} launches written out");
}

/// Whether a shape holds one element a row (`[R, 1]`, or a scalar).
fn one_a_row(shape: &[Dim]) -> bool {
    shape.len() < 2 || shape[1] == Dim::Const(1)
}

#[test]
fn the_plan_keeps_no_row_tile_in_workgroup_memory() {
    for file in ["softmax.ph", "layernorm.ph"] {
        let (p, names) = spellings(file);
        for name in &names {
            for r in [1, 2, 4] {
                let k = p.kernel(name, &[("R".to_string(), r)]).expect("checks");
                // As a launch specialises it, and as `phobosc build` takes
                // it without dims: both must plan.
                let specialised = phobos_gpu::specialize(&k, &[64, 1024]).into_owned();
                for k in [specialised, k.clone()] {
                    let options = phobos_gpu::GpuOptions::for_kernel(&k);
                    let c = phobos_gpu::compile(&k, &options)
                        .unwrap_or_else(|e| panic!("{file} `{name}` R={r}: {e}"));
                    for v in &c.plan.values {
                        if let Home::Workgroup(_) = v.home {
                            let local =
                                k.locals.iter().find(|l| l.name == v.name).expect("a local");
                            assert!(
                                one_a_row(&local.shape),
                                "{file} `{name}` R={r}: `{}` ({}) in workgroup memory: {}",
                                v.name,
                                v.ty,
                                v.why
                            );
                        }
                    }
                    let used = c.budget.total();
                    assert!(
                        used <= phobos_gpu::WORKGROUP_MEMORY_LIMIT,
                        "{file} `{name}` R={r}: {used} bytes of workgroup memory: {}",
                        c.budget.list()
                    );
                    assert!(c.explain().contains("values:"), "{}", c.explain());
                }
            }
        }
    }
}

/// The plan moves the per-row reciprocal that a store computes inline
/// into a `let` of its own, and says so.
#[test]
fn a_row_uniform_division_in_a_store_is_computed_once_per_row() {
    let (p, _) = spellings("softmax.ph");
    let k = p
        .kernel("inv_mixed", &[("R".to_string(), 2)])
        .expect("checks");
    let c = phobos_gpu::compile(&k, &phobos_gpu::GpuOptions::for_kernel(&k)).expect("lowers");
    assert_eq!(c.plan.hoisted.len(), 1, "{}", c.explain());
    assert_eq!(c.plan.hoisted[0].ty, "f32[2, 1]");
    assert!(
        c.explain().contains("computed once per row"),
        "{}",
        c.explain()
    );
    // The Triton spelling divides each element: nothing is uniform there.
    let k = p
        .kernel("div_triton", &[("R".to_string(), 2)])
        .expect("checks");
    let c = phobos_gpu::compile(&k, &phobos_gpu::GpuOptions::for_kernel(&k)).expect("lowers");
    assert!(c.plan.hoisted.is_empty(), "{}", c.explain());
    let x = c.plan.values.iter().find(|v| v.name == "x").expect("x");
    assert_eq!(x.home, Home::Inline, "{}", c.explain());
}

/// Where exact `/` goes through a checked reciprocal (devices with f64 and
/// 64-bit integers), the plan shares each divisor that has one value at
/// every element of its statement: the row's sum at one row a block, and
/// dropout's `1 - p`; the emitter computes their reciprocals once, and
/// `--explain` says so. A sum over two rows differs along the tile, and
/// the f64 check has no reciprocal to share.
#[test]
fn a_division_by_a_shared_divisor_takes_its_reciprocal_once() {
    let (p, _) = spellings("softmax.ph");
    let compile = |r: i64, check: phobos_gpu::DivCheck| {
        let k = p
            .kernel("div_triton", &[("R".to_string(), r)])
            .expect("checks");
        let mut o = phobos_gpu::GpuOptions::for_kernel(&k);
        o.wide_div = true;
        o.int64 = true;
        o.knobs.div_check = check;
        phobos_gpu::compile(&k, &o).expect("lowers")
    };
    let c = compile(1, phobos_gpu::DivCheck::Recip);
    assert_eq!(c.plan.divisors.len(), 2, "{}", c.explain());
    assert!(
        c.explain()
            .contains("2 exact `/` by a value the same at every element"),
        "{}",
        c.explain()
    );
    let wgsl = c.wgsl();
    assert!(wgsl.contains("fn exact_recip(") && wgsl.contains("fn exact_div_by("));
    assert!(
        !wgsl.contains("fn exact_div("),
        "every division shares its divisor"
    );
    let c = compile(2, phobos_gpu::DivCheck::Recip);
    assert_eq!(c.plan.divisors.len(), 1, "{}", c.explain());
    assert!(c.wgsl().contains("fn exact_div("));
    let c = compile(1, phobos_gpu::DivCheck::F64);
    assert!(c.plan.divisors.is_empty(), "{}", c.explain());
    assert!(!c.wgsl().contains("exact_recip"));
}

/// The attention forward spelled with `let` tiles and Triton's loop
/// (`tests/spellings/attention.ph`) on every backend, O and L, at both of
/// the example's BN and a sequence length that leaves a ragged last block:
/// `att_let` gives the bits of `examples/attention_dropout.ph`; `att_triton`
/// adds the product through `dot`'s accumulator, another rounding of O in
/// f32 (at these sizes the f16 O mostly hides it), and gives the
/// interpreter's bits and the example's L.
#[test]
fn attention_spellings_give_the_interpreters_bits_on_every_backend() {
    let example =
        std::fs::read_to_string(root().join("examples/attention_dropout.ph")).expect("readable");
    let example = program("attention_dropout.ph", &example);
    let (p, _) = spellings("attention.ph");
    let dims = [
        ("BH".to_string(), 2),
        ("S".to_string(), 40),
        ("D".to_string(), 16),
    ];
    let scalars = [
        ("scale", Value::F32(0.01)),
        ("p", Value::F32(0.2)),
        ("key", Value::U32(29)),
    ];
    for bn in [16, 32] {
        let config = [("BM".to_string(), 16), ("BN".to_string(), bn)];
        let run = |p: &Program, name: &str| {
            let k = p
                .kernel(name, &config)
                .unwrap_or_else(|d| panic!("{name}: {d:?}"));
            let inputs = make_args(&k, &dims, &scalars);
            let what = format!("attention `{name}` BN={bn}");
            let out = run_on_every_backend(&k, &inputs, &what);
            ["O", "L"].map(|o| {
                let at = k.params.iter().position(|q| q.name == o).expect("O and L");
                let t = tensor(&out[at]);
                (0..t.len()).map(|j| t.get(j).bits()).collect::<Vec<u64>>()
            })
        };
        let want = run(&example, "attention_dropout");
        assert!(want[0].iter().any(|&b| b != 0), "O is all zeros");
        let differs = |got: &[u64], want: &[u64]| (0..want.len()).find(|&j| got[j] != want[j]);
        let let_tiles = run(&p, "att_let");
        for (o, name) in [(0, "O"), (1, "L")] {
            if let Some(j) = differs(&let_tiles[o], &want[o]) {
                panic!("`att_let` BN={bn}: {name}[{j}] differs from the example's");
            }
        }
        let triton = run(&p, "att_triton");
        if let Some(j) = differs(&triton[1], &want[1]) {
            panic!("`att_triton` BN={bn}: L[{j}] differs from the example's");
        }
    }
}
