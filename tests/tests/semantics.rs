//! The integer, float and cast rules of DESIGN.md, checked through the API
//! against expectations written out here, plus edge-block masking.

use phobos_core::launch::{Arg, LaunchError};
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_tests::{program, tensor};

const OPS: &str = "
kernel ops(A: tensor<i32>[N], B: tensor<i32>[N], F: tensor<f32>[N],
           Q: tensor<i32>[N], Rm: tensor<i32>[N], Sl: tensor<i32>[N], Sr: tensor<i32>[N],
           Ur: tensor<u32>[N], Fi: tensor<i32>[N], Fu: tensor<u32>[N], W: tensor<i32>[N]) {
  Q = A / B
  Rm = A % B
  Sl = A << B
  Sr = A >> B
  Ur = u32(A) >> u32(B)
  Fi = i32(F)
  Fu = u32(F)
  W = A * B + A - B
}
";

#[test]
fn integer_division_shifts_and_casts() {
    let vals = [
        0,
        1,
        -1,
        2,
        -2,
        7,
        -7,
        31,
        32,
        33,
        64,
        -33,
        i32::MAX,
        i32::MIN,
        1 << 20,
    ];
    let pairs: Vec<(i32, i32)> = vals
        .iter()
        .flat_map(|&a| vals.iter().map(move |&b| (a, b)))
        .collect();
    let floats = [
        0.0f32,
        -0.0,
        1.5,
        -1.5,
        2.9e9,
        -2.9e9,
        5e9,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-40,
        16777217.0,
    ];
    let n = pairs.len();
    let fs: Vec<f32> = (0..n).map(|i| floats[i % floats.len()]).collect();
    let p = program("ops.ph", OPS);
    let k = p.kernel("ops", &[]).unwrap();
    let col = |f: fn(&(i32, i32)) -> i32| {
        Arg::Tensor(Tensor {
            shape: vec![n],
            data: Data::I32(pairs.iter().map(f).collect()),
        })
    };
    let mut args = vec![
        col(|p| p.0),
        col(|p| p.1),
        Arg::Tensor(Tensor {
            shape: vec![n],
            data: Data::F32(fs.clone()),
        }),
    ];
    for t in [
        Scalar::I32,
        Scalar::I32,
        Scalar::I32,
        Scalar::I32,
        Scalar::U32,
        Scalar::I32,
        Scalar::U32,
        Scalar::I32,
    ] {
        args.push(Arg::Tensor(Tensor::zeros(t, &[n])));
    }
    phobos_tests::run_everywhere(&k, &mut args);
    for (i, &(a, b)) in pairs.iter().enumerate() {
        // x / 0 == x, and MIN / -1 == MIN.
        let q = if b == 0 || (a == i32::MIN && b == -1) {
            a
        } else {
            a / b
        };
        let r = if b == 0 || (a == i32::MIN && b == -1) {
            0
        } else {
            a % b
        };
        let s = (b as u32) % 32;
        assert_eq!(tensor(&args[3]).get(i), Value::I32(q), "{a} / {b}");
        assert_eq!(tensor(&args[4]).get(i), Value::I32(r), "{a} % {b}");
        assert_eq!(
            tensor(&args[5]).get(i),
            Value::I32(((a as u32) << s) as i32),
            "{a} << {b}"
        );
        assert_eq!(tensor(&args[6]).get(i), Value::I32(a >> s), "{a} >> {b}");
        assert_eq!(
            tensor(&args[7]).get(i),
            Value::U32((a as u32) >> s),
            "u32 {a} >> {b}"
        );
        assert_eq!(
            tensor(&args[10]).get(i),
            Value::I32(a.wrapping_mul(b).wrapping_add(a).wrapping_sub(b))
        );
        let f = fs[i];
        let fi = if f.is_nan() {
            0
        } else {
            (f as f64).trunc().clamp(i32::MIN as f64, i32::MAX as f64) as i32
        };
        assert_eq!(tensor(&args[8]).get(i), Value::I32(fi), "i32({f})");
        let fu = if f.is_nan() || f <= 0.0 {
            0
        } else if f >= 4294967296.0 {
            u32::MAX
        } else {
            f as u32
        };
        assert_eq!(tensor(&args[9]).get(i), Value::U32(fu), "u32({f})");
    }
}

#[test]
fn float_ops_round_separately_and_keep_subnormals() {
    let src = "kernel fma_free(A: tensor<f32>[N], B: tensor<f32>[N], C: tensor<f32>[N], Y: tensor<f32>[N], S: tensor<f32>[N]) {
      Y = A * B + C
      S = A * 1e-30 * 1e-10
    }";
    let p = program("f.ph", src);
    let k = p.kernel("fma_free", &[]).unwrap();
    // a * b rounds before the add: an FMA would give 2^-48 here, not 0.
    let a = 1.0 + f32::EPSILON;
    let b = 1.0 - f32::EPSILON;
    let c = -1.0f32;
    let t = |v: f32| {
        Arg::Tensor(Tensor {
            shape: vec![1],
            data: Data::F32(vec![v]),
        })
    };
    let mut args = vec![t(a), t(b), t(c), t(9.0), t(9.0)];
    phobos_tests::run_everywhere(&k, &mut args);
    assert_eq!(tensor(&args[3]).get(0), Value::F32(a * b + c));
    assert_eq!(tensor(&args[3]).get(0), Value::F32(0.0));
    let sub = tensor(&args[4]).get(0).as_f64() as f32;
    assert!(
        sub != 0.0 && !sub.is_normal(),
        "the subnormal {sub:e} was flushed"
    );
}

#[test]
fn edge_blocks_are_masked() {
    let src = "@autotune(R in [16, 5, 37])
    kernel inc(X: tensor<f32>[M, 4], Y: tensor<f32>[M, 4]) {
      let r = ctx.block.x * R
      Y[r :+ R, :] = X[r + 1 :+ R, :] + 1.0
    }";
    let p = program("mask.ph", src);
    for r in [16, 5, 37] {
        let k = p.kernel("inc", &[("R".into(), r)]).unwrap();
        let m = 37;
        let x = Tensor::from_fn(Scalar::F32, &[m, 4], |i| Value::F32(i as f32));
        let mut args = vec![
            Arg::Tensor(x),
            Arg::Tensor(Tensor::from_fn(Scalar::F32, &[m, 4], |_| Value::F32(-7.0))),
        ];
        let bound = phobos_tests::run_everywhere(&k, &mut args);
        assert_eq!(bound.grid, [37u64.div_ceil(r as u64), 1, 1]);
        let y = tensor(&args[1]);
        for row in 0..m {
            for c in 0..4 {
                let want = if row + 1 < m {
                    ((row + 1) * 4 + c) as f32 + 1.0
                } else {
                    1.0
                };
                assert_eq!(y.get(row * 4 + c), Value::F32(want), "R={r} row {row}");
            }
        }
    }
}

#[test]
fn launch_errors_name_the_parameter() {
    let src = "kernel k(X: tensor<f32>[M, 4], Y: tensor<f32>[M, 4], s: i32) { Y = X }";
    let p = program("l.ph", src);
    let k = p.kernel("k", &[]).unwrap();
    let t = |shape: &[usize], e: Scalar| Arg::Tensor(Tensor::zeros(e, shape));
    let run = |mut args: Vec<Arg>| phobos_core::interp::run(&k, &mut args).unwrap_err();
    let e = run(vec![
        t(&[3, 4], Scalar::F32),
        t(&[5, 4], Scalar::F32),
        Arg::Scalar(Value::I32(0)),
    ]);
    assert!(
        matches!(&e, LaunchError::DimConflict { dim, first, second, .. } if dim == "M" && first == "X" && second == "Y"),
        "{e}"
    );
    let e = run(vec![
        t(&[3, 4], Scalar::I32),
        t(&[3, 4], Scalar::F32),
        Arg::Scalar(Value::I32(0)),
    ]);
    assert!(e.to_string().contains("`X` must hold f32"), "{e}");
    let e = run(vec![
        t(&[3, 5], Scalar::F32),
        t(&[3, 4], Scalar::F32),
        Arg::Scalar(Value::I32(0)),
    ]);
    assert!(
        e.to_string().contains("axis 1 of `X` must have extent 4"),
        "{e}"
    );
    let e = run(vec![
        t(&[3, 4], Scalar::F32),
        t(&[3, 4], Scalar::F32),
        Arg::Scalar(Value::F32(0.0)),
    ]);
    assert!(e.to_string().contains("`s` must hold i32"), "{e}");
}

#[test]
fn huge_slices_are_clipped_and_huge_tiles_refused() {
    let src = "kernel big(Y: tensor<f32>[N]) {
      Y[-2000000000 :+ 4000000000] = 1.0
    }
    kernel huge(Y: tensor<f32>[N]) {
      var t: tile<f32>[N, N] = 1.0
      Y[0 :+ 4] = t[0, 0 :+ 4]
    }";
    let p = program("big.ph", src);
    let k = p.kernel("big", &[]).unwrap();
    let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::F32, &[5]))];
    phobos_tests::run_everywhere(&k, &mut args);
    assert_eq!(tensor(&args[0]).get(4), Value::F32(1.0));
    // A tile of constant extent beyond the bound is the checker's E0123
    // (tests/tests/bounds.rs); one whose extent is a dim is refused when the
    // launch binds it, on every backend.
    let k = p.kernel("huge", &[]).unwrap();
    let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::F32, &[100_000]))];
    let e = phobos_core::interp::run(&k, &mut args).unwrap_err();
    assert!(
        matches!(&e, LaunchError::TileTooLarge { name, .. } if name == "t"),
        "{e}"
    );
    let options = phobos_runtime::Options {
        backend: phobos_runtime::Backend::Cpu,
        ..phobos_runtime::Options::default()
    };
    let e = phobos_runtime::launch(&k, &mut args, &options).unwrap_err();
    assert!(e.to_string().contains("too large to hold"), "{e}");
}

/// NaNs with payloads, signs and signalling bits, and the NaNs that
/// arithmetic makes (0/0, inf - inf, NaN + 1): inside a computation a NaN
/// is a NaN, but a tensor store and a float-to-integer `bitcast` see the
/// canonical quiet NaN (ops.rs). Checked on the interpreter and the CPU
/// backend (scalar and 4-lane paths: the tile is constant, 50 of its 64
/// elements inside), and on the GPU where there is one.
#[test]
fn nans_are_canonical_when_stored_or_bitcast() {
    let src = "kernel nans(X: tensor<f32>[N], Cp: tensor<f32>[N], D: tensor<f32>[N],
                       S: tensor<f32>[N], P: tensor<f32>[N], B: tensor<u32>[N],
                       I: tensor<i32>[N], M: tensor<f32>[N], Sc: tensor<f32>[N]) {
      Cp[0 :+ 64] = X[0 :+ 64]
      D[0 :+ 64] = X[0 :+ 64] / X[0 :+ 64]
      S[0 :+ 64] = X[0 :+ 64] - X[0 :+ 64]
      P[0 :+ 64] = X[0 :+ 64] + 1.0
      B[0 :+ 64] = bitcast<u32>(X[0 :+ 64] + 1.0)
      I[0 :+ 64] = bitcast<i32>(-X[0 :+ 64])
      M[0 :+ 64] = max(X[0 :+ 64], 0.0)
      Sc = -X * 2.0
    }";
    let p = program("nans.ph", src);
    let k = p.kernel("nans", &[]).unwrap();
    let specials: [u32; 12] = [
        0x7FC0_0001,
        0xFFC1_2345,
        0x7F80_0001, // signalling
        0xFF80_0001,
        0x7FFF_FFFF,
        0xFFC0_0000,
        0x7F80_0000, // inf
        0xFF80_0000,
        0x0000_0000,
        0x8000_0000,
        0x3F80_0000,
        0x0000_0001,
    ];
    let n = 50;
    let xs: Vec<f32> = (0..n)
        .map(|i| f32::from_bits(specials[i % specials.len()]))
        .collect();
    let f = |v: Vec<f32>| {
        Arg::Tensor(Tensor {
            shape: vec![n],
            data: Data::F32(v),
        })
    };
    let mut args = vec![f(xs.clone())];
    for t in [
        Scalar::F32,
        Scalar::F32,
        Scalar::F32,
        Scalar::F32,
        Scalar::U32,
        Scalar::I32,
        Scalar::F32,
        Scalar::F32,
    ] {
        args.push(Arg::Tensor(Tensor::zeros(t, &[n])));
    }
    let inputs = args.clone();
    phobos_tests::run_everywhere(&k, &mut args);
    let canon = |v: f32| {
        if v.is_nan() { 0x7FC0_0000 } else { v.to_bits() }
    };
    for (i, &x) in xs.iter().enumerate() {
        let bits = |a: usize| tensor(&args[a]).get(i).bits() as u32;
        assert_eq!(bits(1), canon(x), "copy of {:#x}", x.to_bits());
        assert_eq!(bits(2), canon(x / x), "{:#x} / itself", x.to_bits());
        assert_eq!(bits(3), canon(x - x), "{:#x} - itself", x.to_bits());
        assert_eq!(bits(4), canon(x + 1.0), "{:#x} + 1", x.to_bits());
        assert_eq!(bits(5), canon(x + 1.0), "bitcast {:#x} + 1", x.to_bits());
        assert_eq!(bits(6), canon(-x), "bitcast -{:#x}", x.to_bits());
        let m = if 0.0 > x { 0.0 } else { x };
        assert_eq!(bits(7), canon(m), "max({:#x}, 0)", x.to_bits());
        assert_eq!(bits(8), canon(-x * 2.0), "-{:#x} * 2", x.to_bits());
    }
    if phobos_tests::gpu_available() {
        assert!(phobos_tests::matches_on_gpu(&k, &inputs, &args).unwrap());
    }

    // f64: the same rule with 0x7FF8000000000000 (no GPU: f64 is refused there).
    let src = "kernel nans64(X: tensor<f32>[N], W: tensor<f64>[N], B: tensor<u64>[N]) {
      W = f64(X) * f64(X)
      B = bitcast<u64>(f64(X) - f64(X))
    }";
    let p = program("nans64.ph", src);
    let k = p.kernel("nans64", &[]).unwrap();
    let mut args = vec![
        f(xs.clone()),
        Arg::Tensor(Tensor::zeros(Scalar::F64, &[n])),
        Arg::Tensor(Tensor::zeros(Scalar::U64, &[n])),
    ];
    phobos_tests::run_everywhere(&k, &mut args);
    let canon64 = |v: f64| {
        if v.is_nan() {
            0x7FF8_0000_0000_0000
        } else {
            v.to_bits()
        }
    };
    for (i, &x) in xs.iter().enumerate() {
        let x = x as f64;
        assert_eq!(tensor(&args[1]).get(i).bits(), canon64(x * x));
        assert_eq!(tensor(&args[2]).get(i).bits(), canon64(x - x));
    }
}

/// A store whose value reads its own destination computes the whole value
/// before writing (the interpreter's meaning). The CPU backend uses a
/// temporary tile; the GPU stages the value in workgroup memory, so it needs
/// the tile's extent constant: `phobos_gpu::specialize` makes it so from the
/// launch's dims (`in_place.ph`, a tile of `[R, N]`).
#[test]
fn self_reading_stores_see_the_old_values() {
    let text = std::fs::read_to_string(phobos_tests::root().join("tests/fixtures/ok/in_place.ph"))
        .unwrap();
    let p = program("in_place.ph", &text);
    let k = p.kernel("in_place", &[]).unwrap();
    let (m, n) = (5, 6);
    let t = Tensor::from_fn(Scalar::F32, &[m, n], |i| Value::F32(i as f32 * 0.5 - 3.0));
    let inputs = vec![Arg::Tensor(t)];
    let mut args = inputs.clone();
    phobos_tests::run_everywhere(&k, &mut args);
    for i in 0..m * n {
        let first = (i / n * n) as f32 * 0.5 - 3.0;
        assert_eq!(tensor(&args[0]).get(i), Value::F32(first + 1.0));
    }

    // Constant tiles: a shifted read of a tensor that other invocations
    // write, and a `var` tile updated from itself.
    let src = "kernel shift(Y: tensor<f32>[N], Z: tensor<i32>[8, 40]) {
      Y[0 :+ 300] = Y[1 :+ 300] * 2.0 + Y[0 :+ 300]
      var v: tile<i32>[8, 40] = iota(0) * 40 + iota(1)
      v[1 :+ 7, :] = v[0 :+ 7, :] * 3 + v[1 :+ 7, 39 :+ 1]
      Z[0 :+ 8, :] = v
      Z[0 :+ 8, 1 :+ 39] = Z[0 :+ 8, 0 :+ 39] - Z[0 :+ 8, 1 :+ 39]
    }";
    let p2 = program("shift.ph", src);
    let k2 = p2.kernel("shift", &[]).unwrap();
    let y = Tensor::from_fn(Scalar::F32, &[290], |i| Value::F32(i as f32));
    let inputs2 = vec![
        Arg::Tensor(y),
        Arg::Tensor(Tensor::zeros(Scalar::I32, &[8, 40])),
    ];
    let mut args2 = inputs2.clone();
    phobos_tests::run_everywhere(&k2, &mut args2);
    for i in 0..290 {
        let next = if i + 1 < 290 { (i + 1) as f32 } else { 0.0 };
        assert_eq!(tensor(&args2[0]).get(i), Value::F32(next * 2.0 + i as f32));
    }

    if phobos_tests::gpu_available() {
        let dims: Vec<u64> = [m as u64, n as u64].to_vec();
        let special = phobos_gpu::specialize(&k, &dims);
        assert!(phobos_tests::matches_on_gpu(&special, &inputs, &args).unwrap());
        assert!(phobos_tests::matches_on_gpu(&k2, &inputs2, &args2).unwrap());
    }
}
