//! What the GPU benchmark binaries share: the method's constants, timing,
//! the zero-fill ceiling kernel and a timed dispatch of a bare pipeline.

use phobos_runtime::gpu::Gpu;

pub const RUNS: u32 = 21;
/// Seconds of back-to-back launches before the timed ones (one launch is
/// not enough on the H200: it stays clocked down).
pub const WARM_UP_S: f64 = 0.5;

/// The zero-fill ceiling: 16-byte stores, one per invocation.
pub const ZERO: &str = "
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
  let i = g.x + g.y * n.x * 256u;
  if i < arrayLength(&dst) { dst[i] = vec4<u32>(0u); }
}
";

/// Sorted seconds of `RUNS` passes after `WARM_UP_S` of warm-up launches.
pub fn timestamps(
    gpu: &Gpu,
    encode: impl FnMut(&mut wgpu::CommandEncoder, Option<(&wgpu::QuerySet, u32)>),
) -> Vec<f64> {
    phobos_runtime::gpu::time_passes(gpu, RUNS, WARM_UP_S, encode).expect("timestamps")
}

pub fn gib(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs / (1u64 << 30) as f64
}

/// Median and fastest seconds of `groups` workgroups of `pipeline` (a 2-D
/// dispatch beyond 65,535), bound to `bind`.
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
pub fn time_dispatches(
    gpu: &Gpu,
    pipeline: &wgpu::ComputePipeline,
    pieces: &[(&wgpu::BindGroup, u32)],
) -> (f64, f64) {
    let t = timestamps(gpu, |enc, ts| {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: ts.map(|(q, i)| wgpu::ComputePassTimestampWrites {
                query_set: q,
                beginning_of_pass_write_index: Some(i),
                end_of_pass_write_index: Some(i + 1),
            }),
        });
        pass.set_pipeline(pipeline);
        for &(bind, groups) in pieces {
            let (x, y) = (groups.min(65535), groups.div_ceil(65535));
            pass.set_bind_group(0, bind, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    });
    (t[t.len() / 2], t[0])
}
