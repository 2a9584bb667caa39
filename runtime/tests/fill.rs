//! Tandem fills on the GPU against the reference crate: every GPU type, at
//! aligned and unaligned starts and lengths, several `K`, piece boundaries,
//! miss lists that overflow, a 2-D dispatch, the buffer variant, and the
//! kernels that stage through workgroup memory over many workgroups.
//!
//! Without an adapter each test says so and passes, unless
//! `PHOBOS_REQUIRE_GPU=1` (then it fails). On lavapipe:
//! `WGPU_BACKEND=vulkan NODEVICE_SELECT=1 cargo test -p phobos-runtime --test fill`.

use phobos_runtime::gpu::Gpu;
use phobos_tandem::{AliasTable, Bulk, Dist, Key, Tandem};

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

/// Every GPU type, with bounded fills at small, middle and extreme `n`
/// (n = 2^31 + 1 and 2^63 + 1 reject about half of all draws).
fn types() -> Vec<Dist> {
    let table = |w: &[f64]| Dist::Choice(AliasTable::new(w).unwrap());
    let thousand: Vec<f64> = (0..1000).map(|i| f64::from((i * 7919) % 101)).collect();
    vec![
        Dist::U8,
        Dist::U16,
        Dist::U32,
        Dist::U64,
        Dist::F16Bits,
        Dist::F32,
        Dist::F64,
        Dist::Bool,
        Dist::BelowU32 { n: 1 },
        Dist::BelowU32 { n: 6 },
        Dist::BelowU32 { n: 1000 },
        Dist::BelowU32 { n: (1 << 31) + 1 },
        Dist::BelowU32 { n: u32::MAX },
        Dist::BelowI32 { low: -10, n: 21 },
        Dist::BelowI32 {
            low: i32::MIN,
            n: u32::MAX,
        },
        Dist::BelowI64U32 {
            low: -(1 << 40),
            n: 6,
        },
        Dist::BelowI64U32 {
            low: i64::MAX - (1i64 << 31),
            n: (1 << 31) + 1,
        },
        Dist::BelowU64 { n: u64::MAX - 1 },
        Dist::BelowU64 { n: (1 << 63) + 1 },
        Dist::BelowU64 { n: 3 << 62 },
        Dist::BelowI64 {
            low: i64::MIN,
            n: u64::MAX,
        },
        Dist::BelowI64 {
            low: -5,
            n: 1 << 40,
        },
        table(&[1.0, 2.0, 3.0, 4.0]),
        table(&[0.0, 1.0, 0.0, 1e300, 5e-324]),
        table(&[3.0]),
        table(&thousand),
        Dist::NormalF32,
        Dist::ExponentialF32,
        Dist::ExponentialF64,
        Dist::NormalF64,
    ]
}

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
        Dist::Bool => le(n, |o| rng.fill_bool(o, s).unwrap(), |x: bool| [x as u8]),
        &Dist::BelowU32 { n: m } => le(
            n,
            |o| rng.fill_below_u32(o, s, m).unwrap(),
            u32::to_le_bytes,
        ),
        &Dist::BelowI32 { low, n: m } => le(
            n,
            |o| rng.fill_below_i32(o, s, low, m).unwrap(),
            i32::to_le_bytes,
        ),
        &Dist::BelowI64U32 { low, n: m } => le(
            n,
            |o| rng.fill_below_i64_u32(o, s, low, m).unwrap(),
            i64::to_le_bytes,
        ),
        &Dist::BelowU64 { n: m } => le(
            n,
            |o| rng.fill_below_u64(o, s, m).unwrap(),
            u64::to_le_bytes,
        ),
        &Dist::BelowI64 { low, n: m } => le(
            n,
            |o| rng.fill_below_i64(o, s, low, m).unwrap(),
            i64::to_le_bytes,
        ),
        Dist::Choice(t) => le(n, |o| rng.fill_choice(o, s, t).unwrap(), u32::to_le_bytes),
        Dist::NormalF32 => le(n, |o| rng.fill_normal_f32(o, s).unwrap(), f32::to_le_bytes),
        Dist::ExponentialF32 => le(
            n,
            |o| rng.fill_exponential_f32(o, s).unwrap(),
            f32::to_le_bytes,
        ),
        Dist::ExponentialF64 => le(
            n,
            |o| rng.fill_exponential_f64(o, s).unwrap(),
            f64::to_le_bytes,
        ),
        Dist::NormalF64 => le(n, |o| rng.fill_normal_f64(o, s).unwrap(), f64::to_le_bytes),
    }
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// How `check` calls the GPU: one host fill, pieces of at most this many
/// bytes, or pieces and a miss list of this many entries.
#[derive(Clone, Copy, Debug)]
enum How {
    Whole,
    Pieces(u64),
    Cap(u64, u32),
}

fn check(gpu: &Gpu, rng: Tandem, d: &Dist, start: u64, n: usize, how: How) {
    let size = d.elem_size();
    let mut got = vec![0xA5u8; n * size];
    match how {
        How::Whole => gpu.fill(d, rng, start, &mut got),
        How::Pieces(p) => gpu.fill_in_pieces(d, rng, start, &mut got, p),
        How::Cap(p, cap) => gpu.fill_with_miss_cap(d, rng, start, &mut got, p, cap),
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
            "{d:?} K {} start {start} n {n} {how:?}: byte {i} (element {}) is {:#04x}, the reference {:#04x}",
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
    for d in &types() {
        for &(start, n) in &cuts {
            check(gpu, rng, d, start, n, How::Whole);
        }
    }
}

#[test]
fn other_chunk_lengths() {
    let Some(gpu) = gpu() else { return };
    for k in [1, 2, 8, 64, 4096] {
        let rng = Tandem::with_k(Key::from_seed(99), k).unwrap();
        for d in [
            Dist::U32,
            Dist::F64,
            Dist::U8,
            Dist::Bool,
            Dist::BelowI64U32 {
                low: 3,
                n: 1 << 31 | 1,
            },
            Dist::NormalF32,
            Dist::ExponentialF64,
            Dist::NormalF64,
        ] {
            for (start, n) in [(0u64, 3000usize), (77, 40_000), (u64::MAX / 16 * 3, 600)] {
                let start = start / d.elem_size() as u64;
                check(gpu, rng, &d, start, n, How::Whole);
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
    let choice = Dist::Choice(AliasTable::new(&[5.0, 1.0, 0.5]).unwrap());
    for d in [
        Dist::U8,
        Dist::U32,
        Dist::F32,
        Dist::F64,
        Dist::Bool,
        Dist::BelowU32 { n: (1 << 31) + 1 },
        Dist::BelowI64U32 {
            low: -1,
            n: 3 << 30,
        },
        Dist::BelowU64 { n: (1 << 63) + 1 },
        choice,
        Dist::ExponentialF32,
        Dist::ExponentialF64,
        Dist::NormalF64,
    ] {
        for (start, n) in [(0u64, 5000usize), (13, 2049), (1001, 1)] {
            check(gpu, rng, &d, start, n, How::Pieces(256));
            check(gpu, rng, &d, start, n, How::Pieces(4096 + 256));
        }
    }
}

#[test]
fn full_miss_lists_retry_in_place() {
    let Some(gpu) = gpu() else { return };
    let rng = Tandem::new(Key::from_seed(17));
    // About half of these draws are rejected; lists of 0 to 100 entries
    // overflow, so most retries run in the fill kernel itself.
    for d in [
        Dist::BelowU32 { n: (1 << 31) + 1 },
        Dist::BelowI64U32 {
            low: -7,
            n: (1 << 31) + 1,
        },
        Dist::BelowI64 {
            low: -1,
            n: (1 << 63) + 1,
        },
        Dist::NormalF64,
    ] {
        for cap in [1, 100] {
            check(gpu, rng, &d, 9, 3000, How::Cap(4096, cap));
            check(gpu, rng, &d, u64::MAX - 999, 1000, How::Cap(1 << 20, cap));
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
    check(
        gpu,
        rng,
        &Dist::U32,
        12,
        (blocks * 4) as usize - 12,
        How::Whole,
    );
}

#[test]
fn buffer_variant_writes_the_same_bytes() {
    let Some(gpu) = gpu() else { return };
    let rng = Tandem::new(Key::from_seed(11));
    let (start, count) = (4096u64 * 3, 10_000u64);
    let bytes = (count * 8).max(4 << 20);
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
    assert!(view[..want.len()] == want[..], "fill_buffer differs");

    drop(view);
    read.unmap();

    // A bounded fill in which half the draws miss: the fill kernel, then
    // the misses kernel, in one pass.
    let d = Dist::BelowU32 { n: (1 << 31) + 1 };
    let count = 1u64 << 20;
    gpu.fill_buffer(&d, rng, 4 * 1000, count, &dst).unwrap();
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(&dst, 0, &read, 0, dst.size());
    gpu.queue().submit([enc.finish()]);
    read.map_async(wgpu::MapMode::Read, .., |_| {});
    gpu.wait().unwrap();
    let view = read.get_mapped_range(..).unwrap();
    let mut want = vec![0u8; 4 * count as usize];
    Bulk::new(rng).fill_bytes(&d, 4 * 1000, &mut want).unwrap();
    assert!(
        view[..want.len()] == want[..],
        "bounded fill_buffer differs"
    );
    drop(view);
    read.unmap();

    // normal_f64: its misses kernel in the same pass.
    let d = Dist::NormalF64;
    let count = 1u64 << 19;
    gpu.fill_buffer(&d, rng, 2 * 777, count, &dst).unwrap();
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(&dst, 0, &read, 0, dst.size());
    gpu.queue().submit([enc.finish()]);
    read.map_async(wgpu::MapMode::Read, .., |_| {});
    gpu.wait().unwrap();
    let view = read.get_mapped_range(..).unwrap();
    let mut want = vec![0u8; 8 * count as usize];
    Bulk::new(rng).fill_bytes(&d, 2 * 777, &mut want).unwrap();
    assert!(
        view[..want.len()] == want[..],
        "normal_f64 fill_buffer differs"
    );

    // A start inside a block is refused, naming the host variant.
    let e = gpu
        .fill_buffer(&Dist::U32, rng, 1, 4, &dst)
        .unwrap_err()
        .to_string();
    assert!(e.contains("Gpu::fill"), "{e}");
}

/// `exponential_f64` over draws of every size: a stream of 2^18 elements
/// covers `u` from near 2^-64 to 1 in proportion; these starts add the
/// stream's end and a large element index (K = 1 and 4096 too).
#[test]
fn exponential_f64_over_many_draws() {
    let Some(gpu) = gpu() else { return };
    for k in [1, 32, 4096] {
        let rng = Tandem::with_k(Key::from_seed(23), k).unwrap();
        for (start, n) in [(0u64, 1 << 18), (1 << 50, 5001), (u64::MAX - 4095, 4096)] {
            check(gpu, rng, &Dist::ExponentialF64, start, n, How::Whole);
        }
    }
}

/// `normal_f64` fills that start exactly at ziggurat misses (found on the
/// host from the 64-bit draws), that end at one, and that hold only one;
/// the misses of 2^20 elements (about 4500, tails and wedges), with K = 1
/// and 4096 too; and the stream's end.
#[test]
fn normal_f64_misses_at_any_cut() {
    let Some(gpu) = gpu() else { return };
    let table = phobos_tandem::ziggurat::table();
    for k in [1, 32, 4096] {
        let rng = Tandem::with_k(Key::from_seed(31), k).unwrap();
        let mut draws = vec![0u64; 1 << 16];
        rng.fill_u64(&mut draws, 0).unwrap();
        let misses: Vec<u64> = (0..draws.len() as u64)
            .filter(|&i| phobos_tandem::ziggurat::fast(table, draws[i as usize]).is_none())
            .collect();
        assert!(misses.len() > 100, "{} misses", misses.len());
        for &m in misses.iter().take(40) {
            check(gpu, rng, &Dist::NormalF64, m, 1, How::Whole);
            check(gpu, rng, &Dist::NormalF64, m, 301, How::Whole);
            check(
                gpu,
                rng,
                &Dist::NormalF64,
                m.saturating_sub(9),
                10,
                How::Whole,
            );
        }
        check(gpu, rng, &Dist::NormalF64, 3, 1 << 20, How::Whole);
        check(
            gpu,
            rng,
            &Dist::NormalF64,
            u64::MAX - 4095,
            4096,
            How::Whole,
        );
    }
}

/// The kernels that stage through workgroup memory (bools; `normal_f64`'s
/// edges) over hundreds of workgroups, the last one partial, with K = 2
/// (both halves of the bool stage, one step each) and uneven cuts.
#[test]
fn staged_fills_over_many_workgroups() {
    let Some(gpu) = gpu() else { return };
    for k in [1, 2, 32] {
        let rng = Tandem::with_k(Key::from_seed(41), k).unwrap();
        check(gpu, rng, &Dist::Bool, 1001, (3 << 20) + 333, How::Whole);
        check(gpu, rng, &Dist::Bool, 77, 5 << 16, How::Pieces(1 << 16));
    }
    let rng = Tandem::with_k(Key::from_seed(43), 2).unwrap();
    check(gpu, rng, &Dist::NormalF64, 5, (1 << 19) + 3, How::Whole);
}

#[test]
fn fills_past_the_stream_are_errors() {
    let Some(gpu) = gpu() else { return };
    let rng = Tandem::new(Key::from_seed(1));
    let mut out = vec![0u8; 16];
    let e = gpu
        .fill(&Dist::U32, rng, u64::MAX - 2, &mut out)
        .unwrap_err();
    assert!(e.to_string().contains("2^64"), "{e}");
}
