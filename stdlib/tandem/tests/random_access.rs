//! Random access: a fill started at any element equals the tail of the
//! whole fill, and single draws equal fill elements, for every fill and
//! for several `K` (proptest over starts and lengths).

use phobos_tandem::{AliasTable, Key, Tandem};
use proptest::prelude::*;

/// Checks that `fill(start, len)` equals elements `start..start + len` of
/// `fill(base, ..)` for a start inside the base fill.
fn tail_matches<T: Copy + Default + PartialEq + std::fmt::Debug>(
    fill: impl Fn(&mut [T], u64),
    base: u64,
    offset: usize,
    len: usize,
) {
    let mut whole = vec![T::default(); offset + len];
    fill(&mut whole, base);
    let mut part = vec![T::default(); len];
    fill(&mut part, base + offset as u64);
    // Compare bits, so that -0.0 and NaN would count as differences.
    assert_eq!(format!("{:?}", &whole[offset..]), format!("{part:?}"));
}

fn rng(seed: u64, k_log2: u32) -> Tandem {
    Tandem::with_k(Key::from_seed(seed), 1 << k_log2).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_fill_cut_anywhere_equals_the_whole(
        seed in any::<u64>(),
        k_log2 in prop::sample::select(vec![0u32, 3, 5, 7]),
        base in prop_oneof![0u64..4096, any::<u64>().prop_map(|b| b >> 2)],
        offset in 0usize..700,
        len in 0usize..300,
    ) {
        let r = rng(seed, k_log2);
        let table = AliasTable::new(&[0.5, 1.0, 0.0, 3.0]).unwrap();
        tail_matches(|o: &mut [u8], s| r.fill_u8(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [u16], s| r.fill_u16(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [u32], s| r.fill_u32(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [u64], s| r.fill_u64(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [u16], s| r.fill_f16_bits(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [f32], s| r.fill_f32(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [f64], s| r.fill_f64(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [bool], s| r.fill_bool(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [u32], s| r.fill_below_u32(o, s, (1 << 31) + 1).unwrap(), base, offset, len);
        tail_matches(|o: &mut [u64], s| r.fill_below_u64(o, s, (1 << 63) + 1).unwrap(), base, offset, len);
        tail_matches(|o: &mut [i32], s| r.fill_below_i32(o, s, -5, 1000).unwrap(), base, offset, len);
        tail_matches(|o: &mut [i64], s| r.fill_below_i64_u32(o, s, -5, 1000).unwrap(), base, offset, len);
        tail_matches(|o: &mut [i64], s| r.fill_below_i64(o, s, -5, 1 << 40).unwrap(), base, offset, len);
        tail_matches(|o: &mut [f32], s| r.fill_normal_f32(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [f64], s| r.fill_normal_f64(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [f32], s| r.fill_exponential_f32(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [f64], s| r.fill_exponential_f64(o, s).unwrap(), base, offset, len);
        tail_matches(|o: &mut [u32], s| r.fill_choice(o, s, &table).unwrap(), base, offset, len);
    }

    #[test]
    fn single_draws_equal_fill_elements(
        seed in any::<u64>(),
        k_log2 in 0u32..=12,
        start in prop_oneof![0u64..100_000, any::<u64>().prop_map(|b| b >> 1)],
    ) {
        let r = rng(seed, k_log2);
        let len = 64;
        let mut w = vec![0u32; len];
        r.fill_u32(&mut w, start).unwrap();
        let mut d = vec![0u64; len];
        r.fill_u64(&mut d, start).unwrap();
        let mut z = vec![0f64; len];
        r.fill_normal_f64(&mut z, start).unwrap();
        let mut y = vec![0f32; len];
        r.fill_normal_f32(&mut y, start).unwrap();
        let mut b = vec![0u32; len];
        r.fill_below_u32(&mut b, start, 3 << 30).unwrap();
        for j in 0..len {
            let i = start + j as u64;
            prop_assert_eq!(r.word(i), w[j]);
            prop_assert_eq!(r.draw_u64(i), d[j]);
            prop_assert_eq!(r.normal_f64(i).to_bits(), z[j].to_bits());
            prop_assert_eq!(r.normal_f32(i).to_bits(), y[j].to_bits());
            prop_assert_eq!(r.below_u32(i, 3 << 30).unwrap(), b[j]);
        }
    }
}

#[test]
fn misses_and_retries_are_cut_correctly() {
    // Find elements that take the slow paths and start fills exactly there.
    let r = Tandem::new(Key::from_seed(50));
    let mut z = vec![0f64; 4096];
    r.fill_normal_f64(&mut z, 0).unwrap();
    let t = phobos_tandem::ziggurat::table();
    let misses: Vec<usize> = (0..z.len())
        .filter(|&i| phobos_tandem::ziggurat::fast(t, r.draw_u64(i as u64)).is_none())
        .collect();
    assert!(misses.len() > 5, "{} misses", misses.len());
    for &i in &misses {
        let mut part = vec![0f64; 3];
        r.fill_normal_f64(&mut part, i as u64).unwrap();
        assert_eq!(part[0].to_bits(), z[i].to_bits(), "miss at {i}");
    }
}

#[test]
fn the_last_elements_of_the_stream_are_reachable() {
    let r = Tandem::new(Key::from_seed(51));
    let mut tail = [0u64; 4];
    r.fill_u64(&mut tail, u64::MAX - 3).unwrap();
    assert_eq!(tail[3], r.draw_u64(u64::MAX));
    let mut z = [0f64; 1];
    r.fill_normal_f64(&mut z, u64::MAX).unwrap();
    assert_eq!(z[0].to_bits(), r.normal_f64(u64::MAX).to_bits());
}
