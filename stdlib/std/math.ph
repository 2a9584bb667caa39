// std/math.ph: elementary functions built only from exact operations.
//
// WGSL leaves the accuracy of the driver's `log` and `cos` unspecified, and
// NVIDIA's differ from the host's by thousands of ulps, so Phobos defines them
// here from operations that every backend computes exactly: f32 `+ - * /`
// (correctly rounded, never contracted), integer bit operations and casts.
// The interpreter, Cranelift and the GPU run these same definitions, which is
// why `randn` has the same bits everywhere. All functions take and return f32.
//
// `_native_exp(x, e)` (and `_native_log`, `_cos`, `_tanh`, `_rsqrt`) is `e`
// on every backend in exact mode; GPU fast mode (`--precision fast`) may
// compute the driver's `exp(x)` instead, with WGSL's accuracy for it.

/// The positive infinity of f32.
fn _inf() = bitcast<f32>(2139095040)

/// A quiet NaN of f32.
fn _nan() = bitcast<f32>(2143289344)

/// The natural logarithm, within 1 ulp. log(0) = -inf, log(x < 0) = NaN,
/// log(inf) = inf, log(NaN) = NaN; subnormal inputs are scaled up first.
///
/// The argument is split as 2^k * m with m in [sqrt(2)/2, sqrt(2)), and
/// log(m) = 2 atanh(s) with s = f / (2 + f), f = m - 1, by an odd polynomial
/// (the classic fdlibm reduction and coefficients).
fn log(x: f32) = _native_log(x, _log_fix(x, _log_bits(x, x < 1.1754943508222875e-38)))

fn _log_bits(x, sub) = _log_reduce(bitcast<i32>(where(sub, x * 33554432.0, x)) + 4913933, where(sub, -25, 0))

fn _log_reduce(iy, k0) = _log_poly(f32(k0 + ((iy >> 23) - 127)), bitcast<f32>((iy & 8388607) + 1060439283) - 1.0)

fn _log_poly(dk, f) = _log_s(dk, f, f / (2.0 + f), 0.5 * f * f)

fn _log_s(dk, f, s, hfsq) = _log_sum(dk, f, s, hfsq, s * s)

fn _log_sum(dk, f, s, hfsq, z) = s * (hfsq + (z * (0.6666666269302368 + z * z * 0.2849878668785095) + z * z * (0.40000972151756287 + z * z * 0.24279078841209412))) + dk * 9.05800061445916e-06 - hfsq + f + dk * 0.6931381225585938

fn _log_fix(x, y) = where(x == 0.0, -_inf(), where(x < 0.0 || x != x, _nan(), where(x == _inf(), x, y)))

/// The cosine, with an absolute error below 1e-7 for |x| < 8192 (a few ulp
/// away from the zeros of cos, more near them), and deterministic but
/// inaccurate beyond. cos(inf) = cos(NaN) = NaN.
///
/// |x| is reduced by multiples of pi/4 with a three-part pi/4 (Cody-Waite),
/// then the octant picks a sine or cosine polynomial and a sign (Cephes cosf).
fn cos(x: f32) = _native_cos(x, where(abs(x) == _inf() || x != x, _nan(), _cos_octant(abs(x), _cos_even(i32(abs(x) * 1.2732395447351628)))))

fn _cos_even(j) = j + (j & 1)

fn _cos_octant(xa, j) = _cos_reduced(((xa - f32(j) * 0.78515625) - f32(j) * 2.4187564849853515625e-4) - f32(j) * 3.77489497744594108e-8, j & 7)

fn _cos_reduced(r, q) = _cos_sign(where((q & 2) == 0, _cos_poly(r * r), _sin_poly(r, r * r)), q == 2 || q == 4)

fn _cos_poly(z) = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0

fn _sin_poly(r, z) = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r

fn _cos_sign(y, negate) = where(negate, -y, y)

// The functions below take f32 arguments (an f64 or integer argument is an
// error that asks for a conversion). Their accuracy was measured against
// correctly rounded references (tests/tests/math.rs states the ranges and
// repeats the measurement on a sample); the ulp figures are the largest
// error seen, in units in the last place of the exact result.

/// 2^n for n in -126 ..= 127, built from its bits.
fn _pow2(n) = bitcast<f32>((n + 127) << 23)

/// Whether x is neither infinite nor NaN.
fn _finite(x) = abs(x) < _inf()

/// e^x within 1 ulp (0.94 ulp measured on every f32 in [-110, 90]).
/// exp(-inf) = 0, exp(inf) = inf, exp(NaN) = NaN; results round to inf
/// above 88.72284 and to 0 below -103.97208, with subnormal results in
/// between rounded once.
///
/// x = k ln2 + r with |r| <= ln2/2 (ln2 in two parts, so k ln2_hi and
/// x - k ln2_hi are exact), e^r = 1 + r + r^2 q(r) with q the Taylor
/// polynomial of degree 5 (error 5e-9), and 2^k applied as two exact powers
/// of two so that overflow and subnormal results round once.
///
/// k is x / ln2 rounded to nearest (ties to even) by adding 1.5 * 2^23,
/// whose ulp is 1 for the |x / ln2| <= 150 left after the clamp: the sum's
/// bits hold k, read as an integer, and `f32(k)` is exact. (Subtracting the
/// constant again would give the same f32 without a conversion, but a
/// compiler that reassociates `(y + c) - c` into `y`, as the browser's
/// SwiftShader does with WGSL, would then skip the rounding.) A NaN passes
/// the clamp (`min` and `max` keep their first operand when a comparison is
/// false) and every float operation after it, so exp(NaN) is NaN.
fn exp(x: f32) = _native_exp(x, _exp_at(min(max(x, -104.0), 89.0)))

fn _exp_at(x) = _exp_t(x, bitcast<i32>(x * 1.442695 + 12582912.0) - 1262485504)

fn _exp_t(x, k) = _exp_k(x, f32(k), k)

fn _exp_k(x, kf, k) = _exp_scale(1.0 + _exp_s(x - kf * 0.69314575, kf * 1.4286068e-6), k)

/// e^r - 1 for r = hi - lo, keeping hi exact.
fn _exp_s(hi, lo) = hi + (_exp_r2q(hi - lo) - lo)

fn _exp_r2q(r) = r * r * (0.5 + r * (1.6666667e-1 + r * (4.1666668e-2 + r * (8.333334e-3 + r * (1.3888889e-3 + r * (1.984127e-4))))))

fn _exp_scale(p, k) = p * _pow2(k >> 1) * _pow2(k - (k >> 1))

/// The hyperbolic tangent within 1.5 ulp (1.31 ulp measured on every f32 in
/// [-12, 12]). tanh(+-0) = +-0, tanh(+-inf) = +-1, tanh(NaN) = NaN.
///
/// |x| < 0.625: x + x^3 p(x^2), p fitted (relative error 2e-10), and x
/// itself below 2^-12; above: 1 - 2 / (exp(2|x|) + 1).
fn tanh(x: f32) = _native_tanh(x, where(x != x, x, where(abs(x) < 0.625, _tanh_small(x, x * x), _tanh_sign(x, 1.0 - 2.0 / (exp(abs(x) + abs(x)) + 1.0)))))

fn _tanh_small(x, t) = where(abs(x) < 2.4414063e-4, x, x + x * t * (-3.3333334e-1 + t * (1.3333333e-1 + t * (-5.396764e-2 + t * (2.18599e-2 + t * (-8.791021e-3 + t * (3.3062843e-3 + t * (-8.622482e-4))))))))

fn _tanh_sign(x, y) = where(x < 0.0, -y, y)

/// The error function within 1.5 ulp (1.37 ulp measured on every f32 in
/// [-5, 5]). erf(+-0) = +-0, erf(+-inf) = +-1, erf(NaN) = NaN.
///
/// |x| < 0.84375: x + x q(x^2), q fitted (relative error 1.2e-10 for
/// erf(x)/x); up to 4: 1 - exp(-x^2) r(|x| - 2.421875) with r fitted to
/// erfc(x) e^(x^2) (relative error 2.5e-9); beyond, 1 (erf(x) rounds to 1
/// above 3.92).
fn erf(x: f32) = where(x != x, x, where(abs(x) < 0.84375, _erf_small(x, x * x), _tanh_sign(x, where(abs(x) < 4.0, _erf_tail(min(abs(x), 4.0)), 1.0))))

fn _erf_small(x, t) = x + x * (1.2837917e-1 + t * (-3.7612638e-1 + t * (1.128375e-1 + t * (-2.686268e-2 + t * (5.2098874e-3 + t * (-8.252238e-4 + t * (8.8762245e-5)))))))

fn _erf_tail(a) = 1.0 - exp(-(a * a)) * _erfcx(a - 2.421875)

fn _erfcx(u) = 2.1677087e-1 + u * (-7.839527e-2 + u * (2.6907308e-2 + u * (-8.819392e-3 + u * (2.7740798e-3 + u * (-8.4049325e-4 + u * (2.457833e-4 + u * (-6.981158e-5 + u * (1.9627705e-5 + u * (-5.213991e-6 + u * (1.1312248e-6 + u * (-3.0538763e-7 + u * (1.4461378e-7 + u * (-3.3158162e-8)))))))))))))

/// 1 / sqrt(x) within 1.5 ulp (1.49 ulp measured): sqrt and the division
/// are each correctly rounded in exact mode. rsqrt(+0) = inf,
/// rsqrt(-0) = -inf, rsqrt(inf) = 0, rsqrt(x < 0) = NaN.
fn rsqrt(x: f32) = _native_rsqrt(x, 1.0 / sqrt(x))

/// x limited to [lo, hi]: min(max(x, lo), hi), for any numeric type. A NaN
/// x gives NaN; a NaN bound is ignored on that side (`min`/`max`'s rule).
fn clamp(x, lo, hi) = min(max(x, lo), hi)

/// a * b + c with one rounding, as IEEE 754's fusedMultiplyAdd, built from
/// exact f32 operations (never the device's fma, which some GPUs do not
/// fuse). Exact for finite arguments except where the result is subnormal
/// and |a b| < 2^-100: there it is rounded twice, within 1 ulp; and when
/// |c| < 2^-85 beside |a b| >= 2^126, where c only breaks ties. Infinite
/// and NaN arguments give what a * b + c gives, except that a finite
/// product beside an infinite c gives c.
///
/// Boldo and Melquiond's emulation ("Emulation of FMA and correctly rounded
/// sums: proved algorithms using rounding to odd", IEEE TC 2008): a b =
/// p + e exactly (Dekker, the halves cut from the bits, so no split
/// overflows), c + p = th + tl exactly (Knuth's TwoSum), and the result is
/// th + RO(tl + e), RO rounding to odd (TwoSum, then the last bit fixed).
/// Products beyond 2^126 or below 2^-100 are scaled by a power of two
/// first.
fn fma(a: f32, b: f32, c: f32) = _fma_pick(a, b, c, a * b, abs(a * b) < 7.888609e-31 && abs(c) < 8.6736174e-19, !(abs(a * b) < 8.507059e37))

fn _fma_pick(a, b, c, p, tiny, big) = _fma_select(a, b, c, p, _fma_in(a, b, c, where(tiny, 1.2676506e30, where(big, 5.421011e-20, 1.0)), (tiny && abs(a) < abs(b)) || (big && !(abs(a) < abs(b)))) * where(tiny, 7.888609e-31, where(big, 1.8446744e19, 1.0)))

fn _fma_in(a, b, c, k, scale_a) = _fma_core(where(scale_a, a * k, a), where(scale_a, b, b * k), c * k)

fn _fma_core(a, b, c) = _fma_th(c + a * b, c, a * b, _fma_err(a, b, a * b, _split_hi(a), _split_hi(b)))

/// The upper 12 bits of a's significand: a - that is exact and has 12 bits.
fn _split_hi(a) = bitcast<f32>(bitcast<i32>(a) & -4096)

/// a b - p exactly (Dekker), for p = a * b and the halves ah, bh.
fn _fma_err(a, b, p, ah, bh) = (((ah * bh - p) + ah * (b - bh)) + (a - ah) * bh) + (a - ah) * (b - bh)

fn _fma_th(th, c, p, e) = where(_finite(th), th + _add_odd(_two_sum_err(c, p, th), e), th)

/// The rounding error of s = a + b: a + b - s exactly (Knuth).
fn _two_sum_err(a, b, s) = _two_sum_err_bb(a, b, s, s - a)

fn _two_sum_err_bb(a, b, s, bb) = (a - (s - bb)) + (b - bb)

/// x + y rounded to odd: the sum, or its neighbour toward the exact value
/// when the sum is inexact and its last bit is even.
fn _add_odd(x, y) = _odd(x + y, _two_sum_err(x, y, x + y))

fn _odd(s, r) = where(r == 0.0 || (bitcast<i32>(s) & 1) == 1, s, bitcast<f32>(bitcast<i32>(s) + where((r > 0.0) == (s > 0.0), 1, -1)))

fn _fma_select(a, b, c, p, z) = where(_finite(a) && _finite(b) && !_finite(c), c, where(a == 0.0 || b == 0.0 || !(_finite(a) && _finite(b) && _finite(c)), p + c, where(c == 0.0, p, z)))
