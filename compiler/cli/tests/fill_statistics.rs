//! `phobosc fill` output against the exact distribution of each type, end to
//! end through the binary: the raw bytes are parsed and tested with
//! chi-square (discrete types) or Kolmogorov-Smirnov (continuous ones), with
//! the statistics of the reference crate's own tests
//! (stdlib/tandem/tests/common). Fixed keys, so the tests are deterministic;
//! one fails below p = 1e-4 (`P_MIN`). Each continuous test is also shown to
//! reject a 3 % scale error at the same size, so it can fail. SPEC.md
//! section 11.1 lists them.

#[path = "../../../stdlib/tandem/tests/common/mod.rs"]
mod common;

use common::*;
use std::process::Command;

/// Elements per test: 2^18, a few seconds in all in a debug build.
const N: usize = 1 << 18;

/// The raw output of `phobosc fill TYPE --key KEY --start START --count N`.
fn fill(ty: &str, key: &str, start: &str) -> Vec<u8> {
    let n = N.to_string();
    let o = Command::new(env!("CARGO_BIN_EXE_phobosc"))
        .args(["fill", ty, "--key", key, "--start", start, "--count", &n])
        .env_remove("PHOBOS_BACKEND")
        .output()
        .expect("phobosc runs");
    assert!(
        o.status.success(),
        "{ty}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

fn words<const W: usize>(b: &[u8]) -> impl Iterator<Item = [u8; W]> + '_ {
    assert_eq!(b.len() % W, 0);
    b.chunks_exact(W).map(|c| c.try_into().unwrap())
}

fn counts(values: impl Iterator<Item = usize>, bins: usize) -> Vec<u64> {
    let mut c = vec![0u64; bins];
    for v in values {
        c[v] += 1;
    }
    c
}

fn assert_p(what: &str, p: f64) {
    eprintln!("{what}: p = {p:.4}");
    assert!(p > P_MIN, "{what}: p = {p:e} < {P_MIN:e}");
}

/// KS of the samples against `cdf`, and the same statistic rejecting the
/// samples scaled by 1.03 (the test's power at this size).
fn assert_ks(what: &str, x: &[f64], cdf: impl Fn(f64) -> f64) {
    assert_eq!(x.len(), N, "{what}: element count");
    assert_p(what, ks(x, &cdf));
    let scaled: Vec<f64> = x.iter().map(|v| v * 1.03).collect();
    let p = ks(&scaled, &cdf);
    assert!(
        p < P_MIN,
        "{what}: a 3 % scale error passes (p = {p:e}); the test has no power"
    );
}

#[test]
fn u32_bytes_and_consecutive_pairs_are_uniform() {
    let b = fill("u32", "1", "0");
    let w: Vec<u32> = words::<4>(&b).map(u32::from_le_bytes).collect();
    for pos in 0..4 {
        let c = counts(w.iter().map(|x| (x >> (8 * pos) & 0xff) as usize), 256);
        assert_p(&format!("u32 byte {pos}"), chi_square_uniform(&c));
    }
    // Top nibbles of words 1, 4 and 32 apart: the next word of the block,
    // the next chunk (lane) and the next step of the chunk (section 3.4).
    for lag in [1, 4, 32] {
        let c = counts(
            w.iter()
                .zip(&w[lag..])
                .map(|(a, b)| ((a >> 28) << 4 | b >> 28) as usize),
            256,
        );
        assert_p(&format!("u32 pairs at lag {lag}"), chi_square_uniform(&c));
    }
}

#[test]
fn uniform_floats_pass_ks_on_their_grid() {
    let b = fill("f32", "2", "12345");
    let x: Vec<f64> = words::<4>(&b)
        .map(|w| f64::from(f32::from_le_bytes(w)))
        .collect();
    for &v in &x {
        assert!((0.0..1.0).contains(&v) && (v * 2f64.powi(24)).fract() == 0.0);
    }
    assert_ks("f32", &x, |v| v.clamp(0.0, 1.0));
    // Far into the stream: the last 2^18 elements of the 2^64.
    let b = fill("f64", "3", "0xfffffffffffc0000");
    let x: Vec<f64> = words::<8>(&b).map(f64::from_le_bytes).collect();
    for &v in &x {
        assert!((0.0..1.0).contains(&v) && (v * 2f64.powi(53)).fract() == 0.0);
    }
    assert_ks("f64", &x, |v| v.clamp(0.0, 1.0));
}

#[test]
fn normals_pass_ks() {
    let b = fill("normal_f32", "4", "0");
    let x: Vec<f64> = words::<4>(&b)
        .map(|w| f64::from(f32::from_le_bytes(w)))
        .collect();
    assert_ks("normal_f32", &x, normal_cdf);
    let b = fill("normal_f64", "5", "999");
    let x: Vec<f64> = words::<8>(&b).map(f64::from_le_bytes).collect();
    assert_ks("normal_f64", &x, normal_cdf);
    // The ziggurat's tail: counts beyond 3 sigma, about 708 expected.
    let beyond = x.iter().filter(|v| v.abs() > 3.0).count() as u64;
    let mean = N as f64 * 2.0 * normal_sf(3.0);
    assert_p("normal_f64 beyond 3 sigma", poisson_two_sided(beyond, mean));
}

#[test]
fn exponentials_pass_ks() {
    let cdf = |v: f64| if v <= 0.0 { 0.0 } else { -(-v).exp_m1() };
    let b = fill("exp_f32", "6", "0");
    let x: Vec<f64> = words::<4>(&b)
        .map(|w| f64::from(f32::from_le_bytes(w)))
        .collect();
    assert!(x.iter().all(|&v| v >= 0.0));
    assert_ks("exp_f32", &x, cdf);
    let b = fill("exp_f64", "7", "77");
    let x: Vec<f64> = words::<8>(&b).map(f64::from_le_bytes).collect();
    assert!(x.iter().all(|&v| v >= 0.0));
    assert_ks("exp_f64", &x, cdf);
}

#[test]
fn bounded_integers_are_uniform() {
    // A die, many bins, a low bound, and n just above 2^31, where half of
    // the multiply-shift's outputs would be too likely without rejection.
    let b = fill("below:6", "8", "0");
    let c = counts(words::<4>(&b).map(|w| u32::from_le_bytes(w) as usize), 6);
    assert_p("below:6", chi_square_uniform(&c));
    let b = fill("below:1000", "9", "5");
    let c = counts(words::<4>(&b).map(|w| u32::from_le_bytes(w) as usize), 1000);
    assert_p("below:1000", chi_square_uniform(&c));
    let b = fill("below:-10:21", "10", "0");
    let c = counts(
        words::<4>(&b).map(|w| (i32::from_le_bytes(w) + 10) as usize),
        21,
    );
    assert_p("below:-10:21", chi_square_uniform(&c));
    // n = 3 2^30: three equal bins of 2^30 values each.
    let b = fill("below:3221225472", "11", "0");
    let c = counts(
        words::<4>(&b).map(|w| (u32::from_le_bytes(w) >> 30) as usize),
        3,
    );
    assert_p("below:3221225472 in thirds", chi_square_uniform(&c));
    // A 64-bit n: 2^63 + 2^62 = 3 2^62, again in thirds.
    let b = fill("below:0xc000000000000000", "12", "0");
    let c = counts(
        words::<8>(&b).map(|w| (u64::from_le_bytes(w) >> 62) as usize),
        3,
    );
    assert_p("below:3*2^62 in thirds", chi_square_uniform(&c));
}

#[test]
fn choice_follows_its_weights() {
    let weights = [1.0, 2.0, 0.0, 3.5, 0.25];
    let b = fill("choice:1,2,0,3.5,0.25", "13", "0");
    let c = counts(
        words::<4>(&b).map(|w| u32::from_le_bytes(w) as usize),
        weights.len(),
    );
    assert_eq!(c[2], 0, "a zero weight was drawn");
    let total: f64 = weights.iter().sum();
    let (obs, exp): (Vec<u64>, Vec<f64>) = c
        .iter()
        .zip(weights)
        .filter(|&(_, w)| w > 0.0)
        .map(|(&o, w)| (o, w / total * N as f64))
        .unzip();
    assert_p("choice", chi_square(&obs, &exp));
}

#[test]
fn bools_are_fair_and_independent() {
    let b = fill("bool", "14", "3");
    assert!(b.iter().all(|&x| x <= 1));
    let ones = b.iter().filter(|&&x| x == 1).count() as u64;
    assert_p("bool ones", binomial_two_sided(ones, N as u64, 0.5));
    // Patterns of 8 consecutive bools.
    let c = counts(
        b.chunks_exact(8)
            .map(|w| w.iter().fold(0, |a, &x| a << 1 | usize::from(x))),
        256,
    );
    assert_p("bool 8-patterns", chi_square_uniform(&c));
}
