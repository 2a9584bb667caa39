//! How draws become elements: the pure maps from 32- and 64-bit draws (or a
//! block's bits) to each output type's value. The choice of draw per
//! element lives in `tandem.rs`; these functions only transform bits.

use crate::math::{cos_sin_turn_f32, neg_ln_u32, neg_ln_u64};

/// 2^-24 in f32.
const TWO_M24: f32 = 1.0 / 16_777_216.0;
/// 2^-53 in f64.
const TWO_M53: f64 = 1.0 / 9_007_199_254_740_992.0;

/// f32 uniform in [0, 1): the top 24 bits of the word, times 2^-24 (exact).
#[inline]
pub fn uniform_f32(x: u32) -> f32 {
    (x >> 8) as f32 * TWO_M24
}

/// f64 uniform in [0, 1): the top 53 bits of the draw, times 2^-53 (exact).
#[inline]
pub fn uniform_f64(x: u64) -> f64 {
    (x >> 11) as f64 * TWO_M53
}

/// binary16 bits of a uniform in [0, 1): `m * 2^-11` for the top 11 bits
/// `m` of the 16-bit draw, every one of which is an exact half float. Built
/// with integer operations so no port depends on a float-to-half conversion.
#[inline]
pub fn uniform_f16_bits(x: u16) -> u16 {
    let m = x >> 5;
    if m == 0 {
        return 0;
    }
    let e = 15 - m.leading_zeros() as u16; // 0..=10, the position of m's top bit
    ((e + 4) << 10) | ((m << (10 - e)) & 0x3FF)
}

/// Box-Muller in f32 on the words `(w0, w1)` of one pair: the radius from
/// `w0` through the polynomial logarithm, the angle `2 pi w1 / 2^32` from
/// `w1`. Returns `(r cos, r sin)`, elements `2p` and `2p + 1`.
#[inline]
pub fn normal_pair_f32(w0: u32, w1: u32) -> (f32, f32) {
    let l = neg_ln_u32(w0);
    let r = (l + l).sqrt();
    let (c, s) = cos_sin_turn_f32(w1);
    (r * c, r * s)
}

/// Exponential(1) in f32 from a 32-bit draw: `-ln((x + 1) 2^-32)`, so the
/// largest value is 22.18 and 0 has probability 2^-32.
#[inline]
pub fn exponential_f32(x: u32) -> f32 {
    neg_ln_u32(x)
}

/// Exponential(1) in f64 from a 64-bit draw: `-ln((x + 1) 2^-64)`, largest
/// value 44.36.
#[inline]
pub fn exponential_f64(x: u64) -> f64 {
    neg_ln_u64(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_bits_are_exact_multiples() {
        for x in 0..=u16::MAX {
            let want = f64::from(x >> 5) / 2048.0;
            let bits = uniform_f16_bits(x);
            let exp = i32::from(bits >> 10);
            let mant = f64::from(bits & 0x3FF);
            let got = if exp == 0 {
                mant / 1024.0 * 2f64.powi(-14)
            } else {
                (1.0 + mant / 1024.0) * 2f64.powi(exp - 15)
            };
            assert_eq!(got, want, "x={x}");
        }
    }
}
