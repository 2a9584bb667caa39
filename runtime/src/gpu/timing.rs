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

/// GPU seconds of each of `launches` in each of `rounds` rounds
/// (`secs[launch][round]`), for the tuner: every round runs every launch
/// once, each in its own submission, starting one further along the list
/// each round, so that no launch always runs first after a pause or right
/// after the slowest. Before them, whole rounds untimed for at least
/// `warm_up_s` seconds (at least one). `rounds` may be lowered after the
/// warm-up to `rounds_if_slow` when one launch took more than
/// `slow_s` seconds of wall time there. `progress(done, total)` is told
/// after each timed round.
pub fn time_rounds(
    gpu: &Gpu,
    launches: &[&super::Prepared],
    rounds: u32,
    warm_up_s: f64,
    slow: (f64, u32),
    progress: &mut dyn FnMut(u32, u32),
) -> Result<Vec<Vec<f64>>, GpuError> {
    let n = launches.len();
    let device = &gpu.device;
    let started = Instant::now();
    let mut slowest = 0.0f64;
    loop {
        for p in launches {
            let t = Instant::now();
            let mut enc = device.create_command_encoder(&Default::default());
            p.encode(&mut enc, None);
            gpu.queue.submit([enc.finish()]);
            gpu.wait()?;
            slowest = slowest.max(t.elapsed().as_secs_f64());
        }
        if started.elapsed().as_secs_f64() >= warm_up_s {
            break;
        }
    }
    let rounds = if slowest > slow.0 {
        rounds.min(slow.1)
    } else {
        rounds
    }
    .max(1);
    let mut secs = vec![Vec::with_capacity(rounds as usize); n];
    let stamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
    for r in 0..rounds {
        let order = (0..n).map(|i| (i + r as usize) % n.max(1));
        if !stamps {
            // Wall time around each launch, waiting for it.
            for i in order {
                let t = Instant::now();
                let mut enc = device.create_command_encoder(&Default::default());
                launches[i].encode(&mut enc, None);
                gpu.queue.submit([enc.finish()]);
                gpu.wait()?;
                secs[i].push(t.elapsed().as_secs_f64());
            }
        } else {
            let count = 2 * n as u32;
            let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("phobos tuning"),
                ty: wgpu::QueryType::Timestamp,
                count,
            });
            let bytes = 8 * u64::from(count);
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
            for i in order {
                let mut enc = device.create_command_encoder(&Default::default());
                launches[i].encode(&mut enc, Some((&queries, 2 * i as u32)));
                gpu.queue.submit([enc.finish()]);
            }
            let mut enc = device.create_command_encoder(&Default::default());
            enc.resolve_query_set(&queries, 0..count, &resolve, 0);
            enc.copy_buffer_to_buffer(&resolve, 0, &read, 0, bytes);
            gpu.queue.submit([enc.finish()]);
            read.map_async(wgpu::MapMode::Read, .., |_| {});
            gpu.wait()?;
            let period = f64::from(gpu.queue.get_timestamp_period()) * 1e-9;
            let view = read
                .get_mapped_range(..)
                .map_err(|e| GpuError::Wgpu(format!("reading timestamps: {e}")))?;
            let ticks: &[u64] = bytemuck::cast_slice(&view);
            for (i, t) in ticks.chunks(2).enumerate() {
                // A launch of no workgroups records no pass: 0 s.
                let s = if launches[i].workgroups().contains(&0) {
                    0.0
                } else {
                    t[1].wrapping_sub(t[0]) as f64 * period
                };
                secs[i].push(s);
            }
        }
        progress(r + 1, rounds);
    }
    Ok(secs)
}
