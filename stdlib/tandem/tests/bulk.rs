//! The fast fills (`Bulk`) equal the reference fills (`Tandem::fill_*`) bit
//! for bit, for every distribution, every thread count, and fills cut at
//! random points: inside a 16-byte block, a chunk, a group of eight chunks
//! and a tile, and inside the elements that span several draws or a part of
//! one (u8, u16, bool, u64, f64, normal pairs).

use phobos_tandem::{AliasTable, Bulk, Dist, Error, Key, Tandem};
use proptest::prelude::*;

fn table() -> AliasTable {
    AliasTable::new(&[0.5, 1.0, 0.0, 3.0]).unwrap()
}

/// Every distribution, with parameters that make the slow paths common
/// (n = 2^31 + 1 rejects half of the draws).
fn dists() -> Vec<Dist> {
    vec![
        Dist::U8,
        Dist::U16,
        Dist::U32,
        Dist::U64,
        Dist::F16Bits,
        Dist::F32,
        Dist::F64,
        Dist::Bool,
        Dist::BelowU32 { n: (1 << 31) + 1 },
        Dist::BelowU32 { n: 6 },
        Dist::BelowU64 { n: (1 << 63) + 1 },
        Dist::BelowI32 { low: -5, n: 1000 },
        Dist::BelowI64U32 { low: -5, n: 1000 },
        Dist::BelowI64 {
            low: -5,
            n: 1 << 40,
        },
        Dist::NormalF32,
        Dist::NormalF64,
        Dist::ExponentialF32,
        Dist::ExponentialF64,
        Dist::Choice(table()),
    ]
}

/// The reference fill as little-endian bytes.
fn reference(r: &Tandem, d: &Dist, start: u64, n: usize) -> Vec<u8> {
    fn le<T: Copy + Default, const N: usize>(
        n: usize,
        f: impl FnOnce(&mut [T]) -> Result<(), Error>,
        b: impl Fn(T) -> [u8; N],
    ) -> Vec<u8> {
        let mut v = vec![T::default(); n];
        f(&mut v).unwrap();
        v.into_iter().flat_map(b).collect()
    }
    match *d {
        Dist::U8 => le(n, |o| r.fill_u8(o, start), |x: u8| [x]),
        Dist::U16 => le(n, |o| r.fill_u16(o, start), u16::to_le_bytes),
        Dist::U32 => le(n, |o| r.fill_u32(o, start), u32::to_le_bytes),
        Dist::U64 => le(n, |o| r.fill_u64(o, start), u64::to_le_bytes),
        Dist::F16Bits => le(n, |o| r.fill_f16_bits(o, start), u16::to_le_bytes),
        Dist::F32 => le(n, |o| r.fill_f32(o, start), f32::to_le_bytes),
        Dist::F64 => le(n, |o| r.fill_f64(o, start), f64::to_le_bytes),
        Dist::Bool => le(n, |o| r.fill_bool(o, start), |x: bool| [u8::from(x)]),
        Dist::BelowU32 { n: m } => le(n, |o| r.fill_below_u32(o, start, m), u32::to_le_bytes),
        Dist::BelowU64 { n: m } => le(n, |o| r.fill_below_u64(o, start, m), u64::to_le_bytes),
        Dist::BelowI32 { low, n: m } => {
            le(n, |o| r.fill_below_i32(o, start, low, m), i32::to_le_bytes)
        }
        Dist::BelowI64U32 { low, n: m } => le(
            n,
            |o| r.fill_below_i64_u32(o, start, low, m),
            i64::to_le_bytes,
        ),
        Dist::BelowI64 { low, n: m } => {
            le(n, |o| r.fill_below_i64(o, start, low, m), i64::to_le_bytes)
        }
        Dist::NormalF32 => le(n, |o| r.fill_normal_f32(o, start), f32::to_le_bytes),
        Dist::NormalF64 => le(n, |o| r.fill_normal_f64(o, start), f64::to_le_bytes),
        Dist::ExponentialF32 => le(n, |o| r.fill_exponential_f32(o, start), f32::to_le_bytes),
        Dist::ExponentialF64 => le(n, |o| r.fill_exponential_f64(o, start), f64::to_le_bytes),
        Dist::Choice(ref t) => le(n, |o| r.fill_choice(o, start, t), u32::to_le_bytes),
    }
}

fn fast(r: Tandem, threads: usize, d: &Dist, start: u64, n: usize) -> Vec<u8> {
    let mut out = vec![0xA5u8; n * d.elem_size()];
    Bulk::new(r)
        .threads(threads)
        .fill_bytes(d, start, &mut out)
        .unwrap();
    out
}

fn rng(seed: u64, k_log2: u32) -> Tandem {
    Tandem::with_k(Key::from_seed(seed), 1 << k_log2).unwrap()
}

/// Elements per 16-byte block (SPEC.md section 3.6).
fn per_block(d: &Dist) -> u64 {
    match d {
        Dist::Bool => 128,
        Dist::U8 => 16,
        Dist::U16 | Dist::F16Bits => 8,
        Dist::U32
        | Dist::F32
        | Dist::BelowU32 { .. }
        | Dist::BelowI32 { .. }
        | Dist::BelowI64U32 { .. }
        | Dist::NormalF32
        | Dist::ExponentialF32 => 4,
        _ => 2,
    }
}

/// Element offsets that fall on and just beside the structure's edges, for
/// an element that takes `per_block` per 16-byte block under chunk length `k`.
fn edges(per_block: u64, k: u64) -> Vec<u64> {
    let block = per_block;
    let group = 8 * k * per_block;
    let tile = 2048u64.max(8 * k) * per_block;
    let mut v = vec![0, 1, 2, 3];
    for e in [block, 8 * block, group, tile, 2 * tile] {
        v.extend([e - 1, e, e + 1]);
    }
    v
}

#[test]
fn every_fill_equals_the_reference_from_every_edge() {
    for k_log2 in [0, 5, 7] {
        let r = rng(7, k_log2);
        for d in dists() {
            let per_block = per_block(&d);
            for start in edges(per_block, 1 << k_log2) {
                let n = 40 + (start % 7) as usize;
                let want = reference(&r, &d, start, n);
                for threads in [1, 3] {
                    assert_eq!(
                        fast(r, threads, &d, start, n),
                        want,
                        "{d:?} K={} start={start} threads={threads}",
                        1 << k_log2
                    );
                }
            }
        }
    }
}

#[test]
fn long_fills_on_several_threads_equal_the_reference() {
    // Long enough for several tiles per thread and pieces that end mid-tile.
    let r = Tandem::new(Key::from_seed(8));
    for d in dists() {
        let n = 70_001;
        let want = reference(&r, &d, 12_345, n);
        for threads in [1, 2, 5] {
            assert_eq!(
                fast(r, threads, &d, 12_345, n),
                want,
                "{d:?} threads={threads}"
            );
        }
    }
}

#[test]
fn typed_fills_equal_the_reference() {
    let r = Tandem::new(Key::from_seed(9));
    let b = Bulk::new(r).threads(2);
    let n = 5000;
    let mut x = vec![0u32; n];
    let mut y = vec![0u32; n];
    b.fill_u32(&mut x, 3).unwrap();
    r.fill_u32(&mut y, 3).unwrap();
    assert_eq!(x, y);
    let mut x = vec![0f64; n];
    let mut y = vec![0f64; n];
    b.fill_normal_f64(&mut x, 1).unwrap();
    r.fill_normal_f64(&mut y, 1).unwrap();
    assert_eq!(x, y);
    let mut x = vec![false; n];
    let mut y = vec![false; n];
    b.fill_bool(&mut x, 77).unwrap();
    r.fill_bool(&mut y, 77).unwrap();
    assert_eq!(x, y);
    let mut x = vec![0i64; n];
    let mut y = vec![0i64; n];
    b.fill_below_i64(&mut x, 5, -9, 1 << 62).unwrap();
    r.fill_below_i64(&mut y, 5, -9, 1 << 62).unwrap();
    assert_eq!(x, y);
    let t = table();
    let mut x = vec![0u32; n];
    let mut y = vec![0u32; n];
    b.fill_choice(&mut x, 5, &t).unwrap();
    r.fill_choice(&mut y, 5, &t).unwrap();
    assert_eq!(x, y);
    let mut x = vec![0f32; n];
    let mut y = vec![0f32; n];
    b.fill_exponential_f32(&mut x, 5).unwrap();
    r.fill_exponential_f32(&mut y, 5).unwrap();
    assert_eq!(x, y);
}

#[test]
fn the_end_of_the_stream_and_bad_input() {
    let r = Tandem::new(Key::from_seed(10));
    let b = Bulk::new(r).threads(2);
    for d in dists() {
        let start = u64::MAX - 40;
        assert_eq!(
            fast(r, 2, &d, start, 41),
            reference(&r, &d, start, 41),
            "{d:?}"
        );
        let mut out = vec![7u8; 42 * d.elem_size()];
        assert_eq!(
            b.fill_bytes(&d, start, &mut out),
            Err(Error::BeyondCapacity { start, len: 42 })
        );
        assert!(out.iter().all(|&x| x == 7), "{d:?} wrote on error");
    }
    let mut out = [0u8; 6];
    assert_eq!(
        b.fill_bytes(&Dist::U32, 0, &mut out),
        Err(Error::OutputLength {
            len: 6,
            elem_size: 4
        })
    );
    assert_eq!(
        b.fill_bytes(&Dist::BelowU64 { n: 0 }, 0, &mut [0; 8]),
        Err(Error::EmptyRange { parameter: "n" })
    );
    assert!(matches!(
        b.fill_below_i32(&mut [0; 1], 0, 1, u32::MAX),
        Err(Error::RangeOverflow { .. })
    ));
    assert!(b.fill_bytes(&Dist::U8, u64::MAX, &mut []).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// A fill started at `base + offset` equals elements `offset ..` of the
    /// fill started at `base`, and both equal the reference.
    #[test]
    fn cut_anywhere_equals_the_whole(
        seed in any::<u64>(),
        k_log2 in prop::sample::select(vec![0u32, 3, 5, 8]),
        base in prop_oneof![0u64..5000, any::<u64>().prop_map(|b| b >> 4)],
        offset in prop_oneof![0usize..300, 0usize..20_000],
        len in prop_oneof![0usize..64, 0usize..9000],
        threads in 1usize..4,
        which in 0usize..19,
    ) {
        let r = rng(seed, k_log2);
        let d = &dists()[which];
        let size = d.elem_size();
        let whole = fast(r, threads, d, base, offset + len);
        let part = fast(r, 1 + threads % 3, d, base + offset as u64, len);
        prop_assert_eq!(&whole[offset * size..], &part[..], "{:?}", d);
        if offset + len <= 3000 {
            prop_assert_eq!(&whole, &reference(&r, d, base, offset + len), "{:?}", d);
        } else {
            prop_assert_eq!(&part, &reference(&r, d, base + offset as u64, len), "{:?}", d);
        }
    }
}
