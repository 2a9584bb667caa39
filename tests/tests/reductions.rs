//! Known answers for reductions and `for` loops through the public API:
//! each kernel runs on the interpreter, the CPU backend and the GPU
//! (lavapipe here, skipped with a message where there is none), bit for
//! bit, and the interpreter's result is compared with a model written here
//! in plain Rust from the specification in `compiler/core/src/ir/reduce.rs`
//! (not with the compiler's own tree code).

use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::Scalar;
use phobos_tests::{program, tensor};

/// The pairwise tree of the spec, level by level: adjacent pairs added,
/// an odd last item carried up.
fn model_sum(xs: &[f32]) -> f32 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut level: Vec<f32> = xs.to_vec();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|c| if c.len() == 2 { c[0] + c[1] } else { c[0] })
            .collect();
    }
    level[0]
}

/// `max` of the spec: NaN if any, else the first of the largest.
fn model_max(xs: &[f32]) -> f32 {
    if xs.iter().any(|x| x.is_nan()) {
        return f32::NAN;
    }
    xs.iter()
        .copied()
        .fold(None, |best: Option<f32>, x| match best {
            Some(b) if x > b => Some(x),
            Some(b) => Some(b),
            None => Some(x),
        })
        .unwrap_or(f32::NEG_INFINITY)
}

fn model_min(xs: &[f32]) -> f32 {
    if xs.iter().any(|x| x.is_nan()) {
        return f32::NAN;
    }
    xs.iter()
        .copied()
        .fold(None, |best: Option<f32>, x| match best {
            Some(b) if x < b => Some(x),
            Some(b) => Some(b),
            None => Some(x),
        })
        .unwrap_or(f32::INFINITY)
}

fn model_argmax(xs: &[f32]) -> i32 {
    if let Some(i) = xs.iter().position(|x| x.is_nan()) {
        return i as i32;
    }
    let m = model_max(xs);
    xs.iter().position(|x| *x == m).map_or(-1, |i| i as i32)
}

/// `argmin` of the spec: the first NaN, else the first of the smallest.
fn model_argmin(xs: &[f32]) -> i32 {
    if let Some(i) = xs.iter().position(|x| x.is_nan()) {
        return i as i32;
    }
    let m = model_min(xs);
    xs.iter().position(|x| *x == m).map_or(-1, |i| i as i32)
}

const ROWS: &str = "
kernel rows(X: tensor<f32>[M, N], S: tensor<f32>[M, 1], Mx: tensor<f32>[M, 1],
            Mn: tensor<f32>[M, 1], A: tensor<i32>[M, 1], Ai: tensor<i32>[M, 1]) {
  let r = ctx.block.x * 2
  let x = X[r :+ 2, :]
  S[r :+ 2, :] = sum(x, axis = 1)
  Mx[r :+ 2, :] = max(x, axis = 1)
  Mn[r :+ 2, :] = min(x, axis = 1)
  A[r :+ 2, :] = argmax(x, axis = 1)
  Ai[r :+ 2, :] = argmin(x, axis = 1)
}
";

fn f32s(a: &Arg) -> Vec<f32> {
    match &tensor(a).data {
        Data::F32(v) => v.clone(),
        other => panic!("not f32: {other:?}"),
    }
}

fn i32s(a: &Arg) -> Vec<i32> {
    match &tensor(a).data {
        Data::I32(v) => v.clone(),
        other => panic!("not i32: {other:?}"),
    }
}

/// Runs `k` everywhere (interpreter, CPU, GPU) and returns the
/// interpreter's results.
fn run_all(k: &phobos_core::ir::Kernel, args: &mut [Arg]) {
    let inputs = args.to_vec();
    phobos_tests::run_everywhere(k, args);
    if phobos_tests::gpu_available() {
        let ran =
            phobos_tests::matches_on_gpu(k, &inputs, args).unwrap_or_else(|e| panic!("gpu: {e}"));
        assert!(ran, "the GPU refused an f32/i32 kernel");
    }
}

/// Rows of the given values, padded to a common width `n` with values
/// that do not change the answers when `n` is the row's own width.
fn rows_case(rows: &[Vec<f32>]) {
    let n = rows[0].len();
    let m = rows.len();
    assert!(rows.iter().all(|r| r.len() == n));
    let p = program("rows.ph", ROWS);
    let k = p.kernel("rows", &[]).unwrap();
    let mut args = vec![
        Arg::Tensor(Tensor {
            shape: vec![m, n],
            data: Data::F32(rows.concat()),
        }),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 1])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 1])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 1])),
        Arg::Tensor(Tensor::zeros(Scalar::I32, &[m, 1])),
        Arg::Tensor(Tensor::zeros(Scalar::I32, &[m, 1])),
    ];
    run_all(&k, &mut args);
    let ai = i32s(&args[5]);
    let (s, mx, mn, a) = (
        f32s(&args[1]),
        f32s(&args[2]),
        f32s(&args[3]),
        i32s(&args[4]),
    );
    // Stores make NaNs canonical (interp/ops.rs).
    let canon = |x: f32| {
        if x.is_nan() {
            f32::from_bits(0x7fc0_0000)
        } else {
            x
        }
    };
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(
            s[i].to_bits(),
            canon(model_sum(row)).to_bits(),
            "sum of row {i}: {row:?}"
        );
        assert_eq!(
            mx[i].to_bits(),
            canon(model_max(row)).to_bits(),
            "max of row {i}: {row:?}"
        );
        assert_eq!(
            mn[i].to_bits(),
            canon(model_min(row)).to_bits(),
            "min of row {i}: {row:?}"
        );
        assert_eq!(a[i], model_argmax(row), "argmax of row {i}: {row:?}");
        assert_eq!(ai[i], model_argmin(row), "argmin of row {i}: {row:?}");
    }
}

#[test]
fn the_sum_is_the_pairwise_tree_not_a_loop() {
    // Left to right, 1e8 + 1 - 1e8 + 1 is 1; in pairs it is
    // (1e8 + 1) + (-1e8 + 1) = 1e8 - 1e8 = 0.
    let row = vec![1e8, 1.0, -1e8, 1.0];
    assert_eq!(model_sum(&row), 0.0);
    assert_eq!(row.iter().fold(0.0f32, |a, x| a + x), 1.0);
    rows_case(&[row.clone(), row.iter().rev().copied().collect()]);
}

#[test]
fn odd_lengths_carry_the_last_item_up() {
    // Length 5: ((0 + 1) + (2 + 3)) + 4, visible through rounding.
    let row = vec![1.0, 1e8, -1e8, 3.0, 0.5];
    let five = model_sum(&row);
    assert_eq!(five, ((1.0f32 + 1e8) + (-1e8 + 3.0)) + 0.5);
    rows_case(&[row, vec![0.25, -0.5, 1e-8, 7.0, -7.0]]);
}

#[test]
fn nan_and_signed_zero_rules() {
    let nan = f32::NAN;
    rows_case(&[
        vec![1.0, nan, 3.0],
        vec![nan, 5.0, 2.0],
        vec![2.0, 5.0, nan],
        vec![-0.0, 0.0, -1.0],
        vec![0.0, -0.0, -1.0],
        vec![3.0, 7.0, 7.0],
        vec![f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY],
        vec![f32::INFINITY, 1.0, f32::INFINITY],
    ]);
}

#[test]
fn random_rows_of_many_lengths() {
    let mut x: u32 = 12345;
    let mut next = || {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        // Wide exponents, both signs: rounding differs with the order.
        let m = (x >> 9) as f32 / (1u32 << 23) as f32;
        let e = ((x >> 3) % 40) as i32 - 20;
        if x & 1 == 0 {
            m * 2f32.powi(e)
        } else {
            -m * 2f32.powi(e)
        }
    };
    for n in [1usize, 2, 3, 7, 8, 9, 31, 100, 257] {
        let rows: Vec<Vec<f32>> = (0..6).map(|_| (0..n).map(|_| next()).collect()).collect();
        rows_case(&rows);
    }
}

#[test]
fn an_empty_axis_gives_the_stated_values() {
    let p = program("rows.ph", ROWS);
    let k = p.kernel("rows", &[]).unwrap();
    let mut args = vec![
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[3, 0])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[3, 1])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[3, 1])),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[3, 1])),
        Arg::Tensor(Tensor::zeros(Scalar::I32, &[3, 1])),
        Arg::Tensor(Tensor::zeros(Scalar::I32, &[3, 1])),
    ];
    run_all(&k, &mut args);
    assert_eq!(f32s(&args[1]), vec![0.0; 3]);
    assert_eq!(f32s(&args[2]), vec![f32::NEG_INFINITY; 3]);
    assert_eq!(f32s(&args[3]), vec![f32::INFINITY; 3]);
    assert_eq!(i32s(&args[4]), vec![-1; 3]);
    assert_eq!(i32s(&args[5]), vec![-1; 3]);
}

const LOOPS: &str = "
@grid(1)
kernel loops(X: tensor<i32>[N], T: tensor<i32>[4]) {
  var a: i32 = 0
  for i in 0 .. N {
    a = a * 3 + X[i]
  }
  T[0] = a
  var b: i32 = 0
  for i in 5 .. 2 {
    b = b + 1
  }
  T[1] = b
  var c: i32 = 0
  for i in -3 .. N / 2 {
    for j in i .. i + 2 {
      c = c + j
    }
  }
  T[2] = c
  var d: tile<i32>[4] = 0
  for i in 0 .. 4 {
    d[i :+ 1] = d[i :+ 1] + i * 10
  }
  T[3 :+ 1] = sum(d, axis = 0)
}
";

#[test]
fn loops_run_in_order_with_their_bounds() {
    let p = program("loops.ph", LOOPS);
    let k = p.kernel("loops", &[]).unwrap();
    for n in [0usize, 1, 5, 12] {
        let xs: Vec<i32> = (0..n as i32).map(|i| i * 7 - 3).collect();
        let mut args = vec![
            Arg::Tensor(Tensor {
                shape: vec![n],
                data: Data::I32(xs.clone()),
            }),
            Arg::Tensor(Tensor::zeros(Scalar::I32, &[4])),
        ];
        run_all(&k, &mut args);
        let a = xs
            .iter()
            .fold(0i32, |a, x| a.wrapping_mul(3).wrapping_add(*x));
        let c: i32 = (-3..(n as i32) / 2).map(|i| i + (i + 1)).sum();
        assert_eq!(i32s(&args[1]), vec![a, 0, c, 60], "N = {n}");
    }
}

/// Reductions bound by `let` over a constant width, which the GPU computes
/// by the whole workgroup (`phobos-gpu/src/lower/coop_reduce.rs`: blocks of
/// 2^m elements an invocation, then levels across invocations through
/// subgroup shuffles and workgroup memory), and reductions inside a larger
/// statement: the same model. Lengths 1 (no tree), odd, not powers of two,
/// and long enough that an invocation's block is a loop (1000, 2048);
/// rows whose leaves are all present, so that a lane's 2, 4 or 8 segments
/// take one transposing butterfly (512, 1024, 2048 over 64 invocations a
/// row, `coop_warp.rs`); ties, NaNs, infinities and signed zeros.
#[test]
fn workgroup_trees_give_the_same_bits() {
    let mut x: u32 = 777;
    let mut next = move || {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let m = (x >> 9) as f32 / (1u32 << 23) as f32;
        let e = ((x >> 3) % 30) as i32 - 15;
        if x & 1 == 0 {
            m * 2f32.powi(e)
        } else {
            -m * 2f32.powi(e)
        }
    };
    for n in [1usize, 2, 3, 5, 37, 64, 256, 257, 512, 1000, 1024, 2048] {
        // Ties and NaNs for argmax and argmin: a repeated largest and a
        // repeated smallest value in row 1, two NaNs in row 2.
        let tie = next().abs() * 1e6;
        let src = format!(
            "@autotune(R in [4])
kernel trees(X: tensor<f32>[M, {n}], S: tensor<f32>[M, 1], Mx: tensor<f32>[M, 1], Mn: tensor<f32>[M, 1], D: tensor<f32>[M, {n}], A: tensor<i32>[M, 1], Ai: tensor<i32>[M, 1]) {{
  let r = ctx.block.x * R
  let s = sum(X[r :+ R, :], axis = 1)
  let mx = max(X[r :+ R, :], axis = 1)
  let mn = min(X[r :+ R, :], axis = 1)
  S[r :+ R, :] = s
  Mx[r :+ R, :] = mx
  Mn[r :+ R, :] = mn
  D[r :+ R, :] = X[r :+ R, :] - sum(X[r :+ R, :], axis = 1)
  let a = argmax(X[r :+ R, :], axis = 1)
  A[r :+ R, :] = a
  let ai = argmin(X[r :+ R, :], axis = 1)
  Ai[r :+ R, :] = ai
}}"
        );
        let p = program("trees.ph", &src);
        let k = p.kernel("trees", &[]).unwrap();
        let m = 7;
        let mut xs: Vec<f32> = (0..m * n).map(|_| next()).collect();
        for c in (0..n).step_by(3) {
            xs[n + c] = tie;
            if c + 1 < n {
                xs[n + c + 1] = -tie;
            }
        }
        if n > 4 {
            xs[2 * n + n / 2] = f32::NAN;
            xs[3 * n - 1] = f32::NAN;
            // Row 3: signed zeros only, so that max and min pick between
            // -0.0 and 0.0 by position; row 4: both infinities.
            for c in 0..n {
                xs[3 * n + c] = if c % 3 == 1 { -0.0 } else { 0.0 };
            }
            xs[4 * n + 1] = f32::INFINITY;
            xs[4 * n + n - 2] = f32::NEG_INFINITY;
            xs[4 * n + n - 1] = f32::INFINITY;
        }
        let mut args = vec![
            Arg::Tensor(Tensor {
                shape: vec![m, n],
                data: Data::F32(xs.clone()),
            }),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 1])),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 1])),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 1])),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
            Arg::Tensor(Tensor::zeros(Scalar::I32, &[m, 1])),
            Arg::Tensor(Tensor::zeros(Scalar::I32, &[m, 1])),
        ];
        run_all(&k, &mut args);
        let a = i32s(&args[5]);
        let ai = i32s(&args[6]);
        let (s, mx, mn, d) = (
            f32s(&args[1]),
            f32s(&args[2]),
            f32s(&args[3]),
            f32s(&args[4]),
        );
        // Stores make NaNs canonical (interp/ops.rs).
        let canon = |x: f32| if x.is_nan() { 0x7fc0_0000 } else { x.to_bits() };
        for r in 0..m {
            let row = &xs[r * n..(r + 1) * n];
            let sum = model_sum(row);
            assert_eq!(s[r].to_bits(), canon(sum), "sum of row {r} of {n}");
            assert_eq!(
                mx[r].to_bits(),
                canon(model_max(row)),
                "max of row {r} of {n}"
            );
            assert_eq!(
                mn[r].to_bits(),
                canon(model_min(row)),
                "min of row {r} of {n}"
            );
            assert_eq!(a[r], model_argmax(row), "argmax of row {r} of {n}");
            assert_eq!(ai[r], model_argmin(row), "argmin of row {r} of {n}");
            for c in 0..n {
                assert_eq!(
                    d[r * n + c].to_bits(),
                    canon(row[c] - sum),
                    "D ({r}, {c}) of {n}"
                );
            }
        }
    }
}
