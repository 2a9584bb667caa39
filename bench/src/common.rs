//! What the GPU benchmark binaries share: the method's constants, timing,
//! a timed dispatch of a bare pipeline, and buffers poisoned before and
//! read back after the timed runs. The ceilings are in `ceiling.rs`.

use phobos_runtime::gpu::Gpu;

pub const RUNS: u32 = 21;
/// Seconds of back-to-back launches before the timed ones (one launch is
/// not enough on the H200: it stays clocked down).
pub const WARM_UP_S: f64 = 0.5;

/// Sorted seconds of `RUNS` passes after `WARM_UP_S` of warm-up launches.
pub fn timestamps(
    gpu: &Gpu,
    encode: impl FnMut(&mut wgpu::CommandEncoder, Option<(&wgpu::QuerySet, u32)>),
) -> Vec<f64> {
    phobos_runtime::gpu::time_passes(gpu, RUNS, WARM_UP_S, encode).expect("timestamps")
}

#[allow(dead_code)] // not every binary reports GiB/s
pub fn gib(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs / (1u64 << 30) as f64
}

/// Median and fastest seconds of `groups` workgroups of `pipeline` (a 2-D
/// dispatch beyond 65,535: min(groups, 65535) x ceil(groups / 65535), the
/// old ceilings' grid; see `ceiling.rs` for what that costs), bound to
/// `bind`. For the experiments on generated kernels' shapes.
#[allow(dead_code)] // not every binary dispatches one piece
pub fn time_dispatch(
    gpu: &Gpu,
    pipeline: &wgpu::ComputePipeline,
    bind: &wgpu::BindGroup,
    groups: u32,
) -> (f64, f64) {
    time_dispatches(gpu, pipeline, &[(bind, groups)])
}

/// Median and fastest seconds of one pass that dispatches `pipeline` once
/// per piece: `groups` workgroups (a 2-D dispatch beyond 65,535) bound to
/// its `bind` (for outputs larger than one storage binding).
#[allow(dead_code)] // not every binary dispatches one piece
pub fn time_dispatches(
    gpu: &Gpu,
    pipeline: &wgpu::ComputePipeline,
    pieces: &[(&wgpu::BindGroup, u32)],
) -> (f64, f64) {
    let t = time_pass(gpu, pipeline, |pass| {
        for &(bind, groups) in pieces {
            let (x, y) = (groups.min(65535), groups.div_ceil(65535));
            pass.set_bind_group(0, bind, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    });
    (t[t.len() / 2], t[0])
}

/// Sorted seconds of [`RUNS`] timed passes of `pipeline`, each recorded by
/// `dispatch` (bind groups and dispatches).
pub fn time_pass(
    gpu: &Gpu,
    pipeline: &wgpu::ComputePipeline,
    mut dispatch: impl FnMut(&mut wgpu::ComputePass),
) -> Vec<f64> {
    timestamps(gpu, |enc, ts| {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: ts.map(|(q, i)| wgpu::ComputePassTimestampWrites {
                query_set: q,
                beginning_of_pass_write_index: Some(i),
                end_of_pass_write_index: Some(i + 1),
            }),
        });
        pass.set_pipeline(pipeline);
        dispatch(&mut pass);
    })
}

/// A storage buffer's entry in a compute bind group layout.
#[allow(dead_code)] // not every binary makes its own layout
pub fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A buffer for fills and kernels on the caller's buffers: written by
/// `poison` (`COPY_DST`), read back (`COPY_SRC`).
#[allow(dead_code)] // not every binary fills its own buffers
pub fn storage(gpu: &Gpu, bytes: u64) -> wgpu::Buffer {
    gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("dst"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Writes 0xA5 over the first `bytes` of `dst`, so that a dispatch that
/// writes nothing fails the check.
#[allow(dead_code)] // not every binary fills its own buffers
pub fn poison(gpu: &Gpu, dst: &wgpu::Buffer, bytes: u64) {
    let poison = vec![0xA5u8; 1 << 24];
    for off in (0..bytes).step_by(poison.len()) {
        let len = (bytes - off).min(poison.len() as u64) as usize;
        gpu.queue().write_buffer(dst, off, &poison[..len]);
    }
}

/// The first `bytes` of `src` into `out`.
#[allow(dead_code)] // not every binary fills its own buffers
pub fn read_back(gpu: &Gpu, src: &wgpu::Buffer, bytes: u64, out: &mut Vec<u8>) {
    let device = gpu.device();
    let size = bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(src, 0, &read, 0, size);
    gpu.queue().submit([enc.finish()]);
    read.map_async(wgpu::MapMode::Read, .., |_| {});
    gpu.wait().expect("read back");
    out.clear();
    out.extend_from_slice(&read.get_mapped_range(..).expect("mapped")[..bytes as usize]);
}

/// Elements that differ between `got` and `want` (`size` bytes each).
#[allow(dead_code)] // not every binary fills its own buffers
pub fn differing(got: &[u8], want: &[u8], size: usize) -> usize {
    got.chunks(size)
        .zip(want.chunks(size))
        .filter(|(a, b)| a != b)
        .count()
}
