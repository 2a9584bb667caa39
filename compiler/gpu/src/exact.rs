//! Correctly rounded f32 division and square root from 32-bit integer
//! operations only, written once against [`IntOps`] so that the same code
//! both emits the naga functions of exact mode (`lower/exact.rs`) and runs on
//! the host as the model the tests compare with Rust's `/` and `sqrt`.
//!
//! Every value is a u32 (exponents carry a positive offset, so no signed
//! arithmetic is needed); every shift count is a constant or provably below
//! 32, since SPIR-V leaves larger counts undefined. The code has no branches:
//! the special cases (NaN, infinities, zeros) are computed alongside the
//! general path, whose operations stay defined on any input, and picked with
//! selects at the end. NaN results are the canonical quiet NaN `0x7FC00000`.
//!
//! The general path: unpack each operand to a 24-bit significand in
//! `[2^23, 2^24)` and an exponent (subnormals normalised with
//! `countLeadingZeros`); compute the result's significand to 26 bits (24 and
//! 2 more) by restoring long division or digit-by-digit square root, one bit
//! per step (unrolled), with a sticky bit from the remainder; shift right with
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
}

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

/// `a / b` on f32 bit patterns, correctly rounded.
pub(crate) fn div<O: IntOps>(o: &mut O, a: O::V, b: O::V) -> O::V {
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
    let mut r = ma;
    let mut q = zero;
    let one = o.c(1);
    for _ in 0..26 {
        let less = o.lt(r, mb);
        let r_sub = o.sub(r, mb);
        let q2 = o.shl(q, one);
        let q2_1 = o.or(q2, one);
        q = o.select(less, q2, q2_1);
        r = o.select(less, r, r_sub);
        r = o.shl(r, one);
    }
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
    // the remainder at most 2q < 2^27, so r << 2 fits.
    let mut r = zero;
    let mut q = zero;
    let three = o.c(3);
    for i in (0..26).rev() {
        let r4 = o.shl(r, two);
        r = if i >= 13 {
            let sh = o.c(2 * (i - 13));
            let pair = o.shr(m, sh);
            let pair = o.and(pair, three);
            o.or(r4, pair)
        } else {
            r4
        };
        let q4 = o.shl(q, two);
        let t = o.or(q4, one);
        let less = o.lt(r, t);
        let r_sub = o.sub(r, t);
        let q2 = o.shl(q, one);
        let q2_1 = o.or(q2, one);
        q = o.select(less, q2, q2_1);
        r = o.select(less, r, r_sub);
    }
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
#[cfg(test)]
pub(crate) struct Host;

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
}

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) fn host_div(a: f32, b: f32) -> f32 {
    f32::from_bits(div(&mut Host, a.to_bits(), b.to_bits()))
}

#[cfg(test)]
pub(crate) fn host_sqrt(a: f32) -> f32 {
    f32::from_bits(sqrt(&mut Host, a.to_bits()))
}
