//! Correctly rounded f32 division through a checked f64 reciprocal: exact
//! mode's `/` on devices with `SHADER_F64` and `SHADER_INT64`.
//!
//! [`super::div_wide`] checks a native f32 quotient with four widenings
//! and six f64 operations per element. Most of that work depends on the
//! dividend. This path moves it to the divisor, which softmax's `e / s`
//! and dropout's `x / (1 - p)` share across a row or a launch, so the
//! driver computes it once for the quotients that share it:
//!
//! 1. **The reciprocal** (the divisor's share). `r` is the device's f32
//!    `1 / B` (an estimate, trusted in nothing). With `B` and `r` widened,
//!    `e = 1 - B r` is exact when `|e| < 2^-20`: the product has 48 bits,
//!    and `B r` is then within a factor of two of 1 (Sterbenz). A rounded
//!    `e` of larger magnitude means the exact one is larger too (monotone
//!    rounding, `2^-20` representable), so the check `|e| < 2^-20` sees
//!    the exact `e`. Then `1 / B = r / (1 - e) = r (1 + e + e^2 + ...)`,
//!    and `R = r + r (e + e^2)` in f64 is within `1.01 * 2^-53` of `1 / B`,
//!    relatively (the last addition's rounding, and `e^3 < 2^-60`).
//! 2. **The quotient** (the dividend's share): `Q = RN(A R)` in f64 is
//!    within `1.52` units of its own last place of `t = A / B` (the
//!    product's rounding, half a unit, and `R`'s error, below one unit,
//!    since `t < 2 ulp(Q) 2^52`).
//! 3. **Rounding to f32, read from the bits.** For a normal f32 result
//!    (`Q`'s f64 exponent field `E` with `E - 896` in `[1, 254]`), the f32
//!    `RN(Q)` is `Q`'s sign, exponent and top 23 fraction bits, plus one
//!    where the 29 bits below are at least `2^28` (a carry into the
//!    exponent, up to infinity, is the right rounding). Those 29 bits `m`
//!    count units of `Q`'s last place, and the midpoints between f32
//!    values are where `m = 2^28`. When `|m - 2^28| > 8`, no midpoint lies
//!    within 8 units of `Q`, so `t` (within 1.52) rounds to the same f32:
//!    the result is `RN(t)`. (Where `t` and `Q` lie in different binades,
//!    both are within a few units of the power of two between them, which
//!    is an f32 and far from any midpoint.)
//! 4. Anything else goes to the long division ([`super::div_long`]), as in
//!    `div_wide`: a reciprocal the check rejects (a zero, infinite, NaN or
//!    far too small divisor, or a wrong estimate; [`recip`] returns 0 for
//!    it, so that `Q` is zero or NaN), a result that is zero,
//!    subnormal, infinite or NaN before rounding (`E` out of range; NaN and
//!    infinite operands make `Q` NaN, infinite or zero), and the
//!    `17 / 2^29` of quotients near a midpoint.
//!
//! The f64 values never leave the function, and their bits are read
//! through a 64-bit integer (`SHADER_INT64`). Every f64 operation is one
//! correctly rounded IEEE operation, never contracted (`NoContraction`).

use super::{ABS, WideOps};

/// What [`div_recip`] needs beyond [`WideOps`]: an f64's bits.
pub(crate) trait BitsOps: WideOps {
    /// The high and low 32-bit words of `d`'s bit pattern.
    fn d_words(&mut self, d: Self::D) -> (Self::V, Self::V);
}

/// `a / b` on f32 bit patterns, correctly rounded; see the module's
/// documentation.
pub(crate) fn div_recip<O: BitsOps>(o: &mut O, a: O::V, b: O::V) -> O::V {
    let r = recip(o, b);
    div_by_recip(o, a, b, r)
}

/// The divisor's share (step 1): `1 / |b|` in f64 within `1.01 * 2^-53`,
/// or 0 where the check rejects the device's estimate. A caller that
/// divides many dividends by one divisor computes it once.
pub(crate) fn recip<O: WideOps>(o: &mut O, b: O::V) -> O::D {
    let abs_mask = o.c(ABS);
    let ab = o.and(b, abs_mask);
    let r = o.f_rcp(ab);
    let wb = o.widen(ab);
    let wr = o.widen(r);
    let p = o.d_mul(wb, wr);
    let one = o.d_c(1.0);
    let e = o.d_sub(one, p);
    let bound = o.d_c(2f64.powi(-20));
    let neg_bound = o.d_c(-(2f64.powi(-20)));
    let below = o.d_lt(e, bound);
    let above = o.d_lt(neg_bound, e);
    let ok = o.band(below, above);
    let e2 = o.d_mul(e, e);
    let u = o.d_add(e, e2);
    let v = o.d_mul(wr, u);
    let recip = o.d_add(wr, v);
    let zero = o.d_c(0.0);
    o.d_select(ok, recip, zero)
}

/// The dividend's share (steps 2 to 4): `a / b` on f32 bit patterns,
/// correctly rounded, given `recip(b)`. A rejected reciprocal (0) makes
/// `Q` zero or NaN, whose exponent sends it to the long division.
pub(crate) fn div_by_recip<O: BitsOps>(o: &mut O, a: O::V, b: O::V, recip: O::D) -> O::V {
    let abs_mask = o.c(ABS);
    let aa = o.and(a, abs_mask);
    let ab = o.and(b, abs_mask);

    // 2. The quotient.
    let wa = o.widen(aa);
    let q = o.d_mul(wa, recip);

    // 3. Its f32 rounding, from the bits. `Q` is positive, so its high
    // word is its exponent field (11 bits) and top 20 fraction bits. The
    // field is in [897, 1150] where `hi - 897 * 2^20` (wrapping) is below
    // `254 * 2^20`.
    let (hi, lo) = o.d_words(q);
    let lowest = o.c(897 << 20);
    let above = o.sub(hi, lowest);
    let span = o.c(254 << 20);
    let ok_e = o.lt(above, span);
    let low_mask = o.c((1 << 29) - 1);
    let m = o.and(lo, low_mask);
    // |m - 2^28| > 8: m - 2^28 + 8 (wrapping) is at least 17.
    let off = o.c(8u32.wrapping_sub(1 << 28));
    let dist = o.add(m, off);
    let c16 = o.c(16);
    let ok_m = o.lt(c16, dist);
    // The f32 truncation: the exponent field less 896 (in [1, 254], 8
    // bits) and 20 fraction bits, shifted up 3 past the field's 3 clear
    // top bits, then `lo`'s top 3 bits; plus one where the dropped 29 bits
    // are at least 2^28.
    let unit = o.c(1 << 20);
    let rebased = o.add(above, unit);
    let c3 = o.c(3);
    let top = o.shl(rebased, c3);
    let c29 = o.c(29);
    let frac_lo = o.shr(lo, c29);
    let c28 = o.c(28);
    let round = o.shr(lo, c28);
    let c1 = o.c(1);
    let round = o.and(round, c1);
    let bits = o.or(top, frac_lo);
    let bits = o.add(bits, round);

    let ok = o.band(ok_e, ok_m);
    super::wide::signed_or_long(o, ok, bits, [a, b, aa, ab])
}
