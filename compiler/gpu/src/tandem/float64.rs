//! f64 element maps (SPEC.md 6.1-6.3, 7.7): `neg_ln_u64` and its
//! `ln_core_f64` on device f64 values (`SHADER_F64`), with the division of
//! `f64div.rs`; every `+`, `-`, `*` is one rounding (`spirv_exact` adds
//! `NoContraction` to every `OpFAdd`, `OpFSub`, `OpFMul` of any width).
//!
//! naga has no bit cast between `f64` and `vec2<u32>`, so values enter f64
//! by exact conversions (`u32` and `i32` to f64, f32 powers of two widened)
//! and leave as stores of a block's two values into an `array<vec2<f64>>`
//! output, whose bytes are the little-endian binary64 the reference writes. No value here is subnormal:
//! `t` is 0 or at least `2^-64` in magnitude and `-ln u` at least `2^-64`.

use super::builder::{Fb, H};
use super::f64div::{self, F64Ops};
use naga::{BinaryOperator, Expression, Literal, ScalarKind};
// The constants of SPEC.md section 6, from the reference crate: one copy.
use phobos_tandem::math::{
    EXP_SERIES_F64, INV_LN2_F64, LN_SERIES_F64, LN2_HI_F64, LN2_LO_F64, SQRT2_MANT_F64,
};

/// A 64-bit value as `(lo, hi)` u32 expressions.
pub(super) type W = (H, H);

impl F64Ops for Fb {
    type D = H;
    type B = H;
    fn dc(&mut self, v: f64) -> H {
        self.expr(Expression::Literal(Literal::F64(v)))
    }
    fn dadd(&mut self, a: H, b: H) -> H {
        self.add(a, b)
    }
    fn dsub(&mut self, a: H, b: H) -> H {
        self.sub(a, b)
    }
    fn dmul(&mut self, a: H, b: H) -> H {
        self.mul(a, b)
    }
    fn dlt(&mut self, a: H, b: H) -> H {
        self.lt(a, b)
    }
    fn deq(&mut self, a: H, b: H) -> H {
        self.eq(a, b)
    }
    fn dsel(&mut self, c: H, yes: H, no: H) -> H {
        self.select(c, yes, no)
    }
    fn dand(&mut self, a: H, b: H) -> H {
        self.land(a, b)
    }
    /// As `exact::IntOps::unless`'s branch: `slow` behind an `if`.
    fn dunless(&mut self, ok: H, fast: H, slow: impl FnOnce(&mut Self) -> H) -> H {
        let ty = self.tys.f64.expect("a module with f64");
        let var = self.var_of("unless_f64", ty);
        self.store(var, fast);
        let reject = self.nested(|b| {
            let value = slow(b);
            b.store(var, value);
        });
        self.cur.push(naga::Statement::If {
            condition: ok,
            accept: naga::Block::new(),
            reject,
        });
        self.load(var)
    }
    /// With 64-bit integers, `x`'s bits with the sign and fraction
    /// cleared. Else `x` narrowed to f32 (rounded in any direction: the
    /// result is within an f32 ulp), that value's exponent as a power of
    /// two widened back, halved when it exceeds `x`.
    fn floor_pow2(&mut self, x: H) -> H {
        if self.tys.int64 {
            let bits = self.bitcast(x, ScalarKind::Uint);
            let exp = self.expr(Expression::Literal(Literal::U64(0x7FF0_0000_0000_0000)));
            let p = self.and(bits, exp);
            return self.bitcast(p, ScalarKind::Float);
        }
        let n = self.convert_f32(x);
        let n = self.bitcast(n, ScalarKind::Uint);
        let e = self.and_c(n, 0x7F80_0000);
        let p = self.f32_bits_to_f64(e);
        let above = self.lt(x, p);
        let half = self.dc(0.5);
        let hp = self.mul(p, half);
        self.select(above, hp, p)
    }
}

impl Fb {
    /// The f32 with bits `x` (a u32 expression) as an f64, exactly.
    pub(super) fn f32_bits_to_f64(&mut self, x: H) -> H {
        let f = self.bitcast(x, ScalarKind::Float);
        self.convert_f64(f)
    }

    /// A u32 or i32 (or f32) value converted to f64, exactly.
    pub(super) fn convert_f64(&mut self, x: H) -> H {
        self.expr(Expression::As {
            expr: x,
            kind: ScalarKind::Float,
            convert: Some(8),
        })
    }

    /// `2^p` as an f64 for an i32 `p` (held in a u32) in `[-126, 127]`:
    /// with 64-bit integers the bits `(p + 1023) << 52`, else a widened
    /// f32.
    fn pow2_f64(&mut self, p: H) -> H {
        if self.tys.int64 {
            let ex = self.add_c(p, 1023);
            let ex = self.widen(ex);
            let c52 = self.expr(Expression::Literal(Literal::U64(52)));
            let bits = self.bin(BinaryOperator::ShiftLeft, ex, c52);
            return self.bitcast(bits, ScalarKind::Float);
        }
        let ex = self.add_c(p, 127);
        let bits = self.shl_c(ex, 23);
        self.f32_bits_to_f64(bits)
    }

    /// The 64-bit integer `(lo, hi)` (below 2^53) as an f64, exactly.
    pub(super) fn u53_to_f64(&mut self, x: W) -> H {
        let lo = self.convert_f64(x.0);
        let hi = self.convert_f64(x.1);
        let scale = self.dc(4_294_967_296.0);
        let hs = self.mul(hi, scale);
        self.add(hs, lo)
    }

    pub(super) fn sub64(&mut self, a: W, b: W) -> W {
        let lo = self.sub(a.0, b.0);
        let borrow = self.lt(a.0, b.0);
        let borrow = self.bit(borrow);
        let hi = self.sub(a.1, b.1);
        let hi = self.sub(hi, borrow);
        (lo, hi)
    }

    /// Leading zeros of a 64-bit value (64 for 0).
    fn clz64(&mut self, x: W) -> H {
        let zero = self.c(0);
        let hi_nz = self.ne(x.1, zero);
        let lh = self.clz(x.1);
        let ll = self.clz(x.0);
        let ll = self.add_c(ll, 32);
        self.select(hi_nz, lh, ll)
    }

    /// `x << n` for `n` in `[0, 63]` (masked).
    fn shl64(&mut self, x: W, n: H) -> W {
        let n = self.and_c(n, 63);
        let c32 = self.c(32);
        let big = self.ge(n, c32);
        let s = self.and_c(n, 31);
        let zero = self.c(0);
        let big_hi = self.shl(x.0, s);
        let h1 = self.shl(x.1, s);
        let back = self.sub(c32, s);
        let back = self.and_c(back, 31);
        let h2 = self.shr(x.0, back);
        let s0 = self.eq(s, zero);
        let h2 = self.select(s0, zero, h2);
        let small_hi = self.or(h1, h2);
        let small_lo = self.shl(x.0, s);
        let hi = self.select(big, big_hi, small_hi);
        let lo = self.select(big, zero, small_lo);
        (lo, hi)
    }

    /// `x >> n` for `n` in `[0, 63]` (masked).
    fn shr64(&mut self, x: W, n: H) -> W {
        let n = self.and_c(n, 63);
        let c32 = self.c(32);
        let big = self.ge(n, c32);
        let s = self.and_c(n, 31);
        let zero = self.c(0);
        let big_lo = self.shr(x.1, s);
        let l1 = self.shr(x.0, s);
        let back = self.sub(c32, s);
        let back = self.and_c(back, 31);
        let l2 = self.shl(x.1, back);
        let s0 = self.eq(s, zero);
        let l2 = self.select(s0, zero, l2);
        let small_lo = self.or(l1, l2);
        let small_hi = self.shr(x.1, s);
        let lo = self.select(big, big_lo, small_lo);
        let hi = self.select(big, zero, small_hi);
        (lo, hi)
    }

    /// `horner(z, c)` in f64.
    pub(super) fn horner64(&mut self, z: H, c: &[f64]) -> H {
        let mut p = self.dc(c[c.len() - 1]);
        for &cj in c[..c.len() - 1].iter().rev() {
            let zp = self.mul(z, p);
            let cj = self.dc(cj);
            p = self.add(cj, zp);
        }
        p
    }

    /// `ln_core_f64(k, t)` (SPEC.md 6.1) for an i32 `k` held in a u32 and
    /// `t = -a` when `neg`, else `a` (an f64 `a >= 0`, and `t` never `-0`):
    /// `d = fl(2 + t)` is `fl(2 - a)` or `fl(2 + a)`, and `s = t / d` is
    /// `±fl(a / d)` (rounding to nearest is symmetric), the division as
    /// `f64div.rs`'s [`f64div::div_reduced`].
    pub(super) fn ln_core_f64(&mut self, k: H, a: H, neg: H) -> H {
        let two = self.dc(2.0);
        let d_minus = self.sub(two, a);
        let d_plus = self.add(two, a);
        let den = self.select(neg, d_minus, d_plus);
        let q = f64div::div_reduced(self, a, den);
        let dzero = self.dc(0.0);
        let nq = self.sub(dzero, q);
        let s = self.select(neg, nq, q);
        let z = self.mul(s, s);
        let p = self.horner64(z, &LN_SERIES_F64);
        let ss = self.add(s, s);
        let sz = self.mul(s, z);
        let szp = self.mul(sz, p);
        let ln_f = self.add(ss, szp);
        let ki = self.bitcast(k, ScalarKind::Sint);
        let kf = self.convert_f64(ki);
        let hi = self.dc(LN2_HI_F64);
        let lo = self.dc(LN2_LO_F64);
        let khi = self.mul(kf, hi);
        let klo = self.mul(kf, lo);
        let tail = self.add(klo, ln_f);
        self.add(khi, tail)
    }

    /// `exp_neg_f64(h)` (SPEC.md 6.3) for `0 <= h < 87`, where `k <= 126`
    /// and `2^-k` is a widened f32 (the ziggurat's `h = v^2 / 2` stays
    /// below 9.2, so the section's `h > 708` cut-off and its subnormal
    /// scaling are never reached). `k` is `h / ln 2 + 1/2` truncated by
    /// a float-to-u32 conversion (round toward zero in SPIR-V).
    pub(super) fn exp_neg_f64(&mut self, h: H) -> H {
        let inv = self.dc(INV_LN2_F64);
        let hk = self.mul(h, inv);
        let half = self.dc(0.5);
        let hk = self.add(hk, half);
        let k = self.expr(Expression::As {
            expr: hk,
            kind: ScalarKind::Uint,
            convert: Some(4),
        });
        let kf = self.convert_f64(k);
        let hi = self.dc(LN2_HI_F64);
        let lo = self.dc(LN2_LO_F64);
        let khi = self.mul(kf, hi);
        let klo = self.mul(kf, lo);
        let r = self.sub(khi, h);
        let r = self.add(r, klo);
        let p = self.horner64(r, &EXP_SERIES_F64);
        let c127 = self.c(127);
        let ex = self.sub(c127, k);
        let bits = self.shl_c(ex, 23);
        let scale = self.f32_bits_to_f64(bits);
        self.mul(p, scale)
    }

    /// `(x >> 11) 2^-53` as an f64 (SPEC.md 7.3), exactly.
    pub(super) fn frac53(&mut self, x: W) -> H {
        let a = self.shr_c(x.0, 11);
        let b = self.shl_c(x.1, 21);
        let lo = self.or(a, b);
        let hi = self.shr_c(x.1, 11);
        let m = self.u53_to_f64((lo, hi));
        let scale = self.dc(f64::EPSILON / 2.0); // 2^-53
        self.mul(m, scale)
    }

    /// `neg_ln_u64(x)` (SPEC.md 6.2): `-ln((x + 1) 2^-64)` as an f64, with
    /// the reduction on 32-bit integer pairs (on u64 values where the
    /// device has them, [`Fb::neg_ln_u64_wide`]).
    pub(super) fn neg_ln_u64(&mut self, x: W) -> H {
        if self.tys.int64 {
            return self.neg_ln_u64_wide(x);
        }
        let all = self.c(u32::MAX);
        let lo_max = self.eq(x.0, all);
        let hi_max = self.eq(x.1, all);
        let is_max = self.land(lo_max, hi_max);
        // m = x + 1 (0 only when x is the maximum, returned as 0 below;
        // every shift count is masked, so that case stays defined).
        let one = self.c(1);
        let zero = self.c(0);
        let m = self.add64(x, (one, zero));
        let lz = self.clz64(m);
        let c63 = self.c(63);
        let e = self.sub(c63, lz);
        let top = self.shl64((one, zero), e);
        let below = (self.xor(m.0, top.0), self.xor(m.1, top.1));
        // frac: the M = 52 bits after the leading one.
        let c52 = self.c(52);
        let big = self.ge(e, c52);
        let r = self.sub(e, c52);
        let fr_r = self.shr64(below, r);
        let l = self.sub(c52, e);
        let fr_l = self.shl64(below, l);
        let frac = (
            self.select(big, fr_r.0, fr_l.0),
            self.select(big, fr_r.1, fr_l.1),
        );
        let sq = (
            self.c(SQRT2_MANT_F64 as u32),
            self.c((SQRT2_MANT_F64 >> 32) as u32),
        );
        let below_sq = self.lt64(frac, sq);
        let neg = self.not(below_sq);
        // neg: num = 2^(e+1) - m (wrapping: e = 63 gives 2^64 - m),
        // den_exp = e + 1; else num = below, den_exp = e.
        let top2 = self.shl64(top, one);
        let num_neg = self.sub64(top2, m);
        let num = (
            self.select(neg, num_neg.0, below.0),
            self.select(neg, num_neg.1, below.1),
        );
        let e1 = self.add_c(e, 1);
        let den_exp = self.select(neg, e1, e);
        let c64 = self.c(64);
        let k = self.sub(den_exp, c64);
        // Keep num's top 53 bits: t = int * 2^p.
        let nlz = self.clz64(num);
        let len = self.sub(c64, nlz);
        let c53 = self.c(53);
        let long = self.lt(c53, len);
        let drop = self.sub(len, c53);
        let int_long = self.shr64(num, drop);
        let int = (
            self.select(long, int_long.0, num.0),
            self.select(long, int_long.1, num.1),
        );
        let p_long = self.sub(drop, den_exp);
        let p_short = self.sub(zero, den_exp);
        let p = self.select(long, p_long, p_short);
        let int_f = self.u53_to_f64(int);
        self.neg_ln_finish(int_f, p, neg, k, is_max)
    }

    /// `t = ±int_f 2^p` (minus when `neg`), then `-ln_core(k, t)`, or 0
    /// when `is_max`: the end of `neg_ln_u64` (SPEC.md 6.2).
    fn neg_ln_finish(&mut self, int_f: H, p: H, neg: H, k: H, is_max: H) -> H {
        let pow2 = self.pow2_f64(p);
        let a = self.mul(int_f, pow2);
        let ln = self.ln_core_f64(k, a, neg);
        let dzero = self.dc(0.0);
        let r = self.sub(dzero, ln);
        self.select(is_max, dzero, r)
    }

    /// A u32 expression zero-extended to u64.
    fn widen(&mut self, x: H) -> H {
        self.expr(Expression::As {
            expr: x,
            kind: ScalarKind::Uint,
            convert: Some(8),
        })
    }

    /// The low 32 bits of a u64 expression.
    fn narrow(&mut self, x: H) -> H {
        self.expr(Expression::As {
            expr: x,
            kind: ScalarKind::Uint,
            convert: Some(4),
        })
    }

    /// `x >> n` or `x << n` of a u64 expression for `n` masked to
    /// `[0, 63]` (a larger count is undefined in SPIR-V).
    fn shift64(&mut self, op: BinaryOperator, x: H, n: H) -> H {
        let n = self.and_c(n, 63);
        let n = self.widen(n);
        self.bin(op, x, n)
    }

    /// Leading zeros of a u64 expression (64 for 0), from its halves:
    /// `countLeadingZeros` has no 64-bit form in SPIR-V's GLSL.std.450.
    fn clz_u64(&mut self, x: H) -> H {
        let lo = self.narrow(x);
        let c32 = self.c(32);
        let c32 = self.widen(c32);
        let hi = self.bin(BinaryOperator::ShiftRight, x, c32);
        let hi = self.narrow(hi);
        self.clz64((lo, hi))
    }

    /// [`Fb::neg_ln_u64`] with the reduction on u64 values, where the
    /// device has 64-bit integers (`GpuOptions::int64`): the same integer
    /// results, so the same bits, in native 64-bit shifts and subtractions
    /// instead of the 32-bit pairs' dozen operations per variable shift
    /// (five of them per element).
    fn neg_ln_u64_wide(&mut self, x: W) -> H {
        let all = self.c(u32::MAX);
        let lo_max = self.eq(x.0, all);
        let hi_max = self.eq(x.1, all);
        let is_max = self.land(lo_max, hi_max);
        let one = self.c(1);
        let zero = self.c(0);
        // m = x + 1 (0 only when x is the maximum, returned as 0 below;
        // every shift count is masked, so that case stays defined).
        let m_pair = self.add64(x, (one, zero));
        let lz = self.clz64(m_pair);
        let lo = self.widen(m_pair.0);
        let hi = self.widen(m_pair.1);
        let c32 = self.c(32);
        let c32 = self.widen(c32);
        let hi = self.bin(BinaryOperator::ShiftLeft, hi, c32);
        let m = self.or(hi, lo);
        let c63 = self.c(63);
        let e = self.sub(c63, lz);
        let one64 = self.expr(Expression::Literal(Literal::U64(1)));
        let top = self.shift64(BinaryOperator::ShiftLeft, one64, e);
        let below = self.xor(m, top);
        // frac: the M = 52 bits after the leading one.
        let c52 = self.c(52);
        let big = self.ge(e, c52);
        let r = self.sub(e, c52);
        let fr_r = self.shift64(BinaryOperator::ShiftRight, below, r);
        let l = self.sub(c52, e);
        let fr_l = self.shift64(BinaryOperator::ShiftLeft, below, l);
        let frac = self.select(big, fr_r, fr_l);
        let sq = self.expr(Expression::Literal(Literal::U64(SQRT2_MANT_F64)));
        let below_sq = self.lt(frac, sq);
        let neg = self.not(below_sq);
        // neg: num = 2^(e+1) - m (wrapping: e = 63 gives 2^64 - m),
        // den_exp = e + 1; else num = below, den_exp = e.
        let top2 = self.shift64(BinaryOperator::ShiftLeft, top, one);
        let num_neg = self.sub(top2, m);
        let num = self.select(neg, num_neg, below);
        let e1 = self.add_c(e, 1);
        let den_exp = self.select(neg, e1, e);
        let c64 = self.c(64);
        let k = self.sub(den_exp, c64);
        // Keep num's top 53 bits: t = int * 2^p.
        let nlz = self.clz_u64(num);
        let len = self.sub(c64, nlz);
        let c53 = self.c(53);
        let long = self.lt(c53, len);
        let drop = self.sub(len, c53);
        let int_long = self.shift64(BinaryOperator::ShiftRight, num, drop);
        let int = self.select(long, int_long, num);
        let p_long = self.sub(drop, den_exp);
        let p_short = self.sub(zero, den_exp);
        let p = self.select(long, p_long, p_short);
        // int < 2^53: the conversion is exact.
        let int_f = self.convert_f64(int);
        self.neg_ln_finish(int_f, p, neg, k, is_max)
    }
}
