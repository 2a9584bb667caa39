//! Loads issued one iteration ahead (`plan/ahead.rs`, `lower/ahead.rs`):
//! a loop's reductions over slices that move by a constant step load the
//! next iteration's elements early, and every backend still computes the
//! interpreter's bits. The walks cover chunks forward and backward, a
//! ragged last chunk, every other chunk from an offset that an outer loop
//! changes (the inner loop is entered again), and blocks of rows; a loop
//! that stores to the tensor it reads is never planned so.

use phobos_core::Program;
use phobos_core::ir::Kernel;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_gpu::{GpuOptions, Precision};
use phobos_tests::{gpu_available, matches_on_gpu, run_everywhere};

const WALKS: &str = "
@autotune(R in [2])
kernel walks(X: tensor<f32>[M, N], A: tensor<f32>[M, 1], B: tensor<f32>[M, 1], D: tensor<f32>[M, 1]) {
  let r = ctx.block.x * R
  var a: tile<f32>[R, 1] = -_inf()
  for j in 0 .. (N + 63) / 64 {
    let c = j * 64
    var t: tile<f32>[R, 64] = where(c + iota(1) < N, X[r :+ R, c :+ 64], -_inf())
    a = max(a, max(t, axis = 1))
  }
  A[r :+ R, :] = a
  var b: tile<f32>[R, 1] = 0.0
  for j in 0 .. (N + 63) / 64 {
    let c = ((N + 63) / 64 - 1 - j) * 64
    var t: tile<f32>[R, 64] = where(c + iota(1) < N, X[r :+ R, c :+ 64], 0.0)
    b = b + sum(t, axis = 1)
  }
  B[r :+ R, :] = b
  var d: tile<f32>[R, 1] = 0.0
  for i in 0 .. 2 {
    for j in 0 .. ((N + 63) / 64 + 1) / 2 {
      let c = i * 64 + j * 128
      var t: tile<f32>[R, 64] = where(c + iota(1) < N, X[r :+ R, c :+ 64], 0.0)
      d = d + sum(t, axis = 1)
    }
  }
  D[r :+ R, :] = d
}

@autotune(R in [2])
kernel down(X: tensor<f32>[L, N], Y: tensor<f32>[M, 1]) {
  let r = ctx.block.x * R
  var y: tile<f32>[R, 1] = 0.0
  for j in 0 .. 4 {
    y = y + sum(X[j * M + r :+ R, :], axis = 1)
  }
  Y[r :+ R, :] = y
}

@autotune(R in [2])
kernel in_place(X: tensor<f32>[M, N], Y: tensor<f32>[M, 1]) {
  let r = ctx.block.x * R
  var y: tile<f32>[R, 1] = 0.0
  for j in 0 .. N / 64 {
    y = y + sum(X[r :+ R, j * 64 :+ 64], axis = 1)
    X[r :+ R, j * 64 :+ 64] = X[r :+ R, j * 64 :+ 64] * 2.0
  }
  Y[r :+ R, :] = y
}
";

fn kernel(name: &str) -> Kernel {
    let (program, diags) = Program::parse("ahead.ph", WALKS);
    assert!(diags.is_empty(), "{diags:?}");
    program.kernel(name, &[]).expect("checks")
}

/// Values of both signs and several magnitudes, none repeated often.
fn input(rows: usize, cols: usize) -> Tensor {
    let mut state = 0x9e37_79b9u32;
    let values = (0..rows * cols)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0
        })
        .collect();
    Tensor {
        shape: vec![rows, cols],
        data: Data::F32(values),
    }
}

fn out(args: &[Arg], o: usize) -> &Tensor {
    match &args[o] {
        Arg::Tensor(t) => t,
        Arg::Scalar(_) => panic!("argument {o} is a tensor"),
    }
}

/// The plan of `k` at `dims` for a device like the H200's (subgroups of
/// 32 in order, 64 invocations): its `--explain` text and its WGSL.
fn planned(k: &Kernel, dims: &[u64], ahead: bool) -> (String, String) {
    let k = phobos_gpu::specialize(k, dims);
    let mut o = GpuOptions {
        precision: Precision::Fast,
        workgroup_size: 64,
        subgroup_width: 32,
        subgroup_layout_known: true,
        workgroup_memory: 48 * 1024,
        ..Default::default()
    };
    o.knobs.loads_ahead = ahead;
    let c = phobos_gpu::compile(&k, &o).expect("it lowers");
    (phobos_gpu::plan::explain(&c), c.wgsl())
}

#[test]
fn loops_of_reductions_load_their_next_chunk_ahead_and_keep_the_bits() {
    let k = kernel("walks");
    let (explain, wgsl) = planned(&k, &[6, 200], true);
    assert_eq!(
        explain.matches("load `X` one iteration ahead").count(),
        3,
        "the three innermost loops read ahead:\n{explain}"
    );
    assert!(wgsl.contains("ahead_ready"), "{wgsl}");
    let (explain, wgsl) = planned(&k, &[6, 200], false);
    assert!(!explain.contains("iteration ahead") && !wgsl.contains("ahead_ready"));

    for (m, n) in [(6, 200), (5, 256), (3, 64)] {
        let inputs = vec![
            Arg::Tensor(input(m, n)),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 1])),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 1])),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 1])),
        ];
        let mut args = inputs.clone();
        run_everywhere(&k, &mut args);
        // Not vacuous: the maximum is the row's, and the sums are sums.
        let x = out(&inputs, 0);
        for row in 0..m {
            let most = (0..n)
                .map(|c| match x.get(row * n + c) {
                    Value::F32(v) => v,
                    other => panic!("{other}"),
                })
                .fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(
                out(&args, 1).get(row),
                Value::F32(most),
                "{m}x{n} row {row}"
            );
            for o in [2, 3] {
                let Value::F32(s) = out(&args, o).get(row) else {
                    panic!("f32")
                };
                let want: f64 = (0..n)
                    .map(|c| match x.get(row * n + c) {
                        Value::F32(v) => f64::from(v),
                        _ => 0.0,
                    })
                    .sum();
                assert!(
                    (f64::from(s) - want).abs() < 1e-3,
                    "{m}x{n} row {row}: {s} {want}"
                );
            }
        }
        if gpu_available() {
            assert!(matches_on_gpu(&k, &inputs, &args).unwrap(), "{m}x{n}");
        }
    }
}

#[test]
fn blocks_of_rows_load_ahead_and_the_last_iteration_loads_nothing_past_its_loop() {
    let k = kernel("down");
    let (explain, _) = planned(&k, &[32, 128, 8], true);
    assert!(
        explain.contains("load `X` one iteration ahead"),
        "{explain}"
    );
    // L = 3M + 3: the fourth block of rows is partly outside X.
    let (m, n) = (8, 128);
    let l = 3 * m + 3;
    let inputs = vec![
        Arg::Tensor(input(l, n)),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 1])),
    ];
    let mut args = inputs.clone();
    run_everywhere(&k, &mut args);
    if gpu_available() {
        assert!(matches_on_gpu(&k, &inputs, &args).unwrap());
    }
}

#[test]
fn a_loop_that_stores_to_its_tensor_reads_it_when_each_iteration_does() {
    let k = kernel("in_place");
    let (explain, wgsl) = planned(&k, &[4, 256], true);
    assert!(!explain.contains("iteration ahead"), "{explain}");
    assert!(!wgsl.contains("ahead_ready"));
    let inputs = vec![
        Arg::Tensor(input(4, 256)),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[4, 1])),
    ];
    let mut args = inputs.clone();
    run_everywhere(&k, &mut args);
    if gpu_available() {
        assert!(matches_on_gpu(&k, &inputs, &args).unwrap());
    }
}
