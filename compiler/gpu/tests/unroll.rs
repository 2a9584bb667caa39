//! Chunked loops written out (`plan::unroll`): which loops the plan writes
//! out, that the row cache then keeps the chunks that several loops read,
//! and what `--explain` says. The bits are checked on every backend by
//! `tests/tests/spellings.rs` (the chunked loops, at rows of 4096 too).

use phobos_core::Program;
use phobos_gpu::plan::unroll::unroll;
use phobos_gpu::{GpuOptions, Precision, compile};

/// A user's chunked softmax: three loops over the row's chunks of 256.
const CHUNKS: &str = r#"
@autotune(R in [1, 4])
kernel chunks(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var m: tile<f32>[R, 1] = -_inf()
  for j in 0 .. N / 256 {
    m = max(m, max(X[r :+ R, j * 256 :+ 256], axis = 1))
  }
  var s: tile<f32>[R, 1] = 0.0
  for j in 0 .. N / 256 {
    let e = exp(X[r :+ R, j * 256 :+ 256] - m)
    s = s + sum(e, axis = 1)
  }
  for j in 0 .. N / 256 {
    let c = j * 256
    Y[r :+ R, c :+ 256] = dropout(exp(X[r :+ R, c :+ 256] - m) / s, 0.1, seed, (r + iota(0)) * N + c + iota(1))
  }
}
"#;

/// An H200's options at `workgroup_size` invocations.
fn device(workgroup_size: u32) -> GpuOptions {
    GpuOptions {
        precision: Precision::Fast,
        workgroup_size,
        subgroup_width: 32,
        subgroup_layout_known: true,
        workgroup_memory: 48 * 1024,
        heavy_groups: true,
        ..Default::default()
    }
}

fn kernel(src: &str, name: &str, r: i64, dims: &[u64]) -> phobos_core::ir::Kernel {
    let (p, diags) = Program::parse("chunks.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    let k = p.kernel(name, &[("R".into(), r)]).expect("it checks");
    phobos_gpu::specialize(&k, dims).into_owned()
}

#[test]
fn a_launchs_chunked_loops_are_written_out_and_their_chunks_kept() {
    // (R, invocations, chunks kept), rows of 2048 (8 chunks): one leaf a
    // lane through workgroup memory (R = 1 at 64: 4 words a chunk), and the
    // subgroup path (R = 4 at 128, 8 words a chunk): all 8 kept either way.
    for (r, wg, kept) in [(1, 64, 8), (4, 128, 8)] {
        let k = kernel(CHUNKS, "chunks", r, &[64, 2048]);
        let c = compile(&k, &device(wg)).expect("it lowers");
        let j = ("j".to_string(), 8);
        assert_eq!(c.plan.unrolled, vec![j.clone(), j.clone(), j], "R={r}");
        assert!(c.plan.loops.is_empty(), "R={r}: no loop is left");
        let rows = c.plan.rows.as_ref().expect("the chunks are kept");
        assert_eq!(rows.kept.len(), kept, "R={r}");
        assert!(rows.words <= 64, "R={r}: {} words", rows.words);
        // Each accumulator update is a fold by item 0 of its row, and two
        // folds of one accumulator in a row wait at no barrier: at R = 4
        // (one subgroup a row) the module's barriers are a handful, not
        // one or two a chunk.
        assert_eq!(c.plan.folds.len(), 16, "R={r}");
        assert!(c.plan.folds.iter().all(|f| f.within.is_none()));
        let barriers = c.wgsl().matches("workgroupBarrier").count();
        let most = if r == 4 { 6 } else { 22 };
        assert!(barriers <= most, "R={r}: {barriers} barriers");
        let text = c.explain();
        assert!(
            text.contains("`for j`: written out, 8 iterations"),
            "{text}"
        );
        assert!(text.contains("stored over the kept rows' leaves"), "{text}");
        // The loops' own nodes, unread once written out, are not counted
        // as readers: the first iteration's `e` is inlined like the rest,
        // not put in workgroup memory.
        assert!(
            text.contains("let e: f32[") && text.contains("inline: computed where its one statement reads it (8 of them, one an iteration)"),
            "{text}"
        );
        assert!(!text.contains("follows a reader"), "{text}");
        assert!(!text.contains("a loop variable"), "{text}");
    }
}

#[test]
fn loops_stay_loops_where_writing_them_out_would_not_pay() {
    // Not a launch's kernel: `N / 256` is not a constant.
    let (p, _) = Program::parse("chunks.ph", CHUNKS);
    let k = p.kernel("chunks", &[("R".into(), 1)]).expect("it checks");
    assert!(unroll(&k, Precision::Fast).is_none());
    // More iterations than `MAX_TRIPS` (8): rows of 4096.
    let long = kernel(CHUNKS, "chunks", 1, &[64, 4096]);
    assert!(unroll(&long, Precision::Fast).is_none());
    // Exact mode: its correctly rounded `exp` and `/` make each copy of
    // the body long, and the copies cost more than the re-reads.
    let short = kernel(CHUNKS, "chunks", 1, &[64, 1024]);
    assert!(unroll(&short, Precision::Fast).is_some());
    assert!(unroll(&short, Precision::Exact).is_none());
    // A loop that reduces no chunk of a tensor (its slice does not move).
    let fixed = CHUNKS.replace(
        "X[r :+ R, j * 256 :+ 256], axis",
        "X[r :+ R, 0 :+ 256], axis",
    );
    let fixed = fixed.replace(
        "exp(X[r :+ R, j * 256 :+ 256] - m)",
        "exp(X[r :+ R, 0 :+ 256] - m)",
    );
    let k = kernel(&fixed, "chunks", 1, &[64, 1024]);
    assert!(unroll(&k, Precision::Fast).is_none());
    // A loop of products: attention's, which the plan stages and carries.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/attention_dropout.ph");
    let text = std::fs::read_to_string(path).expect("readable");
    let (p, _) = Program::parse("attention_dropout.ph", &text);
    let k = p
        .kernel("attention_dropout", &[("BM".into(), 16), ("BN".into(), 32)])
        .expect("it checks");
    let k = phobos_gpu::specialize(&k, &[4, 256, 64]).into_owned();
    assert!(unroll(&k, Precision::Fast).is_none());
}

#[test]
fn written_out_loops_keep_the_statements_order_and_their_own_locals() {
    let k = kernel(CHUNKS, "chunks", 1, &[64, 1024]);
    let (u, loops) = unroll(&k, Precision::Fast).expect("written out");
    assert_eq!(loops, vec![("j".to_string(), 4); 3]);
    assert!(phobos_core::ir::verify(&u).is_empty(), "{}", u.print());
    // Each iteration's `let e` is a local of its own; `let c = j * 256`,
    // constants only once `j` is, is substituted into its reads (so a
    // chunk named through `c` is the same value in every loop); the
    // accumulators stay one `var` each, assigned once an iteration.
    let lets = |name: &str| {
        u.body
            .iter()
            .filter_map(|s| match s {
                phobos_core::ir::Stmt::Let { local, .. } if u.locals[*local].name == name => {
                    Some(*local)
                }
                _ => None,
            })
            .collect::<std::collections::HashSet<_>>()
    };
    assert_eq!(lets("e").len(), 4);
    assert!(lets("c").is_empty());
    let stores_to_m = u
        .body
        .iter()
        .filter(|s| {
            matches!(s, phobos_core::ir::Stmt::Store { place: phobos_core::ir::Place::Local(l), .. }
                if u.locals[*l].name == "m")
        })
        .count();
    assert_eq!(stores_to_m, 4);
}

#[test]
fn a_chunk_named_through_a_let_of_the_loop_variable_is_kept() {
    // The chunked example names each chunk's start `let c = j * 256` in
    // every loop, and masks the last chunk with `where`: its three loops'
    // loads of a chunk are one value once `c` is substituted.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/softmax_dropout_chunked.ph");
    let text = std::fs::read_to_string(path).expect("readable");
    let k = kernel(&text, "softmax_dropout_chunked", 4, &[64, 1024]);
    let c = compile(&k, &device(128)).expect("it lowers");
    assert_eq!(c.plan.unrolled, vec![("j".to_string(), 4); 3]);
    let rows = c.plan.rows.as_ref().expect("the chunks are kept");
    assert_eq!(rows.kept.len(), 4, "{}", c.explain());
    assert!(!c.explain().contains("let c:"), "{}", c.explain());
}
