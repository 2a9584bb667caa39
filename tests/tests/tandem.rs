//! Tandem draws inside kernels (`std/tandem.ph`): draw `i` equals element
//! `i` of the reference fill of `Tandem::new(Key::from_seed(key))`, on the
//! interpreter, the CPU backend and the GPU, and a fused
//! `Y = X + s * tandem_normal(key, i)` equals the fill plus the add, bit for
//! bit.

use phobos_core::Program;
use phobos_core::ir::Kernel;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_tandem::{Key, Tandem};
use phobos_tests::{gpu_available, matches_on_gpu, run_everywhere};

fn kernel(src: &str, name: &str) -> Kernel {
    let (program, diags) = Program::parse("t.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    program.kernel(name, &[]).expect("checks")
}

/// Every distribution at counters `base + flat index`, with three bounds
/// (one that rejects half its draws, so retries run).
const DRAWS: &str = "
@autotune(R in [4])
kernel draws(W: tensor<u32>[M, 256], F: tensor<f32>[M, 256], N: tensor<f32>[M, 256],
             E: tensor<f32>[M, 256], T: tensor<u32>[M, 256], B6: tensor<u32>[M, 256],
             BH: tensor<u32>[M, 256], BK: tensor<u32>[M, 256], key: u32, base: u32) {
  let r = ctx.block.x * R
  W[r :+ R, :] = tandem_u32(key, base + u32((r + iota(0)) * 256 + iota(1)))
  F[r :+ R, :] = tandem_uniform(key, base + u32((r + iota(0)) * 256 + iota(1)))
  N[r :+ R, :] = tandem_normal(key, base + u32((r + iota(0)) * 256 + iota(1)))
  E[r :+ R, :] = tandem_exponential(key, base + u32((r + iota(0)) * 256 + iota(1)))
  T[r :+ R, :] = u32(tandem_bool(key, base + u32((r + iota(0)) * 256 + iota(1))))
  B6[r :+ R, :] = tandem_below(key, base + u32((r + iota(0)) * 256 + iota(1)), 6)
  BH[r :+ R, :] = tandem_below(key, base + u32((r + iota(0)) * 256 + iota(1)), 2147483649)
  BK[r :+ R, :] = tandem_below(key, base + u32((r + iota(0)) * 256 + iota(1)), 1000)
}
";

const OUTPUTS: usize = 8;

fn draws_args(rows: usize, key: u32, base: u32) -> Vec<Arg> {
    let f = |s| Arg::Tensor(Tensor::zeros(s, &[rows, 256]));
    vec![
        f(Scalar::U32),
        f(Scalar::F32),
        f(Scalar::F32),
        f(Scalar::F32),
        f(Scalar::U32),
        f(Scalar::U32),
        f(Scalar::U32),
        f(Scalar::U32),
        Arg::Scalar(Value::U32(key)),
        Arg::Scalar(Value::U32(base)),
    ]
}

/// The reference fills of the same elements, as the kernel's outputs.
fn reference(rows: usize, key: u32, base: u32) -> Vec<Tensor> {
    let t = Tandem::new(Key::from_seed(u64::from(key)));
    let n = rows * 256;
    let start = u64::from(base);
    let mut u = vec![0u32; n];
    t.fill_u32(&mut u, start).unwrap();
    let mut f = vec![0f32; n];
    t.fill_f32(&mut f, start).unwrap();
    let mut z = vec![0f32; n];
    t.fill_normal_f32(&mut z, start).unwrap();
    let mut e = vec![0f32; n];
    t.fill_exponential_f32(&mut e, start).unwrap();
    let mut b = vec![false; n];
    t.fill_bool(&mut b, start).unwrap();
    let below = |bound: u32| {
        let mut v = vec![0u32; n];
        t.fill_below_u32(&mut v, start, bound).unwrap();
        v
    };
    let shape = vec![rows, 256];
    let mk = |data| Tensor {
        shape: shape.clone(),
        data,
    };
    vec![
        mk(Data::U32(u)),
        mk(Data::F32(f)),
        mk(Data::F32(z)),
        mk(Data::F32(e)),
        mk(Data::U32(b.iter().map(|&x| u32::from(x)).collect())),
        mk(Data::U32(below(6))),
        mk(Data::U32(below(2_147_483_649))),
        mk(Data::U32(below(1000))),
    ]
}

fn assert_reference(args: &[Arg], want: &[Tensor], what: &str) {
    for (o, w) in want.iter().enumerate().take(OUTPUTS) {
        let Arg::Tensor(got) = &args[o] else {
            panic!("output {o} is a tensor")
        };
        if let Some(j) = (0..w.len()).find(|&j| got.get(j).bits() != w.get(j).bits()) {
            panic!(
                "{what}: output {o} element {j}: kernel {} but reference {}",
                got.get(j),
                w.get(j)
            );
        }
    }
}

#[test]
fn draws_equal_the_reference_fills_on_interp_and_cpu() {
    let k = kernel(DRAWS, "draws");
    for (rows, key, base) in [(9, 32, 0), (3, 7, 4_294_966_000), (2, 0, 1_000_003)] {
        let mut args = draws_args(rows, key, base);
        run_everywhere(&k, &mut args);
        assert_reference(&args, &reference(rows, key, base), "interp");
    }
}

#[test]
fn draws_equal_the_reference_fills_on_the_gpu() {
    if !gpu_available() {
        return;
    }
    let k = kernel(DRAWS, "draws");
    // The stores are stepped (one invocation per chunk): 0 and 4_294_966_000
    // take the aligned loop (the second wraps past 2^32), 1 and 1023 the
    // general one (misaligned: lanes read across blocks, some by the direct
    // path), 987 starts in the last step of a chunk.
    for (rows, key, base) in [
        (9, 32, 0),
        (3, 7, 4_294_966_000),
        (5, 1, 1),
        (2, 9, 1023),
        (3, 4, 987),
    ] {
        let inputs = draws_args(rows, key, base);
        let mut want = inputs.clone();
        phobos_core::interp::run(&k, &mut want).unwrap();
        assert_reference(&want, &reference(rows, key, base), "interp");
        assert!(matches_on_gpu(&k, &inputs, &want).unwrap());
    }
}

/// The fused kernel of the issue: noise added to a tensor.
const NOISE: &str = "
@autotune(R in [4])
kernel noise(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], s: f32, key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + s * tandem_normal(key, (r + iota(0)) * 256 + iota(1))
}
";

fn noise_args(rows: usize, s: f32) -> Vec<Arg> {
    let x = Tensor::from_fn(Scalar::F32, &[rows, 256], |i| {
        Value::F32(1.0 + (i as f32) * 0.001)
    });
    vec![
        Arg::Tensor(x),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[rows, 256])),
        Arg::Scalar(Value::F32(s)),
        Arg::Scalar(Value::U32(32)),
    ]
}

/// `X + s * fill_normal_f32` of `Key::from_seed(32)`, element by element.
fn noise_reference(args: &[Arg], s: f32) -> Tensor {
    let Arg::Tensor(x) = &args[0] else {
        panic!("X is a tensor")
    };
    let mut z = vec![0f32; x.len()];
    Tandem::new(Key::from_seed(32))
        .fill_normal_f32(&mut z, 0)
        .unwrap();
    Tensor::from_fn(Scalar::F32, &x.shape, |i| {
        let Value::F32(xi) = x.get(i) else {
            unreachable!()
        };
        Value::F32(xi + s * z[i])
    })
}

#[test]
fn fused_noise_equals_the_fill_plus_the_add_on_interp_cpu_and_gpu() {
    let k = kernel(NOISE, "noise");
    // 37 rows: the last block is partial.
    let inputs = noise_args(37, 0.25);
    let want = noise_reference(&inputs, 0.25);
    let mut args = inputs.clone();
    run_everywhere(&k, &mut args);
    let Arg::Tensor(y) = &args[1] else {
        panic!("Y is a tensor")
    };
    assert!(
        y.bits_eq(&want),
        "interp and cpu equal the fill plus the add"
    );
    if gpu_available() {
        assert!(matches_on_gpu(&k, &inputs, &args).unwrap());
    }
}

#[test]
fn counters_that_jump_take_the_direct_path_with_the_same_bits() {
    // Column-major counters move by M per element along the last axis, so
    // the CPU backend seeds every element's chunk instead of stepping a group.
    let src = "
kernel cols(Y: tensor<u32>[M, 64], key: u32) {
  Y[:, :] = tandem_u32(key, iota(1) * M + iota(0))
}
";
    let k = kernel(src, "cols");
    let mut args = vec![
        Arg::Tensor(Tensor::zeros(Scalar::U32, &[50, 64])),
        Arg::Scalar(Value::U32(5)),
    ];
    run_everywhere(&k, &mut args);
    let t = Tandem::new(Key::from_seed(5));
    let Arg::Tensor(y) = &args[0] else {
        panic!("Y is a tensor")
    };
    for (flat, got) in (0..y.len()).map(|f| (f, y.get(f))) {
        let (row, col) = (flat / 64, flat % 64);
        assert_eq!(
            got,
            Value::U32(t.word((col * 50 + row) as u64)),
            "element {flat}"
        );
    }
}

/// Contiguous counters on the GPU's staged path (`lower/tandem_draw/staged.rs`):
/// a 1-D tile of odd symbolic length several windows long, with two keys in
/// one statement (so two buffers and smaller windows), starting just before a
/// group boundary, at the last step of a chunk, at odd counters, and wrapping
/// past 2^32 inside the tile; then a 2-D tile of odd extents through a
/// workgroup `var` tile and a partial last block.
const STEPPED: &str = "
kernel line(W: tensor<u32>[N], Z: tensor<f32>[N], T: tensor<u32>[N], B: tensor<u32>[N], key: u32, base: u32) {
  W[:] = tandem_u32(key, base + u32(iota(0)))
  Z[:] = tandem_normal(key, base + u32(iota(0)))
  T[:] = u32(tandem_bool(key, base + u32(iota(0))))
  B[:] = tandem_below(key + 1, base + u32(iota(0)), 1000) ^ tandem_u32(key, base + u32(iota(0)) + 7)
}
@autotune(R in [3])
kernel rows(Z: tensor<f32>[M, 37], E: tensor<f32>[M, 37], key: u32, base: u32) {
  let r = ctx.block.x * R
  Z[r :+ R, :] = tandem_normal(key, base + u32((r + iota(0)) * 37 + iota(1)))
  var u: tile<f32>[R, 37] = tandem_uniform(key, base + u32((r + iota(0)) * 37 + iota(1)))
  E[r :+ R, :] = u + tandem_exponential(key, base + u32((r + iota(0)) * 37 + iota(1)))
}
";

/// One element of a fill of `Key::from_seed(key)` at counter `i`.
fn one<T: Copy + Default>(
    key: u32,
    i: u32,
    fill: impl Fn(&Tandem, &mut [T], u64) -> Result<(), phobos_tandem::Error>,
) -> T {
    let mut v = [T::default()];
    fill(
        &Tandem::new(Key::from_seed(u64::from(key))),
        &mut v,
        u64::from(i),
    )
    .unwrap();
    v[0]
}

fn out(args: &[Arg], o: usize) -> &Tensor {
    match &args[o] {
        Arg::Tensor(t) => t,
        Arg::Scalar(_) => panic!("output {o} is a tensor"),
    }
}

#[test]
fn stepped_draws_cross_chunks_groups_windows_and_2_to_the_32() {
    let (program, diags) = Program::parse("t.ph", STEPPED);
    assert!(diags.is_empty(), "{diags:?}");
    let line = program.kernel("line", &[]).expect("checks");
    let n = 5001;
    // 1021: three words before a group (1024 words); 987: block 246, the
    // last step (j = 31) of its chunk; 2^32 - 2600: wraps in the second window.
    for base in [0u32, 3, 1021, 987, 4_294_964_696] {
        let key = 11;
        let inputs = vec![
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[n])),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[n])),
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[n])),
            Arg::Scalar(Value::U32(key)),
            Arg::Scalar(Value::U32(base)),
        ];
        let mut args = inputs.clone();
        run_everywhere(&line, &mut args);
        for e in 0..n {
            let i = base.wrapping_add(e as u32);
            let t = Tandem::new(Key::from_seed(u64::from(key)));
            let want = [
                Value::U32(t.word(u64::from(i))),
                Value::F32(one(key, i, Tandem::fill_normal_f32)),
                Value::U32(u32::from(one(key, i, Tandem::fill_bool))),
                Value::U32(
                    one(key + 1, i, |t, v, s| t.fill_below_u32(v, s, 1000))
                        ^ t.word(u64::from(i.wrapping_add(7))),
                ),
            ];
            for (o, w) in want.iter().enumerate() {
                assert_eq!(
                    out(&args, o).get(e).bits(),
                    w.bits(),
                    "base {base} output {o} element {e}"
                );
            }
        }
        if gpu_available() {
            assert!(
                matches_on_gpu(&line, &inputs, &args).unwrap(),
                "base {base}"
            );
        }
    }
    let rows = program.kernel("rows", &[]).expect("checks");
    let m = 29;
    for base in [5u32, 1000] {
        let key = 3;
        let inputs = vec![
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 37])),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 37])),
            Arg::Scalar(Value::U32(key)),
            Arg::Scalar(Value::U32(base)),
        ];
        let mut args = inputs.clone();
        run_everywhere(&rows, &mut args);
        for e in 0..m * 37 {
            let i = base + e as u32;
            let z: f32 = one(key, i, Tandem::fill_normal_f32);
            let u: f32 = one(key, i, Tandem::fill_f32);
            let x: f32 = one(key, i, Tandem::fill_exponential_f32);
            assert_eq!(
                out(&args, 0).get(e).bits(),
                Value::F32(z).bits(),
                "base {base} Z {e}"
            );
            assert_eq!(
                out(&args, 1).get(e).bits(),
                Value::F32(u + x).bits(),
                "base {base} E {e}"
            );
        }
        if gpu_available() {
            assert!(
                matches_on_gpu(&rows, &inputs, &args).unwrap(),
                "base {base}"
            );
        }
    }
}

/// Counters of a block of a larger matrix (`(r + iota(0)) * 96 + c +
/// iota(1)`): each row of the block's tile runs along its counters, the
/// rows 96 apart, so the GPU stages each row's words in a window of its own
/// (`lower/tandem_draw/rows.rs`). Blocks of 32 x 48, a ragged last row of
/// blocks, a `var` tile, two keys (two buffers), windows of fewer rows than
/// the tile where workgroup memory is short, and counters that cross a
/// group of chunks inside a row and wrap past 2^32 give the reference's
/// words everywhere. (A device's runtime stages them; a module for WebGPU,
/// `heavy_groups` off, draws them directly, which SwiftShader creates
/// faster.)
const BLOCKS: &str = "
@autotune(R in [32], C in [48])
@grid(cdiv(M, R), 2)
kernel blocks(Y: tensor<u32>[M, 96], Z: tensor<f32>[M, 96], key: u32, base: u32) {
  let r = ctx.block.x * R
  let c = ctx.block.y * C
  Y[r :+ R, c :+ C] = tandem_u32(key, base + u32((r + iota(0)) * 96 + c + iota(1))) ^ tandem_u32(key + 1, base + u32((r + iota(0)) * 96 + c + iota(1)))
  var u: tile<f32>[R, C] = tandem_uniform(key, base + u32((r + iota(0)) * 96 + c + iota(1)))
  Z[r :+ R, c :+ C] = u * 2.0
}
";

#[test]
fn counters_along_the_rows_of_a_block_stage_by_rows() {
    let k = kernel(BLOCKS, "blocks");
    for memory in [48 * 1024, 16 * 1024] {
        let compiled = phobos_gpu::compile(
            &k,
            &phobos_gpu::GpuOptions {
                workgroup_size: 256,
                workgroup_memory: memory,
                heavy_groups: true,
                ..Default::default()
            },
        )
        .expect("it lowers");
        assert!(
            compiled.notes.iter().any(|n| n.contains("staged by rows")),
            "{:?}",
            compiled.notes
        );
    }
    let m = 37;
    // 1000: rows cross groups of 1024 words; 2^32 - 1500: wraps.
    for base in [0u32, 1000, 4_294_965_796] {
        let key = 9;
        let inputs = vec![
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[m, 96])),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 96])),
            Arg::Scalar(Value::U32(key)),
            Arg::Scalar(Value::U32(base)),
        ];
        let mut args = inputs.clone();
        run_everywhere(&k, &mut args);
        let (t, t1) = (
            Tandem::new(Key::from_seed(u64::from(key))),
            Tandem::new(Key::from_seed(u64::from(key + 1))),
        );
        for e in 0..m * 96 {
            let i = u64::from(base.wrapping_add(e as u32));
            assert_eq!(
                out(&args, 0).get(e),
                Value::U32(t.word(i) ^ t1.word(i)),
                "base {base} Y {e}"
            );
            let u: f32 = one(key, i as u32, Tandem::fill_f32);
            assert_eq!(
                out(&args, 1).get(e).bits(),
                Value::F32(u * 2.0).bits(),
                "base {base} Z {e}"
            );
        }
        if gpu_available() {
            assert!(matches_on_gpu(&k, &inputs, &args).unwrap(), "base {base}");
        }
    }
}

/// Counters of a transposed block (`(r + iota(1)) * 96 + c + iota(0)`, as
/// a backward pass reads its forward's mask): each column of the tile runs
/// along its counters, the columns 96 apart, so the GPU stages each
/// column's words in a window of its own, all columns at once
/// (`lower/tandem_draw/rows.rs`). Blocks of 16 x 32 in a loop over the row
/// blocks (the fills carry their chunks), a ragged last block, two keys, a
/// `var` tile and i32 counters that cross a group of chunks and wrap past
/// 2^32 give the reference's words everywhere.
const COLUMNS: &str = "
@autotune(C in [16], R in [32])
@grid(cdiv(96, C), 1)
kernel columns(Y: tensor<u32>[96, M], Z: tensor<f32>[96, M], key: u32, base: i32) {
  let c = ctx.block.x * C
  for ib in 0 .. (M + R - 1) / R {
    let r = ib * R
    Y[c :+ C, r :+ R] = tandem_u32(key, base + (r + iota(1)) * 96 + c + iota(0)) ^ tandem_u32(key + 1, base + (r + iota(1)) * 96 + c + iota(0))
    var u: tile<f32>[C, R] = tandem_uniform(key, base + (r + iota(1)) * 96 + c + iota(0))
    Z[c :+ C, r :+ R] = u * 2.0
  }
}
";

#[test]
fn counters_down_the_columns_of_a_block_stage_by_columns() {
    let k = kernel(COLUMNS, "columns");
    for invocations in [128, 256] {
        let compiled = phobos_gpu::compile(
            &phobos_gpu::specialize(&k, &[37]),
            &phobos_gpu::GpuOptions {
                workgroup_size: invocations,
                workgroup_memory: 48 * 1024,
                heavy_groups: true,
                ..Default::default()
            },
        )
        .expect("it lowers");
        let staged = compiled
            .notes
            .iter()
            .filter(|n| n.contains("staged by columns"))
            .count();
        assert_eq!(staged, 2, "{invocations}: {:?}", compiled.notes);
        // The loop walks the rows, 32 * 96 words an iteration: no fill
        // resumes a chunk, so none carries one.
        let explain = phobos_gpu::plan::explain(&compiled);
        assert_eq!(explain.matches("carry no chunk").count(), 2, "{explain}");
        assert!(!compiled.wgsl().contains("carried_t"));
    }
    let m = 37;
    // 1000: columns cross groups of 1024 words; 2^32 - 1500: wraps.
    for base in [0u32, 1000, 4_294_965_796] {
        let key = 11;
        let inputs = vec![
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[96, m])),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[96, m])),
            Arg::Scalar(Value::U32(key)),
            Arg::Scalar(Value::I32(base as i32)),
        ];
        let mut args = inputs.clone();
        run_everywhere(&k, &mut args);
        let (t, t1) = (
            Tandem::new(Key::from_seed(u64::from(key))),
            Tandem::new(Key::from_seed(u64::from(key + 1))),
        );
        for a in 0..96 {
            for b in 0..m {
                let (e, i) = (a * m + b, base.wrapping_add((b * 96 + a) as u32));
                let want = t.word(u64::from(i)) ^ t1.word(u64::from(i));
                assert_eq!(
                    out(&args, 0).get(e),
                    Value::U32(want),
                    "base {base} Y {a} {b}"
                );
                let u: f32 = one(key, i, Tandem::fill_f32);
                assert_eq!(
                    out(&args, 1).get(e).bits(),
                    Value::F32(u * 2.0).bits(),
                    "base {base} Z {a} {b}"
                );
            }
        }
        if gpu_available() {
            assert!(matches_on_gpu(&k, &inputs, &args).unwrap(), "base {base}");
        }
    }
}

/// Staged draws in loops (`lower/tandem_draw/carried.rs`), by rows
/// (`walks`) and in windows of contiguous counters (`chunks`): each task
/// keeps its chunk's state from one iteration to the next where the
/// counters walk forward (`Y`), seeds afresh where they walk backward
/// (`Z`) or the key changes between iterations (`W`).
const WALKS: &str = "
@autotune(R in [16])
@grid(cdiv(M, R), 1)
kernel walks(Y: tensor<u32>[M, 256], Z: tensor<u32>[M, 256], W: tensor<u32>[M, 256], key: u32,
             base: u32) {
  let r = ctx.block.x * R
  for jb in 0 .. 8 {
    let j = jb * 32
    Y[r :+ R, j :+ 32] = tandem_u32(key, base + u32((r + iota(0)) * 256 + j + iota(1)))
  }
  for jb in 0 .. 8 {
    let j = (7 - jb) * 32
    Z[r :+ R, j :+ 32] = tandem_u32(key, base + u32((r + iota(0)) * 256 + j + iota(1)))
  }
  for jb in 0 .. 8 {
    let j = jb * 32
    W[r :+ R, j :+ 32] = tandem_u32(key + u32(jb & 1), base + u32((r + iota(0)) * 256 + j + iota(1)))
  }
}

@grid(M)
kernel chunks(Y: tensor<u32>[M, 4, C], Z: tensor<u32>[M, 4, C], key: u32, base: u32) {
  let r = ctx.block.x
  for jb in 0 .. 4 {
    Y[r, jb, :] = tandem_u32(key, base + u32((r * 4 + jb) * C + iota(0)))
  }
  for jb in 0 .. 4 {
    Z[r, 3 - jb, :] = tandem_u32(key, base + u32((r * 4 + 3 - jb) * C + iota(0)))
  }
}
";

#[test]
fn row_staged_draws_in_loops_carry_their_chunks_and_keep_the_bits() {
    let k = kernel(WALKS, "walks");
    // 4 draws an invocation, and 2: in a loop, 2 are enough to stage.
    for invocations in [128, 256] {
        let compiled = phobos_gpu::compile(
            &k,
            &phobos_gpu::GpuOptions {
                workgroup_size: invocations,
                heavy_groups: true,
                ..Default::default()
            },
        )
        .expect("it lowers");
        let by_rows = compiled
            .notes
            .iter()
            .filter(|n| n.contains("staged by rows"))
            .count();
        assert_eq!(by_rows, 3, "{invocations}: {:?}", compiled.notes);
        assert!(compiled.wgsl().contains("carried_t"), "no carried state");
    }
    let m = 37;
    // 1001: rows start inside a block; 2^32 - 3000: the counters wrap.
    for base in [0u32, 1001, 4_294_964_296] {
        let key = 5;
        let inputs = vec![
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[m, 256])),
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[m, 256])),
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[m, 256])),
            Arg::Scalar(Value::U32(key)),
            Arg::Scalar(Value::U32(base)),
        ];
        let mut args = inputs.clone();
        run_everywhere(&k, &mut args);
        let streams = [0, 1].map(|d| Tandem::new(Key::from_seed(u64::from(key + d))));
        for e in 0..m * 256 {
            let i = u64::from(base.wrapping_add(e as u32));
            let want = Value::U32(streams[0].word(i));
            assert_eq!(out(&args, 0).get(e), want, "base {base} Y {e}");
            assert_eq!(out(&args, 1).get(e), want, "base {base} Z {e}");
            let odd = (e % 256 / 32) % 2;
            let want = Value::U32(streams[odd].word(i));
            assert_eq!(out(&args, 2).get(e), want, "base {base} W {e}");
        }
        if gpu_available() {
            assert!(matches_on_gpu(&k, &inputs, &args).unwrap(), "base {base}");
        }
    }
    // Windows of contiguous counters (`staged.rs`) carry their chunks too.
    let k = kernel(WALKS, "chunks");
    let compiled =
        phobos_gpu::compile(&k, &phobos_gpu::GpuOptions::for_kernel(&k)).expect("it lowers");
    assert!(compiled.wgsl().contains("carried_t"), "no carried state");
    // C = 100: chunks start inside blocks; 3000: two windows a chunk.
    for (base, c) in [(0u32, 256), (1001, 100), (4_294_964_296, 3000)] {
        let (m, key) = (3, 6);
        let inputs = vec![
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[m, 4, c])),
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[m, 4, c])),
            Arg::Scalar(Value::U32(key)),
            Arg::Scalar(Value::U32(base)),
        ];
        let mut args = inputs.clone();
        run_everywhere(&k, &mut args);
        let stream = Tandem::new(Key::from_seed(u64::from(key)));
        for e in 0..m * 4 * c {
            let want = Value::U32(stream.word(u64::from(base.wrapping_add(e as u32))));
            assert_eq!(out(&args, 0).get(e), want, "base {base} chunks Y {e}");
            assert_eq!(out(&args, 1).get(e), want, "base {base} chunks Z {e}");
        }
        if gpu_available() {
            assert!(matches_on_gpu(&k, &inputs, &args).unwrap(), "base {base}");
        }
    }
}

/// The 64-bit draws: `tandem_u64` and `tandem_uniform_f64` equal
/// `fill_u64` and `fill_f64` on the interpreter and the CPU backend; the
/// GPU, which has no 64-bit integers, refuses the kernel with an error
/// naming the type rather than running it.
#[test]
fn draws_of_64_bits_equal_the_reference_on_interp_and_cpu() {
    let k = kernel(
        "
@autotune(R in [4])
kernel d64(U: tensor<u64>[M, 64], F: tensor<f64>[M, 64], E: tensor<f64>[M, 64], key: u32,
           base: u32) {
  let r = ctx.block.x * R
  U[r :+ R, :] = tandem_u64(key, base + u32((r + iota(0)) * 64 + iota(1)))
  F[r :+ R, :] = tandem_uniform_f64(key, base + u32((r + iota(0)) * 64 + iota(1)))
  E[r :+ R, :] = tandem_exponential_f64(key, base + u32((r + iota(0)) * 64 + iota(1)))
}
",
        "d64",
    );
    for (key, base) in [(42u32, 0u32), (7, 1_000_003), (9, (1 << 31) - 512)] {
        let rows = 8;
        let n = rows * 64;
        let mut args = vec![
            Arg::Tensor(Tensor::zeros(Scalar::U64, &[rows, 64])),
            Arg::Tensor(Tensor::zeros(Scalar::F64, &[rows, 64])),
            Arg::Tensor(Tensor::zeros(Scalar::F64, &[rows, 64])),
            Arg::Scalar(Value::U32(key)),
            Arg::Scalar(Value::U32(base)),
        ];
        let inputs = args.clone();
        run_everywhere(&k, &mut args);
        let t = Tandem::new(Key::from_seed(u64::from(key)));
        let mut u = vec![0u64; n];
        t.fill_u64(&mut u, u64::from(base)).unwrap();
        let mut f = vec![0f64; n];
        t.fill_f64(&mut f, u64::from(base)).unwrap();
        let mut e = vec![0f64; n];
        t.fill_exponential_f64(&mut e, u64::from(base)).unwrap();
        let shape = vec![rows, 64];
        let mk = |data| Tensor {
            shape: shape.clone(),
            data,
        };
        let want = [mk(Data::U64(u)), mk(Data::F64(f)), mk(Data::F64(e))];
        assert_reference(&args, &want, &format!("key {key} base {base}"));
        if gpu_available() {
            let ran = matches_on_gpu(&k, &inputs, &args).unwrap();
            assert!(
                !ran,
                "the GPU has no 64-bit integers, so it must refuse d64"
            );
        }
    }
}

/// `std/tandem.ph`'s `neg_ln_u64` equals the reference's on the edges of
/// its reduction: both sides of sqrt(2)'s mantissa, numerators shorter and
/// longer than 53 bits, powers of two, and the ends of the range.
#[test]
fn neg_ln_u64_in_phobos_equals_the_reference() {
    let k = kernel(
        "
kernel nl(X: tensor<u64>[N], E: tensor<f64>[N]) {
  E[:] = _tandem_neg_ln64(X[:])
}
",
        "nl",
    );
    let mut xs: Vec<u64> = vec![0, 1, 2, 3, u64::MAX, u64::MAX - 1, u64::MAX - 2];
    for e in 1..64 {
        let p = 1u64 << e;
        xs.extend([p - 2, p - 1, p, p + 1]);
        // Just below and above sqrt(2) 2^e (the branch on the mantissa).
        let s = (std::f64::consts::SQRT_2 * p as f64) as u64;
        xs.extend([s.wrapping_sub(3), s.wrapping_sub(1), s, s + 1, s + 3]);
    }
    let mut z = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..2000 {
        z = z.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        xs.extend([z, z >> (z % 61), !(z >> (z % 59))]);
    }
    let n = xs.len();
    let mut args = vec![
        Arg::Tensor(Tensor {
            shape: vec![n],
            data: Data::U64(xs.clone()),
        }),
        Arg::Tensor(Tensor::zeros(Scalar::F64, &[n])),
    ];
    run_everywhere(&k, &mut args);
    let Arg::Tensor(got) = &args[1] else {
        unreachable!()
    };
    for (j, &x) in xs.iter().enumerate() {
        let want = phobos_tandem::math::neg_ln_u64(x);
        assert_eq!(
            got.get(j).bits(),
            Value::F64(want).bits(),
            "neg_ln_u64({x:#x}): kernel {} but reference {want}",
            got.get(j)
        );
    }
}
