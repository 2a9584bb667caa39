//! The integer algorithms on the host against Rust's `/` and `sqrt`.

use super::{host_div, host_div_est, host_div_long, host_sqrt};

/// Equal bits, or both NaN with the result the canonical quiet NaN.
fn same(got: f32, want: f32) -> bool {
    if want.is_nan() {
        got.to_bits() == 0x7fc0_0000
    } else {
        got.to_bits() == want.to_bits()
    }
}

/// xorshift64*: a fixed, seeded stream of test inputs.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }
    /// Random bits with a random exponent drawn from [lo, hi].
    pub(super) fn with_exp(&mut self, lo: u32, hi: u32) -> f32 {
        let x = self.next();
        let e = lo + self.next() % (hi - lo + 1);
        f32::from_bits((x & 0x807f_ffff) | (e << 23))
    }
}

fn edges() -> Vec<f32> {
    let mut v = vec![
        0.0,
        f32::INFINITY,
        f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0x7fff_ffff),
        f32::from_bits(1),
        f32::from_bits(2),
        f32::from_bits(3),
        f32::from_bits(0x007f_ffff),
        f32::from_bits(0x0040_0000),
        f32::from_bits(0x0040_0001),
        f32::MIN_POSITIVE,
        f32::from_bits(0x0080_0001),
        f32::MAX,
        f32::from_bits(0x7f7f_fffe),
        1.0,
        f32::from_bits(0x3f80_0001),
        f32::from_bits(0x3f7f_ffff),
        3.0,
        0.1,
        1.0 / 3.0,
        2.0f32.sqrt(),
        16_777_215.0,
        16_777_217.0,
    ];
    for e in [
        -149, -148, -140, -127, -126, -125, -64, -1, 1, 23, 64, 126, 127,
    ] {
        v.push(2.0f32.powi(e));
    }
    let neg: Vec<f32> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    v
}

fn check_div(a: f32, b: f32) {
    let got = host_div(a, b);
    let want = a / b;
    assert!(
        same(got, want),
        "{a:e} ({:#010x}) / {b:e} ({:#010x}): got {got:e} ({:#010x}), want {want:e} ({:#010x})",
        a.to_bits(),
        b.to_bits(),
        got.to_bits(),
        want.to_bits()
    );
}

fn check_sqrt(a: f32) {
    let got = host_sqrt(a);
    let want = a.sqrt();
    assert!(
        same(got, want),
        "sqrt({a:e}) ({:#010x}): got {got:e} ({:#010x}), want {want:e} ({:#010x})",
        a.to_bits(),
        got.to_bits(),
        want.to_bits()
    );
}

#[test]
fn division_of_edge_values() {
    let e = edges();
    for &a in &e {
        for &b in &e {
            check_div(a, b);
        }
    }
}

#[test]
fn division_of_random_bits() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..200_000 {
        check_div(f32::from_bits(rng.next()), f32::from_bits(rng.next()));
    }
}

#[test]
fn division_near_overflow_underflow_and_exact_results() {
    let mut rng = Rng(42);
    for _ in 0..50_000 {
        // Quotients around the subnormal range and below it.
        check_div(rng.with_exp(0, 40), rng.with_exp(100, 180));
        // Quotients around the largest finite value.
        check_div(rng.with_exp(200, 254), rng.with_exp(60, 130));
        // Subnormal operands.
        check_div(rng.with_exp(0, 0), rng.with_exp(0, 254));
        check_div(rng.with_exp(0, 254), rng.with_exp(0, 0));
        // Exact quotients and ties: small integers times powers of two.
        let p = (rng.next() % 4096) as f32;
        let q = (rng.next() % 4096 + 1) as f32;
        let s = 2.0f32.powi(rng.next() as i32 % 120 - 60);
        check_div(p * q * s, q);
        check_div(p * s, q);
    }
}

#[test]
fn sqrt_of_edge_values_and_sampled_bits() {
    for a in edges() {
        check_sqrt(a);
    }
    // Every 2039th bit pattern (a prime stride, so every exponent and many
    // low-bit patterns), and the neighbours of exact squares.
    let mut bits = 0u64;
    while bits < 1 << 32 {
        check_sqrt(f32::from_bits(bits as u32));
        bits += 2039;
    }
    for i in 1..20_000u32 {
        let sq = (i as f32) * (i as f32);
        for d in [-1i32, 0, 1] {
            check_sqrt(f32::from_bits((sq.to_bits() as i32 + d) as u32));
        }
    }
}

/// Every f32: `cargo test -p phobos-gpu --release -- --ignored sqrt_exhaustive`.
#[test]
#[ignore = "2^32 inputs: run in release"]
fn sqrt_exhaustive() {
    std::thread::scope(|s| {
        for t in 0..4u32 {
            s.spawn(move || {
                for hi in (t << 30)..=((t << 30) | 0x3fff_ffff) {
                    check_sqrt(f32::from_bits(hi));
                }
            });
        }
    });
}

/// Many more random divisions: `cargo test -p phobos-gpu --release -- --ignored`.
#[test]
#[ignore = "long: run in release"]
fn division_of_random_bits_long() {
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                let mut rng = Rng(0x1234_5678 + t);
                for _ in 0..100_000_000 {
                    check_div(f32::from_bits(rng.next()), f32::from_bits(rng.next()));
                    check_div(rng.with_exp(0, 60), rng.with_exp(90, 254));
                }
            });
        }
    });
}

fn check_div_long(a: f32, b: f32) {
    let got = host_div_long(a, b);
    let want = a / b;
    assert!(
        same(got, want),
        "long: {a:e} ({:#010x}) / {b:e} ({:#010x}): got {:#010x}, want {:#010x}",
        a.to_bits(),
        b.to_bits(),
        got.to_bits(),
        want.to_bits()
    );
}

/// `div` with the given estimate must still give `a / b`'s bits; returns
/// whether it fell back to the long division.
fn check_div_est(a: u32, b: u32, est: u32) -> bool {
    let (got, fell_back) = host_div_est(a, b, est);
    let want = f32::from_bits(a) / f32::from_bits(b);
    assert!(
        same(f32::from_bits(got), want),
        "{a:#010x} / {b:#010x} with estimate {est:#010x}: got {got:#010x}, want {:#010x}",
        want.to_bits()
    );
    fell_back
}

/// Estimates a device might give, and some it should not: the correctly
/// rounded quotient moved by up to 3 ulp (across binades too), and 0,
/// infinities, NaN, garbage, and the right value with the wrong sign or
/// far off.
fn estimates(rng: &mut Rng, want: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (-3i32..=3).map(|d| want.wrapping_add(d as u32)).collect();
    v.extend([
        0,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        want ^ 0x8000_0000,
        want.wrapping_add(4),
        want.wrapping_sub(4),
        want.wrapping_add(200),
        want.wrapping_sub(4096),
        want.wrapping_add(1 << 23),
        want.wrapping_sub(1 << 23),
        want ^ (1 << 22),
        want ^ (1 << 14),
        want ^ (1 << 9),
        rng.next(),
    ]);
    v
}

#[test]
fn long_division_of_edge_values_and_random_bits() {
    let e = edges();
    for &a in &e {
        for &b in &e {
            check_div_long(a, b);
        }
    }
    let mut rng = Rng(7);
    for _ in 0..100_000 {
        check_div_long(f32::from_bits(rng.next()), f32::from_bits(rng.next()));
    }
}

#[test]
fn division_with_adversarial_estimates_of_edge_values() {
    let mut rng = Rng(3);
    let e = edges();
    for &a in &e {
        for &b in &e {
            let want = (a / b).to_bits();
            for est in estimates(&mut rng, want) {
                check_div_est(a.to_bits(), b.to_bits(), est);
            }
        }
    }
}

#[test]
fn division_with_perturbed_estimates_uses_the_common_path() {
    // Normal operands and quotients: estimates within 2 ulp of the correctly
    // rounded quotient must (nearly always) be corrected, not fall back.
    let mut rng = Rng(11);
    let (mut n, mut fell) = (0u64, 0u64);
    for _ in 0..300_000 {
        let a = rng.with_exp(64, 190).to_bits();
        let b = rng.with_exp(64, 190).to_bits();
        let want = (f32::from_bits(a) / f32::from_bits(b)).to_bits();
        let d = (rng.next() % 5) as i32 - 2;
        n += 1;
        fell += check_div_est(a, b, want.wrapping_add(d as u32)) as u64;
    }
    assert!(fell * 100 < n, "{fell} of {n} fell back");
}

#[test]
fn division_with_adversarial_estimates_of_random_operands() {
    let mut rng = Rng(5);
    for i in 0..100_000 {
        let (a, b) = match i % 4 {
            0 => (rng.next(), rng.next()),
            1 => (
                rng.with_exp(0, 40).to_bits(),
                rng.with_exp(100, 180).to_bits(),
            ),
            2 => (
                rng.with_exp(200, 254).to_bits(),
                rng.with_exp(60, 130).to_bits(),
            ),
            _ => (
                rng.with_exp(60, 190).to_bits(),
                rng.with_exp(60, 190).to_bits(),
            ),
        };
        let want = (f32::from_bits(a) / f32::from_bits(b)).to_bits();
        for est in estimates(&mut rng, want) {
            check_div_est(a, b, est);
        }
    }
}

/// `cargo test --release -p phobos-gpu -- --ignored many_divisions`:
/// hundreds of millions of pairs with perturbed estimates.
#[test]
#[ignore]
fn many_divisions_with_perturbed_estimates() {
    let n: u64 = std::env::var("PHOBOS_DIV_PAIRS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400_000_000);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let fell: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut rng = Rng(0x1234_5678 + t * 0x9e37_79b9);
                    let mut fell = 0u64;
                    for i in 0..n / threads {
                        let (a, b) = if i % 2 == 0 {
                            (rng.next(), rng.next())
                        } else {
                            (
                                rng.with_exp(1, 254).to_bits(),
                                rng.with_exp(1, 254).to_bits(),
                            )
                        };
                        let want = (f32::from_bits(a) / f32::from_bits(b)).to_bits();
                        let r = rng.next();
                        let est = match r % 16 {
                            0 => rng.next(),
                            1 => want.wrapping_add(3),
                            2 => want.wrapping_sub(3),
                            _ => want.wrapping_add((r >> 8) % 5).wrapping_sub(2),
                        };
                        fell += check_div_est(a, b, est) as u64;
                    }
                    fell
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    eprintln!("{n} divisions, {fell} took the long division");
}

/// A zero dividend over a finite non-zero divisor is answered on the common
/// path, whatever the device's estimate (a cleared buffer or a ReLU's zeros
/// divided by dropout's keep rate never run the long division), and the
/// other zero cases still fall back to it.
#[test]
fn zero_dividends_skip_the_long_division() {
    let mut rng = Rng(0x5eed);
    for _ in 0..20_000 {
        for a in [0u32, 0x8000_0000] {
            let b = match rng.next() & 0x7fff_ffff {
                0 => 1,
                m if m >= 0x7f80_0000 => m & 0x007f_ffff | 0x0080_0000,
                m => m,
            } | (rng.next() & 0x8000_0000);
            let want = (f32::from_bits(a) / f32::from_bits(b)).to_bits();
            let (got, fell) = host_div_est(a, b, rng.next());
            assert_eq!((got, fell), (want, false), "{a:#x} / {b:#x}");
        }
    }
    for b in [0u32, 0x8000_0000, 0x7f80_0000, 0x7fc0_0000] {
        let (got, fell) = host_div_est(0, b, 0);
        assert!(fell, "0 / {b:#x} should take the long division");
        assert!(same(f32::from_bits(got), 0.0 / f32::from_bits(b)));
    }
}
