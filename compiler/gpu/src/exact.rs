//! Correctly rounded f32 division and square root from 32-bit integer
//! operations only, written once against [`IntOps`] so that the same code
//! both emits the naga functions of exact mode (`lower/exact.rs`) and runs on
//! the host as the model the tests compare with Rust's `/` and `sqrt`.
//!
//! Every value is a u32 (exponents carry a positive offset, so no signed
//! arithmetic is needed); every shift count is a constant or provably below
//! 32, since SPIR-V leaves larger counts undefined. Division's fallback from its
//! common path to the long division is [`IntOps::unless`]; the special cases (NaN, infinities, zeros)
//! are computed alongside the general path, whose operations stay defined on
//! any input, and picked with selects at the end. NaN results are the
//! canonical quiet NaN `0x7FC00000`.
//!
//! Division's common path corrects the device's native quotient exactly (see
//! [`div`]); the long division below is its fallback. The long division and
//! square root: unpack each operand to a 24-bit significand in
//! `[2^23, 2^24)` and an exponent (subnormals normalised with
//! `countLeadingZeros`); compute the result's significand to 26 bits (24 and
//! 2 more) by restoring long division or digit-by-digit square root, one bit
//! per step (a counted loop, [`IntOps::repeat`]), with a sticky bit from the remainder; shift right with
//! sticky into the subnormal range if needed; round to nearest even; and
//! repack, letting a carry out of the significand increment the exponent
//! (up to infinity).

/// The integer operations the algorithms use: u32 values `V` and booleans
/// `B`. All arithmetic wraps; shift counts are below 32.
pub(crate) trait IntOps {
    type V: Copy;
    type B: Copy;
    fn c(&mut self, v: u32) -> Self::V;
    fn add(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn sub(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn and(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn or(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn xor(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn shl(&mut self, a: Self::V, n: Self::V) -> Self::V;
    fn shr(&mut self, a: Self::V, n: Self::V) -> Self::V;
    fn clz(&mut self, a: Self::V) -> Self::V;
    fn eq(&mut self, a: Self::V, b: Self::V) -> Self::B;
    fn ne(&mut self, a: Self::V, b: Self::V) -> Self::B;
    /// Unsigned `a < b`.
    fn lt(&mut self, a: Self::V, b: Self::V) -> Self::B;
    fn band(&mut self, a: Self::B, b: Self::B) -> Self::B;
    fn bor(&mut self, a: Self::B, b: Self::B) -> Self::B;
    fn select(&mut self, c: Self::B, yes: Self::V, no: Self::V) -> Self::V;
    /// 1 for true, 0 for false.
    fn to_u32(&mut self, b: Self::B) -> Self::V;
    /// Wrapping `a * b` (the low 32 bits of the product).
    fn mul(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// The device's native f32 division of the bit patterns `a` and `b`, as
    /// bits. Nothing is assumed of it: it is an estimate that [`div`]
    /// checks exactly and falls back from.
    fn fdiv(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `if ok { fast } else { slow() }`. The host model computes `slow`
    /// only when `ok` is false; the emitted code computes both and selects
    /// (see `lower/exact.rs` for why).
    fn unless(
        &mut self,
        ok: Self::B,
        fast: Self::V,
        slow: impl FnOnce(&mut Self) -> Self::V,
    ) -> Self::V;
    /// `for _ in 0..n { state = step(state) }`: a loop with a counter in
    /// the emitted code (local variables carry the state), not `n` unrolled
    /// copies of `step`, which make some drivers' shader compilers (Mesa's
    /// lavapipe) take minutes.
    fn repeat<const K: usize>(
        &mut self,
        n: u32,
        state: [Self::V; K],
        step: impl FnMut(&mut Self, [Self::V; K]) -> [Self::V; K],
    ) -> [Self::V; K];
}

mod recip;
mod split;
mod wide;
pub(crate) use recip::{BitsOps, div_by_recip, div_recip, recip};
pub(crate) use split::div_split;
pub(crate) use wide::{WideOps, div_wide, sqrt_wide};

const NAN: u32 = 0x7fc0_0000;
const INF: u32 = 0x7f80_0000;
const ABS: u32 = 0x7fff_ffff;
const FRAC: u32 = 0x007f_ffff;
const HIDDEN: u32 = 0x0080_0000;
/// Exponents are kept as `e + EXP_OFFSET`, which is positive everywhere.
const EXP_OFFSET: u32 = 64;

/// A finite, non-zero magnitude's significand in `[2^23, 2^24)` and its
/// biased exponent plus [`EXP_OFFSET`] (subnormals get `1 - shift`). On zero
/// the result is meaningless but every operation stays defined.
fn unpack<O: IntOps>(o: &mut O, abs: O::V) -> (O::V, O::V) {
    let c23 = o.c(23);
    let e = o.shr(abs, c23);
    let frac_mask = o.c(FRAC);
    let frac = o.and(abs, frac_mask);
    let zero = o.c(0);
    let sub = o.eq(e, zero);
    // A subnormal's fraction shifted so its top bit lands on bit 23.
    let lz = o.clz(frac);
    let c8 = o.c(8);
    let shift = o.sub(lz, c8);
    let c31 = o.c(31);
    let shift = o.and(shift, c31);
    let norm = o.shl(frac, shift);
    let hidden = o.c(HIDDEN);
    let with_hidden = o.or(frac, hidden);
    let m = o.select(sub, norm, with_hidden);
    let off = o.c(EXP_OFFSET);
    let e_off = o.add(e, off);
    let sub_e = o.c(EXP_OFFSET + 1);
    let sub_e = o.sub(sub_e, shift);
    let e = o.select(sub, sub_e, e_off);
    (m, e)
}

/// Rounds `mm` (the significand with 3 more bits: two and a sticky one)
/// to nearest even and packs it with the biased exponent `e` (at least 1;
/// a significand below `2^26` with `e == 1` is subnormal).
fn round_pack<O: IntOps>(o: &mut O, mm: O::V, e: O::V) -> O::V {
    let c7 = o.c(7);
    let low = o.and(mm, c7);
    let c3 = o.c(3);
    let kept = o.shr(mm, c3);
    let one = o.c(1);
    let lsb = o.and(kept, one);
    // Round up when the dropped bits exceed half, or equal it and the
    // kept significand is odd: (low + lsb) > 4.
    let t = o.add(low, lsb);
    let c4 = o.c(4);
    let up = o.lt(c4, t);
    let up = o.to_u32(up);
    let e1 = o.sub(e, one);
    let c23 = o.c(23);
    let ebits = o.shl(e1, c23);
    let r = o.add(ebits, kept);
    o.add(r, up)
}

/// `a / b` on f32 bit patterns, correctly rounded: the device's native
/// division as an estimate, corrected exactly with integer arithmetic, and
/// [`div_long`] where the estimate cannot be used.
///
/// The common path takes normal `a` and `b` and an estimate `q` whose
/// exponent field `eq` lies in `[1, 254]`. With `ma`, `mb`, `Q` the 24-bit
/// significands (hidden bit set) of `a`, `b` and `q`, `a / b` equals
/// `ma * 2^s / mb * 2^(eq - 150)` with `s = ea - eb - eq + 150`; the estimate
/// is usable when `s` is 23 or 24. Then:
///
/// 1. A coarse check bounds the remainder `R = ma * 2^s - Q * mb` (a 49-bit
///    quantity in general) to `|R| < 2^30` from the high bits of the product
///    (two 32-bit products), so that `R` is exactly its low 32 bits, which a
///    wrapping multiply gives.
/// 2. Up to [`DIV_STEPS`] steps move `Q` by one and `R` by `mb` towards
///    `0 <= R < mb`, i.e. `Q = floor(ma * 2^s / mb)`.
/// 3. If `R` is then in range and `Q` in `[2^23, 2^24)`, the result is `Q`
///    with exponent `eq`, rounded up when `2R + (Q & 1) > mb` (nearest, ties
///    to even; a carry out of the significand increments the exponent, up to
///    infinity). The result is normal, or infinite by correct rounding.
///
/// A zero `a` over a finite non-zero `b` is the signed zero at once.
/// Anything else (special, subnormal operands, subnormal or zero results,
/// an estimate that is 0, infinite, NaN, subnormal or more than a few ulp
/// off) takes [`div_long`], which is exact on every input. Nothing about the
/// estimate is trusted: every path that uses it checks it exactly.
pub(crate) fn div<O: IntOps>(o: &mut O, a: O::V, b: O::V) -> O::V {
    let q = o.fdiv(a, b);
    let abs_mask = o.c(ABS);
    let aa = o.and(a, abs_mask);
    let ab = o.and(b, abs_mask);
    let qa = o.and(q, abs_mask);
    let c23 = o.c(23);
    let ea = o.shr(aa, c23);
    let eb = o.shr(ab, c23);
    let eq = o.shr(qa, c23);
    let frac_mask = o.c(FRAC);
    let hidden = o.c(HIDDEN);
    let fa = o.and(a, frac_mask);
    let ma = o.or(fa, hidden);
    let fb = o.and(b, frac_mask);
    let mb = o.or(fb, hidden);
    let fq = o.and(q, frac_mask);
    let mut qq = o.or(fq, hidden);

    // Exponent fields in [1, 254]: e - 1 < 254.
    let one = o.c(1);
    let c254 = o.c(254);
    let ea1 = o.sub(ea, one);
    let ok_a = o.lt(ea1, c254);
    let eb1 = o.sub(eb, one);
    let ok_b = o.lt(eb1, c254);
    let eq1 = o.sub(eq, one);
    let ok_q = o.lt(eq1, c254);
    // d = s - 23 = ea - eb - eq + 127, 0 or 1.
    let c127 = o.c(127);
    let d = o.add(ea, c127);
    let d = o.sub(d, eb);
    let d = o.sub(d, eq);
    let two = o.c(2);
    let ok_d = o.lt(d, two);
    let ok = o.band(ok_a, ok_b);
    let ok = o.band(ok, ok_q);
    let ok = o.band(ok, ok_d);
    // Keeps the shift counts below 32 whatever d is.
    let d = o.and(d, one);

    // R = ma * 2^s - Q * mb, modulo 2^32.
    let s = o.add(d, c23);
    let x = o.shl(ma, s);
    let p = o.mul(qq, mb);
    let mut r = o.sub(x, p);

    // The coarse check. With Q4 = Q >> 4 and mb = Mh * 2^12 + Ml,
    // A = Q4 * Mh + (Q4 * Ml >> 12) satisfies 0 <= Q * mb / 2^16 - A < 3841,
    // and X16 = ma * 2^(s - 16) = X / 2^16 exactly. Both lie in
    // [2^30, 2^32), so Ra = X16 - A, a difference in (-2^32 + 2^30,
    // 2^32 - 2^30), is known from its low 32 bits; requiring
    // Ra in [-2^13, 2^13) gives R / 2^16 in (-2^13 - 3841, 2^13), so
    // |R| < 2^30, and admits every estimate within 3 of the floor
    // (R in [-3 mb, 4 mb) gives Ra in (-768, 1024 + 3841)).
    let c4 = o.c(4);
    let q4 = o.shr(qq, c4);
    let c12 = o.c(12);
    let mh = o.shr(mb, c12);
    let c_fff = o.c(0xfff);
    let ml = o.and(mb, c_fff);
    let p1 = o.mul(q4, mh);
    let p2 = o.mul(q4, ml);
    let p2 = o.shr(p2, c12);
    let approx = o.add(p1, p2);
    let c7 = o.c(7);
    let s16 = o.add(d, c7);
    let x16 = o.shl(ma, s16);
    let ra = o.sub(x16, approx);
    let c2_13 = o.c(1 << 13);
    let ra = o.add(ra, c2_13);
    let c2_14 = o.c(1 << 14);
    let near = o.lt(ra, c2_14);
    let ok = o.band(ok, near);

    // Steps towards 0 <= R < mb (R signed, |R| < 2^30 + DIV_STEPS * mb).
    let zero = o.c(0);
    let neg_mb = o.sub(zero, mb);
    let minus_one = o.c(u32::MAX);
    let max_pos = o.c(0x7fff_ffff);
    for _ in 0..DIV_STEPS {
        let neg = o.lt(max_pos, r);
        let inb = o.lt(r, mb);
        let dr = o.select(neg, neg_mb, mb);
        let dq = o.select(neg, minus_one, one);
        let dr = o.select(inb, zero, dr);
        let dq = o.select(inb, zero, dq);
        r = o.sub(r, dr);
        qq = o.add(qq, dq);
    }
    let inb = o.lt(r, mb);
    let ok = o.band(ok, inb);
    let qh = o.sub(qq, hidden);
    let q_in = o.lt(qh, hidden);
    let ok = o.band(ok, q_in);

    // Round to nearest even and pack with exponent eq.
    let r2 = o.add(r, r);
    let lsb = o.and(qq, one);
    let t = o.add(r2, lsb);
    let up = o.lt(mb, t);
    let up = o.to_u32(up);
    let exp_mask = o.c(INF);
    let qe = o.and(qa, exp_mask);
    let packed = o.add(qe, qh);
    let packed = o.add(packed, up);
    let x = o.xor(a, b);
    let sign_mask = o.c(0x8000_0000);
    let sign = o.and(x, sign_mask);
    let fast = o.or(packed, sign);
    let zero_q = zero_quotient(o, aa, ab);
    let fast = o.select(zero_q, sign, fast);
    let ok = o.bor(ok, zero_q);
    o.unless(ok, fast, |o| div_long(o, a, b))
}

/// Whether `|a| / |b|` (magnitudes `aa`, `ab`) is a zero dividend over a
/// finite non-zero divisor, whose quotient is the zero with the operands'
/// sign: the long division's result, without its loop. Zeros are common in
/// what dropout divides (the outputs of a ReLU, cleared buffers), and took
/// the loop for every element before (bench/RESULTS.md, 2026-12-02).
fn zero_quotient<O: IntOps>(o: &mut O, aa: O::V, ab: O::V) -> O::B {
    let zero = o.c(0);
    let one = o.c(1);
    let a_zero = o.eq(aa, zero);
    let ab1 = o.sub(ab, one);
    let max_finite = o.c(0x7f7f_ffff);
    let b_finite = o.lt(ab1, max_finite);
    o.band(a_zero, b_finite)
}

/// The correction steps of [`div`]'s common path: enough for an estimate
/// within 2 ulp of the correctly rounded quotient (within 3 of the floor).
const DIV_STEPS: usize = 3;

/// `a / b` on f32 bit patterns, correctly rounded, by long division: no
/// estimate, exact on every input.
pub(crate) fn div_long<O: IntOps>(o: &mut O, a: O::V, b: O::V) -> O::V {
    let abs_mask = o.c(ABS);
    let sign_mask = o.c(0x8000_0000);
    let inf = o.c(INF);
    let zero = o.c(0);
    let aa = o.and(a, abs_mask);
    let ab = o.and(b, abs_mask);
    let x = o.xor(a, b);
    let sign = o.and(x, sign_mask);

    // Special cases.
    let nan_a = o.lt(inf, aa);
    let nan_b = o.lt(inf, ab);
    let inf_a = o.eq(aa, inf);
    let inf_b = o.eq(ab, inf);
    let zero_a = o.eq(aa, zero);
    let zero_b = o.eq(ab, zero);
    let nan = o.bor(nan_a, nan_b);
    let ii = o.band(inf_a, inf_b);
    let zz = o.band(zero_a, zero_b);
    let nan = o.bor(nan, ii);
    let nan = o.bor(nan, zz);
    let to_inf = o.bor(inf_a, zero_b);
    let to_zero = o.bor(zero_a, inf_b);

    // The general path: a, b finite and non-zero.
    let (ma, ea) = unpack(o, aa);
    let (mb, eb) = unpack(o, ab);
    // Make ma / mb lie in [1, 2).
    let small = o.lt(ma, mb);
    let adj = o.to_u32(small);
    let ma = o.shl(ma, adj);
    // The result's biased exponent plus 512: ea - eb + 127 - adj + 512.
    let base = o.c(127 + 512);
    let e = o.add(ea, base);
    let e = o.sub(e, eb);
    let e = o.sub(e, adj);
    // Restoring division: 26 quotient bits, q in [2^25, 2^26). The
    // remainder stays below 2 mb < 2^25, so r << 1 fits.
    let one = o.c(1);
    let [r, q] = o.repeat(26, [ma, zero], |o, [r, q]| {
        let less = o.lt(r, mb);
        let r_sub = o.sub(r, mb);
        let one = o.c(1);
        let q2 = o.shl(q, one);
        let q2_1 = o.or(q2, one);
        let q = o.select(less, q2, q2_1);
        let r = o.select(less, r, r_sub);
        let r = o.shl(r, one);
        [r, q]
    });
    let sticky = o.ne(r, zero);
    let sticky = o.to_u32(sticky);
    let q1 = o.shl(q, one);
    let mm = o.or(q1, sticky);

    // Subnormal results: the biased exponent e - 512 is at most 0; shift
    // right by 1 - (e - 512) (at most 31, which leaves only sticky) and pack
    // with exponent 1, whose hidden bit the shift has removed.
    let c512 = o.c(512);
    let c513 = o.c(513);
    let e_le0 = o.lt(e, c513);
    let sh = o.sub(c513, e);
    let c31 = o.c(31);
    let big = o.lt(c31, sh);
    let sh = o.select(big, c31, sh);
    let sh = o.select(e_le0, sh, zero);
    let shifted = o.shr(mm, sh);
    let back = o.shl(shifted, sh);
    let lost = o.ne(back, mm);
    let lost = o.to_u32(lost);
    let sub_mm = o.or(shifted, lost);
    let mm = o.select(e_le0, sub_mm, mm);
    let e_real = o.sub(e, c512);
    let e_pack = o.select(e_le0, one, e_real);
    // Overflow: a biased exponent of 255 or more is infinite.
    let c767 = o.c(767 - 1);
    let over = o.lt(c767, e);
    let packed = round_pack(o, mm, e_pack);
    let r = o.select(over, inf, packed);

    let r = o.select(to_zero, zero, r);
    let r = o.select(to_inf, inf, r);
    let r = o.or(r, sign);
    let nan_bits = o.c(NAN);
    o.select(nan, nan_bits, r)
}

/// `sqrt(a)` on an f32 bit pattern, correctly rounded.
pub(crate) fn sqrt<O: IntOps>(o: &mut O, a: O::V) -> O::V {
    let abs_mask = o.c(ABS);
    let inf = o.c(INF);
    let zero = o.c(0);
    let one = o.c(1);
    let aa = o.and(a, abs_mask);
    let neg = o.ne(aa, a);
    let is_zero = o.eq(aa, zero);
    let is_inf = o.eq(a, inf);
    // NaN, or negative and not -0 (which includes -inf).
    let nan_in = o.lt(inf, aa);
    let not_zero = o.ne(aa, zero);
    let neg_nz = o.band(neg, not_zero);
    let nan = o.bor(nan_in, neg_nz);

    // The general path: a positive, finite, non-zero. The value is
    // m * 2^E with E = ea - 150; shift m left by s (1 or 2) so that E - s
    // is even and m' = m << s lies in [2^24, 2^26): sqrt(m') in [2^12, 2^13).
    let (m, ea) = unpack(o, aa);
    // E is odd exactly when ea + EXP_OFFSET is odd (150 and the offset
    // are even).
    let odd = o.and(ea, one);
    let two = o.c(2);
    let s = o.sub(two, odd);
    let m = o.shl(m, s);
    // Digit-by-digit square root of m' * 4^13: 13 pairs of bits from m',
    // then 13 pairs of zeros; q = floor(sqrt(m') * 2^13) in [2^25, 2^26),
    // the remainder at most 2q < 2^27, so r << 2 fits. Step k takes bits
    // 25 - 2k and 24 - 2k of m' as bits 25 and 24 of `rest` = m' << 2k
    // (zeros from step 13 on).
    let [r, q, _] = o.repeat(26, [zero, zero, m], |o, [r, q, rest]| {
        let one = o.c(1);
        let two = o.c(2);
        let three = o.c(3);
        let c24 = o.c(24);
        let r4 = o.shl(r, two);
        let pair = o.shr(rest, c24);
        let pair = o.and(pair, three);
        let r = o.or(r4, pair);
        let rest = o.shl(rest, two);
        let q4 = o.shl(q, two);
        let t = o.or(q4, one);
        let less = o.lt(r, t);
        let r_sub = o.sub(r, t);
        let q2 = o.shl(q, one);
        let q2_1 = o.or(q2, one);
        let q = o.select(less, q2, q2_1);
        let r = o.select(less, r, r_sub);
        [r, q, rest]
    });
    let sticky = o.ne(r, zero);
    let sticky = o.to_u32(sticky);
    let q1 = o.shl(q, one);
    let mm = o.or(q1, sticky);
    // The biased exponent: 127 + 12 + (E - s) / 2, where E - s is even;
    // with ea carrying EXP_OFFSET = 64: 11 + (ea + 42 - s) / 2.
    let c42 = o.c(42);
    let t = o.add(ea, c42);
    let t = o.sub(t, s);
    let t = o.shr(t, one);
    let c11 = o.c(11);
    let e = o.add(t, c11);
    let r = round_pack(o, mm, e);

    let r = o.select(is_inf, inf, r);
    // sqrt(±0) = ±0.
    let r = o.select(is_zero, a, r);
    let nan_bits = o.c(NAN);
    o.select(nan, nan_bits, r)
}

/// The algorithms run on the host: the model the tests check.
///
/// `fdiv` gives `estimate` when it is set (the tests' stand-in for an
/// inaccurate or broken device), else Rust's correctly rounded `/`;
/// `fell_back` records whether `div` took the long division.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct Host {
    pub(crate) estimate: Option<u32>,
    pub(crate) fell_back: bool,
    /// [`WideOps::f_rcp`]'s result moved by this many ulp (an inaccurate
    /// device reciprocal).
    pub(crate) rcp_error: i32,
    /// [`WideOps::f_fma`] as a multiply and an add, each rounded.
    pub(crate) unfused: bool,
}

#[cfg(test)]
impl WideOps for Host {
    type D = f64;
    fn f_rcp(&mut self, b: u32) -> u32 {
        let r = (1.0 / f32::from_bits(b)).to_bits();
        r.wrapping_add(self.rcp_error as u32)
    }
    fn f_mul(&mut self, a: u32, b: u32) -> u32 {
        (f32::from_bits(a) * f32::from_bits(b)).to_bits()
    }
    fn f_rsqrt(&mut self, a: u32) -> u32 {
        let r = (1.0 / f32::from_bits(a).sqrt()).to_bits();
        r.wrapping_add(self.rcp_error as u32)
    }
    fn f_fma(&mut self, a: u32, b: u32, c: u32) -> u32 {
        let (a, b, c) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
        if self.unfused {
            (a * b + c).to_bits()
        } else {
            a.mul_add(b, c).to_bits()
        }
    }
    fn f_add(&mut self, a: u32, b: u32) -> u32 {
        (f32::from_bits(a) + f32::from_bits(b)).to_bits()
    }
    fn f_sub(&mut self, a: u32, b: u32) -> u32 {
        (f32::from_bits(a) - f32::from_bits(b)).to_bits()
    }
    fn f_lt(&mut self, a: u32, b: u32) -> bool {
        f32::from_bits(a) < f32::from_bits(b)
    }
    fn widen(&mut self, a: u32) -> f64 {
        f64::from(f32::from_bits(a))
    }
    fn d_c(&mut self, v: f64) -> f64 {
        v
    }
    fn d_add(&mut self, a: f64, b: f64) -> f64 {
        a + b
    }
    fn d_sub(&mut self, a: f64, b: f64) -> f64 {
        a - b
    }
    fn d_mul(&mut self, a: f64, b: f64) -> f64 {
        a * b
    }
    fn d_lt(&mut self, a: f64, b: f64) -> bool {
        a < b
    }
    fn d_select(&mut self, c: bool, yes: f64, no: f64) -> f64 {
        if c { yes } else { no }
    }
}

#[cfg(test)]
impl BitsOps for Host {
    fn d_words(&mut self, d: f64) -> (u32, u32) {
        let bits = d.to_bits();
        ((bits >> 32) as u32, bits as u32)
    }
}

#[cfg(test)]
impl IntOps for Host {
    type V = u32;
    type B = bool;
    fn c(&mut self, v: u32) -> u32 {
        v
    }
    fn add(&mut self, a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
    fn sub(&mut self, a: u32, b: u32) -> u32 {
        a.wrapping_sub(b)
    }
    fn and(&mut self, a: u32, b: u32) -> u32 {
        a & b
    }
    fn or(&mut self, a: u32, b: u32) -> u32 {
        a | b
    }
    fn xor(&mut self, a: u32, b: u32) -> u32 {
        a ^ b
    }
    fn shl(&mut self, a: u32, n: u32) -> u32 {
        assert!(n < 32, "shift count {n}");
        a << n
    }
    fn shr(&mut self, a: u32, n: u32) -> u32 {
        assert!(n < 32, "shift count {n}");
        a >> n
    }
    fn clz(&mut self, a: u32) -> u32 {
        a.leading_zeros()
    }
    fn eq(&mut self, a: u32, b: u32) -> bool {
        a == b
    }
    fn ne(&mut self, a: u32, b: u32) -> bool {
        a != b
    }
    fn lt(&mut self, a: u32, b: u32) -> bool {
        a < b
    }
    fn band(&mut self, a: bool, b: bool) -> bool {
        a & b
    }
    fn bor(&mut self, a: bool, b: bool) -> bool {
        a | b
    }
    fn select(&mut self, c: bool, yes: u32, no: u32) -> u32 {
        if c { yes } else { no }
    }
    fn to_u32(&mut self, b: bool) -> u32 {
        b as u32
    }
    fn mul(&mut self, a: u32, b: u32) -> u32 {
        a.wrapping_mul(b)
    }
    fn fdiv(&mut self, a: u32, b: u32) -> u32 {
        self.estimate
            .unwrap_or_else(|| (f32::from_bits(a) / f32::from_bits(b)).to_bits())
    }
    fn unless(&mut self, ok: bool, fast: u32, slow: impl FnOnce(&mut Self) -> u32) -> u32 {
        if ok {
            fast
        } else {
            self.fell_back = true;
            slow(self)
        }
    }
    fn repeat<const K: usize>(
        &mut self,
        n: u32,
        mut state: [u32; K],
        mut step: impl FnMut(&mut Self, [u32; K]) -> [u32; K],
    ) -> [u32; K] {
        for _ in 0..n {
            state = step(self, state);
        }
        state
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod wide_tests;

#[cfg(test)]
pub(crate) fn host_div(a: f32, b: f32) -> f32 {
    f32::from_bits(div(&mut Host::default(), a.to_bits(), b.to_bits()))
}

/// [`div`] on the host with the native division's result replaced by
/// `estimate`; also says whether the long division was taken.
#[cfg(test)]
pub(crate) fn host_div_est(a: u32, b: u32, estimate: u32) -> (u32, bool) {
    let mut h = Host {
        estimate: Some(estimate),
        ..Host::default()
    };
    let r = div(&mut h, a, b);
    (r, h.fell_back)
}

/// [`div_wide`] on the host with the reciprocal `rcp_error` ulp off and
/// `fma` fused or not; also says whether it fell back to [`div`].
#[cfg(test)]
pub(crate) fn host_div_wide(a: u32, b: u32, rcp_error: i32, unfused: bool) -> (u32, bool) {
    let mut h = Host {
        rcp_error,
        unfused,
        ..Host::default()
    };
    let r = div_wide(&mut h, a, b);
    (r, h.fell_back)
}

/// [`div_split`] on the host with the reciprocal `rcp_error` ulp off and
/// `fma` fused or not; also says whether it fell back to [`div_long`].
#[cfg(test)]
pub(crate) fn host_div_split(a: u32, b: u32, rcp_error: i32, unfused: bool) -> (u32, bool) {
    let mut h = Host {
        rcp_error,
        unfused,
        ..Host::default()
    };
    let r = div_split(&mut h, a, b);
    (r, h.fell_back)
}

/// [`div_recip`] on the host with the reciprocal `rcp_error` ulp off;
/// also says whether it fell back to [`div_long`].
#[cfg(test)]
pub(crate) fn host_div_recip(a: u32, b: u32, rcp_error: i32, unfused: bool) -> (u32, bool) {
    let mut h = Host {
        rcp_error,
        unfused,
        ..Host::default()
    };
    let r = div_recip(&mut h, a, b);
    (r, h.fell_back)
}

/// [`sqrt_wide`] on the host with the reciprocal square root `rcp_error`
/// ulp off and `fma` fused or not; also says whether it fell back.
#[cfg(test)]
pub(crate) fn host_sqrt_wide(a: u32, rcp_error: i32, unfused: bool) -> (u32, bool) {
    let mut h = Host {
        rcp_error,
        unfused,
        ..Host::default()
    };
    let r = sqrt_wide(&mut h, a);
    (r, h.fell_back)
}

#[cfg(test)]
pub(crate) fn host_div_long(a: f32, b: f32) -> f32 {
    f32::from_bits(div_long(&mut Host::default(), a.to_bits(), b.to_bits()))
}

#[cfg(test)]
pub(crate) fn host_sqrt(a: f32) -> f32 {
    f32::from_bits(sqrt(&mut Host::default(), a.to_bits()))
}
