//! Correctly rounded f32 division checked in f64: the fast path of exact
//! mode's `/` on devices with `SHADER_F64`.
//!
//! [`super::div`] corrects the native quotient with about 85 integer
//! operations, which makes a memory-bound kernel such as `dropout_rows`
//! integer-bound on the H200 (half the copy ceiling). This path spends a few
//! float operations instead:
//!
//! 1. An estimate from native f32 operations, Markstein's: `r = 1/b`,
//!    `q0 = a r`, `e = fma(-q0, b, a)`, `q = fma(e, r, q0)`. Nothing about it
//!    is trusted (the reciprocal may be approximate, `fma` may not be fused);
//!    it is usually the correctly rounded quotient.
//! 2. An exact check in f64 that `q` is the correctly rounded `|a| / |b|`:
//!    with `h = ulp(q) / 2` (a power of two) and `A`, `B`, `Q` the operands'
//!    magnitudes widened to f64 (exact), `q` is right if and only if
//!    `A - Q B < h B` and `Q B - A < h' B`, where `h' = h / 2` when `q` is a
//!    power of two (its lower neighbour is nearer) and `h` otherwise. A tie
//!    (`A - Q B = ±h B`) cannot happen for a normal `q`: `a / b` would be a
//!    25-bit midpoint `M 2^k`, `M` odd, so `a`'s odd significand would be
//!    `M` times `b`'s, at least `2^24`, which no f32 has.
//!
//!    `Q B` (24 x 24 bits) and `h B` are exact in f64, and so is their
//!    scaling by 1/2. The differences `A - Q B` may round, but rounding is
//!    monotone and `h B` is representable, so a rounded difference below
//!    `h B` means the exact one is below it too: the check never accepts a
//!    wrong `q`. When `q` is right the differences are exact (below
//!    `2^53` units of `Q B`'s last place), so a right `q` is accepted.
//! 3. Anything else goes to the long division ([`super::div_long`]), not to
//!    [`super::div`]'s integer estimate: that second fast path would add its
//!    code to every caller's slow path (the driver's compile of a Tandem
//!    dropout kernel spends about half its time on exact division;
//!    bench/RESULTS.md, fifth session) for inputs this path already turned
//!    away: an estimate that is not a
//!    positive normal f32 with an exponent field in `[25, 254]` (so that `h`
//!    is a normal f32), or one the check rejects. Infinite and NaN
//!    operands need no test of their own: they make the estimate zero,
//!    infinite or NaN, or fail the check (an infinite or NaN difference, or
//!    `Q B - A < h' B` with `A = 0` or `B = 0`), so they always fall back.
//!    There a zero dividend over a finite non-zero divisor is answered
//!    before the long division's loop (as [`super::div`] does on its common
//!    path; kept off this one, whose every operation costs bandwidth).
//!
//! f64 values never leave the function, so kernels still see only 32-bit
//! types; no f64 value here is subnormal (the smallest product is about
//! `2^-251`).

use super::{ABS, IntOps, div_long, sqrt, zero_quotient};

const SIGN: u32 = 0x8000_0000;

/// What [`div_wide`] and [`super::div_split`] need beyond [`IntOps`]: the
/// device's f32 operations on bit patterns (`f_rcp`, `f_rsqrt` and
/// `f_fma` give estimates only; `f_add`, `f_sub` and `f_mul` are correctly
/// rounded, as exact mode's `NoContraction` keeps them) and f64 values `D`.
pub(crate) trait WideOps: IntOps {
    type D: Copy;
    /// The device's `1.0 / b` on f32 bits.
    fn f_rcp(&mut self, b: Self::V) -> Self::V;
    /// The device's `a * b` on f32 bits.
    fn f_mul(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// The device's `inverseSqrt(a)` on f32 bits.
    fn f_rsqrt(&mut self, a: Self::V) -> Self::V;
    /// The device's `fma(a, b, c)` on f32 bits (fused or not).
    fn f_fma(&mut self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `a + b` on f32 bits, correctly rounded and never contracted.
    fn f_add(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a - b` on f32 bits, correctly rounded and never contracted.
    fn f_sub(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a < b` on f32 bits (false where either is NaN).
    fn f_lt(&mut self, a: Self::V, b: Self::V) -> Self::B;
    /// The f32 with bits `a` as an f64 (exact).
    fn widen(&mut self, a: Self::V) -> Self::D;
    fn d_c(&mut self, v: f64) -> Self::D;
    /// `a + b`, correctly rounded.
    fn d_add(&mut self, a: Self::D, b: Self::D) -> Self::D;
    /// `a - b`, correctly rounded.
    fn d_sub(&mut self, a: Self::D, b: Self::D) -> Self::D;
    /// `a * b`, correctly rounded.
    fn d_mul(&mut self, a: Self::D, b: Self::D) -> Self::D;
    fn d_lt(&mut self, a: Self::D, b: Self::D) -> Self::B;
    fn d_select(&mut self, c: Self::B, yes: Self::D, no: Self::D) -> Self::D;
}

/// `a / b` on f32 bit patterns, correctly rounded; see the module's
/// documentation.
pub(crate) fn div_wide<O: WideOps>(o: &mut O, a: O::V, b: O::V) -> O::V {
    let abs_mask = o.c(ABS);
    let aa = o.and(a, abs_mask);
    let ab = o.and(b, abs_mask);

    // 1. The estimate.
    let q = estimate(o, aa, ab);

    // 2. The check.
    let HalfUlp {
        ok: ok_q,
        wq,
        wh,
        wh_low,
    } = half_ulp(o, q);
    let wa = o.widen(aa);
    let wb = o.widen(ab);
    let qb = o.d_mul(wq, wb);
    let above = o.d_sub(wa, qb);
    let below = o.d_sub(qb, wa);
    let hb = o.d_mul(wh, wb);
    let hb_low = o.d_mul(wh_low, wb);
    let ok_hi = o.d_lt(above, hb);
    let ok_lo = o.d_lt(below, hb_low);

    let ok = o.band(ok_q, ok_hi);
    let ok = o.band(ok, ok_lo);
    signed_or_long(o, ok, q, [a, b, aa, ab])
}

/// Markstein's estimate of `aa / ab` from the device's f32 operations:
/// `r = 1/b`, `q0 = a r`, `e = fma(-q0, b, a)`, `q = fma(e, r, q0)`.
pub(super) fn estimate<O: WideOps>(o: &mut O, aa: O::V, ab: O::V) -> O::V {
    let r = o.f_rcp(ab);
    let q0 = o.f_mul(aa, r);
    let sign = o.c(SIGN);
    let neg_q0 = o.xor(q0, sign);
    let e = o.f_fma(neg_q0, ab, aa);
    o.f_fma(e, r, q0)
}

/// The checked divisions' end: the magnitude `q` with the quotient's sign
/// where `ok`, else a zero quotient's signed zero or the long division.
/// `[a, b, aa, ab]` are the operands and their magnitudes.
pub(super) fn signed_or_long<O: IntOps>(
    o: &mut O,
    ok: O::B,
    q: O::V,
    [a, b, aa, ab]: [O::V; 4],
) -> O::V {
    let sign = o.c(SIGN);
    let x = o.xor(a, b);
    let s = o.and(x, sign);
    let fast = o.or(q, s);
    o.unless(ok, fast, |o| {
        let zero_q = zero_quotient(o, aa, ab);
        o.unless(zero_q, s, |o| div_long(o, a, b))
    })
}

/// `sqrt(a)` on f32 bit patterns, correctly rounded: the same scheme as
/// [`div_wide`].
///
/// 1. The estimate: `y = inverseSqrt(a)`, `q0 = a y`, `e = fma(-q0, q0, a)`,
///    `q = fma(e, y / 2, q0)` (one Newton step with an exact-if-fused
///    residual; trusted in nothing).
/// 2. The check: with `h = ulp(q) / 2` and `h'` as in [`div_wide`], `q` is
///    the correctly rounded `sqrt(a)` if and only if
///    `(Q - h')^2 < A < (Q + h)^2`. `Q ± h` has 25 significant bits, so it
///    and its square (50 bits) are exact in f64, and so are the
///    comparisons. A tie `A = (Q + h)^2` is impossible: the midpoint's odd
///    25-bit significand squared is an odd number of at least 2^48, which
///    no f32 significand is.
/// 3. Anything else goes to the integer [`sqrt`]: an estimate outside
///    exponent fields `[25, 254]` (zero, negative, infinite and NaN operands
///    all give one; a negative `A` also fails `(Q - h')^2 < A`), or one the
///    check rejects.
pub(crate) fn sqrt_wide<O: WideOps>(o: &mut O, a: O::V) -> O::V {
    let y = o.f_rsqrt(a);
    let q0 = o.f_mul(a, y);
    let sign = o.c(SIGN);
    let neg_q0 = o.xor(q0, sign);
    let e = o.f_fma(neg_q0, q0, a);
    // y / 2 as an f32 multiply by 0.5 (exact unless y is subnormal, and
    // only an estimate either way).
    let half_bits = o.c(0.5f32.to_bits());
    let half_y = o.f_mul(y, half_bits);
    let q = o.f_fma(e, half_y, q0);

    let HalfUlp {
        ok: ok_q,
        wq,
        wh,
        wh_low,
    } = half_ulp(o, q);
    let wa = o.widen(a);
    let hi = o.d_add(wq, wh);
    let lo = o.d_sub(wq, wh_low);
    let hi2 = o.d_mul(hi, hi);
    let lo2 = o.d_mul(lo, lo);
    let ok_hi = o.d_lt(wa, hi2);
    let ok_lo = o.d_lt(lo2, wa);

    let ok = o.band(ok_q, ok_hi);
    let ok = o.band(ok, ok_lo);
    o.unless(ok, q, |o| sqrt(o, a))
}

/// An estimate's half-ulps, shared by both checks.
struct HalfUlp<O: WideOps> {
    /// Whether `q` is a positive f32 with exponent field in `[25, 254]`
    /// (a set sign bit puts the field above 255), so that `h` is normal.
    ok: O::B,
    /// `q` in f64.
    wq: O::D,
    /// `h = ulp(q) / 2 = 2^(eq - 24 - 127)` in f64.
    wh: O::D,
    /// Half the gap to `q`'s lower neighbour: `h / 2` when `q` is a power
    /// of two, else `h`.
    wh_low: O::D,
}

fn half_ulp<O: WideOps>(o: &mut O, q: O::V) -> HalfUlp<O> {
    let (eq, h, power_of_two) = half_ulp_bits(o, q);
    let c25 = o.c(25);
    let eq25 = o.sub(eq, c25);
    let c230 = o.c(230);
    let ok = o.lt(eq25, c230);
    let wq = o.widen(q);
    let wh = o.widen(h);
    let half = o.d_c(0.5);
    let whole = o.d_c(1.0);
    let scale = o.d_select(power_of_two, half, whole);
    let wh_low = o.d_mul(wh, scale);
    HalfUlp { ok, wq, wh, wh_low }
}

/// A positive f32 `q`'s exponent field `eq`, `h = ulp(q) / 2` as f32 bits
/// (`2^(eq - 151)`, meaningful for `eq >= 25`), and whether `q` is a power
/// of two (its lower neighbour is then nearer, `h / 2` away).
pub(super) fn half_ulp_bits<O: IntOps>(o: &mut O, q: O::V) -> (O::V, O::V, O::B) {
    let c23 = o.c(23);
    let eq = o.shr(q, c23);
    let c24 = o.c(24);
    let eh = o.sub(eq, c24);
    let h = o.shl(eh, c23);
    let frac_mask = o.c(super::FRAC);
    let frac = o.and(q, frac_mask);
    let zero = o.c(0);
    let power_of_two = o.eq(frac, zero);
    (eq, h, power_of_two)
}
