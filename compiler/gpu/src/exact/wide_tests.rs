//! The f64-checked divisions (`wide.rs`, `recip.rs`) and the f32-checked
//! one (`split.rs`) on the host against Rust's `/`, with exact, inaccurate and broken native
//! estimates.

use super::{host_div_recip, host_div_split, host_div_wide, host_sqrt_wide};

/// A checked division on the host: the bits and whether it fell back.
type Div = fn(u32, u32, i32, bool) -> (u32, bool);

/// The checked divisions, by name.
const DIVS: [(&str, Div); 3] = [
    ("wide", host_div_wide),
    ("split", host_div_split),
    ("recip", host_div_recip),
];

/// The exact tests' input stream, with the exponent drawn as bits.
struct Rng(super::tests::Rng);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(super::tests::Rng(seed))
    }
    fn next(&mut self) -> u32 {
        self.0.next()
    }
    /// Random bits with a random exponent field drawn from [lo, hi].
    fn with_exp(&mut self, lo: u32, hi: u32) -> u32 {
        self.0.with_exp(lo, hi).to_bits()
    }
}

/// Every division gives Rust's bits (NaN as the canonical one) with this
/// reciprocal error and fma.
fn check(a: u32, b: u32, rcp_error: i32, unfused: bool) {
    for (_, div) in DIVS {
        check_with(div, a, b, rcp_error, unfused);
    }
}

/// `div` gives Rust's bits with this reciprocal error and fma; returns
/// whether it fell back.
fn check_with(div: Div, a: u32, b: u32, rcp_error: i32, unfused: bool) -> bool {
    let (got, fell_back) = div(a, b, rcp_error, unfused);
    let want = f32::from_bits(a) / f32::from_bits(b);
    let want = if want.is_nan() {
        0x7fc0_0000
    } else {
        want.to_bits()
    };
    assert_eq!(
        got,
        want,
        "{:e} ({a:#010x}) / {:e} ({b:#010x}), reciprocal {rcp_error} ulp off, unfused {unfused}: got {got:#010x}, want {want:#010x}",
        f32::from_bits(a),
        f32::from_bits(b)
    );
    fell_back
}

const ERRORS: [i32; 9] = [0, 1, -1, 3, -3, 64, -1000, 1 << 20, i32::MIN];

#[test]
fn random_operands_with_every_kind_of_estimate() {
    let mut rng = Rng::new(7);
    for _ in 0..20_000 {
        let pairs = [
            (rng.next(), rng.next()),
            (rng.with_exp(100, 150), rng.with_exp(100, 150)),
            // Quotients near the overflow and underflow thresholds.
            (rng.with_exp(200, 254), rng.with_exp(60, 130)),
            (rng.with_exp(0, 40), rng.with_exp(100, 180)),
            (rng.with_exp(0, 0), rng.with_exp(0, 254)),
        ];
        for (a, b) in pairs {
            for e in ERRORS {
                check(a, b, e, false);
                check(a, b, e, true);
            }
        }
    }
}

#[test]
fn exact_quotients_and_edges() {
    let mut rng = Rng::new(11);
    let edges = [
        0u32,
        0x8000_0000,
        1,
        0x007f_ffff,
        0x0080_0000,
        0x3f80_0000,
        0x3f80_0001,
        0x3f7f_ffff,
        0x7f7f_ffff,
        0x7f80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0x4040_0000,
        0x0c80_0000,
        0x0d00_0000,
    ];
    for &a in &edges {
        for &b in &edges {
            for e in ERRORS {
                check(a, b, e, false);
                check(a ^ 0x8000_0000, b, e, true);
            }
        }
    }
    for _ in 0..50_000 {
        let p = (rng.next() % 4096) as f32;
        let q = (rng.next() % 4096 + 1) as f32;
        let s = 2.0f32.powi(rng.next() as i32 % 120 - 60);
        for e in [0, 2, -2] {
            check((p * q * s).to_bits(), q.to_bits(), e, false);
            check((p * s).to_bits(), q.to_bits(), e, true);
        }
    }
}

/// With an accurate reciprocal and a fused fma, operands of ordinary size
/// almost never leave the fast path (what makes it fast on a GPU).
#[test]
fn ordinary_operands_take_the_fast_path() {
    for (name, div) in DIVS {
        let mut rng = Rng::new(3);
        let mut fell = 0;
        let n = 200_000;
        for _ in 0..n {
            let (a, b) = (rng.with_exp(80, 170), rng.with_exp(80, 170));
            fell += check_with(div, a, b, 0, false) as u32;
        }
        assert!(fell < n / 10_000, "{name}: {fell} of {n} fell back");
    }
}

/// Softmax's and dropout's quotients: values of `[0, 1]` over a divisor
/// near 1 or above (a row's sum, `1 - p`), the common case.
#[test]
fn probabilities_take_the_fast_path() {
    for (name, div) in DIVS {
        let mut rng = Rng::new(9);
        let mut fell = 0;
        let n = 200_000;
        for _ in 0..n {
            let (a, b) = (rng.with_exp(100, 126), rng.with_exp(126, 140));
            fell += check_with(div, a, b, 0, false) as u32;
        }
        assert!(fell < n / 10_000, "{name}: {fell} of {n} fell back");
    }
}

/// Many more: `cargo test -p phobos-gpu --release -- --ignored wide`.
#[test]
#[ignore = "long: run in release"]
fn wide_division_long() {
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                let mut rng = Rng::new(0xabcd + t);
                for i in 0..50_000_000u64 {
                    let e = ERRORS[(i % ERRORS.len() as u64) as usize];
                    check(rng.next(), rng.next(), e, i % 2 == 0);
                    check(rng.with_exp(90, 160), rng.with_exp(90, 160), e, i % 3 == 0);
                }
            });
        }
    });
}

fn check_sqrt(a: u32, rcp_error: i32, unfused: bool) -> bool {
    let (got, fell_back) = host_sqrt_wide(a, rcp_error, unfused);
    // NaN for NaN and negative inputs, decided on the bits: an optimised
    // build was seen to answer `is_nan` false here for NaNs.
    let magnitude = a & 0x7fff_ffff;
    let want = if magnitude > 0x7f80_0000 || (a >> 31 == 1 && magnitude != 0) {
        0x7fc0_0000
    } else {
        f32::from_bits(a).sqrt().to_bits()
    };
    assert_eq!(
        got,
        want,
        "sqrt({:e}) ({a:#010x}), rsqrt {rcp_error} ulp off, unfused {unfused}: got {got:#010x}, want {want:#010x}",
        f32::from_bits(a)
    );
    fell_back
}

#[test]
fn sqrt_of_sampled_bits_with_every_kind_of_estimate() {
    // Every 65521st bit pattern (a prime stride) and the neighbours of
    // exact squares, with each estimate error.
    let mut bits = 0u64;
    while bits < 1 << 32 {
        for e in ERRORS {
            check_sqrt(bits as u32, e, e % 2 == 0);
        }
        bits += 65_521;
    }
    for i in (1..40_000u32).step_by(7) {
        let sq = (i as f32) * (i as f32);
        for d in [-1i32, 0, 1] {
            for e in [0, 1, -3] {
                check_sqrt((sq.to_bits() as i32 + d) as u32, e, false);
            }
        }
    }
}

#[test]
fn sqrt_of_ordinary_values_takes_the_fast_path() {
    let mut rng = Rng::new(5);
    let mut fell = 0;
    let n = 200_000;
    for _ in 0..n {
        // Below about 2^-100 the residual `a - q0^2` underflows and the
        // integer square root takes over.
        fell += check_sqrt(rng.with_exp(30, 254) & 0x7fff_ffff, 0, false) as u32;
    }
    assert!(fell < n / 10_000, "{fell} of {n} fell back");
}

/// Every f32: `cargo test -p phobos-gpu --release -- --ignored sqrt_wide_exhaustive`.
#[test]
#[ignore = "2^32 inputs: run in release"]
fn sqrt_wide_exhaustive() {
    std::thread::scope(|s| {
        for t in 0..16u32 {
            s.spawn(move || {
                for x in (t << 28)..=((t << 28) | 0x0fff_ffff) {
                    check_sqrt(x, 0, false);
                }
            });
        }
    });
}
