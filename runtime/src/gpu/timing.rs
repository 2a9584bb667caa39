//! Timing dispatches with GPU timestamps, for `phobosc bench` and the
//! benchmark binaries: what the kernel costs on the device, without the
//! uploads, readbacks and queue latency a wall clock would add.

use super::{Gpu, GpuError};
use std::time::Instant;

/// Seconds of each of `runs` passes, sorted, from timestamps written at the
/// start and end of each pass; `encode` records one pass, with the
/// timestamp writes it is given. Before them, back-to-back launches for
/// `warm_up_s` seconds: a GPU that has been idle runs slowly until its
/// clocks come back up (on the H200, one warm-up launch left kernels at a
/// fifth of their speed).
pub fn time_passes(
    gpu: &Gpu,
    runs: u32,
    warm_up_s: f64,
    mut encode: impl FnMut(&mut wgpu::CommandEncoder, Option<(&wgpu::QuerySet, u32)>),
) -> Result<Vec<f64>, GpuError> {
    if !gpu
        .device
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        return Err(GpuError::Wgpu(format!(
            "{} has no timestamp queries, so GPU time cannot be measured",
            gpu.describe()
        )));
    }
    let runs = runs.max(1);
    let device = &gpu.device;
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("phobos timing"),
        ty: wgpu::QueryType::Timestamp,
        count: 2 * runs,
    });
    let bytes = 16 * u64::from(runs);
    let resolve = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let started = Instant::now();
    loop {
        let mut warm = device.create_command_encoder(&Default::default());
        encode(&mut warm, None);
        gpu.queue.submit([warm.finish()]);
        gpu.wait()?;
        if started.elapsed().as_secs_f64() >= warm_up_s {
            break;
        }
    }
    for r in 0..runs {
        // One submission per run, so that runs do not overlap.
        let mut enc = device.create_command_encoder(&Default::default());
        encode(&mut enc, Some((&queries, 2 * r)));
        gpu.queue.submit([enc.finish()]);
    }
    let mut enc = device.create_command_encoder(&Default::default());
    enc.resolve_query_set(&queries, 0..2 * runs, &resolve, 0);
    enc.copy_buffer_to_buffer(&resolve, 0, &read, 0, bytes);
    gpu.queue.submit([enc.finish()]);
    read.map_async(wgpu::MapMode::Read, .., |_| {});
    gpu.wait()?;
    let period = f64::from(gpu.queue.get_timestamp_period()) * 1e-9;
    let view = read
        .get_mapped_range(..)
        .map_err(|e| GpuError::Wgpu(format!("reading timestamps: {e}")))?;
    let ticks: &[u64] = bytemuck::cast_slice(&view);
    let mut secs: Vec<f64> = ticks
        .chunks(2)
        .map(|t| t[1].wrapping_sub(t[0]) as f64 * period)
        .collect();
    secs.sort_by(f64::total_cmp);
    Ok(secs)
}
