//! The f64 divisions of the Tandem fills, correctly rounded from f64 `+`,
//! `-`, `*` (each correctly rounded and, under exact mode's
//! `NoContraction`, never fused) and comparisons: `ln_core_f64`'s
//! `s = t / (2 + t)` (SPEC.md 6.1) and the ziggurat tail's
//! `neg_ln_u64(..) / R` (SPEC.md 7.8). The device's f64 `/` is not used at
//! all: the reciprocal below already gives a start within `2^-50`, so its
//! quotient bought nothing, and a device's f64 division is itself a
//! sequence of operations (GPUs have no f64 divider) that every
//! `exponential_f64` element paid.
//!
//! The argument below is written for `ln_core`'s division; the tail's
//! differs only in `d = R` (about 4.04, `ulp(d) = 2^-50`), `y = fl(1/R)`
//! (`|1 - R y| <= 2^-53`, no Newton steps) and `t` in `[2^-64, 44.4]` or 0:
//! the same steps hold with `a >= 4 q`, `|r| < 2.1 ulp(q) < 2^53 g` for
//! `g = ulp(q) 2^-50`, and no partial product below `2^-170`.
//!
//! Domain: `d = fl(2 + t)` with `t = ±int 2^p` from `neg_ln_u64`'s
//! reduction (SPEC.md 6.2; also `ln_f64`'s), so `|t| <= sqrt(2) - 1 < 0.4143`
//! and `t == 0` or `|t| >= 2^-64`: `t` lies in `[1/sqrt(2) - 1, sqrt(2) - 1)`,
//! so `d` in `[1.70, 2.42]`. With `a = |t|`
//! the quotient `a / d` is computed and re-signed (so ties to even need no
//! sign care; `t = ±0` gives `t` back, which is `t / d`).
//!
//! The fast path (`div_reduced`, every element of `exponential_f64`):
//! `y` within `2^-38.3` of `1/d` (a quadratic, then two Newton steps
//! `y (2 - d y)`, each squaring the error and adding at most `3 2^-53`);
//! `q1 = a y`; `r = a - q1 d` by one Dekker residual below (`a - p` exact,
//! one rounding in all); `q2 = r y`. Then `q1 + q2 = s + e` exactly
//! (Fast2Sum: `|q2| < 2^-38 |q1|`). `q1 + q2` is within
//! `|a/d - q1| (2^-38.3 + 2^-52) < 2^-76.4 a/d < 2^-75.3 pw` of `a / d`,
//! where `pw = 2^floor(log2 s)`. So `s` is the rounded quotient unless a
//! rounding boundary (`s + 2^-53 pw`, or `s - 2^-53 pw`, `s - 2^-54 pw`
//! when `s = pw`) lies within `2^-70 pw` of `s + e`. The check compares
//! `e` with those exact thresholds. Where it fails (about `2^-17` of
//! draws; `a = 0` always fails it, with `pw = 0`), step 4 below runs on
//! `q = s`, which is within `0.5 ulp + 2^-75 q` of `a / d`, as step 4
//! needs. The steps below are the ziggurat tail's division, whose step 4
//! this path shares:
//!
//! 1. A reciprocal `y` of `d`: for the tail `fl(1/R)`.
//! 2. The estimate `q = a y`: `|q - a/d| < 2^-49 a/d` (the reciprocal's
//!    error and one rounding), far inside the `2^-7 a/d` that step 3 needs.
//!    (An earlier version took the device's `a / d` when it was within
//!    `2^-8` of `a y`; the argument never needed it, and the host tests
//!    below always passed with a NaN, zero or wrong estimate in its place.)
//! 3. One Newton step with the residual: `q += r y`, `r = fl((a - p) - e)`
//!    where `p + e = q d` exactly (Dekker's product, below). `p` is within
//!    a factor 2 of `a`, so `a - p` is exact (Sterbenz) and `r` is `a - q d`
//!    with relative error `2^-53`. The new `q` is within `0.5 ulp + 2^-55 q`
//!    of `a / d` (the step's own error is `r (1/d - y)`, below
//!    `2^-7 2^-50 q`, plus the roundings of `r`, `r y` and the sum).
//! 4. The choice between `q` and its neighbours: with `h = ulp(q) / 2` and
//!    `h' = h / 2` when `q` is a power of two (its lower neighbour is
//!    nearer), else `h`, `q` is right unless `a - q d > h d` (take
//!    `q + 2h`) or `q d - a > h' d` (take `q - 2h'`). Here the residual
//!    `r = a - q d` is exact: the exact `q d` is a multiple of
//!    `g = ulp(q) 2^-52` (`ulp(d) >= 2^-52`), so are `p`, `e` and `a`
//!    (`a >= 1.70 q (1 - 2^-54)` has `ulp(a) >= ulp(q)`), and
//!    `|r| <= (0.5 ulp(q) + 2^-55 q) d < 1.3 ulp(q) < 2^53 g`: `r` and
//!    `a - p = r + e` are representable, so both subtractions are exact.
//!    `h d` is exact (`h` is a power of two). A tie `a - q d = ±h d` is
//!    impossible: `a / d` would be a 54-bit odd-significand midpoint whose
//!    product with `d`'s significand has more than 53 bits.
//!
//! Dekker's product: `split(x) = (x_hi, x_lo)` by Veltkamp's `c = x (2^27+1)`,
//! `x_hi = c - (c - x)`, `x_lo = x - x_hi` (26 and 27 bits, exact), then
//! `e = ((q_hi d_hi - p) + q_hi d_lo + q_lo d_hi) + q_lo d_lo`, exact in
//! round-to-nearest when nothing over- or underflows. Nothing does: `q` is
//! at least `2^-64 / 2.42 > 2^-66`, so `q_lo` is a multiple of
//! `ulp(q) >= 2^-118` and `d_lo` of `2^-52`: every partial product is a
//! multiple of `2^-170`, far above f64's smallest normal `2^-1022`, and no
//! value here is subnormal (so `DenormPreserve` for 64-bit floats is not
//! needed by this division).
//!
//! `ulp(q)` needs `q`'s exponent without bit casts of f64 (naga has none
//! between `f64` and `vec2<u32>`): [`F64Ops::floor_pow2`] narrows `q` to
//! f32 (whatever its rounding, within one f32 ulp), takes that exponent's
//! power of two and halves it when it exceeds `q`; `q` is far inside f32's
//! normal range.

/// f64 operations and the booleans they compare to.
pub(super) trait F64Ops {
    type D: Copy;
    type B: Copy;
    fn dc(&mut self, v: f64) -> Self::D;
    fn dadd(&mut self, a: Self::D, b: Self::D) -> Self::D;
    fn dsub(&mut self, a: Self::D, b: Self::D) -> Self::D;
    fn dmul(&mut self, a: Self::D, b: Self::D) -> Self::D;
    fn dlt(&mut self, a: Self::D, b: Self::D) -> Self::B;
    fn deq(&mut self, a: Self::D, b: Self::D) -> Self::B;
    fn dsel(&mut self, c: Self::B, yes: Self::D, no: Self::D) -> Self::D;
    fn dand(&mut self, a: Self::B, b: Self::B) -> Self::B;
    /// `fast` where `ok`, else `slow`'s value; `slow` runs only where `ok`
    /// is false (a branch on the device, which the common path skips).
    fn dunless(
        &mut self,
        ok: Self::B,
        fast: Self::D,
        slow: impl FnOnce(&mut Self) -> Self::D,
    ) -> Self::D;
    /// `2^floor(log2 x)` for `x` in `[2^-125, 2^127)`, and 0 for 0.
    fn floor_pow2(&mut self, x: Self::D) -> Self::D;
}

/// `1 / d` within `2^-38.3` (relative) for `d` in `[1.70, 2.42]`: the
/// quadratic [`RECIP_QUADRATIC`] (within `2^-9.59`), then two Newton
/// steps `y (2 - d y)`, each squaring the error and adding at most
/// `3 2^-53`.
fn recip_reduced<O: F64Ops>(o: &mut O, d: O::D) -> O::D {
    let [c0, c1, c2] = RECIP_QUADRATIC.map(|c| o.dc(c));
    let y = o.dmul(d, c2);
    let y = o.dadd(c1, y);
    let y = o.dmul(d, y);
    let mut y = o.dadd(c0, y);
    let two = o.dc(2.0);
    for _ in 0..2 {
        let dy = o.dmul(d, y);
        let u = o.dsub(two, dy);
        y = o.dmul(y, u);
    }
    y
}

/// `p(d) = c0 + c1 d + c2 d^2` of least relative error `|1 - d p(d)|`
/// (`0.00129`, `2^-9.597`) on `[1 + sqrt(1/2), 1 + sqrt(2)]` (a Remez
/// exchange); evaluated in f64 with Horner's rule it stays within
/// `2^-9.59` there (any coefficients would do: only the bound is used).
const RECIP_QUADRATIC: [f64; 3] = [1.4777560414748436, -0.7224442056200778, 0.11686290563800122];

/// `(hi, lo)` of Veltkamp's split.
fn split<O: F64Ops>(o: &mut O, x: O::D) -> (O::D, O::D) {
    let c = o.dc(134_217_729.0); // 2^27 + 1
    let cx = o.dmul(c, x);
    let t = o.dsub(cx, x);
    let hi = o.dsub(cx, t);
    let lo = o.dsub(x, hi);
    (hi, lo)
}

/// `a - q d` with one rounding (exact when `q` is close to `a / d`, see
/// the module): `a - p` is exact and `e = q d - p` is Dekker's.
fn residual<O: F64Ops>(o: &mut O, a: O::D, q: O::D, d: (O::D, O::D, O::D)) -> O::D {
    let (d, d_hi, d_lo) = d;
    let p = o.dmul(q, d);
    let (q_hi, q_lo) = split(o, q);
    let hh = o.dmul(q_hi, d_hi);
    let hl = o.dmul(q_hi, d_lo);
    let lh = o.dmul(q_lo, d_hi);
    let ll = o.dmul(q_lo, d_lo);
    let e = o.dsub(hh, p);
    let e = o.dadd(e, hl);
    let e = o.dadd(e, lh);
    let e = o.dadd(e, ll);
    let r = o.dsub(a, p);
    o.dsub(r, e)
}

/// Step 4: `q` or a neighbour, for `a >= 0` and `q` within
/// `0.5 ulp(q) + 2^-55 q` of `a / d` (`dd` is `d` and its split).
fn nearest<O: F64Ops>(o: &mut O, a: O::D, q: O::D, dd: (O::D, O::D, O::D)) -> O::D {
    let zero = o.dc(0.0);
    let pw = o.floor_pow2(q);
    let half_ulp = o.dc(f64::EPSILON / 2.0); // 2^-53
    let h = o.dmul(pw, half_ulp);
    let is_pow2 = o.deq(q, pw);
    let half = o.dc(0.5);
    let h_half = o.dmul(h, half);
    let h_low = o.dsel(is_pow2, h_half, h);
    let r = residual(o, a, q, dd);
    let d = dd.0;
    let hd = o.dmul(h, d);
    let hd_low = o.dmul(h_low, d);
    let nr = o.dsub(zero, r);
    let up = o.dlt(hd, r);
    let down = o.dlt(hd_low, nr);
    let two_h = o.dadd(h, h);
    let q_up = o.dadd(q, two_h);
    let two_hl = o.dadd(h_low, h_low);
    let q_down = o.dsub(q, two_hl);
    let q = o.dsel(down, q_down, q);
    o.dsel(up, q_up, q)
}

/// `t / d`, correctly rounded, for `d = R` and `y = fl(1/R)` (the
/// ziggurat tail's division; see the module): steps 2 to 4.
pub(super) fn div<O: F64Ops>(o: &mut O, t: O::D, d: O::D, y: O::D) -> O::D {
    let zero = o.dc(0.0);
    let neg = o.dlt(t, zero);
    let minus = o.dsub(zero, t);
    let a = o.dsel(neg, minus, t);
    // 2. The estimate.
    let q = o.dmul(a, y);
    // 3. One Newton step.
    let (d_hi, d_lo) = split(o, d);
    let dd = (d, d_hi, d_lo);
    let r = residual(o, a, q, dd);
    let ry = o.dmul(r, y);
    let q = o.dadd(q, ry);
    // 4. q or a neighbour.
    let q = nearest(o, a, q, dd);
    // a == 0 (t = ±0) gives t.
    let is0 = o.deq(a, zero);
    let nq = o.dsub(zero, q);
    let signed = o.dsel(neg, nq, q);
    o.dsel(is0, t, signed)
}

/// `a / d`, correctly rounded, for `ln_core`'s `a = |t|` and
/// `d = fl(2 + t)` (see the module's fast path).
pub(super) fn div_reduced<O: F64Ops>(o: &mut O, a: O::D, d: O::D) -> O::D {
    let y = recip_reduced(o, d);
    let q1 = o.dmul(a, y);
    let (d_hi, d_lo) = split(o, d);
    let dd = (d, d_hi, d_lo);
    let r = residual(o, a, q1, dd);
    let q2 = o.dmul(r, y);
    // Fast2Sum: q1 + q2 = s + e exactly.
    let s = o.dadd(q1, q2);
    let moved = o.dsub(s, q1);
    let e = o.dsub(q2, moved);
    // s is a/d unless a rounding boundary lies within DELTA of s + e.
    let pw = o.floor_pow2(s);
    let is_pow2 = o.deq(s, pw);
    let [up, down, down_pow2] = MARGINS.map(|c| {
        let c = o.dc(c);
        o.dmul(pw, c)
    });
    let down = o.dsel(is_pow2, down_pow2, down);
    let below_up = o.dlt(e, up);
    let above_down = o.dlt(down, e);
    let ok = o.dand(below_up, above_down);
    o.dunless(ok, s, |o| nearest(o, a, s, dd))
}

/// The thresholds on `e` of [`div_reduced`]'s check, in units of
/// `pw = 2^floor(log2 s)`: the half gaps above and below `s` (`2^-53`;
/// `2^-54` below a power of two) less the margin `DELTA = 2^-70`. Each has
/// 18 significant bits, and `pw` times it is exact.
const MARGINS: [f64; 3] = [TWO_M53 - DELTA, DELTA - TWO_M53, DELTA - TWO_M53 / 2.0];
const TWO_M53: f64 = f64::EPSILON / 2.0;
/// `2^-70`.
const DELTA: f64 = TWO_M53 / 131_072.0;

#[cfg(test)]
mod tests {
    use super::*;

    /// How the host's model of the device narrows f64 to f32.
    #[derive(Clone, Copy)]
    enum Narrow {
        Nearest,
        Up,
        Down,
    }

    /// The host's model of the device: how it narrows, whether the fast
    /// path's check is skipped (`Cold::Always` takes step 4 every time) and
    /// how often the slow side ran.
    struct Host {
        narrow: Narrow,
        cold: Cold,
        slow: u64,
    }

    #[derive(Clone, Copy, PartialEq)]
    enum Cold {
        Checked,
        Always,
    }

    impl Host {
        fn new(narrow: Narrow, cold: Cold) -> Host {
            Host {
                narrow,
                cold,
                slow: 0,
            }
        }
    }

    impl F64Ops for Host {
        type D = f64;
        type B = bool;
        fn dc(&mut self, v: f64) -> f64 {
            v
        }
        fn dadd(&mut self, a: f64, b: f64) -> f64 {
            a + b
        }
        fn dsub(&mut self, a: f64, b: f64) -> f64 {
            a - b
        }
        fn dmul(&mut self, a: f64, b: f64) -> f64 {
            a * b
        }
        fn dlt(&mut self, a: f64, b: f64) -> bool {
            a < b
        }
        fn deq(&mut self, a: f64, b: f64) -> bool {
            a == b
        }
        fn dsel(&mut self, c: bool, yes: f64, no: f64) -> f64 {
            if c { yes } else { no }
        }
        fn dand(&mut self, a: bool, b: bool) -> bool {
            a && b
        }
        fn dunless(&mut self, ok: bool, fast: f64, slow: impl FnOnce(&mut Self) -> f64) -> f64 {
            if ok && self.cold == Cold::Checked {
                return fast;
            }
            self.slow += u64::from(!ok);
            slow(self)
        }
        /// The device's sequence with a narrowing rounded each way.
        fn floor_pow2(&mut self, x: f64) -> f64 {
            let n = x as f32;
            let n = match self.narrow {
                Narrow::Nearest => n,
                Narrow::Up if f64::from(n) < x => f32::from_bits(n.to_bits() + 1),
                Narrow::Down if f64::from(n) > x => f32::from_bits(n.to_bits() - 1),
                _ => n,
            };
            let p = f64::from(f32::from_bits(n.to_bits() & 0x7F80_0000));
            if x < p { p * 0.5 } else { p }
        }
    }

    /// xorshift64*.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    /// The `t` of `neg_ln_u64`'s reduction for draw `x` (SPEC.md 6.2).
    fn t_of(x: u64) -> f64 {
        let m = x.wrapping_add(1);
        if m == 0 {
            return 0.0;
        }
        let e = 63 - m.leading_zeros() as i32;
        let below = m ^ (1 << e);
        let frac = if e >= 52 {
            below >> (e - 52)
        } else {
            below << (52 - e)
        };
        let (neg, num, den) = if frac >= phobos_tandem::math::SQRT2_MANT_F64 {
            (true, ((1u64 << e) << 1).wrapping_sub(m), e + 1)
        } else {
            (false, below, e)
        };
        let len = 64 - num.leading_zeros() as i32;
        let (int, p) = if len > 53 {
            (num >> (len - 53), len - 53 - den)
        } else {
            (num, -den)
        };
        let t = int as f64 * f64::from_bits(((1023 + p) as u64) << 52);
        if neg { -t } else { t }
    }

    const NARROWS: [Narrow; 3] = [Narrow::Nearest, Narrow::Up, Narrow::Down];

    /// `ln_core`'s `|t| / fl(2 + t)` through [`div_reduced`], checked and
    /// with step 4 always; returns whether the check sent it to step 4.
    fn check(t: f64) -> bool {
        let (a, d) = (t.abs(), 2.0 + t);
        let want = a / d;
        let mut slow = false;
        for narrow in NARROWS {
            for cold in [Cold::Checked, Cold::Always] {
                let mut o = Host::new(narrow, cold);
                let got = div_reduced(&mut o, a, d);
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{a:e} / {d:e}: got {got:e}, want {want:e}"
                );
                slow |= o.slow > 0;
            }
        }
        slow
    }

    fn check_by(t: f64, d: f64, y: impl Fn(&mut Host) -> f64) {
        let want = t / d;
        for narrow in NARROWS {
            let mut o = Host::new(narrow, Cold::Checked);
            let y = y(&mut o);
            let got = div(&mut o, t, d, y);
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{t:e} / {d:e}: got {got:e}, want {want:e}"
            );
        }
    }

    /// [`div_reduced`]'s check sends about `2^-17` of the draws' quotients
    /// to step 4 (those within `2^-17` ulp of a rounding boundary), and
    /// both sides agree with the host's division on all of them.
    #[test]
    fn step_4_is_rare_and_reached() {
        let mut rng = Rng(41);
        let slow: u64 = (0..1 << 20)
            .map(|_| u64::from(check(t_of(rng.next()))))
            .sum();
        assert!((1..64).contains(&slow), "step 4 ran {slow} times in 2^20");
    }

    #[test]
    fn draws_reductions_divide_exactly() {
        let mut rng = Rng(9);
        for _ in 0..200_000 {
            let x = rng.next();
            // Draws of every magnitude: u near 2^-64 .. 1.
            let s = (rng.next() % 64) as u32;
            check(t_of(x));
            check(t_of(x >> s));
            check(t_of(!(x >> s)));
        }
        for x in [0, 1, 2, 3, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1] {
            check(t_of(x));
        }
        for s in 0..64 {
            for d in [0u64, 1, 2] {
                check(t_of((1u64 << s).wrapping_sub(d)));
                check(t_of((u64::MAX - (1u64 << s)).wrapping_add(d)));
            }
        }
    }

    #[test]
    fn random_t_in_the_domain_divides_exactly() {
        let mut rng = Rng(17);
        // The reduction's domain: t in [sqrt(1/2) - 1, sqrt(2) - 1).
        let (low, limit) = (1.0 - 0.5f64.sqrt(), 2f64.sqrt() - 1.0);
        for _ in 0..300_000 {
            let bits = rng.next();
            // |t| = mantissa 2^-e for e in 2 .. 64, below sqrt(2) - 1.
            let e = 2 + (rng.next() % 63) as i32;
            let m = f64::from_bits(0x3FF0_0000_0000_0000 | (bits >> 12));
            let t = m * 2f64.powi(-e);
            let t = if t >= limit { t * 0.5 } else { t };
            check(t);
            check(if t > low { -t * 0.5 } else { -t });
        }
    }

    /// The tail's `a / R` (SPEC.md 7.8) for `a` in `[2^-64, 44.4]` and 0.
    #[test]
    fn tail_quotients_by_r_divide_exactly() {
        let r = f64::from_bits(0x4010_27C8_4109_FAD5);
        let mut rng = Rng(29);
        for _ in 0..300_000 {
            let bits = rng.next();
            let e = (rng.next() % 70) as i32 - 64;
            let a = f64::from_bits(0x3FF0_0000_0000_0000 | (bits >> 12)) * 2f64.powi(e);
            let a = if a > 44.4 { a / 4.0 } else { a };
            check_by(a, r, |_| 1.0 / r);
        }
        for a in [0.0, 44.36, 1.0, 2.0, r, 4.0 * r, 2f64.powi(-64)] {
            check_by(a, r, |_| 1.0 / r);
        }
    }

    /// Many more: `cargo test -p phobos-gpu --release -- --ignored f64div_long`.
    #[test]
    #[ignore = "long: run in release"]
    fn f64div_long() {
        std::thread::scope(|s| {
            for k in 0..4u64 {
                s.spawn(move || {
                    let mut rng = Rng(0x5eed + k);
                    for _ in 0..25_000_000 {
                        let x = rng.next();
                        let s = (rng.next() % 64) as u32;
                        check(t_of(x >> s));
                    }
                });
            }
        });
    }
}
