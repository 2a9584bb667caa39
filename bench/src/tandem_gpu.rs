//! Tandem fills on the GPU (issue 5, item 3) against the zero-fill ceiling
//! measured in the same run, with the output compared to the CPU bulk fill.
//!
//! `cargo run --release -p phobos-bench --bin phobos-bench-tandem-gpu [-- LOG2_N]`
//!
//! Rows: every GPU fill type over the bytes of 2^LOG2_N 4-byte elements
//! (default 28, 1 GiB): the uniform types, bools, bounded integers (n =
//! 1000 and the worst case 2^31 + 1, which rejects half the draws and
//! resolves them in the misses kernel; 64-bit and i64 variants), choice
//! from 1000 weights, and the f32 normal and exponential; each the median
//! (and fastest) of 21 GPU timestamps around the pass after half a second
//! of warm-up launches, as GiB/s of bytes written, against the zero-fill
//! ceiling; then `Gpu::fill` into host memory (dispatch, copy and
//! readback, wall clock) against `Bulk` on every core.
//! `PHOBOS_TANDEM_K` picks the chunk length (default 32). A benchmark, not a
//! test: CI does not run it.

#[path = "common.rs"]
mod common;

use common::{RUNS, WARM_UP_S, ZERO, gib, time_dispatch, timestamps};
use phobos_runtime::gpu::Gpu;
use phobos_tandem::{AliasTable, Bulk, Dist, Key, Tandem};
use std::time::Instant;

fn storage(gpu: &Gpu, bytes: u64) -> wgpu::Buffer {
    gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("dst"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// The zero-fill ceiling over `bytes`: median and fastest seconds.
fn zero_ceiling(gpu: &Gpu, dst: &wgpu::Buffer) -> (f64, f64) {
    let device = gpu.device();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("zero"),
        source: wgpu::ShaderSource::Wgsl(ZERO.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("zero"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 1,
            resource: dst.as_entire_binding(),
        }],
    });
    let groups = (dst.size() / 16).div_ceil(256) as u32;
    time_dispatch(gpu, &pipeline, &bind, groups)
}

fn read_back(gpu: &Gpu, src: &wgpu::Buffer) -> Vec<u8> {
    let device = gpu.device();
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read"),
        size: src.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(src, 0, &read, 0, src.size());
    gpu.queue().submit([enc.finish()]);
    read.map_async(wgpu::MapMode::Read, .., |_| {});
    gpu.wait().expect("read back");
    read.get_mapped_range(..).expect("mapped").to_vec()
}

/// Elements that differ between `got` and `want` (`size` bytes each).
fn differing(got: &[u8], want: &[u8], size: usize) -> usize {
    got.chunks(size)
        .zip(want.chunks(size))
        .filter(|(a, b)| a != b)
        .count()
}

fn main() {
    let log2: u32 = std::env::args()
        .nth(1)
        .map_or(28, |s| s.parse().expect("LOG2_N"));
    let k: u32 = std::env::var("PHOBOS_TANDEM_K")
        .ok()
        .map_or(32, |s| s.parse().expect("PHOBOS_TANDEM_K"));
    let n = 1u64 << log2;
    let bytes = 4 * n;
    let gpu = Gpu::shared().unwrap_or_else(|e| panic!("{e}"));
    let rng = Tandem::with_k(Key::from_seed(1), k).expect("K");
    let bulk = Bulk::new(rng);
    println!("device: {}", gpu.describe());
    println!(
        "Tandem fills, key from_seed(1), K {k}: 2^{log2} 4-byte elements ({bytes} bytes); median (fastest) of {RUNS} GPU timestamps after {WARM_UP_S} s of warm-up; CPU check with {} threads\n",
        bulk.thread_count()
    );
    let dst = storage(gpu, bytes);
    let zero = zero_ceiling(gpu, &dst);
    println!("| what | GiB/s median (fastest) | % of zero-fill ceiling | bits vs CPU bulk fill |");
    println!("|---|---|---|---|");
    println!(
        "| zero-fill ceiling (WGSL, vec4) | {:.0} ({:.0}) | | |",
        gib(bytes, zero.0),
        gib(bytes, zero.1)
    );
    let mut want = vec![0u8; bytes as usize];
    let weights: Vec<f64> = (1..=1000).map(f64::from).collect();
    let table = AliasTable::new(&weights).expect("weights");
    let types = [
        (Dist::U32, "u32"),
        (Dist::F32, "f32"),
        (Dist::F64, "f64"),
        (Dist::F16Bits, "f16"),
        (Dist::Bool, "bool"),
        (Dist::BelowU32 { n: 1000 }, "below_u32(1000)"),
        (Dist::BelowU32 { n: (1 << 31) + 1 }, "below_u32(2^31+1)"),
        (Dist::BelowI32 { low: -10, n: 21 }, "below_i32(-10, 21)"),
        (
            Dist::BelowI64U32 {
                low: -(1 << 40),
                n: 6,
            },
            "below_i64_u32(-2^40, 6)",
        ),
        (Dist::BelowU64 { n: u64::MAX - 1 }, "below_u64(2^64-2)"),
        (Dist::BelowU64 { n: (1 << 63) + 1 }, "below_u64(2^63+1)"),
        (
            Dist::BelowI64 {
                low: i64::MIN,
                n: u64::MAX,
            },
            "below_i64(-2^63, 2^64-1)",
        ),
        (Dist::Choice(table), "choice(1000 weights)"),
        (Dist::NormalF32, "normal_f32"),
        (Dist::ExponentialF32, "exp_f32"),
        (Dist::ExponentialF64, "exp_f64"),
        (Dist::NormalF64, "normal_f64"),
    ];
    for (dist, name) in types {
        let count = bytes / dist.elem_size() as u64;
        // Poison the output so that a dispatch that writes nothing fails.
        let poison = vec![0xA5u8; 1 << 24];
        for off in (0..bytes).step_by(poison.len()) {
            let len = (bytes - off).min(poison.len() as u64) as usize;
            gpu.queue().write_buffer(&dst, off, &poison[..len]);
        }
        let prepared = gpu
            .prepare_fill(&dist, rng, 0, count, &dst)
            .expect("prepare the fill");
        let t = timestamps(gpu, |enc, ts| prepared.encode(enc, ts));
        let got = read_back(gpu, &dst);
        let c0 = Instant::now();
        bulk.fill_bytes(&dist, 0, &mut want).expect("cpu fill");
        let cpu_s = c0.elapsed().as_secs_f64();
        let diff = differing(&got, &want, dist.elem_size());
        let g = gib(bytes, t[t.len() / 2]);
        println!(
            "| Tandem {name} fill, 2^{} elements ({} dispatch{}) | {g:.0} ({:.0}) | {:.1}% | {diff} of {count} differ (CPU bulk fill {:.1} GiB/s) |",
            count.trailing_zeros(),
            prepared.dispatch_count(),
            if prepared.dispatch_count() == 1 {
                ""
            } else {
                "es"
            },
            gib(bytes, t[0]),
            100.0 * g / gib(bytes, zero.0),
            gib(bytes, cpu_s)
        );
    }
    // Into host memory, as `phobosc fill --backend gpu` does (64 MiB pieces
    // there; here one call over the whole output, 256 MiB pieces).
    let mut host = vec![0u8; bytes as usize];
    gpu.fill(&Dist::U32, rng, 0, &mut host).expect("warm");
    let h0 = Instant::now();
    gpu.fill(&Dist::U32, rng, 0, &mut host).expect("host fill");
    let host_s = h0.elapsed().as_secs_f64();
    bulk.fill_bytes(&Dist::U32, 0, &mut want).expect("cpu fill");
    println!(
        "\nGpu::fill u32 into host memory (dispatch, copy, map, copy out; wall clock): {:.2} GiB/s, {} of {n} differ from the CPU bulk fill",
        gib(bytes, host_s),
        differing(&host, &want, 4)
    );
}
