//! Tandem fills on the GPU against the reference crate: every GPU type, at
//! aligned and unaligned starts and lengths, several `K`, piece boundaries,
//! a 2-D dispatch and the buffer variant.
//!
//! Without an adapter each test says so and passes, unless
//! `PHOBOS_REQUIRE_GPU=1` (then it fails). On lavapipe:
//! `WGPU_BACKEND=vulkan NODEVICE_SELECT=1 cargo test -p phobos-runtime --test fill`.

use phobos_runtime::gpu::{Gpu, GpuError};
use phobos_tandem::{Bulk, Dist, Key, Tandem};

fn gpu() -> Option<&'static Gpu> {
    match Gpu::shared() {
        Ok(g) => Some(g),
        Err(e) => {
            assert!(
                std::env::var("PHOBOS_REQUIRE_GPU").map_or(true, |v| v != "1"),
                "PHOBOS_REQUIRE_GPU=1 but the GPU backend is not available: {e}"
            );
            eprintln!("skipping the GPU: {e}");
            None
        }
    }
}

const TYPES: [Dist; 7] = [
    Dist::U8,
    Dist::U16,
    Dist::U32,
    Dist::U64,
    Dist::F16Bits,
    Dist::F32,
    Dist::F64,
];

/// The reference bytes: the element-by-element fills of `Tandem`.
fn reference(rng: &Tandem, d: &Dist, start: u64, n: usize) -> Vec<u8> {
    fn le<T: Copy + Default, const N: usize>(
        n: usize,
        f: impl FnOnce(&mut [T]),
        b: impl Fn(T) -> [u8; N],
    ) -> Vec<u8> {
        let mut v = vec![T::default(); n];
        f(&mut v);
        v.into_iter().flat_map(b).collect()
    }
    let s = start;
    match d {
        Dist::U8 => le(n, |o| rng.fill_u8(o, s).unwrap(), |x: u8| [x]),
        Dist::U16 => le(n, |o| rng.fill_u16(o, s).unwrap(), u16::to_le_bytes),
        Dist::U32 => le(n, |o| rng.fill_u32(o, s).unwrap(), u32::to_le_bytes),
        Dist::U64 => le(n, |o| rng.fill_u64(o, s).unwrap(), u64::to_le_bytes),
        Dist::F16Bits => le(n, |o| rng.fill_f16_bits(o, s).unwrap(), u16::to_le_bytes),
        Dist::F32 => le(n, |o| rng.fill_f32(o, s).unwrap(), f32::to_le_bytes),
        Dist::F64 => le(n, |o| rng.fill_f64(o, s).unwrap(), f64::to_le_bytes),
        _ => unreachable!(),
    }
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

fn check(gpu: &Gpu, rng: Tandem, d: &Dist, start: u64, n: usize, piece_bytes: Option<u64>) {
    let size = d.elem_size();
    let mut got = vec![0xA5u8; n * size];
    match piece_bytes {
        None => gpu.fill(d, rng, start, &mut got),
        Some(p) => gpu.fill_in_pieces(d, rng, start, &mut got, p),
    }
    .unwrap_or_else(|e| panic!("{d:?} start {start} n {n}: {e}"));
    let want = if n <= 1 << 16 {
        reference(&rng, d, start, n)
    } else {
        let mut w = vec![0u8; n * size];
        Bulk::new(rng).fill_bytes(d, start, &mut w).unwrap();
        w
    };
    if let Some(i) = first_difference(&got, &want) {
        panic!(
            "{d:?} K {} start {start} n {n} pieces {piece_bytes:?}: byte {i} (element {}) is {:#04x}, the reference {:#04x}",
            rng.k(),
            i / size,
            got[i],
            want[i]
        );
    }
}

#[test]
fn every_gpu_type_equals_the_reference_at_any_cut() {
    let Some(gpu) = gpu() else { return };
    eprintln!("device: {}", gpu.describe());
    let rng = Tandem::new(Key::from_seed(7));
    let cuts: [(u64, usize); 9] = [
        (0, 1),
        (0, 1000),
        (1, 999),
        (3, 517),
        (5, 3),
        (255, 258),
        (123_457, 4099),
        (1 << 40, 777),
        (u64::MAX - 300, 301),
    ];
    for d in &TYPES {
        for &(start, n) in &cuts {
            check(gpu, rng, d, start, n, None);
        }
    }
}

#[test]
fn other_chunk_lengths() {
    let Some(gpu) = gpu() else { return };
    for k in [1, 2, 8, 64, 4096] {
        let rng = Tandem::with_k(Key::from_seed(99), k).unwrap();
        for d in [Dist::U32, Dist::F64, Dist::U8] {
            for (start, n) in [(0u64, 3000usize), (77, 40_000), (u64::MAX / 16 * 3, 600)] {
                let start = start / d.elem_size() as u64;
                check(gpu, rng, &d, start, n, None);
            }
        }
    }
}

#[test]
fn pieces_split_anywhere() {
    let Some(gpu) = gpu() else { return };
    let rng = Tandem::new(Key::from_seed(3));
    // 256 bytes (16 blocks) per dispatch: many pieces, each starting inside
    // a group.
    for d in [Dist::U8, Dist::U32, Dist::F32, Dist::F64] {
        for (start, n) in [(0u64, 5000usize), (13, 2049), (1001, 1)] {
            check(gpu, rng, &d, start, n, Some(256));
            check(gpu, rng, &d, start, n, Some(4096 + 256));
        }
    }
}

#[test]
fn large_fill_takes_a_two_dimensional_dispatch() {
    let Some(gpu) = gpu() else { return };
    // K = 1: one chunk per block, so 2^22 + 2^20 blocks (80 MiB, if the
    // device binds that much) are more than 65,535 workgroups of 64.
    let rng = Tandem::with_k(Key::from_seed(5), 1).unwrap();
    let limit = gpu.device().limits().max_storage_buffer_binding_size;
    let blocks = ((1u64 << 22) + (1 << 20)).min(limit / 16);
    assert!(blocks > 65_535 * 64, "the device binds only {limit} bytes");
    check(gpu, rng, &Dist::U32, 12, (blocks * 4) as usize - 12, None);
}

#[test]
fn buffer_variant_writes_the_same_bytes() {
    let Some(gpu) = gpu() else { return };
    let rng = Tandem::new(Key::from_seed(11));
    let (start, count) = (4096u64 * 3, 10_000u64);
    let bytes = count * 8;
    let device = gpu.device();
    let dst = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes.next_multiple_of(16),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: dst.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    gpu.fill_buffer(&Dist::F64, rng, start, count, &dst)
        .unwrap();
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(&dst, 0, &read, 0, dst.size());
    gpu.queue().submit([enc.finish()]);
    read.map_async(wgpu::MapMode::Read, .., |_| {});
    gpu.wait().unwrap();
    let view = read.get_mapped_range(..).unwrap();
    let want = reference(&rng, &Dist::F64, start, count as usize);
    assert!(view[..bytes as usize] == want[..], "fill_buffer differs");

    // A start inside a block is refused, naming the host variant.
    let e = gpu
        .fill_buffer(&Dist::U32, rng, 1, 4, &dst)
        .unwrap_err()
        .to_string();
    assert!(e.contains("Gpu::fill"), "{e}");
}

#[test]
fn other_fills_name_the_cpu_backend() {
    let Some(gpu) = gpu() else { return };
    let rng = Tandem::new(Key::from_seed(1));
    for d in [Dist::NormalF32, Dist::Bool, Dist::BelowU32 { n: 6 }] {
        let mut out = vec![0u8; 16 * d.elem_size()];
        match gpu.fill(&d, rng, 0, &mut out) {
            Err(GpuError::Fill(m)) => assert!(m.contains("--backend cpu"), "{m}"),
            other => panic!("{d:?}: {other:?}"),
        }
    }
    let mut out = vec![0u8; 16];
    let e = gpu
        .fill(&Dist::U32, rng, u64::MAX - 2, &mut out)
        .unwrap_err();
    assert!(e.to_string().contains("2^64"), "{e}");
}
