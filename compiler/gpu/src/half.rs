//! The 16-bit floats' conversions from 32-bit integer operations, written
//! once against [`IntOps`] (as exact mode's division is) so that the same
//! code emits the shader's functions (`lower/half_io.rs`) and runs on the
//! host as the model the tests compare with the core's meaning,
//! `phobos_core::types::{half_bits, half_value}` (the `half` crate's
//! conversions): round to nearest even, overflow to infinity, subnormals
//! kept, a NaN quieted with the top bits of its payload.
//!
//! Every value is a u32 holding an f32's bits or a 16-bit float's bits in
//! its low half; every shift count is a constant or provably below 32;
//! special cases are computed beside the general one and picked with
//! selects.

use crate::exact::IntOps;
use phobos_core::types::Scalar;

/// `a >= b` unsigned.
fn ge<O: IntOps>(o: &mut O, a: O::V, b: O::V) -> O::B {
    let lt = o.lt(a, b);
    // !lt: lt compared with false.
    let lt = o.to_u32(lt);
    let zero = o.c(0);
    o.eq(lt, zero)
}

/// Whether the masked bits `a & mask` are not all zero.
fn any<O: IntOps>(o: &mut O, a: O::V, mask: u32) -> O::B {
    let m = o.c(mask);
    let x = o.and(a, m);
    let zero = o.c(0);
    o.ne(x, zero)
}

/// The bits of the f32 `x` rounded to the 16-bit float `elem`.
pub(crate) fn encode<O: IntOps>(o: &mut O, elem: Scalar, x: O::V) -> O::V {
    match elem {
        Scalar::F16 => encode_f16(o, x),
        Scalar::BF16 => encode_bf16(o, x),
        other => unreachable!("{other} is not a 16-bit float"),
    }
}

/// The f32 bits of the 16-bit float `elem` whose bits are the low half of `h`.
pub(crate) fn decode<O: IntOps>(o: &mut O, elem: Scalar, h: O::V) -> O::V {
    match elem {
        Scalar::F16 => decode_f16(o, h),
        Scalar::BF16 => decode_bf16(o, h),
        other => unreachable!("{other} is not a 16-bit float"),
    }
}

/// Rounded to the nearest with ties to even: `kept + 1` when the dropped
/// bits `x & (2 * round - 1)` exceed half (`round`), or equal it with
/// `kept` odd; that is, the round bit set and any of the bits below it or
/// the lowest kept bit (`3 * round - 1`).
fn round_up<O: IntOps>(o: &mut O, x: O::V, round: O::V, kept: O::V) -> O::V {
    let zero = o.c(0);
    let r = o.and(x, round);
    let has_round = o.ne(r, zero);
    let three = o.c(3);
    let m = o.mul(round, three);
    let one = o.c(1);
    let m = o.sub(m, one);
    let t = o.and(x, m);
    let sticky = o.ne(t, zero);
    let up = o.band(has_round, sticky);
    let up = o.to_u32(up);
    o.add(kept, up)
}

fn encode_f16<O: IntOps>(o: &mut O, x: O::V) -> O::V {
    let c16 = o.c(16);
    let sign_bit = o.c(0x8000_0000);
    let sign = o.and(x, sign_bit);
    let sign = o.shr(sign, c16);
    let frac_mask = o.c(0x007f_ffff);
    let man = o.and(x, frac_mask);
    let c23 = o.c(23);
    let abs_mask = o.c(0x7fff_ffff);
    let abs = o.and(x, abs_mask);
    let e = o.shr(abs, c23);
    let c13 = o.c(13);
    let man13 = o.shr(man, c13);
    let inf = o.c(0x7c00);
    let signed_inf = o.or(sign, inf);

    // Infinity or NaN: the payload's top bits, quieted when it is a NaN.
    let c255 = o.c(255);
    let special = o.eq(e, c255);
    let is_nan = any(o, man, 0x007f_ffff);
    let quiet = o.to_u32(is_nan);
    let c9 = o.c(9);
    let quiet = o.shl(quiet, c9);
    let nan = o.or(signed_inf, quiet);
    let nan = o.or(nan, man13);

    // Normal: exponent rebiased by 112, 13 bits dropped.
    let c112 = o.c(112);
    let he = o.sub(e, c112);
    let c10 = o.c(10);
    let he = o.shl(he, c10);
    let kept = o.or(sign, he);
    let kept = o.or(kept, man13);
    let round = o.c(0x1000);
    let normal = round_up(o, x, round, kept);

    // Subnormal: the significand with its hidden bit, shifted right by
    // `126 - e` (14 to 24; 24 in the lanes that do not use it, so every
    // shift is below 32).
    let hidden = o.c(0x0080_0000);
    let full = o.or(man, hidden);
    let c126 = o.c(126);
    let s = o.sub(c126, e);
    let c14 = o.c(14);
    let s14 = o.sub(s, c14);
    let c11 = o.c(11);
    let s_ok = o.lt(s14, c11);
    let c24 = o.c(24);
    let s = o.select(s_ok, s, c24);
    let hm = o.shr(full, s);
    let kept_sub = o.or(sign, hm);
    let one = o.c(1);
    let s1 = o.sub(s, one);
    let round_sub = o.shl(one, s1);
    let sub = round_up(o, full, round_sub, kept_sub);

    // e >= 143: overflow; 113 <= e: normal; 102 <= e <= 112: subnormal;
    // below: a signed zero.
    let c143 = o.c(143);
    let over = ge(o, e, c143);
    let c113 = o.c(113);
    let is_normal = ge(o, e, c113);
    let c102 = o.c(102);
    let is_sub = ge(o, e, c102);
    let r = o.select(is_sub, sub, sign);
    let r = o.select(is_normal, normal, r);
    let r = o.select(over, signed_inf, r);
    o.select(special, nan, r)
}

fn decode_f16<O: IntOps>(o: &mut O, h: O::V) -> O::V {
    let c16 = o.c(16);
    let sign_bit = o.c(0x8000);
    let sign = o.and(h, sign_bit);
    let sign = o.shl(sign, c16);
    let c10 = o.c(10);
    let e = o.shr(h, c10);
    let c31 = o.c(31);
    let e = o.and(e, c31);
    let man_mask = o.c(0x3ff);
    let m = o.and(h, man_mask);
    let c13 = o.c(13);
    let m13 = o.shl(m, c13);
    let zero = o.c(0);
    let c23 = o.c(23);

    // Normal: exponent rebiased by 112.
    let c112 = o.c(112);
    let fe = o.add(e, c112);
    let fe = o.shl(fe, c23);
    let normal = o.or(sign, fe);
    let normal = o.or(normal, m13);

    // Infinity or NaN (quieted).
    let inf = o.c(0x7f80_0000);
    let special = o.or(sign, inf);
    let special = o.or(special, m13);
    let is_nan = o.ne(m, zero);
    let quiet = o.to_u32(is_nan);
    let c22 = o.c(22);
    let quiet = o.shl(quiet, c22);
    let special = o.or(special, quiet);

    // Subnormal: normalised, its top bit at bit 10 dropped. `k` =
    // clz(m) - 22 (0 to 9; 10 when m is 0, whose lane is not used).
    let lz = o.clz(m);
    let c22b = o.c(22);
    let k = o.sub(lz, c22b);
    let c112b = o.c(112);
    let se = o.sub(c112b, k);
    let se = o.shl(se, c23);
    let c14 = o.c(14);
    let sh = o.add(k, c14);
    let c31b = o.c(31);
    let sh = o.and(sh, c31b);
    let sm = o.shl(m, sh);
    let frac = o.c(0x007f_ffff);
    let sm = o.and(sm, frac);
    let sub = o.or(sign, se);
    let sub = o.or(sub, sm);
    let m_zero = o.eq(m, zero);
    let sub = o.select(m_zero, sign, sub);

    let e_zero = o.eq(e, zero);
    let e_max = o.eq(e, c31);
    let r = o.select(e_zero, sub, normal);
    o.select(e_max, special, r)
}

fn encode_bf16<O: IntOps>(o: &mut O, x: O::V) -> O::V {
    let c16 = o.c(16);
    let top = o.shr(x, c16);
    let abs_mask = o.c(0x7fff_ffff);
    let abs = o.and(x, abs_mask);
    let inf = o.c(0x7f80_0000);
    let is_nan = o.lt(inf, abs);
    let quiet = o.c(0x40);
    let nan = o.or(top, quiet);
    let round = o.c(0x8000);
    let rounded = round_up(o, x, round, top);
    o.select(is_nan, nan, rounded)
}

fn decode_bf16<O: IntOps>(o: &mut O, h: O::V) -> O::V {
    let mask = o.c(0xffff);
    let h = o.and(h, mask);
    let c16 = o.c(16);
    let bits = o.shl(h, c16);
    let abs_mask = o.c(0x7fff);
    let abs = o.and(h, abs_mask);
    let inf = o.c(0x7f80);
    let is_nan = o.lt(inf, abs);
    let quiet = o.c(0x0040_0000);
    let nan = o.or(bits, quiet);
    o.select(is_nan, nan, bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::Host;
    use phobos_core::types::{half_bits, half_value};

    fn enc(elem: Scalar, x: u32) -> u32 {
        encode(&mut Host::default(), elem, x)
    }

    fn dec(elem: Scalar, h: u16) -> u32 {
        decode(&mut Host::default(), elem, u32::from(h))
    }

    /// Every 16-bit pattern widens to the core's f32, bit for bit.
    #[test]
    fn decoding_is_the_cores_on_every_pattern() {
        for elem in [Scalar::F16, Scalar::BF16] {
            for h in 0..=u16::MAX {
                let want = half_value(elem, h).to_bits();
                assert_eq!(dec(elem, h), want, "{elem} {h:#06x}");
            }
        }
    }

    /// Rounding matches the core's at every 16-bit value, the midpoints
    /// between neighbours and one f32 ulp either side of each (where ties
    /// and carries happen), and on a million random f32 patterns.
    #[test]
    fn encoding_is_the_cores_at_every_boundary() {
        let check = |elem: Scalar, x: u32| {
            let want = u32::from(half_bits(elem, f32::from_bits(x)));
            assert_eq!(enc(elem, x), want, "{elem} {x:#010x}");
        };
        for elem in [Scalar::F16, Scalar::BF16] {
            for h in 0..=u16::MAX {
                let a = half_value(elem, h);
                let b = half_value(elem, h.wrapping_add(1));
                let mid = ((f64::from(a) + f64::from(b)) / 2.0) as f32;
                for x in [a.to_bits(), mid.to_bits()] {
                    for d in [0u32, 1, 2, u32::MAX, u32::MAX - 1] {
                        check(elem, x.wrapping_add(d));
                    }
                }
            }
            let mut s = 0x9e37_79b9_7f4a_7c15u64;
            for _ in 0..1_000_000 {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                check(elem, s as u32);
            }
        }
    }
}
