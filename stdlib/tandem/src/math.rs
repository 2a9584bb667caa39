//! Elementary functions built only from IEEE basic operations, so that every
//! port reproduces their bits: `+ - * /` and `sqrt` (each correctly rounded,
//! never contracted into an FMA), comparisons, and integer/bit operations.
//!
//! Nothing here calls libm: `f64::ln`, `f32::cos` and friends differ between
//! platforms, and GPU drivers are measured thousands of ulps off. Rust never
//! contracts `a * b + c`, so each line below is one rounding, in the order
//! written; SPEC.md section 6 lists the same sequences and constants.

/// High part of ln 2 with trailing zero bits, so `k * LN2_HI` is exact for
/// `|k| < 2^20` (fdlibm's split).
pub const LN2_HI_F64: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
/// `ln 2 - LN2_HI_F64`, rounded.
pub const LN2_LO_F64: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
/// 1 / ln 2 rounded to f64.
pub const INV_LN2_F64: f64 = f64::from_bits(0x3FF7_1547_652B_82FE);
/// High part of ln 2 in f32 (17 significant bits; `k * LN2_HI_F32` is exact
/// for `|k| < 64`).
pub const LN2_HI_F32: f32 = f32::from_bits(0x3F31_7180);
/// `ln 2 - LN2_HI_F32`, rounded.
pub const LN2_LO_F32: f32 = f32::from_bits(0x3717_F7D1);

/// Mantissa field of the f64 nearest sqrt(2): mantissas at or above it are
/// halved so the reduced argument lies in [sqrt(1/2), sqrt(2)).
pub const SQRT2_MANT_F64: u64 = 0x6_A09E_667F_3BCD;
/// Bits of the f32 nearest sqrt(1/2): `neg_ln_u32` reduces an f32 to
/// `2^k f` with `f` in [this value, twice it).
pub const SQRT_HALF_BITS_F32: u32 = 0x3F35_04F3;
/// `neg_ln_u32` takes `1 - u` (exact on integers) from this `x` up: it is
/// the least `x` with `(x + 1) 2^-32 >= sqrt(1/2)`.
pub const NEG_LN_UPPER_U32: u32 = 0xB504_F333;
/// `2^-32` in f32.
pub const TWO_M32_F32: f32 = f32::from_bits(0x2F80_0000);

/// atanh series coefficients 2/(2j+1), j = 1..9, each rounded to f64:
/// `ln f = 2s + s z (c1 + z (c2 + ...))` with `s = (f-1)/(f+1)`, `z = s*s`.
/// With |s| <= 0.1716 the first omitted term is below 2^-55 relative.
pub const LN_SERIES_F64: [f64; 9] = [
    2.0 / 3.0,
    2.0 / 5.0,
    2.0 / 7.0,
    2.0 / 9.0,
    2.0 / 11.0,
    2.0 / 13.0,
    2.0 / 15.0,
    2.0 / 17.0,
    2.0 / 19.0,
];

/// `Q` of `ln(1 + t) = t + t^2 Q(t)` in f32, constant term first: the
/// degree-7 polynomial of least relative error on [sqrt(1/2) - 1,
/// sqrt(2) - 1] (Remez exchange in 40-digit arithmetic, each coefficient
/// then rounded to f32). The approximation's own relative error is below
/// 2^-24.99; evaluated in f32 as `t + (t * t) * horner(t, Q)` it is within
/// 1.21 ulps of `ln(1 + t)` over that interval.
pub const LOG1P_Q_F32: [f32; 8] = [
    f32::from_bits(0xBEFF_FFFD),
    f32::from_bits(0x3EAA_AB7A),
    f32::from_bits(0xBE80_024D),
    f32::from_bits(0x3E4C_6960),
    f32::from_bits(0xBE29_AE98),
    f32::from_bits(0x3E18_C293),
    f32::from_bits(0xBE12_8250),
    f32::from_bits(0x3DB2_E3BE),
];

/// 1/j! for j = 0..13, each rounded to f64 (|r| <= 0.35 leaves the first
/// omitted term below 2^-57).
pub const EXP_SERIES_F64: [f64; 14] = [
    1.0,
    1.0,
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40320.0,
    1.0 / 362880.0,
    1.0 / 3628800.0,
    1.0 / 39916800.0,
    1.0 / 479001600.0,
    1.0 / 6227020800.0,
];

/// Taylor coefficients of sin (a^3 .. a^9 terms) in f32.
pub const SIN_SERIES_F32: [f32; 4] = [-1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0];
/// Taylor coefficients of cos (a^2 .. a^10 terms) in f32.
pub const COS_SERIES_F32: [f32; 5] = [
    -1.0 / 2.0,
    1.0 / 24.0,
    -1.0 / 720.0,
    1.0 / 40320.0,
    -1.0 / 3628800.0,
];

/// `(pi/2) * 2^-24` in f32: the angle of one unit of a quadrant's 24-bit
/// fraction. It is the f32 nearest pi/2 (0x3FC90FDB) scaled by 2^-24.
pub const HALF_PI_2M24_F32: f32 = f32::from_bits(0x33C9_0FDB);

/// Horner evaluation `c[0] + z (c[1] + z (... + z c[n-1]))`, innermost first.
fn horner_f64(z: f64, c: &[f64]) -> f64 {
    let mut p = c[c.len() - 1];
    for &ci in c[..c.len() - 1].iter().rev() {
        p = ci + z * p;
    }
    p
}

fn horner_f32(z: f32, c: &[f32]) -> f32 {
    let mut p = c[c.len() - 1];
    for &ci in c[..c.len() - 1].iter().rev() {
        p = ci + z * p;
    }
    p
}

/// `ln(2^k * (1 + t))` for `t` in [sqrt(1/2) - 1, sqrt(2) - 1): the
/// atanh series in `s = t / (2 + t)`, then `k ln 2` added in two parts.
pub fn ln_core_f64(k: i32, t: f64) -> f64 {
    let s = t / (2.0 + t);
    let z = s * s;
    let p = horner_f64(z, &LN_SERIES_F64);
    let ln_f = (s + s) + (s * z) * p;
    let kf = f64::from(k);
    kf * LN2_HI_F64 + (kf * LN2_LO_F64 + ln_f)
}

/// `ln(1 + t)` for `t` in [sqrt(1/2) - 1, sqrt(2) - 1] in f32, without a
/// division: `t + t^2 Q(t)`.
pub fn log1p_f32(t: f32) -> f32 {
    let z = t * t;
    let q = horner_f32(t, &LOG1P_Q_F32);
    t + z * q
}

/// The f32 nearest `y` (ties to even), from two exact conversions and one
/// rounding: `f32(y >> 16) * 2^16 + f32(y & 0xFFFF)`. A GPU's own
/// conversion of an inexact integer may round otherwise.
pub fn u32_to_f32_rn(y: u32) -> f32 {
    (y >> 16) as f32 * 65536.0 + (y & 0xFFFF) as f32
}

/// Natural logarithm of a positive normal finite f64 (table generation).
pub fn ln_f64(x: f64) -> f64 {
    debug_assert!(x.is_normal() && x > 0.0);
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7FF) as i32 - 1023;
    let m = bits & ((1 << 52) - 1);
    if m >= SQRT2_MANT_F64 {
        // f / 2 - 1, exact by Sterbenz.
        ln_core_f64(e + 1, f64::from_bits(0x3FE0_0000_0000_0000 | m) - 1.0)
    } else {
        ln_core_f64(e, f64::from_bits(0x3FF0_0000_0000_0000 | m) - 1.0)
    }
}

/// `2^p` for an exponent the caller keeps in the normal range.
fn pow2_f64(p: i32) -> f64 {
    f64::from_bits(((1023 + p) as u64) << 52)
}

/// Splits `u = m * 2^-w` (`1 <= m < 2^w`) into `2^k * (1 + t)` with the
/// reduced `1 + t` in [sqrt(1/2), sqrt(2)), computing `t`'s numerator
/// exactly on integers: `(sign, k, t_num, t_exp)` with
/// `t = sign * t_num * 2^-t_exp`. Working on `m - 2^e` rather than on a
/// rounded `u` keeps full relative accuracy for `u` near 1, where `-ln u`
/// is small. `frac` is `m`'s bits below the leading one, left-aligned to
/// `mant_bits`, compared with the sqrt(2) mantissa `sqrt2`.
fn reduce(m: u64, w: i32, mant_bits: i32, sqrt2: u64) -> (bool, i32, u64, i32) {
    let e = 63 - m.leading_zeros() as i32;
    let below = m ^ (1 << e);
    let frac = if e >= mant_bits {
        below >> (e - mant_bits)
    } else {
        below << (mant_bits - e)
    };
    if frac >= sqrt2 {
        // 1 + t = m / 2^(e+1), t = -(2^(e+1) - m) / 2^(e+1).
        (true, e + 1 - w, ((1u64 << e) << 1).wrapping_sub(m), e + 1)
    } else {
        (false, e - w, below, e)
    }
}

/// `t_num * 2^-t_exp` keeping `t_num`'s leading `bits` bits (truncated), as
/// the exact product of a small integer and a power of two.
fn scaled(t_num: u64, t_exp: i32, bits: i32) -> (u64, i32) {
    let len = 64 - t_num.leading_zeros() as i32;
    if len > bits {
        (t_num >> (len - bits), len - bits - t_exp)
    } else {
        (t_num, -t_exp)
    }
}

/// `-ln(u)` for `u = (x + 1) * 2^-64` in (0, 1], the exponential of a u64
/// draw. `t` keeps the leading 53 bits of its exact integer numerator.
pub fn neg_ln_u64(x: u64) -> f64 {
    if x == u64::MAX {
        return 0.0;
    }
    let (neg, k, t_num, t_exp) = reduce(x + 1, 64, 52, SQRT2_MANT_F64);
    let (int, p) = scaled(t_num, t_exp, 53);
    let t = int as f64 * pow2_f64(p);
    -ln_core_f64(k, if neg { -t } else { t })
}

/// `-ln(u)` in f32 for `u = (x + 1) * 2^-32` in (0, 1], with f32
/// operations only (a device may lack f64) and no division.
///
/// For `u >= sqrt(1/2)` the argument is `t = -(1 - u)`, where `1 - u` is
/// `!x * 2^-32` on integers, so `u` near 1 keeps full relative accuracy.
/// Below, `u` is rounded to f32 and split as `2^k f`, `f` in
/// [sqrt(1/2), sqrt(2)), with integer operations on its bits, and
/// `t = f - 1` is exact.
pub fn neg_ln_u32(x: u32) -> f32 {
    if x == u32::MAX {
        return 0.0;
    }
    let upper = x >= NEG_LN_UPPER_U32;
    let y = if upper { !x } else { x + 1 };
    let a = u32_to_f32_rn(y) * TWO_M32_F32;
    let (kf, t) = if upper {
        (0.0, -a)
    } else {
        let bits = a.to_bits();
        let k = (bits.wrapping_sub(SQRT_HALF_BITS_F32) as i32) >> 23;
        let f = f32::from_bits(bits.wrapping_sub((k as u32) << 23));
        // -32 <= k <= 0: the conversion is exact.
        (k as f32, f - 1.0)
    };
    -(kf * LN2_HI_F32 + (kf * LN2_LO_F32 + log1p_f32(t)))
}

/// `exp(-h)` for `0 <= h`; returns 0 above 708 (no subnormal scaling).
pub fn exp_neg_f64(h: f64) -> f64 {
    if h > 708.0 {
        return 0.0;
    }
    // k = nearest integer to h / ln 2 (ties up); the conversion truncates a
    // non-negative value, which every backend defines the same way.
    let k = (h * INV_LN2_F64 + 0.5) as u32;
    let kf = f64::from(k);
    // r = k ln2 - h, so exp(-h) = exp(r) * 2^-k with |r| <= about 0.347.
    let r = (kf * LN2_HI_F64 - h) + kf * LN2_LO_F64;
    let p = horner_f64(r, &EXP_SERIES_F64);
    p * f64::from_bits(u64::from(1023 - k) << 52)
}

/// sin(a) for |a| <= pi/4 in f32.
fn sin_poly_f32(a: f32) -> f32 {
    let z = a * a;
    let p = horner_f32(z, &SIN_SERIES_F32);
    a + (a * z) * p
}

/// cos(a) for |a| <= pi/4 in f32.
fn cos_poly_f32(a: f32) -> f32 {
    let z = a * a;
    let p = horner_f32(z, &COS_SERIES_F32);
    1.0 + z * p
}

/// `(cos, sin)` of the angle `2 pi x / 2^32` in f32. The quadrant comes from
/// the top two bits and the reduction to [0, pi/4] is done on integers
/// (complementing the fraction above an octant), so no float range
/// reduction can go wrong; each polynomial sees 23 bits of the fraction.
pub fn cos_sin_turn_f32(x: u32) -> (f32, f32) {
    let quadrant = x >> 30;
    let y = x & 0x3FFF_FFFF;
    let (c, s) = if y < (1 << 29) {
        let a = (y >> 6) as f32 * HALF_PI_2M24_F32;
        (cos_poly_f32(a), sin_poly_f32(a))
    } else {
        let a = (((1 << 30) - y) >> 6) as f32 * HALF_PI_2M24_F32;
        (sin_poly_f32(a), cos_poly_f32(a))
    };
    match quadrant {
        0 => (c, s),
        1 => (-s, c),
        2 => (-c, -s),
        _ => (s, -c),
    }
}

#[cfg(test)]
mod tests {
    //! Accuracy against the platform's libm, which is an oracle here only.
    use super::*;

    fn ulps64(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    #[test]
    fn ln_f64_is_within_two_ulps() {
        let mut x = 1e-300_f64;
        while x < 1e300 {
            assert!(ulps64(ln_f64(x), x.ln()) <= 2, "x={x}");
            x *= 1.0137;
        }
        assert_eq!(ln_f64(1.0), 0.0);
    }

    #[test]
    fn neg_ln_u64_matches_reference() {
        let mut cases = vec![
            0u64,
            1,
            2,
            1000,
            1 << 40,
            (1 << 63) - 1,
            1 << 63,
            u64::MAX - 1,
        ];
        cases.extend((0..100_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        for x in cases {
            let want = if x >= 1 << 63 {
                // Near u = 1 use log1p of the exact complement.
                -(-((!x) as f64) * 2f64.powi(-64)).ln_1p()
            } else {
                -((x as f64 + 1.0) * 2f64.powi(-64)).ln()
            };
            let got = neg_ln_u64(x);
            assert!((got - want).abs() <= 7e-16 * want, "x={x} {got} {want}");
        }
        assert_eq!(neg_ln_u64(u64::MAX), 0.0);
    }

    /// `-ln((x + 1) 2^-32)` in f64, from the exact complement near 1.
    fn neg_ln_u32_f64(x: u32) -> f64 {
        if x >= 1 << 31 {
            -(-f64::from(!x) * 2f64.powi(-32)).ln_1p()
        } else {
            -((f64::from(x) + 1.0) * 2f64.powi(-32)).ln()
        }
    }

    /// Error of `neg_ln_u32(x)` in ulps of the f32 result.
    fn neg_ln_u32_ulps(x: u32) -> f64 {
        let want = neg_ln_u32_f64(x);
        let ulp = f64::from((want as f32).abs().next_up() - (want as f32).abs());
        (f64::from(neg_ln_u32(x)) - want).abs() / ulp
    }

    #[test]
    fn neg_ln_u32_is_accurate() {
        let mut cases: Vec<u32> = (0..200_000u32)
            .map(|i| i.wrapping_mul(0x9E37_79B9))
            .collect();
        cases.extend([0, 1, 2, 0xFFFF, 0x1_0000, 0x7FFF_FFFF, 0x8000_0000]);
        cases.extend((NEG_LN_UPPER_U32 - 3..=NEG_LN_UPPER_U32 + 3).chain(u32::MAX - 9..u32::MAX));
        for x in cases {
            assert!(neg_ln_u32_ulps(x) <= 3.0, "x={x:#x}");
        }
        assert_eq!(neg_ln_u32(u32::MAX).to_bits(), 0);
    }

    /// Every `x`: `cargo test --release -p phobos-tandem -- --ignored
    /// neg_ln_u32_exhaustive --nocapture` prints the largest error.
    #[test]
    #[ignore = "2^32 evaluations; run in release"]
    fn neg_ln_u32_exhaustive() {
        let (mut worst, mut at) = (0.0f64, 0u32);
        for x in 0..u32::MAX {
            let e = neg_ln_u32_ulps(x);
            if e > worst {
                (worst, at) = (e, x);
            }
        }
        println!("neg_ln_u32: at most {worst:.3} ulps (x = {at:#x})");
        assert!(worst <= 3.0);
    }

    #[test]
    fn rounding_conversion_is_rust_as() {
        for i in 0..1_000_000u32 {
            let y = i.wrapping_mul(0x9E37_79B9) ^ (i >> 7);
            assert_eq!(u32_to_f32_rn(y).to_bits(), (y as f32).to_bits(), "{y:#x}");
        }
    }

    #[test]
    fn log1p_f32_is_within_two_ulps() {
        let lo = (0.5f64.sqrt() - 1.0) as f32;
        let hi = (2f64.sqrt() - 1.0) as f32;
        let mut t = lo;
        while t < hi {
            let want = f64::from(t).ln_1p();
            let ulp = f64::from((want as f32).abs().next_up() - (want as f32).abs());
            assert!((f64::from(log1p_f32(t)) - want).abs() <= 2.0 * ulp, "t={t}");
            t += 1.37e-5;
        }
    }

    #[test]
    fn exp_neg_is_within_two_ulps() {
        let mut h = 0.0_f64;
        while h < 700.0 {
            let want = (-h).exp();
            assert!(ulps64(exp_neg_f64(h), want) <= 2, "h={h}");
            h += 0.0137;
        }
    }

    #[test]
    fn cos_sin_turn_is_accurate() {
        for i in 0..200_000u32 {
            let x = i.wrapping_mul(0x9E37_79B9) ^ (i >> 3);
            let angle = std::f64::consts::TAU * f64::from(x) / 4294967296.0;
            let (c, s) = cos_sin_turn_f32(x);
            // The angle keeps 26 bits of the turn, so allow 2^-24 of angle.
            assert!((f64::from(c) - angle.cos()).abs() < 2e-7, "x={x}");
            assert!((f64::from(s) - angle.sin()).abs() < 2e-7, "x={x}");
        }
    }
}
