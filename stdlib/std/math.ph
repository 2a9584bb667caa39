// std/math.ph: elementary functions built only from exact operations.
//
// WGSL leaves the accuracy of the driver's `log` and `cos` unspecified, and
// NVIDIA's differ from the host's by thousands of ulps, so Phobos defines them
// here from operations that every backend computes exactly: f32 `+ - * /`
// (correctly rounded, never contracted), integer bit operations and casts.
// The interpreter, Cranelift and the GPU run these same definitions, which is
// why `randn` has the same bits everywhere. All functions take and return f32.

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
fn log(x) = _log_fix(x, _log_bits(x, x < 1.1754943508222875e-38))

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
fn cos(x) = where(abs(x) == _inf() || x != x, _nan(), _cos_octant(abs(x), _cos_even(i32(abs(x) * 1.2732395447351628))))

fn _cos_even(j) = j + (j & 1)

fn _cos_octant(xa, j) = _cos_reduced(((xa - f32(j) * 0.78515625) - f32(j) * 2.4187564849853515625e-4) - f32(j) * 3.77489497744594108e-8, j & 7)

fn _cos_reduced(r, q) = _cos_sign(where((q & 2) == 0, _cos_poly(r * r), _sin_poly(r, r * r)), q == 2 || q == 4)

fn _cos_poly(z) = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0

fn _sin_poly(r, z) = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r

fn _cos_sign(y, negate) = where(negate, -y, y)
