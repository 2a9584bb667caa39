//! Correctly rounded f32 division checked in f32 alone: [`super::div_wide`]'s
//! scheme with its f64 check replaced by Dekker's exact product.
//!
//! `div_wide` widens four f32 values to f64 per quotient. On the H100 a
//! conversion to f64 issues at an eighth of f32's rate and an f64 operation
//! at half, so its check costs about as much as 40 f32 operations, and it
//! needs `SHADER_F64`. This check needs neither:
//!
//! 1. The estimate `q` is `div_wide`'s (Markstein's, trusted in nothing).
//! 2. With `A`, `B` the operands' magnitudes and `h = ulp(q) / 2`, `q` is
//!    the correctly rounded `A / B` if and only if `A - q B < h B` and
//!    `q B - A < h' B` (`h' = h / 2` where `q` is a power of two, else `h`;
//!    no tie is possible, as `div_wide` shows). Here:
//!    - `q B = P + E` exactly: `P = RN(q B)`, and `E` from Veltkamp's
//!      splits of `q` and `B` into 12-bit halves, whose four products are
//!      exact (Dekker's product, about 17 operations);
//!    - `D = A - P` is exact when `P / 2 <= A <= 2 P` (Sterbenz);
//!    - `X = RN(D - E)`, and `q` is accepted when `X < h B` and
//!      `-X < h' B`. `h B` and `h' B` are exact (a power of two times `B`).
//!
//!    Rounding is monotone and `h B` is representable, so `X < h B`
//!    implies `D - E < h B`, and likewise below: where `D` is exact the
//!    check never accepts a wrong `q`. Where Sterbenz fails, `|A - P|`
//!    exceeds `P / 2`, and `P / 2` is representable, so `|D| >= P / 2`,
//!    while `|E| <= ulp(P) / 2` and `h B < 2^-23 P`: `X` is far outside
//!    both bounds and `q` is rejected. When `q` is right, `A - q B` is
//!    representable (the remainder of a correctly rounded quotient), so `X`
//!    is exact and `q` is accepted.
//! 3. Exactness needs every product's lowest bit above f32's smallest
//!    subnormal and no overflow. Guards send the rest to the long division
//!    ([`super::div_long`]), as `div_wide` does: `q`'s exponent field in
//!    `[26, 254]` (so `h` and `h / 2` are normal), `B` normal, and the
//!    exponent fields of `q` and `B` adding up to at least 153 (so the
//!    lowest bit of `E`, `h B` and `h' B` is at least `2^-149`). An
//!    overflow (a split of a value near `2^128`, `P` infinite) or a NaN
//!    operand makes `X` NaN or infinite, which fails both comparisons.
//!
//! Every operation is a plain f32 `+`, `-`, `*` or comparison, which exact
//! mode keeps uncontracted and unreassociated (`NoContraction`).

use super::{ABS, WideOps};

const SIGN: u32 = 0x8000_0000;
/// Veltkamp's splitter for 24-bit significands: `2^12 + 1`.
const SPLITTER: f32 = 4097.0;

/// `a / b` on f32 bit patterns, correctly rounded; see the module's
/// documentation.
pub(crate) fn div_split<O: WideOps>(o: &mut O, a: O::V, b: O::V) -> O::V {
    let abs_mask = o.c(ABS);
    let aa = o.and(a, abs_mask);
    let ab = o.and(b, abs_mask);

    // 1. The estimate.
    let q = super::wide::estimate(o, aa, ab);

    // 3. The guards, on exponent fields (a set sign bit puts `q`'s above
    // 255), and h = 2^(eq - 151) and h' as f32 bits.
    let (eq, h, power_of_two) = super::wide::half_ulp_bits(o, q);
    let c23 = o.c(23);
    let eb = o.shr(ab, c23);
    let c26 = o.c(26);
    let eq26 = o.sub(eq, c26);
    let c229 = o.c(229);
    let ok_q = o.lt(eq26, c229);
    let one = o.c(1);
    let eb1 = o.sub(eb, one);
    let c254 = o.c(254);
    let ok_b = o.lt(eb1, c254);
    let sum = o.add(eq, eb);
    let c152 = o.c(152);
    let ok_sum = o.lt(c152, sum);
    let unit = o.c(1 << 23);
    let zero = o.c(0);
    let down = o.select(power_of_two, unit, zero);
    let h_low = o.sub(h, down);

    // 2. The check.
    let (qh, ql) = split(o, q);
    let (bh, bl) = split(o, ab);
    let p = o.f_mul(q, ab);
    let hh = o.f_mul(qh, bh);
    let err = o.f_sub(hh, p);
    let hl = o.f_mul(qh, bl);
    let err = o.f_add(err, hl);
    let lh = o.f_mul(ql, bh);
    let err = o.f_add(err, lh);
    let ll = o.f_mul(ql, bl);
    let err = o.f_add(err, ll);
    let d = o.f_sub(aa, p);
    let x = o.f_sub(d, err);
    let hb = o.f_mul(h, ab);
    let hb_low = o.f_mul(h_low, ab);
    let ok_hi = o.f_lt(x, hb);
    let sign = o.c(SIGN);
    let neg_x = o.xor(x, sign);
    let ok_lo = o.f_lt(neg_x, hb_low);

    let ok = o.band(ok_q, ok_b);
    let ok = o.band(ok, ok_sum);
    let ok = o.band(ok, ok_hi);
    let ok = o.band(ok, ok_lo);
    super::wide::signed_or_long(o, ok, q, [a, b, aa, ab])
}

/// Veltkamp's split of `x` into `hi + lo`, each with at most 12
/// significant bits: `c = 4097 x`, `hi = c - (c - x)`, `lo = x - hi`.
fn split<O: WideOps>(o: &mut O, x: O::V) -> (O::V, O::V) {
    let splitter = o.c(SPLITTER.to_bits());
    let c = o.f_mul(splitter, x);
    let t = o.f_sub(c, x);
    let hi = o.f_sub(c, t);
    let lo = o.f_sub(x, hi);
    (hi, lo)
}
