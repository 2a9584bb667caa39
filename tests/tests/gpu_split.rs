//! Tensors larger than one storage binding, bound in pieces
//! (`phobos_gpu::Split`): with the binding limit forced down to 4 KiB
//! (`Gpu::set_max_binding`, the knob `PHOBOS_MAX_BINDING` also sets), small
//! tensors split, and every kind of access (16-byte loads and stores,
//! single elements, staged stores, loads at computed indices, tiles across
//! piece boundaries) must give the interpreter's bits. Without an adapter
//! each test skips and says so (`PHOBOS_REQUIRE_GPU=1` makes that a
//! failure).

use phobos_core::Program;
use phobos_core::ir::Kernel;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_runtime::gpu::{Gpu, GpuArg, GpuError};
use phobos_runtime::{Precision, RuntimeError};
use phobos_tests::{gpu_available, same_bits_on};
use std::sync::OnceLock;

/// The forced binding limit: 1,024 f32 elements a piece.
const LIMIT: u64 = 4096;

/// A device of its own whose bindings hold at most [`LIMIT`] bytes.
fn split_gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| {
        let gpu = Gpu::new().expect("gpu_available said yes");
        gpu.set_max_binding(Some(LIMIT));
        gpu
    })
}

fn kernel(src: &str, name: &str) -> Kernel {
    let (program, diags) = Program::parse("t.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    program.kernel(name, &[]).expect("checks")
}

fn f32s(n: usize, seed: u32) -> Arg {
    let data = (0..n)
        .map(|i| {
            let h = (i as u32 ^ seed).wrapping_mul(0x9E37_79B9).rotate_left(7);
            (h % 20_011) as f32 * 0.125 - 1000.0
        })
        .collect();
    Arg::Tensor(Tensor {
        shape: vec![n],
        data: Data::F32(data),
    })
}

fn shaped(mut a: Arg, shape: &[usize]) -> Arg {
    if let Arg::Tensor(t) = &mut a {
        t.shape = shape.to_vec();
    }
    a
}

/// Runs `k` on the interpreter and on the split device and compares every
/// tensor bit for bit; at least one tensor must be larger than [`LIMIT`].
fn check(k: &Kernel, args: Vec<Arg>) {
    assert!(
        args.iter()
            .any(|a| matches!(a, Arg::Tensor(t) if (t.len() * 4) as u64 > LIMIT)),
        "nothing would split"
    );
    assert_eq!(split_gpu().max_binding(), LIMIT);
    same_bits_on(split_gpu(), "the split device", k, args);
}

#[test]
fn dropout_rows_splits_on_vec4_boundaries() {
    if !gpu_available() {
        return;
    }
    let src = std::fs::read_to_string(phobos_tests::root().join("examples/dropout_rows.ph"))
        .expect("the example");
    let k = kernel(&src, "dropout_rows");
    // 37 rows of 1 KiB: 10 pieces of 4 rows, the last one short; blocks of
    // 16 rows span 4 pieces.
    let m = 37;
    let args = vec![
        shaped(f32s(m * 256, 1), &[m, 256]),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 256])),
        Arg::Scalar(Value::I32(7)),
    ];
    check(&k, args);
}

#[test]
fn single_elements_straddle_piece_boundaries() {
    if !gpu_available() {
        return;
    }
    // Blocks of 7 (no 16-byte accesses) cross the boundaries at 1024, 2048.
    let src = "
@autotune(B in [7])
kernel scale(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let b = ctx.block.x * B
  Y[b :+ B] = X[b + 3 :+ B] * 3.0 + f32(iota(0))
}
";
    let n = 3001;
    check(
        &kernel(src, "scale"),
        vec![f32s(n, 2), Arg::Tensor(Tensor::zeros(Scalar::F32, &[n]))],
    );
}

#[test]
fn single_elements_of_a_vec4_tensor_pick_their_lane() {
    if !gpu_available() {
        return;
    }
    // X is read by 16-byte loads and by single elements (column 3); blocks
    // of 3 rows straddle the boundaries every 16 rows.
    let src = "
@autotune(R in [3])
kernel rowmix(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 64]) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + X[r :+ R, 3 :+ 1]
}
";
    let m = 50;
    check(
        &kernel(src, "rowmix"),
        vec![
            shaped(f32s(m * 64, 3), &[m, 64]),
            Arg::Tensor(Tensor::zeros(Scalar::F32, &[m, 64])),
        ],
    );
}

#[test]
fn staged_stores_read_and_write_across_pieces() {
    if !gpu_available() {
        return;
    }
    // The value reads the destination itself (staged in workgroup memory
    // first); blocks of 100 cross the boundaries at 1024 and 2048.
    let src = "
@autotune(B in [100])
kernel accumulate(T: tensor<i32>[N]) {
  let b = ctx.block.x * B
  T[b :+ B] = T[b :+ B] * 3 + T[b :+ 1] + iota(0)
}
";
    let n = 2500;
    let t = Arg::Tensor(Tensor {
        shape: vec![n],
        data: Data::I32((0..n as i32).map(|i| i * 7919 % 1000 - 500).collect()),
    });
    check(&kernel(src, "accumulate"), vec![t]);
}

#[test]
fn loads_at_computed_indices_find_their_piece() {
    if !gpu_available() {
        return;
    }
    // Each block reads one element of X at a hashed index anywhere in it
    // (past the end reads 0).
    let src = "
@autotune(B in [1])
kernel gather(X: tensor<u32>[N], Y: tensor<u32>[M]) {
  let b = ctx.block.x * B
  Y[b :+ B] = X[u32(hash32(b)) % u32(5000) :+ B] + u32(b)
}
";
    let (n, m) = (4500, 600);
    let x = Arg::Tensor(Tensor {
        shape: vec![n],
        data: Data::U32(
            (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761))
                .collect(),
        ),
    });
    check(
        &kernel(src, "gather"),
        vec![x, Arg::Tensor(Tensor::zeros(Scalar::U32, &[m]))],
    );
}

#[test]
fn the_callers_own_buffers_split_too() {
    if !gpu_available() {
        return;
    }
    let src = "
@autotune(B in [64])
kernel twice(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let b = ctx.block.x * B
  Y[b :+ B] = X[b :+ B] * 2.0
}
";
    let k = kernel(src, "twice");
    let n = 5000;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
    let gpu = split_gpu();
    let device = gpu.device();
    // A buffer larger than the tensor: the last piece is cut at the
    // piece's length, not the buffer's end.
    let buffer = |usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 4 * n as u64 + 8192,
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
    ];
    gpu.dispatch(&k, &args, Precision::Exact).unwrap();
    let got: Vec<f32> = bytemuck::cast_slice(&gpu.read_buffer(&yb, 4 * n as u64).unwrap()).to_vec();
    let want: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
    assert_eq!(got, want);

    // Only a tensor beyond the largest buffer is refused, by name.
    let src = "
@autotune(B in [64])
kernel two(X: tensor<f32>[N], Y: tensor<f32>[M]) {
  let b = ctx.block.x * B
  Y[b :+ B] = X[b :+ B] * 2.0
}
";
    let k = kernel(src, "two");
    let max = device.limits().max_buffer_size;
    let huge = [(max / 4 + 1) as usize];
    let bad = [
        args[0],
        GpuArg::Tensor {
            buffer: &yb,
            elem: Scalar::F32,
            shape: &huge,
        },
    ];
    let e = gpu.dispatch(&k, &bad, Precision::Exact).unwrap_err();
    assert!(
        matches!(&e, RuntimeError::Gpu(GpuError::TooLarge { param, limit, .. })
            if param == "Y" && *limit == max),
        "{e}"
    );
}

#[test]
fn split_modules_are_valid_spirv_and_unsplit_ones_unchanged() {
    let src = "
@autotune(R in [3])
kernel rowmix(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 64], Z: tensor<i32>[M]) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + X[r :+ R, 3 :+ 1]
  Z[r :+ R] = Z[r :+ R] + 1
}
";
    let k = kernel(src, "rowmix");
    let options = phobos_gpu::GpuOptions::default();
    let plain = phobos_gpu::compile(&k, &options).unwrap();
    let none = phobos_gpu::compile_split(&k, &options, &[None, None, None]).unwrap();
    assert_eq!(plain.wgsl(), none.wgsl());
    assert_eq!(plain.layout, none.layout);

    let split = |n: u64| phobos_gpu::Split::plan(n, 4, LIMIT, 256);
    let splits = [
        split(50 * 64),
        split(50 * 64),
        Some(phobos_gpu::Split {
            pieces: 3,
            piece_len: 16,
        }),
    ];
    assert_eq!(
        splits[0],
        Some(phobos_gpu::Split {
            pieces: 4,
            piece_len: 1024
        })
    );
    let c = phobos_gpu::compile_split(&k, &options, &splits).unwrap();
    let bindings: Vec<u32> = c.layout.tensors.iter().map(|t| t.binding).collect();
    assert_eq!(bindings, [1, 5, 9], "4 + 4 + 3 bindings from 1");
    let wgsl = c.wgsl();
    assert!(wgsl.contains("@binding(11)"), "{wgsl}");
    let json = serde_json::to_string(&c.layout).unwrap();
    assert!(
        json.contains("\"split\":{\"pieces\":4,\"piece_len\":1024}"),
        "{json}"
    );
    assert!(
        !serde_json::to_string(&plain.layout)
            .unwrap()
            .contains("split")
    );

    let dir = std::env::temp_dir().join(format!("phobos-split-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rowmix.spv");
    std::fs::write(&file, bytemuck::cast_slice::<u32, u8>(&c.spirv())).unwrap();
    match std::process::Command::new("spirv-val")
        .args(["--target-env", "vulkan1.1"])
        .arg(&file)
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "spirv-val: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => eprintln!("skipping spirv-val (not installed: {e})"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
