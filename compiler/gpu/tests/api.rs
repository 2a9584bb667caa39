//! The runtime-facing API: dispatch sizes, workgroup sizes, options.

use phobos_core::Program;
use phobos_gpu::{GpuOptions, LowerError, dispatch_size, lower, workgroup_size};

fn kernel(source: &str) -> phobos_core::ir::Kernel {
    let (program, diags) = Program::parse("t.ph", source);
    assert!(diags.is_empty(), "{diags:?}");
    program.kernel("t", &[]).unwrap()
}

#[test]
fn dispatch_sizes_cover_every_block_once() {
    assert_eq!(dispatch_size([1, 1, 1], 65_535), [1, 1, 1]);
    assert_eq!(dispatch_size([0, 7, 1], 65_535), [0, 1, 1]);
    assert_eq!(dispatch_size([65_535, 1, 1], 65_535), [65_535, 1, 1]);
    assert_eq!(dispatch_size([65_536, 1, 1], 65_535), [32_768, 2, 1]);
    assert_eq!(dispatch_size([1000, 1000, 3], 65_535), [65_218, 46, 1]);
    assert_eq!(dispatch_size([131_071, 1, 1], 65_535), [43_691, 3, 1]);
    // The shader's numbering: workgroup (x, y) is block x + nx * y; every
    // block in 0..total has exactly one workgroup, the rest are idle.
    for grid in [[5, 3, 2], [7, 1, 1], [4, 4, 4], [1, 1, 9], [8, 8, 1]] {
        let total = grid.iter().product::<u32>();
        let [nx, ny, nz] = dispatch_size(grid, 8);
        assert_eq!(nz, 1);
        let mut seen = vec![0; total as usize];
        for y in 0..ny {
            for x in 0..nx {
                let lin = x + nx * y;
                if lin < total {
                    seen[lin as usize] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{grid:?}");
        assert!(nx * ny < total + nx, "{grid:?}: at most one partial row");
        // Even rows: fewer idle workgroups than rows (the old
        // `[min(total, max), rows]` idled up to a whole row).
        assert!(nx * ny - total < ny, "{grid:?}: {nx} x {ny} idles too many");
        assert!(nx <= 8 && ny == total.div_ceil(8).max(1), "{grid:?}");
    }
}

#[test]
#[should_panic(expected = "blocks")]
fn dispatch_size_refuses_grids_beyond_max_squared() {
    dispatch_size([65_535, 65_535, 2], 65_535);
}

#[test]
fn workgroup_size_grows_with_the_block() {
    let small = kernel("kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y[0] = X[0] }");
    assert_eq!(workgroup_size(&small), 64);
    let tile = |n: u32| {
        kernel(&format!(
            "@grid(cdiv(N, {n}))\nkernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) {{\n  let r = ctx.block.x * {n}\n  Y[r :+ {n}] = X[r :+ {n}] * 2.0\n}}"
        ))
    };
    assert_eq!(workgroup_size(&tile(256)), 64);
    assert_eq!(workgroup_size(&tile(4096)), 64);
    assert_eq!(workgroup_size(&tile(8192)), 128);
    assert_eq!(workgroup_size(&tile(16_384)), 256);
    assert_eq!(workgroup_size(&tile(65_536)), 256);
    let whole = kernel("kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X }");
    assert_eq!(workgroup_size(&whole), 256);
}

/// Stepped Tandem blocks smaller than a workgroup run several to one
/// (`Compiled::blocks_per_workgroup`), unless the lowering needs workgroup
/// memory or a barrier, and the workgroup size heuristic asks for that.
#[test]
fn small_stepped_blocks_share_a_workgroup() {
    let stepped = |rows: u32, extra: &str| {
        kernel(&format!(
            "@grid(cdiv(M, {rows}))\nkernel t(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], key: u32) {{\n  let r = ctx.block.x * {rows}\n  Y[r :+ {rows}, :] = X[r :+ {rows}, :] + tandem_normal(key, (r + iota(0)) * 256 + iota(1))\n{extra}}}"
        ))
    };
    let blocks = |k: &phobos_core::ir::Kernel, size: u32| {
        let options = GpuOptions {
            workgroup_size: size,
            ..GpuOptions::default()
        };
        phobos_gpu::compile(k, &options)
            .unwrap()
            .blocks_per_workgroup
    };
    // 1,024 elements: 8 chunk tasks, one warp of 32 invocations a block.
    let small = stepped(4, "");
    assert_eq!(workgroup_size(&small), 64);
    assert_eq!(blocks(&small, 32), 1);
    assert_eq!(blocks(&small, 64), 2);
    assert_eq!(blocks(&small, 96), 3);
    assert_eq!(blocks(&small, 256), 8);
    assert_eq!(blocks(&small, 48), 1);
    let c = phobos_gpu::compile(&small, &GpuOptions::for_kernel(&small)).unwrap();
    assert!(
        c.notes.iter().any(|n| n.contains("2 blocks a workgroup")),
        "{:?}",
        c.notes
    );
    // 16,384 elements: 128 tasks, a workgroup of its own.
    let large = stepped(64, "");
    assert_eq!(workgroup_size(&large), 128);
    assert_eq!(blocks(&large, 128), 1);
    assert_eq!(blocks(&large, 256), 2);
    // A `var` tile read through a slice lives in workgroup memory, which
    // blocks cannot share.
    let shared = stepped(
        4,
        "  var u: tile<f32>[4, 256] = X[r :+ 4, :]\n  Y[r :+ 4, :] = u[0 :+ 4, :]\n",
    );
    assert_eq!(blocks(&shared, 64), 1);
    // Kernels without stepped draws run one block a workgroup.
    let plain = kernel("kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X }");
    assert_eq!(blocks(&plain, 256), 1);
}

#[test]
fn workgroup_sizes_out_of_range_are_refused() {
    let k = kernel("kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X }");
    for size in [0, phobos_gpu::MAX_WORKGROUP_SIZE + 1] {
        let options = GpuOptions {
            workgroup_size: size,
            ..GpuOptions::default()
        };
        match lower(&k, &options) {
            Err(LowerError::Unsupported(m)) => assert!(m.contains("workgroup size"), "{m}"),
            other => panic!("expected Unsupported, got {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn layout_of_scalars_dims_and_tensors() {
    let k = kernel(
        "kernel t(X: tensor<f32>[M, N], flag: bool, Y: tensor<i32>[M, N], s: f32) { Y = i32(X * s) + i32(flag) }",
    );
    let c = phobos_gpu::compile(&k, &GpuOptions::default()).unwrap();
    let json = serde_json::to_string_pretty(&c.layout).unwrap();
    insta::assert_snapshot!(json);
    // The shader's struct agrees with the layout.
    let text = c.wgsl();
    let members: Vec<&str> = c
        .layout
        .uniform_fields
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(
        members,
        ["flag", "s", "dim_M", "dim_N", "grid_x", "grid_y", "grid_z"]
    );
    assert!(
        text.contains("flag: u32,") && text.contains("s: f32,"),
        "{text}"
    );
    assert_eq!(c.layout.uniform_size, 32);
    assert!(
        text.contains("@group(0) @binding(1) \nvar<storage> X: array<f32>;"),
        "{text}"
    );
    assert!(
        text.contains("@group(0) @binding(2) \nvar<storage, read_write> Y: array<i32>;"),
        "{text}"
    );
}

/// A store that reads its own destination is staged in workgroup memory:
/// refused while its extent is symbolic, lowered once `specialize` fixes it
/// from the dims (a staging tile, then a barrier before the copy), and
/// refused with the sizes when the staging tile would not fit in 16 KiB.
#[test]
fn self_reading_stores_are_staged_in_workgroup_memory() {
    let k = kernel(
        "@autotune(R in [2])
        kernel t(T1: tensor<f32>[M, N]) {
          let r = ctx.block.x * R
          T1[r :+ R, :] = T1[r :+ R, 0 :+ 1] + 1.0
        }",
    );
    let e = lower(&k, &GpuOptions::default()).unwrap_err();
    assert!(e.to_string().contains("depends on a dim"), "{e}");
    assert!(
        e.to_string().contains("phobosc build --dim N=<extent>"),
        "{e}"
    );
    let dims = [5, 6];
    let special = phobos_gpu::specialize(&k, &dims);
    assert!(matches!(special, std::borrow::Cow::Owned(_)));
    let c = phobos_gpu::compile(&special, &GpuOptions::default()).unwrap();
    let text = c.wgsl();
    assert!(
        text.contains("var<workgroup> staging_f32_: array<f32, 12>"),
        "{text}"
    );
    assert!(text.contains("storageBarrier()"), "{text}");
    // A kernel with nothing to specialize comes back as it is, but for
    // what the launch shows of rows it slices by 4: a multiple of 4 long
    // or not.
    let plain = kernel("kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) {\n Y = X + 1.0\n}");
    assert!(matches!(
        phobos_gpu::specialize(&plain, &[4]),
        std::borrow::Cow::Borrowed(_)
    ));
    let sliced = kernel(
        "kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) {\n let i = ctx.block.x * 8\n Y[i :+ 8] = X[i :+ 8]\n}",
    );
    assert!(matches!(
        phobos_gpu::specialize(&sliced, &[6]),
        std::borrow::Cow::Borrowed(_)
    ));
    let aligned = phobos_gpu::specialize(&sliced, &[4]);
    assert_eq!(aligned.dim_multiple(0), 4);
    assert!(
        aligned.print().contains("known N % 4 == 0"),
        "{}",
        aligned.print()
    );
    // 4,097 f32 elements do not fit in 16 KiB.
    let big = kernel("kernel t(Y: tensor<f32>[N]) {\n Y[0 :+ 4097] = Y[1 :+ 4097]\n}");
    let e = lower(&big, &GpuOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("16388 bytes") && e.to_string().contains("16384-byte limit"),
        "{e}"
    );
    let fits = kernel("kernel t(Y: tensor<f32>[N]) {\n Y[0 :+ 4096] = Y[1 :+ 4096]\n}");
    lower(&fits, &GpuOptions::default()).unwrap();
}

/// The plan decides which stores keep their groups of 4 (`Plan::stores`):
/// a softmax divided by its row's sum computes two exact divisions an
/// element (its own and dropout's), so a module for WebGPU stores it element
/// by element, while a native device (`heavy_groups`) and fast mode keep
/// the groups, and the WGSL follows the plan.
#[test]
fn the_plan_decides_which_stores_keep_groups_of_4() {
    let k = kernel(
        "kernel t(X: tensor<f32>[64, 1024], Y: tensor<f32>[64, 1024], seed: i32) {
  let r = ctx.block.x
  let e = exp(X[r :+ 1, :] - max(X[r :+ 1, :], axis = 1))
  Y[r :+ 1, :] = dropout(e / sum(e, axis = 1), 0.1, seed, r * 1024 + iota(1))
}",
    );
    let compiled = |options: GpuOptions| phobos_gpu::compile(&k, &options).unwrap();
    let portable = compiled(GpuOptions::for_kernel(&k));
    let native = compiled(GpuOptions {
        heavy_groups: true,
        ..GpuOptions::for_kernel(&k)
    });
    let fast = compiled(GpuOptions {
        precision: phobos_gpu::Precision::Fast,
        ..GpuOptions::for_kernel(&k)
    });
    for (c, groups) in [(&portable, false), (&native, true), (&fast, true)] {
        let stores = &c.plan.stores;
        assert_eq!(stores.len(), 1, "{stores:?}");
        assert_eq!(stores[0].groups, groups, "{stores:?}");
        // A group of 4 is one 16-byte store of a vec4.
        assert_eq!(
            c.wgsl().contains("Y[(") && c.wgsl().contains("vec4<f32>("),
            groups
        );
    }
    assert!(
        portable
            .explain()
            .contains("stored element by element: each element computes 2 exact `/` or `sqrt`"),
        "{}",
        portable.explain()
    );
    assert!(!native.explain().contains("element by element"));
}

/// The chunked softmax's two accumulator updates are folds (`plan::folds`):
/// item 0 of each row updates its element, so no loop waits between
/// iterations, and no loop waits on storage. A loop whose body also reads
/// its accumulator elsewhere keeps both statements and a barrier. (40
/// chunks a row: more than the plan writes out, `plan::unroll`.)
#[test]
fn the_plan_folds_accumulators_and_plans_loop_barriers() {
    let chunked = "kernel t(X: tensor<f32>[64, 10240], Y: tensor<f32>[64, 10240]) {
  let r = ctx.block.x * 4
  var m: tile<f32>[4, 1] = -_inf()
  for j in 0 .. 40 {
    m = max(m, max(X[r :+ 4, j * 256 :+ 256], axis = 1))
  }
  var s: tile<f32>[4, 1] = 0.0
  for j in 0 .. 40 {
    s = s + sum(exp(X[r :+ 4, j * 256 :+ 256] - m), axis = 1)
  }
  for j in 0 .. 40 {
    Y[r :+ 4, j * 256 :+ 256] = exp(X[r :+ 4, j * 256 :+ 256] - m) / s
  }
}";
    let k = kernel(chunked);
    let options = GpuOptions {
        subgroup_width: 32,
        workgroup_size: 128,
        ..GpuOptions::for_kernel(&k)
    };
    let c = phobos_gpu::compile(&k, &options).unwrap();
    assert_eq!(c.plan.folds.len(), 2, "{:?}", c.plan.folds);
    assert_eq!(c.plan.loops.len(), 3);
    for l in &c.plan.loops {
        assert!(l.back.is_none(), "{l:?}");
    }
    let explain = c.explain();
    assert!(
        explain.contains("loop 3 (`for j`): no barrier between iterations"),
        "{explain}"
    );
    // Statements are numbered one way, the emitter's notes and the plan's
    // own lines alike, loop brackets left out: here the reductions of the
    // 3rd and 6th statements; below, the store of the 5th.
    for line in ["statement 3: `max`", "statement 6: `sum`"] {
        assert!(explain.contains(line), "{line}\n{explain}");
    }
    let k = kernel(
        "kernel t(X: tensor<f32>[8, 5120], Y: tensor<f32>[8, 5120], seed: i32) {
  let r = ctx.block.x
  var s: tile<f32>[1, 1] = 0.0
  for j in 0 .. 40 {
    s = s + sum(X[r :+ 1, j * 128 :+ 128], axis = 1)
  }
  Y[r :+ 1, :] = dropout(X[r :+ 1, :] / s, 0.1, seed, r * 5120 + iota(1))
}",
    );
    let explain = phobos_gpu::compile(&k, &GpuOptions::for_kernel(&k))
        .unwrap()
        .explain();
    for line in [
        "statement 3: `sum`",
        "statement 5: stored element by element",
    ] {
        assert!(explain.contains(line), "{line}\n{explain}");
    }
    // No storage barrier anywhere, and the accumulators are written by the
    // reductions' item 0 (nothing is stored to `_max` or `_sum`).
    let wgsl = c.wgsl();
    assert!(!wgsl.contains("storageBarrier"), "{wgsl}");
    for name in ["_max_", "_sum_"] {
        assert!(
            !wgsl.lines().any(|l| l.trim_start().starts_with(name)),
            "{wgsl}"
        );
    }

    // `m` read by a second statement of the loop: no fold, a barrier.
    let k = kernel(
        "kernel t(X: tensor<f32>[64, 10240], Y: tensor<f32>[64, 10240]) {
  let r = ctx.block.x * 4
  var m: tile<f32>[4, 1] = -_inf()
  for j in 0 .. 40 {
    m = max(m, max(X[r :+ 4, j * 256 :+ 256], axis = 1))
    Y[r :+ 4, j * 256 :+ 256] = X[r :+ 4, j * 256 :+ 256] - m
  }
}",
    );
    let c = phobos_gpu::compile(&k, &options).unwrap();
    assert!(c.plan.folds.is_empty(), "{:?}", c.plan.folds);
    assert!(c.plan.loops[0].back.workgroup, "{:?}", c.plan.loops);
    assert!(!c.plan.loops[0].back.storage, "{:?}", c.plan.loops);
}

/// Where the runtime has found the device's subgroups in order
/// (`GpuOptions::subgroup_layout_known`, by dispatching `subgroup_probe`),
/// reductions neither check the layout at the top of the block nor carry
/// the fallback path; the probe itself is a valid module.
#[test]
fn a_known_subgroup_layout_drops_the_check_and_the_fallback() {
    let k = kernel(
        "kernel t(X: tensor<f32>[64, 4096], Y: tensor<f32>[64, 4096]) {
  let r = ctx.block.x
  Y[r :+ 1, :] = X[r :+ 1, :] - max(X[r :+ 1, :], axis = 1)
}",
    );
    let checked = GpuOptions {
        subgroup_width: 32,
        workgroup_size: 256,
        ..GpuOptions::for_kernel(&k)
    };
    let known = GpuOptions {
        subgroup_layout_known: true,
        ..checked
    };
    let wgsl = |o: &GpuOptions| phobos_gpu::compile(&k, o).unwrap().wgsl();
    let (a, b) = (wgsl(&checked), wgsl(&known));
    assert!(
        a.contains("subgroup_bad") && a.contains("workgroupUniformLoad"),
        "{a}"
    );
    assert!(
        !b.contains("subgroup_bad") && !b.contains("workgroupUniformLoad"),
        "{b}"
    );
    assert!(b.contains("subgroupShuffleXor"), "{b}");
    assert!(b.matches("workgroupBarrier").count() < a.matches("workgroupBarrier").count());

    let probe = phobos_gpu::subgroup_probe(1024, 32);
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::SUBGROUP,
    )
    .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
    .subgroup_operations(naga::valid::SubgroupOperationSet::all())
    .validate(&probe)
    .expect("the probe validates");
}

/// The plan spreads each reduction over the block before any code exists:
/// a softmax over rows of 1024 at R=2 and 256 invocations gives each row
/// 128 invocations of 8 elements, through subgroup butterflies where the
/// device's subgroups are 32 wide, and through workgroup memory where it
/// has none; a reduction over a dim keeps the loop per element.
#[test]
fn the_plan_spreads_reductions_over_the_block() {
    let k = kernel(
        "kernel t(X: tensor<f32>[64, 1024], Y: tensor<f32>[64, 1024]) {
  let r = ctx.block.x * 2
  let m = max(X[r :+ 2, :], axis = 1)
  Y[r :+ 2, :] = exp(X[r :+ 2, :] - m) / sum(exp(X[r :+ 2, :] - m), axis = 1)
}",
    );
    let at = |width: u32| {
        let options = GpuOptions {
            subgroup_width: width,
            workgroup_size: 256,
            ..GpuOptions::for_kernel(&k)
        };
        phobos_gpu::compile(&k, &options).unwrap().plan
    };
    let plan = at(32);
    assert!(plan.subgroups);
    assert_eq!(plan.reductions.len(), 2, "{:?}", plan.reductions);
    for r in &plan.reductions {
        assert_eq!(
            (r.len, r.rows, r.per_row, r.block, r.levels),
            (1024, 2, 128, 8, phobos_gpu::plan::Levels::Subgroups),
            "{r:?}"
        );
    }
    let plan = at(0);
    assert!(!plan.subgroups);
    assert!(
        plan.reductions
            .iter()
            .all(|r| r.levels == phobos_gpu::plan::Levels::Workgroup && r.per_row == 128)
    );
    let over_dim = kernel(
        "kernel t(X: tensor<f32>[M, N], Y: tensor<f32>[M, 1]) {
  let r = ctx.block.x
  Y[r :+ 1, :] = sum(X[r :+ 1, :], axis = 1)
}",
    );
    let plan = phobos_gpu::compile(&over_dim, &GpuOptions::for_kernel(&over_dim))
        .unwrap()
        .plan;
    assert!(plan.reductions.is_empty(), "{:?}", plan.reductions);
}

/// The plan chooses the values a lane keeps across statements (the row
/// cache): in a softmax whose reductions share one geometry, `X` (read by
/// both reductions) and `exp(X - m)` (by the sum and the store), each a
/// lane's 2 leaves of 4 words; none without subgroups.
#[test]
fn the_plan_keeps_a_rows_shared_values_in_registers() {
    let k = kernel(
        "kernel t(X: tensor<f32>[64, 1024], Y: tensor<f32>[64, 1024]) {
  let r = ctx.block.x
  let m = max(X[r :+ 1, :], axis = 1)
  Y[r :+ 1, :] = exp(X[r :+ 1, :] - m) * (1.0 / sum(exp(X[r :+ 1, :] - m), axis = 1))
}",
    );
    let at = |width: u32| {
        let options = GpuOptions {
            subgroup_width: width,
            subgroup_layout_known: width > 1,
            workgroup_size: 128,
            ..GpuOptions::for_kernel(&k)
        };
        phobos_gpu::compile(&k, &options).unwrap()
    };
    let c = at(32);
    let rows = c.plan.rows.as_ref().expect("a row cache");
    assert_eq!((rows.geom.per_row, rows.geom.block), (128, 8));
    assert_eq!((rows.kept.len(), rows.words), (2, 16), "{rows:?}");
    let kinds: Vec<String> = rows
        .kept
        .iter()
        .map(|&n| format!("{:?}", c.plan.kernel.exprs[n].kind))
        .collect();
    assert!(kinds.iter().any(|k| k.starts_with("Load")), "{kinds:?}");
    assert!(
        c.explain().contains("rows: 2 value(s) kept in registers"),
        "{}",
        c.explain()
    );
    assert!(at(0).plan.rows.is_none());
}
