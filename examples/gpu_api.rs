//! The Rust API on the GPU: compile a `.ph` kernel, run it on host tensors,
//! then run it again on buffers of your own `wgpu::Device`.
//!
//!     cargo run -p phobos-runtime --example gpu_api
//!
//! Without a GPU, install a software Vulkan driver (Debian:
//! `apt-get install mesa-vulkan-drivers`) and set `WGPU_BACKEND=vulkan`.

use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_runtime::gpu::{Gpu, GpuArg};
use phobos_runtime::{Backend, Options, Precision, launch};
use wgpu::util::DeviceExt;

const SOURCE: &str = "
@autotune(B in [256])
kernel noisy(X: tensor<f32>[N], Y: tensor<f32>[N], scale: f32, seed: i32) {
  let b = ctx.block.x * B
  Y[b :+ B] = X[b :+ B] + scale * randn(seed, b + iota(0))
}
";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (program, diags) = Program::parse("noisy.ph", SOURCE);
    let kernel = match program.kernel("noisy", &[]) {
        Ok(k) if diags.is_empty() => k,
        Ok(_) => return Err(phobos_core::render(&diags, &program.sources, false).into()),
        Err(diags) => return Err(phobos_core::render(&diags, &program.sources, false).into()),
    };
    let n = 1000;
    let x = Tensor::from_fn(Scalar::F32, &[n], |i| Value::F32(i as f32));

    // 1. Host tensors: `launch` uploads, dispatches and reads back.
    let mut args = vec![
        Arg::Tensor(x.clone()),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
        Arg::Scalar(Value::F32(0.5)),
        Arg::Scalar(Value::I32(7)),
    ];
    let options = Options {
        backend: Backend::Gpu,
        ..Options::default()
    };
    let run = launch(&kernel, &mut args, &options)?;
    let Arg::Tensor(y) = &args[1] else {
        unreachable!()
    };
    println!(
        "on {} ({} mode): Y[0..4] = {:?}",
        run.device,
        run.precision.name(),
        &y_f32(y)[..4]
    );

    // 2. Your own device and buffers: wrap the device once, then dispatch
    //    on buffers that never leave the GPU.
    let gpu = Gpu::new()?; // or Gpu::from_device(device, queue, adapter.get_info())
    let device = gpu.device();
    let Data::F32(host) = &x.data else {
        unreachable!()
    };
    let xb = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("X"),
        contents: bytemuck::cast_slice(host),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let yb = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("Y"),
        size: 4 * n as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let shape = [n];
    gpu.dispatch(
        &kernel,
        &[
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
            GpuArg::Scalar(Value::I32(7)),
        ],
        Precision::Exact,
    )?;
    let mine = read(&gpu, &yb)?;
    println!("your buffers: Y[0..4] = {:?}", &mine[..4]);
    assert_eq!(
        mine.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        y_f32(y).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        "the same bits both ways"
    );
    Ok(())
}

fn y_f32(t: &Tensor) -> Vec<f32> {
    match &t.data {
        Data::F32(v) => v.clone(),
        _ => unreachable!(),
    }
}

/// Copies a buffer of f32 back to the host.
fn read(gpu: &Gpu, buffer: &wgpu::Buffer) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    Ok(bytemuck::cast_slice(&gpu.read_buffer(buffer, buffer.size())?).to_vec())
}
