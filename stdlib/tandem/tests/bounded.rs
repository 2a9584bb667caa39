//! Bounded integers: Lemire's method is exact (every value of `[0, n)` has
//! the same number of accepted draws, checked by enumerating preimages),
//! the rejection rate is the predicted one, the retries land where the spec
//! says, and the fills are balanced, including at n = 2^32 - 2 and 2^64 - 2.

mod common;

use common::*;
use phobos_tandem::core::Continuation;
use phobos_tandem::{Key, PURPOSE_BELOW, Tandem, lemire32, lemire64};

/// Every output `r` of `lemire32(., n)` must have exactly `floor(2^32 / n)`
/// accepted draws. Enumerates the draws whose product lands on `r`.
fn check_exact32(n: u32, rs: impl Iterator<Item = u32>) {
    let want = (1u64 << 32) / u64::from(n);
    let n64 = u64::from(n);
    for r in rs {
        let lo = (u64::from(r) << 32).div_ceil(n64);
        let hi = ((u64::from(r) + 1) << 32).div_ceil(n64).min(1 << 32);
        let accepted = (lo..hi)
            .filter(|&x| lemire32(x as u32, n) == Some(r))
            .count() as u64;
        assert_eq!(accepted, want, "n={n} r={r}");
    }
}

fn check_exact64(n: u64, rs: impl Iterator<Item = u64>) {
    let want = (1u128 << 64) / u128::from(n);
    let n128 = u128::from(n);
    for r in rs {
        let lo = (u128::from(r) << 64).div_ceil(n128);
        let hi = ((u128::from(r) + 1) << 64).div_ceil(n128).min(1 << 64);
        let accepted = (lo..hi)
            .filter(|&x| lemire64(x as u64, n) == Some(r))
            .count() as u128;
        assert_eq!(accepted, want, "n={n} r={r}");
    }
}

fn sample_outputs(n: u64) -> impl Iterator<Item = u64> {
    let spread = (0..2000u64).map(move |i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % n);
    [0, 1, n / 2, n - 2, n - 1].into_iter().chain(spread)
}

#[test]
fn lemire32_is_exact() {
    for n in [
        (1u32 << 31) + 1,
        u32::MAX - 1,
        u32::MAX,
        3 << 30,
        (1 << 20) + 3,
        1 << 31,
    ] {
        check_exact32(n, sample_outputs(u64::from(n)).map(|r| r as u32));
    }
    // The rejected draws at n = 2^32 - 2 are exactly 0 and 2^31.
    let n = u32::MAX - 1;
    assert_eq!(lemire32(0, n), None);
    assert_eq!(lemire32(1 << 31, n), None);
    assert_eq!(lemire32(1, n), Some(0));
    assert_eq!(lemire32(u32::MAX, n), Some(n - 1));
}

#[test]
fn lemire64_is_exact() {
    for n in [
        (1u64 << 63) + 1,
        u64::MAX - 1,
        u64::MAX,
        3 << 62,
        (1 << 63) - 25,
    ] {
        check_exact64(n, sample_outputs(n));
    }
    let n = u64::MAX - 1;
    assert_eq!(lemire64(0, n), None);
    assert_eq!(lemire64(1 << 63, n), None);
    assert_eq!(lemire64(u64::MAX, n), Some(n - 1));
}

#[test]
fn a_wrong_threshold_would_be_caught() {
    // Plain multiply-shift without rejection gives about half of the values
    // two draws at this n; the enumeration above would see it.
    let n = (1u64 << 31) + 1;
    let uneven = sample_outputs(n)
        .filter(|&r| {
            let lo = (r << 32).div_ceil(n);
            let hi = ((r + 1) << 32).div_ceil(n).min(1 << 32);
            (lo..hi).filter(|&x| (x * n) >> 32 == r).count() as u64 != (1 << 32) / n
        })
        .count();
    assert!(uneven > 500, "{uneven}");
}

#[test]
fn half_of_the_draws_retry_at_n_2_pow_31_plus_1() {
    let rng = Tandem::new(Key::from_seed(20));
    let n = (1u32 << 31) + 1;
    let len = 1usize << 15;
    let mut words = vec![0u32; len];
    rng.fill_u32(&mut words, 0).unwrap();
    let mut out = vec![0u32; len];
    rng.fill_below_u32(&mut out, 0, n).unwrap();
    let mut retries = 0u64;
    for (i, (&w, &v)) in words.iter().zip(&out).enumerate() {
        let want = lemire32(w, n).unwrap_or_else(|| {
            retries += 1;
            // The retry reads words of sub(PURPOSE_BELOW).split(i)'s continuation.
            let key = rng.key().sub(PURPOSE_BELOW).split(i as u64);
            let mut more = Continuation::new(key.words());
            loop {
                if let Some(v) = lemire32(more.next_u32(), n) {
                    break v;
                }
            }
        });
        assert_eq!(v, want, "element {i}");
    }
    let p_reject = ((1u64 << 32) % u64::from(n)) as f64 / 2f64.powi(32);
    assert!(binomial_two_sided(retries, len as u64, p_reject) > P_MIN);
    // Balanced halves and 64 bins.
    let p = chi_square_uniform(&{
        let mut c = vec![0u64; 64];
        out.iter()
            .for_each(|&v| c[(u64::from(v) * 64 / u64::from(n)) as usize] += 1);
        c
    });
    assert!(p > P_MIN, "p = {p}");
}

/// Bins of `[0, n)` by `v * bins / n`, with each bin's exact expected share.
fn binned(values: impl Iterator<Item = u128>, n: u128, bins: u128) -> (Vec<u64>, Vec<f64>) {
    let mut c = vec![0u64; bins as usize];
    let mut total = 0u64;
    for v in values {
        c[(v * bins / n) as usize] += 1;
        total += 1;
    }
    // Bin b holds the v with b <= v * bins / n < b + 1.
    let expected = (0..bins)
        .map(|b| {
            let first = (b * n).div_ceil(bins);
            let next = ((b + 1) * n).div_ceil(bins);
            total as f64 * (next - first) as f64 / n as f64
        })
        .collect();
    (c, expected)
}

#[test]
fn fills_near_the_top_of_the_range_are_balanced() {
    let rng = Tandem::new(Key::from_seed(21));
    let mut a = vec![0u32; 1 << 17];
    let n32 = u32::MAX - 1;
    rng.fill_below_u32(&mut a, 0, n32).unwrap();
    assert!(a.iter().all(|&v| v < n32));
    let (c, e) = binned(a.iter().map(|&v| u128::from(v)), u128::from(n32), 256);
    assert!(chi_square(&c, &e) > P_MIN);
    let (c, e) = binned(a.iter().map(|&v| u128::from(v & 0xFF)), 256, 256);
    assert!(chi_square(&c, &e) > P_MIN, "low bits");

    let mut b = vec![0u64; 1 << 17];
    let n64 = u64::MAX - 1;
    rng.fill_below_u64(&mut b, 0, n64).unwrap();
    assert!(b.iter().all(|&v| v < n64));
    let (c, e) = binned(b.iter().map(|&v| u128::from(v)), u128::from(n64), 256);
    assert!(chi_square(&c, &e) > P_MIN);
    let (c, e) = binned(b.iter().map(|&v| u128::from(v & 0xFF)), 256, 256);
    assert!(chi_square(&c, &e) > P_MIN, "low bits");
}

#[test]
fn small_ranges_and_low_bounds() {
    let rng = Tandem::new(Key::from_seed(22));
    let mut d = vec![0u32; 1 << 17];
    rng.fill_below_u32(&mut d, 0, 6).unwrap();
    let (c, e) = binned(d.iter().map(|&v| u128::from(v)), 6, 6);
    assert!(chi_square(&c, &e) > P_MIN);
    let mut s = vec![0i32; 1 << 16];
    rng.fill_below_i32(&mut s, 0, -10, 21).unwrap();
    assert!(s.iter().all(|v| (-10..=10).contains(v)));
    let (c, e) = binned(s.iter().map(|&v| (v + 10) as u128), 21, 21);
    assert!(chi_square(&c, &e) > P_MIN);
    // Into i64 from 32-bit draws: the same values as the u32 fill plus low.
    let mut wide = vec![0i64; 1000];
    rng.fill_below_i64_u32(&mut wide, 0, -(1 << 40), 6).unwrap();
    assert!(
        wide.iter()
            .zip(&d)
            .all(|(&w, &u)| w == -(1 << 40) + i64::from(u))
    );
    let mut l = vec![0i64; 1 << 16];
    rng.fill_below_i64(&mut l, 0, i64::MIN, u64::MAX).unwrap();
    let (c, e) = binned(
        l.iter().map(|&v| (v as u64 ^ (1 << 63)) as u128),
        u128::from(u64::MAX),
        64,
    );
    assert!(chi_square(&c, &e) > P_MIN);
}
