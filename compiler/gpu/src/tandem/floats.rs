//! Float element maps (SPEC.md 6, 7.2, 7.3, 7.6, 7.7), all on f32 bit
//! patterns held in u32 values: the uniform f16, f32 and f64 fills built
//! with integer operations, and the f32 exponential and Box-Muller normal
//! from the polynomials of section 6 (no division) with the correctly
//! rounded `sqrt` of `crate::exact`, called as the function `exact_sqrt`.
//! Every `+`, `-`, `*` is one rounding: `spirv_exact` forbids contraction.

use super::builder::{Fb, H};
use naga::{BinaryOperator, Function, Handle, ScalarKind};
// The constants of SPEC.md section 6, from the reference crate: one copy.
use phobos_tandem::math::{
    COS_SERIES_F32, HALF_PI_2M24_F32, LN2_HI_F32, LN2_LO_F32, LOG1P_Q_F32, NEG_LN_UPPER_U32,
    SIN_SERIES_F32, SQRT_HALF_BITS_F32,
};

const SIGN: u32 = 0x8000_0000;

/// The float helper functions a module calls.
#[derive(Clone, Copy)]
pub(super) struct FloatFns {
    pub sqrt: Handle<Function>,
    pub neg_ln: Handle<Function>,
}

impl Fb {
    /// The binary16 bits of the two 16-bit draws of the word `w` (low half
    /// first): SPEC.md's `f16_bits`, `m * 2^-11` for each draw's top 11 bits
    /// `m`, without a conversion instruction. `1 + m 2^-11` is the f32 with
    /// `m` at the top of its fraction (bits `0x3F800000 | m << 12`), so
    /// subtracting 1 gives `x = m 2^-11` exactly, and `x 2^-112` (exact: it
    /// is 0 or at least 2^-123, a normal f32) has the f32 exponent field
    /// `e + 112 - 112`, that is binary16's `e + 15` biased for f32's 127:
    /// its bits shifted right by 13 are the binary16 bits of `x` (11
    /// significant bits fit, nothing is cut), and 0 stays 0.
    pub(super) fn f16_pair_bits(&mut self, w: H) -> H {
        let field = self.c(0x007F_F000);
        let one = self.c(1.0f32.to_bits());
        let scale = self.c(0x0780_0000); // 2^-112
        let lo = self.shl_c(w, 7);
        let hi = self.shr_c(w, 9);
        let [lo, hi] = [lo, hi].map(|v| {
            let m = self.and(v, field);
            let f = self.or(m, one);
            let x = self.fsub(f, one);
            self.fmul(x, scale)
        });
        let lo = self.shr_c(lo, 13);
        let hi = self.shl_c(hi, 3);
        let hi = self.and_c(hi, 0xFFFF_0000);
        self.or(lo, hi)
    }

    /// f32 bits of `(w >> 8) * 2^-24`: an exact conversion and an exact
    /// multiply by a power of two.
    pub(super) fn f32_bits(&mut self, w: H) -> H {
        let m = self.shr_c(w, 8);
        let f = self.convert_f32(m);
        let f = self.bitcast(f, ScalarKind::Uint);
        let scale = self.c((1.0f32 / 16_777_216.0).to_bits());
        self.fmul(f, scale)
    }

    /// binary64 bits `(lo, hi)` of `(x >> 11) * 2^-53` for the 64-bit draw
    /// `x = (lo, hi)`, with 32-bit integer operations only.
    pub(super) fn f64_bits(&mut self, lo: H, hi: H) -> (H, H) {
        // m = x >> 11: 53 bits, (m_lo, m_hi) with m_hi < 2^21.
        let m_hi = self.shr_c(hi, 11);
        let a = self.shr_c(lo, 11);
        let b = self.shl_c(hi, 21);
        let m_lo = self.or(a, b);
        // e = index of m's top bit (0..=52).
        let zero = self.c(0);
        let hi_nz = self.ne(m_hi, zero);
        let lz_hi = self.clz(m_hi);
        let lz_lo = self.clz(m_lo);
        let c63 = self.c(63);
        let c31 = self.c(31);
        let e_hi = self.sub(c63, lz_hi);
        let e_lo = self.sub(c31, lz_lo);
        let e = self.select(hi_nz, e_hi, e_lo);
        // Shift m left by sh = 52 - e (0..=52) so its top bit is bit 52.
        let c52 = self.c(52);
        let sh = self.sub(c52, e);
        let sh = self.and_c(sh, 63);
        let c32 = self.c(32);
        let big = self.ge(sh, c32);
        let sh_lo = self.and_c(sh, 31);
        // sh >= 32: hi = m_lo << (sh - 32), lo = 0.
        let big_hi = self.shl(m_lo, sh_lo);
        // sh < 32: hi = (m_hi << sh) | (m_lo >> (32 - sh)) (the second term
        // only when sh > 0), lo = m_lo << sh.
        let h1 = self.shl(m_hi, sh_lo);
        let back = self.sub(c32, sh_lo);
        let back = self.and_c(back, 31);
        let h2 = self.shr(m_lo, back);
        let sh0 = self.eq(sh_lo, zero);
        let h2 = self.select(sh0, zero, h2);
        let small_hi = self.or(h1, h2);
        let small_lo = self.shl(m_lo, sh_lo);
        let n_hi = self.select(big, big_hi, small_hi);
        let n_lo = self.select(big, zero, small_lo);
        // Biased exponent e - 53 + 1023, above the 20 fraction bits of hi.
        let ex = self.add_c(e, 970);
        let ex = self.shl_c(ex, 20);
        let frac_hi = self.and_c(n_hi, 0x000F_FFFF);
        let bits_hi = self.or(ex, frac_hi);
        // m == 0 gives +0.0.
        let any = self.or(m_lo, m_hi);
        let is0 = self.eq(any, zero);
        let out_hi = self.select(is0, zero, bits_hi);
        let out_lo = self.select(is0, zero, n_lo);
        (out_lo, out_hi)
    }

    /// `horner(z, c)`: `p = c[n-1]; p = c[j] + z * p` down to `j = 0`.
    fn horner(&mut self, z: H, c: &[u32]) -> H {
        let mut p = self.c(c[c.len() - 1]);
        for &cj in c[..c.len() - 1].iter().rev() {
            let zp = self.fmul(z, p);
            let cj = self.c(cj);
            p = self.fadd(cj, zp);
        }
        p
    }

    fn fsub(&mut self, a: H, b: H) -> H {
        self.fop(BinaryOperator::Subtract, a, b)
    }

    /// The f32 bits of the integer `x` (an i32 in [-2^22, 2^22]): `2^23 +
    /// 2^22 + x` is exact as the bits `0x4B400000 + x`, and subtracting
    /// `2^23 + 2^22` is exact. A float subtraction instead of a conversion.
    fn small_i32_to_f32_bits(&mut self, x: H) -> H {
        let biased = self.add_c(x, 0x4B40_0000);
        let offset = self.c((12_582_912.0f32).to_bits());
        self.fsub(biased, offset)
    }

    /// The f32 bits of `a = fl(y) 2^-32` for a u32 `y` (`+0` for 0): the f32
    /// nearest `y` (ties to even), as the reference computes it,
    /// `f32(y >> 16) * 2^16 + f32(y & 0xFFFF)` (both terms exact, one
    /// rounding), times the exact `2^-32`. Scaling by a power of two
    /// commutes with the rounding (nothing here is subnormal), so the
    /// terms are built already scaled and without a conversion:
    /// `2^7 + h 2^-16` and `2^-9 + l 2^-32` are bit patterns (`h` and `l`
    /// fill their low fraction bits), less `2^7` and `2^-9` exactly.
    fn u32_to_f32_rn_scaled(&mut self, y: H) -> H {
        let h = self.shr_c(y, 16);
        let big = self.c(0x4300_0000); // 2^7
        let h = self.or(h, big);
        let h = self.fsub(h, big);
        let l = self.and_c(y, 0xFFFF);
        let small = self.c(0x3B00_0000); // 2^-9
        let l = self.or(l, small);
        let l = self.fsub(l, small);
        self.fadd(h, l)
    }

    /// The body of `neg_ln_u32(x)`: `-ln((x + 1) 2^-32)` in f32 (SPEC.md
    /// 6.2): `t = -(1 - u)` from `!x` when `u >= sqrt(1/2)`, else `u`
    /// rounded to f32 and split as `2^k (1 + t)` on its bits; then
    /// `k ln 2 + log1p(t)` (6.1), without a division.
    ///
    /// The result is `0 - ln`, which is `-ln` for every `ln` but `+0`:
    /// the reference's `x = u32::MAX` case (0, not -0) needs no test of
    /// its own. That `x` takes the upper path with `!x = 0`, so `a = +0`,
    /// `t = -0`, `z = +0`, `z q = -0` (`q` is about -1/2), `log1p = -0`,
    /// `k ln 2 = +0` and `ln = +0 + (+0 + -0) = +0`; every other `x` has
    /// `ln != 0` (`|t| >= 2^-32` on the upper path, `k <= -1` below).
    pub(super) fn neg_ln_u32(&mut self, x: H) -> H {
        let upper_from = self.c(NEG_LN_UPPER_U32);
        let upper = self.ge(x, upper_from);
        let not_x = self.xor_c(x, u32::MAX);
        let m = self.add_c(x, 1);
        let y = self.select(upper, not_x, m);
        let a = self.u32_to_f32_rn_scaled(y);
        // k = (bits(a) - bits(sqrt(1/2))) >> 23, arithmetic.
        let sqrt_half = self.c(SQRT_HALF_BITS_F32);
        let d = self.sub(a, sqrt_half);
        let d = self.bitcast(d, ScalarKind::Sint);
        let c23 = self.c(23);
        let k = self.expr(naga::Expression::Binary {
            op: BinaryOperator::ShiftRight,
            left: d,
            right: c23,
        });
        let k = self.bitcast(k, ScalarKind::Uint);
        let k_exp = self.shl_c(k, 23);
        let f = self.sub(a, k_exp);
        let one = self.c(1.0f32.to_bits());
        let t_low = self.fsub(f, one);
        let t_up = self.xor_c(a, SIGN);
        let t = self.select(upper, t_up, t_low);
        let kf = self.small_i32_to_f32_bits(k);
        let zero = self.c(0);
        let kf = self.select(upper, zero, kf);
        // log1p(t) = t + t^2 Q(t).
        let z = self.fmul(t, t);
        let q = self.horner(t, &LOG1P_Q_F32.map(f32::to_bits));
        let zq = self.fmul(z, q);
        let log1p = self.fadd(t, zq);
        let hi = self.c(LN2_HI_F32.to_bits());
        let lo = self.c(LN2_LO_F32.to_bits());
        let khi = self.fmul(kf, hi);
        let klo = self.fmul(kf, lo);
        let tail = self.fadd(klo, log1p);
        let ln = self.fadd(khi, tail);
        self.fsub(zero, ln)
    }

    /// `-ln((x + 1/2) 2^-32)` with the hardware's f32 logarithm:
    /// measurement only (`Knobs::ablate_log`), never the SPEC's bits.
    pub(super) fn neg_ln_native(&mut self, x: H) -> H {
        let f = self.convert_f32(x);
        let f = self.bitcast(f, ScalarKind::Uint);
        let half = self.c(0.5f32.to_bits());
        let f = self.fadd(f, half);
        let scale = self.c((2.0f32).powi(-32).to_bits());
        let u = self.fmul(f, scale);
        let ln = self.native_f32(naga::MathFunction::Log, u);
        let zero = self.c(0);
        self.fsub(zero, ln)
    }

    fn sin_poly(&mut self, a: H) -> H {
        let z = self.fmul(a, a);
        let p = self.horner(z, &SIN_SERIES_F32.map(f32::to_bits));
        let az = self.fmul(a, z);
        let azp = self.fmul(az, p);
        self.fadd(a, azp)
    }

    fn cos_poly(&mut self, a: H) -> H {
        let z = self.fmul(a, a);
        let p = self.horner(z, &COS_SERIES_F32.map(f32::to_bits));
        let zp = self.fmul(z, p);
        let one = self.c(1.0f32.to_bits());
        self.fadd(one, zp)
    }

    /// `(cos, sin)` of the angle `2 pi x / 2^32` (SPEC.md 6.4).
    fn cos_sin_turn(&mut self, x: H) -> (H, H) {
        let q = self.shr_c(x, 30);
        let y = self.and_c(x, 0x3FFF_FFFF);
        let half = self.c(1 << 29);
        let first = self.lt(y, half);
        let quarter = self.c(1 << 30);
        let comp = self.sub(quarter, y);
        let ya = self.select(first, y, comp);
        let ya = self.shr_c(ya, 6);
        let af = self.convert_f32(ya);
        let af = self.bitcast(af, ScalarKind::Uint);
        let unit = self.c(HALF_PI_2M24_F32.to_bits());
        let a = self.fmul(af, unit);
        let cp = self.cos_poly(a);
        let sp = self.sin_poly(a);
        // Quadrants 0..3 give (c, s), (-s, c), (-c, -s), (s, -c) of the
        // octant's (c, s), which are (cp, sp) in the first octant and
        // (sp, cp) in the second: the cosine is sp exactly when `first`
        // equals "the quadrant is odd". Its sign flips in quadrants 1 and
        // 2, the sine's in 2 and 3.
        let odd = self.and_c(q, 1);
        let zero = self.c(0);
        let is_odd = self.ne(odd, zero);
        let swap = self.eq(first, is_odd);
        let cos = self.select(swap, sp, cp);
        let sin = self.select(swap, cp, sp);
        let q1 = self.add_c(q, 1);
        let cos_sign = self.and_c(q1, 2);
        let cos_sign = self.shl_c(cos_sign, 30);
        let sin_sign = self.and_c(q, 2);
        let sin_sign = self.shl_c(sin_sign, 30);
        let cos = self.xor(cos, cos_sign);
        let sin = self.xor(sin, sin_sign);
        (cos, sin)
    }

    /// Box-Muller on the words of one pair: `(r cos, r sin)` (SPEC.md 7.6).
    fn normal_pair(&mut self, w0: H, w1: H, fns: FloatFns) -> (H, H) {
        let l = self.call(fns.neg_ln, vec![w0]);
        let ll = self.fadd(l, l);
        let r = self.call(fns.sqrt, vec![ll]);
        let (c, s) = self.cos_sin_turn(w1);
        (self.fmul(r, c), self.fmul(r, s))
    }

    /// Four normals from one block: pairs (w0, w1) and (w2, w3).
    pub(super) fn normal_words(&mut self, o: [H; 4], fns: FloatFns) -> Vec<H> {
        let (a, b) = self.normal_pair(o[0], o[1], fns);
        let (c, d) = self.normal_pair(o[2], o[3], fns);
        vec![a, b, c, d]
    }

    /// Four exponentials from one block.
    pub(super) fn exponential_words(&mut self, o: [H; 4], fns: FloatFns) -> Vec<H> {
        o.iter().map(|&w| self.call(fns.neg_ln, vec![w])).collect()
    }
}

/// Adds `exact_sqrt` and `neg_ln_u32` (both on bits) to `m`; the square
/// root is `crate::exact::sqrt_wide` (checked in f64) when
/// `options.wide_div`, else `crate::exact::sqrt`.
pub(super) fn float_fns(
    m: &mut naga::Module,
    tys: super::builder::Tys,
    options: &crate::GpuOptions,
) -> FloatFns {
    let span = naga::Span::UNDEFINED;
    let branch_fallback = options.branch_fallback;
    let wide = options.wide_div;
    let (ablate_log, ablate_sqrt) = (options.knobs.ablate_log, options.knobs.ablate_sqrt);
    let sqrt = Fb::function(tys, branch_fallback, "exact_sqrt", 1, tys.u32, |b, a| {
        if ablate_sqrt {
            b.native_f32(naga::MathFunction::Sqrt, a[0])
        } else if wide {
            crate::exact::sqrt_wide(b, a[0])
        } else {
            crate::exact::sqrt(b, a[0])
        }
    });
    let sqrt = m.functions.append(sqrt, span);
    let neg_ln =
        Fb::function(
            tys,
            branch_fallback,
            "neg_ln_u32",
            1,
            tys.u32,
            |b, a| match ablate_log {
                true => b.neg_ln_native(a[0]),
                false => b.neg_ln_u32(a[0]),
            },
        );
    let neg_ln = m.functions.append(neg_ln, span);
    FloatFns { sqrt, neg_ln }
}
