//! The GPU runtime through its public API, on whatever adapter wgpu finds
//! (lavapipe in CI): grids beyond one dispatch dimension, the caller's own
//! buffers, precision in the provenance, and errors that name what is wrong.
//! Without an adapter each test skips and says so (`PHOBOS_REQUIRE_GPU=1`
//! makes that a failure).

use phobos_core::Program;
use phobos_core::ir::Kernel;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_gpu::DivCheck;
use phobos_runtime::gpu::{Gpu, GpuArg, GpuError};
use phobos_runtime::{Backend, Options, Precision, RuntimeError, launch};
use phobos_tests::gpu_available;

fn kernel(src: &str, name: &str) -> Kernel {
    let (program, diags) = Program::parse("t.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    program.kernel(name, &[]).expect("checks")
}

fn gpu_options(precision: Precision) -> Options {
    Options {
        backend: Backend::Gpu,
        precision,
        ..Options::default()
    }
}

const COUNTER: &str = "
@autotune(B in [1])
kernel counter(Y: tensor<u32>[N]) {
  let b = ctx.block.x * B
  Y[b :+ B] = u32(hash32(b + iota(0)))
}
";

#[test]
fn more_blocks_than_one_dispatch_dimension_holds() {
    if !gpu_available() {
        return;
    }
    let k = kernel(COUNTER, "counter");
    // 70,000 one-element blocks: more than 65,535 workgroups along x.
    let n = 70_000;
    let mut want = vec![Arg::Tensor(Tensor::zeros(Scalar::U32, &[n]))];
    let mut got = want.clone();
    phobos_core::interp::run(&k, &mut want).unwrap();
    let prov = launch(&k, &mut got, &gpu_options(Precision::Exact)).unwrap();
    assert_eq!(prov.bound.grid, [n as u64, 1, 1]);
    assert_eq!(want, got, "every block ran exactly once");
}

/// The subgroup-layout probe answers on lavapipe, whose subgroups are
/// laid out in order: CI's kernels are built without the in-kernel check
/// (`GpuOptions::subgroup_layout_known`), so a probe that stopped seeing
/// the layout (it is built from `phobos_gpu`'s `subgroup.rs`, as the
/// kernels' check is) fails here rather than only costing speed.
#[test]
fn the_subgroup_probe_sees_lavapipes_layout() {
    if !gpu_available() || !phobos_tests::gpu_is_lavapipe() {
        eprintln!("skipped: the GPU is not lavapipe");
        return;
    }
    let gpu = Gpu::shared().unwrap();
    if std::env::var_os("PHOBOS_SUBGROUP_LAYOUT").is_none() && gpu.subgroup_width() >= 2 {
        assert!(gpu.subgroup_layout_known());
    }
}

#[test]
fn provenance_names_the_device_and_the_precision() {
    if !gpu_available() {
        return;
    }
    let k = kernel(COUNTER, "counter");
    for precision in [Precision::Exact, Precision::Fast] {
        let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::U32, &[16]))];
        let prov = launch(&k, &mut args, &gpu_options(precision)).unwrap();
        assert_eq!(prov.backend, Backend::Gpu);
        assert_eq!(prov.precision, precision);
        assert_eq!(prov.device, Gpu::shared().unwrap().describe());
        assert!(prov.compile_ms.is_some() && prov.cache_hit.is_some());
    }
    // The second launch of one kernel and precision comes from the cache.
    let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::U32, &[16]))];
    let prov = launch(&k, &mut args, &gpu_options(Precision::Exact)).unwrap();
    assert_eq!(prov.cache_hit, Some(true));
}

#[test]
fn the_callers_own_buffers_give_the_same_bits() {
    if !gpu_available() {
        return;
    }
    let src = "
@autotune(B in [64])
kernel noisy(X: tensor<f32>[N], Y: tensor<f32>[N], s: f32, seed: i32) {
  let b = ctx.block.x * B
  Y[b :+ B] = X[b :+ B] + s * randn(seed, b + iota(0))
}
";
    let k = kernel(src, "noisy");
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let mut want = vec![
        Arg::Tensor(Tensor {
            shape: vec![n],
            data: Data::F32(x.clone()),
        }),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
        Arg::Scalar(Value::F32(0.5)),
        Arg::Scalar(Value::I32(3)),
    ];
    phobos_core::interp::run(&k, &mut want).unwrap();

    let gpu = Gpu::shared().unwrap();
    let device = gpu.device();
    let buffer = |usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 4 * n as u64,
            usage,
            mapped_at_creation: false,
        })
    };
    let xb = buffer(wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST);
    gpu.queue().write_buffer(&xb, 0, bytemuck::cast_slice(&x));
    let yb = buffer(wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC);
    let shape = [n];
    let args = [
        GpuArg::Tensor {
            buffer: &xb,
            elem: Scalar::F32,
            shape: &shape,
        },
        GpuArg::Tensor {
            buffer: &yb,
            elem: Scalar::F32,
            shape: &shape,
        },
        GpuArg::Scalar(Value::F32(0.5)),
        GpuArg::Scalar(Value::I32(3)),
    ];
    gpu.dispatch(&k, &args, Precision::Exact).unwrap();
    let got: Vec<u32> = bytemuck::cast_slice(&gpu.read_buffer(&yb, 4 * n as u64).unwrap()).to_vec();
    let Arg::Tensor(Tensor {
        data: Data::F32(y), ..
    }) = &want[1]
    else {
        unreachable!()
    };
    let want: Vec<u32> = y.iter().map(|v| v.to_bits()).collect();
    assert_eq!(got, want);

    // A buffer smaller than its tensor is refused by name.
    let small = buffer(wgpu::BufferUsages::STORAGE);
    let short = [n + 1];
    let mut bad = args;
    bad[1] = GpuArg::Tensor {
        buffer: &small,
        elem: Scalar::F32,
        shape: &short,
    };
    bad[0] = GpuArg::Tensor {
        buffer: &xb,
        elem: Scalar::F32,
        shape: &short,
    };
    let e = gpu.dispatch(&k, &bad, Precision::Exact).unwrap_err();
    assert!(e.to_string().contains('X'), "{e}");
}

#[test]
fn bad_launches_name_the_parameter() {
    if !gpu_available() {
        return;
    }
    let k = kernel(COUNTER, "counter");
    // Wrong element type.
    let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::F32, &[4]))];
    let e = launch(&k, &mut args, &gpu_options(Precision::Exact)).unwrap_err();
    assert!(matches!(e, RuntimeError::Launch(_)), "{e}");
    assert!(e.to_string().contains("`Y`"), "{e}");

    // A tensor larger than the device's largest buffer (one larger than a
    // binding is split: `gpu_split.rs`), in a buffer of the caller's so
    // that nothing that large is allocated: refused by name before the
    // buffer's own size is looked at.
    let gpu = Gpu::shared().unwrap();
    let max = gpu.device().limits().max_buffer_size;
    let small = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 16,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let huge = [(max / 4 + 1) as usize];
    let args = [GpuArg::Tensor {
        buffer: &small,
        elem: Scalar::U32,
        shape: &huge,
    }];
    let e = gpu.dispatch(&k, &args, Precision::Exact).unwrap_err();
    match &e {
        RuntimeError::Gpu(GpuError::TooLarge { param, limit, .. }) => {
            assert_eq!((param.as_str(), *limit), ("Y", max))
        }
        other => panic!("expected TooLarge, got {other}"),
    }
    assert!(e.to_string().contains("tensor `Y`"), "{e}");
}

#[test]
fn types_the_gpu_lacks_are_refused_by_name() {
    if !gpu_available() {
        return;
    }
    let src = "kernel wide(Y: tensor<f64>[N]) { Y = 1.0 }";
    let k = kernel(src, "wide");
    let mut args = vec![Arg::Tensor(Tensor::zeros(Scalar::F64, &[4]))];
    let e = launch(&k, &mut args, &gpu_options(Precision::Exact)).unwrap_err();
    assert!(e.to_string().contains("f64"), "{e}");
}

#[test]
fn a_callers_buffer_beyond_one_binding_holding_a_small_tensor_runs() {
    if !gpu_available() {
        return;
    }
    let gpu = Gpu::shared().unwrap();
    let device = gpu.device();
    let limits = device.limits();
    let size = (limits.max_storage_buffer_binding_size & !15) + 256;
    if size > limits.max_buffer_size {
        eprintln!("skipped: no buffer can exceed one binding on this device");
        return;
    }
    let k = kernel(
        "kernel double(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X * 2.0 }",
        "double",
    );
    let n = 256;
    let x: Vec<f32> = (0..n).map(|i| i as f32 - 7.5).collect();
    let xb = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    gpu.queue().write_buffer(&xb, 0, bytemuck::cast_slice(&x));
    let small = |usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 4 * n as u64,
            usage,
            mapped_at_creation: false,
        })
    };
    let yb = small(wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC);
    let shape = [n];
    let args = [
        GpuArg::Tensor {
            buffer: &xb,
            elem: Scalar::F32,
            shape: &shape,
        },
        GpuArg::Tensor {
            buffer: &yb,
            elem: Scalar::F32,
            shape: &shape,
        },
    ];
    gpu.dispatch(&k, &args, Precision::Exact).unwrap();
    let got: Vec<f32> = bytemuck::cast_slice(&gpu.read_buffer(&yb, 4 * n as u64).unwrap()).to_vec();
    let want: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
    assert_eq!(got, want);
}

/// A GPU with f64 whose exact `/` and `sqrt` take the checked paths (what
/// the H200 runs), or `None` (said on stderr) where there is none.
fn wide_gpu() -> Option<Gpu> {
    if !gpu_available() {
        return None;
    }
    let gpu = Gpu::new().unwrap();
    if !gpu.device().features().contains(wgpu::Features::SHADER_F64) {
        eprintln!("skipped: {} has no f64", gpu.describe());
        return None;
    }
    gpu.set_wide_checks(Some(true));
    Some(gpu)
}

/// Edge f32 bit patterns for the division and square-root tests: zeros,
/// subnormals, the normal boundary, values around 1, the largest finite,
/// infinity, NaNs and far exponents.
const EDGES: [u32; 19] = [
    0,
    1,
    2,
    0x007f_ffff,
    0x0080_0000,
    0x0080_0001,
    0x3f80_0000,
    0x3f80_0001,
    0x3f7f_ffff,
    0x4040_0000,
    0x3dcc_cccd,
    0x7f7f_ffff,
    0x7f7f_fffe,
    0x7f80_0000,
    0x7fc0_0000,
    0x7f80_0001,
    0x0c80_0000,
    0x1300_0000,
    0x6c00_0000,
];

/// The checked `/` and `sqrt` (what the H200 runs) on this device too, `/`
/// by each of its checks (`Gpu::set_div_check`): lavapipe gets the
/// integer-only ones by default, so they are asked for here, on edge
/// values and random bit patterns, against the interpreter.
#[test]
fn checked_division_and_sqrt_match_the_interpreter() {
    let Some(gpu) = wide_gpu() else {
        return;
    };
    let k = kernel(
        "kernel t(X: tensor<f32>[N], Z: tensor<f32>[N], Q: tensor<f32>[N], S: tensor<f32>[N]) {\n  Q = X / Z\n  S = sqrt(X)\n}",
        "t",
    );
    let mut edges: Vec<u32> = EDGES.to_vec();
    let neg: Vec<u32> = edges.iter().map(|b| b | 0x8000_0000).collect();
    edges.extend(neg);
    let (mut x, mut z) = (Vec::new(), Vec::new());
    for &a in &edges {
        for &b in &edges {
            x.push(a);
            z.push(b);
        }
    }
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s as u32
    };
    for i in 0..60_000 {
        let (a, b) = (next(), next());
        // Half of them with ordinary exponents, where the check usually
        // accepts the estimate.
        if i % 2 == 0 {
            x.push((a & 0x807f_ffff) | ((96 + (a >> 8) % 64) << 23));
            z.push((b & 0x807f_ffff) | ((96 + (b >> 8) % 64) << 23));
        } else {
            x.push(a);
            z.push(b);
        }
    }
    let n = x.len();
    let tensor = |bits: &[u32]| {
        Arg::Tensor(Tensor {
            shape: vec![n],
            data: Data::F32(bits.iter().map(|&b| f32::from_bits(b)).collect()),
        })
    };
    let args = || {
        vec![
            tensor(&x),
            tensor(&z),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
        ]
    };
    let mut want = args();
    phobos_core::interp::run(&k, &mut want).unwrap();
    let bits = |a: &Arg| match a {
        Arg::Tensor(Tensor {
            data: Data::F32(v), ..
        }) => v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>(),
        _ => unreachable!(),
    };
    for check in [DivCheck::Recip, DivCheck::F64, DivCheck::F32] {
        gpu.set_div_check(Some(check));
        let mut got = args();
        gpu.run(&k, &mut got, Precision::Exact).unwrap();
        for (out, name) in [(2, "X / Z"), (3, "sqrt(X)")] {
            let (g, w) = (bits(&got[out]), bits(&want[out]));
            let bad: Vec<usize> = (0..n).filter(|&i| g[i] != w[i]).take(5).collect();
            assert!(
                bad.is_empty(),
                "{name} ({check:?}): {} differ, first at {:?}",
                (0..n).filter(|&i| g[i] != w[i]).count(),
                bad.iter()
                    .map(|&i| (x[i], z[i], g[i], w[i]))
                    .collect::<Vec<_>>()
            );
        }
    }
}

/// Exact `/` by a divisor that is the same at every element of a
/// statement (here each row's `Z[r, 0]`): the reciprocal check computes
/// the divisor's share once before the statement's loop
/// (`Lower::share_divisors`) and each quotient its own share. Every edge
/// divisor against every edge dividend, and random ones, against the
/// interpreter, with each check.
#[test]
fn division_by_a_shared_divisor_matches_the_interpreter() {
    let Some(gpu) = wide_gpu() else {
        return;
    };
    let k = kernel(
        "kernel t(X: tensor<f32>[M, N], Z: tensor<f32>[M, 1], Q: tensor<f32>[M, N]) {\n  \
         let r = ctx.block.x\n  Q[r :+ 1, :] = X[r :+ 1, :] / Z[r :+ 1, :]\n}",
        "t",
    );
    let mut divisors = EDGES.to_vec();
    divisors.extend(EDGES.iter().map(|b| b | 0x8000_0000));
    let mut dividends = divisors.clone();
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s as u32
    };
    for i in 0..400 {
        let b = next();
        divisors.push(if i % 2 == 0 {
            (b & 0x807f_ffff) | ((96 + (b >> 8) % 64) << 23)
        } else {
            b
        });
    }
    while dividends.len() < 96 {
        let a = next();
        dividends.push((a & 0x807f_ffff) | ((96 + (a >> 8) % 64) << 23));
    }
    let (m, n) = (divisors.len(), dividends.len());
    let f32s = |bits: Vec<u32>| Data::F32(bits.into_iter().map(f32::from_bits).collect());
    let x: Vec<u32> = (0..m).flat_map(|_| dividends.iter().copied()).collect();
    let args = || {
        vec![
            Arg::Tensor(Tensor {
                shape: vec![m, n],
                data: f32s(x.clone()),
            }),
            Arg::Tensor(Tensor {
                shape: vec![m, 1],
                data: f32s(divisors.clone()),
            }),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, n])),
        ]
    };
    let bits = |a: &Arg| match a {
        Arg::Tensor(Tensor {
            data: Data::F32(v), ..
        }) => v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>(),
        _ => unreachable!(),
    };
    let mut want = args();
    phobos_core::interp::run(&k, &mut want).unwrap();
    let w = bits(&want[2]);
    for check in [DivCheck::Recip, DivCheck::F64] {
        gpu.set_div_check(Some(check));
        let mut got = args();
        gpu.run(&k, &mut got, Precision::Exact).unwrap();
        let g = bits(&got[2]);
        let bad: Vec<(u32, u32, u32, u32)> = (0..m * n)
            .filter(|&i| g[i] != w[i])
            .map(|i| (x[i], divisors[i / n], g[i], w[i]))
            .collect();
        assert!(
            bad.is_empty(),
            "X / Z ({check:?}): {} differ, first (x, z, got, want) {:x?}",
            bad.len(),
            &bad[..bad.len().min(5)]
        );
    }
}

/// Workgroups of 1024 invocations, which the lowering accepts where the
/// device allows them (lavapipe does; its tuner keeps to 256, since a CPU
/// gains nothing from more): the whole-row examples at rows of 1000 and
/// 4096 and the seed's `dropout_rows` give the interpreter's bits.
#[test]
fn workgroups_of_1024_give_the_interpreters_bits() {
    if !gpu_available() {
        return;
    }
    let gpu = Gpu::shared().unwrap();
    if gpu.max_workgroup_size() < 1024 {
        eprintln!(
            "skipped: this device allows {} invocations",
            gpu.max_workgroup_size()
        );
        return;
    }
    let cases: [(&str, &[(&str, usize)]); 4] = [
        ("softmax_dropout", &[("M", 3), ("N", 1000)]),
        ("softmax_dropout", &[("M", 2), ("N", 4096)]),
        ("layernorm_dropout", &[("M", 3), ("N", 4096)]),
        ("dropout_rows", &[("M", 40)]),
    ];
    for (name, dims) in cases {
        let k = phobos_tests::example_kernel(name);
        let dims: Vec<(String, usize)> = dims.iter().map(|(d, n)| (d.to_string(), *n)).collect();
        let inputs = phobos_tests::make_args(&k, &dims, &[("seed", Value::I32(5))]);
        let mut want = inputs.clone();
        phobos_core::interp::run(&k, &mut want).unwrap();
        let mut got = inputs;
        let options = Options {
            workgroup_size: Some(1024),
            ..gpu_options(Precision::Exact)
        };
        let prov = launch(&k, &mut got, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(prov.workgroup_size, Some(1024), "{name}");
        assert_eq!(want, got, "{name} {dims:?} in workgroups of 1024");
    }
}

const FLAT: &str = "
@autotune(T in [256])
kernel flat(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<u32>[N], key: u32) {
  let i = ctx.block.x * T
  Y[i :+ T] = X[i :+ T] * 2.0 + 1.0
  Z[i :+ T] = tandem_u32(key, i + iota(0))
}
";

/// A tensor whose length is a dim moves 16 bytes at a time where the
/// launch's length is a multiple of 4 (`phobos_gpu::specialize` records
/// it), with the interpreter's bits at lengths that end inside a block,
/// and element by element where it is not a multiple of 4.
#[test]
fn rows_of_a_dims_length_move_16_bytes_at_a_time_where_the_launch_allows() {
    let k = kernel(FLAT, "flat");
    for (n, quads) in [
        (1000, true),
        (1024, true),
        (4, true),
        (1002, false),
        (7, false),
    ] {
        let specialized = phobos_gpu::specialize(&k, &[n]);
        assert_eq!(specialized.dim_multiple(0), if quads { 4 } else { 1 });
        let options = phobos_gpu::GpuOptions::for_kernel(&specialized);
        let wgsl = phobos_gpu::compile(&specialized, &options)
            .unwrap_or_else(|e| panic!("{e}"))
            .wgsl();
        assert_eq!(wgsl.contains("array<vec4<f32>>"), quads, "N = {n}:\n{wgsl}");
        let x = Tensor::from_fn(Scalar::F32, &[n as usize], |i| {
            Value::F32(i as f32 * 0.37 - 5.0)
        });
        let inputs = vec![
            Arg::Tensor(x),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[n as usize])),
            Arg::Tensor(Tensor::zeros(Scalar::U32, &[n as usize])),
            Arg::Scalar(Value::U32(7)),
        ];
        phobos_tests::run_on_every_backend(&k, &inputs, &format!("flat N = {n}"));
    }
}
