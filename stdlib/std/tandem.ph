// std/tandem.ph: Tandem draws inside kernels.
//
// Draw `i` of `tandem_*(key, i)` is element `i` of the matching fill of the
// reference crate for the stream `Tandem::new(Key::from_seed(key))` (K = 32),
// the stream `phobosc fill TYPE --key KEY` writes, bit for bit on every
// backend (stdlib/tandem/SPEC.md section 12). Keys are u32 seeds; counters are
// i32 (read as their bits) or u32, so draws 0 to 2^32 - 1 are reachable
// (0 to 2^31 - 1 for the 64-bit draws, which run on the interpreter and the
// CPU backend only).
//
// Three builtins carry the stream: `_tandem_key(seed, q)` is word q of
// `Key::from_seed(seed)`, `_tandem_word(k0, k1, k2, k3, i)` is word i of the
// stream of that key, and `_tandem_below_retry` resolves a rejected bounded
// draw out of line. Everything else is written here from exact operations:
// integer bit work, conversions of exactly representable integers, and
// single f32 `+ - * /` and `sqrt`, in the order SPEC.md gives.

/// Word `i` of the stream: element `i` of `fill_u32`.
fn tandem_u32(key: u32, i) = _tandem_word(_tandem_key(key, 0), _tandem_key(key, 1), _tandem_key(key, 2), _tandem_key(key, 3), _tandem_index(i))

/// Element `i` of `fill_f32`: the top 24 bits of word `i` times 2^-24, in [0, 1).
fn tandem_uniform(key: u32, i) = _tandem_unit(tandem_u32(key, i))

fn _tandem_unit(w) = f32(w >> 8) * 5.9604644775390625e-8

/// Dropout on the Tandem stream: `x / (1 - p)` where `tandem_uniform(key, i)`
/// is at least `p`, else 0, so element `i` is dropped exactly where element
/// `i` of `phobosc fill f32 --key KEY` is below `p`. `p` in [0, 1).
fn tandem_dropout(x, p, key: u32, i) = where(tandem_uniform(key, i) >= p, x / (1.0 - p), 0.0)

/// Element `i` of `fill_u64`: the 64-bit draw `i`, words `2i` (low half)
/// and `2i + 1` (high half) of the stream, for `i` below 2^31 (word indices
/// are 32 bits). 64-bit values run on the interpreter and the CPU backend;
/// the GPU backend refuses them (it has no 64-bit integers).
fn tandem_u64(key: u32, i) = _tandem_u64_k(_tandem_key(key, 0), _tandem_key(key, 1), _tandem_key(key, 2), _tandem_key(key, 3), _tandem_index(i) << 1)

fn _tandem_u64_k(k0, k1, k2, k3, w) = u64(_tandem_word(k0, k1, k2, k3, w)) | (u64(_tandem_word(k0, k1, k2, k3, w | 1)) << 32)

/// Element `i` of `fill_f64`: the top 53 bits of the 64-bit draw `i` times
/// 2^-53, in [0, 1); `i` below 2^31, as for `tandem_u64`.
fn tandem_uniform_f64(key: u32, i) = f64(tandem_u64(key, i) >> 11) * bitcast<f64>(0x3CA0000000000000)

/// Element `i` of `fill_exponential_f64`: `-ln((x + 1) 2^-64)` of the
/// 64-bit draw `x = i` in f64 (section 6.2's `neg_ln_u64`); `i` below 2^31,
/// as for `tandem_u64`.
fn tandem_exponential_f64(key: u32, i) = _tandem_neg_ln64(tandem_u64(key, i))

/// Element `i` of `fill_bool`: bit `i % 32` of word `i / 32`.
fn tandem_bool(key: u32, i) = _tandem_bit(key, _tandem_index(i))

fn _tandem_bit(key, i) = ((tandem_u32(key, i >> 5) >> (i & 31)) & 1) == 1

/// Element `i` of `fill_exponential_f32`: `-ln((w + 1) 2^-32)` of word `i`.
fn tandem_exponential(key: u32, i) = _tandem_neg_ln(tandem_u32(key, i))

/// Element `i` of `fill_normal_f32`: Box-Muller pair `i / 2` on words
/// `i & ~1` and `i | 1`; even `i` takes `r cos`, odd `i` takes `r sin`.
fn tandem_normal(key: u32, i) = _tandem_normal_k(_tandem_key(key, 0), _tandem_key(key, 1), _tandem_key(key, 2), _tandem_key(key, 3), _tandem_index(i))

fn _tandem_normal_k(k0, k1, k2, k3, i) = _tandem_box_muller(_tandem_word(k0, k1, k2, k3, i & 4294967294), _tandem_word(k0, k1, k2, k3, i | 1), i & 1)

fn _tandem_box_muller(w0, w1, odd) = _tandem_radius(_tandem_neg_ln(w0)) * _tandem_turn(w1 & 1073741823, ((w1 >> 30) + 3 * odd) & 3)

fn _tandem_radius(l) = sqrt(l + l)

/// Element `i` of `fill_below_u32(n)`: Lemire's method on word `i`; a
/// rejected draw retries on `key.sub(PURPOSE_BELOW).split(i)`. `n = 0` gives 0.
fn tandem_below(key: u32, i, n: u32) = _tandem_below_k(_tandem_key(key, 0), _tandem_key(key, 1), _tandem_key(key, 2), _tandem_key(key, 3), _tandem_index(i), n)

fn _tandem_below_k(k0, k1, k2, k3, i, n) = _tandem_below_x(k0, k1, k2, k3, i, n, _tandem_word(k0, k1, k2, k3, i))

fn _tandem_below_x(k0, k1, k2, k3, i, n, x) = _tandem_below_r(k0, k1, k2, k3, i, n, _tandem_mulhi(x, n), _tandem_rejects(x * n, n))

/// Lemire's rejection: the low half of `x * n` below `2^32 mod n`.
fn _tandem_rejects(lo, n) = lo < n && lo < (0 - n) % n

fn _tandem_below_r(k0, k1, k2, k3, i, n, hi, rejected) = where(rejected, _tandem_below_retry(rejected, k0, k1, k2, k3, i, n), hi)

/// The high half of the 64-bit product of two u32 values, from 16-bit limbs.
fn _tandem_mulhi(x, n) = _tandem_mulhi_p((x & 65535) * (n & 65535), (x & 65535) * (n >> 16), (x >> 16) * (n & 65535), (x >> 16) * (n >> 16))

fn _tandem_mulhi_p(ll, lh, hl, hh) = hh + (lh >> 16) + (hl >> 16) + (((ll >> 16) + (lh & 65535) + (hl & 65535)) >> 16)

// The elementary functions of SPEC.md section 6, in f32.

/// The f32 nearest `y` (ties to even) from two exact conversions and one
/// rounding; a backend's own conversion of a large integer may round otherwise.
fn _tandem_rn(y) = f32(y >> 16) * 65536.0 + f32(y & 65535)

/// `neg_ln_u32(x)` (section 6.2): `-ln((x + 1) 2^-32)`. From `x = 0xB504F333`
/// (`u >= sqrt(1/2)`) the argument is `-(1 - u)` with `1 - u = ~x 2^-32` exact
/// on integers; below, `u` rounded to f32 is split as `2^k f` on its bits.
fn _tandem_neg_ln(x) = where(x == 4294967295, 0.0, _tandem_neg_ln_y(x >= 3037000499, _tandem_rn(where(x >= 3037000499, ~x, x + 1)) * bitcast<f32>(0x2F800000)))

fn _tandem_neg_ln_y(upper, a) = _tandem_neg_ln_k(upper, a, bitcast<i32>(bitcast<u32>(a) - 1060439283) >> 23)

fn _tandem_neg_ln_k(upper, a, k) = _tandem_neg_ln_t(where(upper, 0.0, f32(k)), where(upper, -a, bitcast<f32>(bitcast<u32>(a) - (u32(k) << 23)) - 1.0))

fn _tandem_neg_ln_t(kf, t) = -(kf * bitcast<f32>(0x3F317180) + (kf * bitcast<f32>(0x3717F7D1) + _tandem_log1p(t, t * t)))

/// `ln(1 + t)` for `t` in [sqrt(1/2) - 1, sqrt(2) - 1]: `t + t^2 Q(t)`
/// with section 6.1's degree-7 `Q`.
fn _tandem_log1p(t, z) = t + z * (bitcast<f32>(0xBEFFFFFD) + t * (bitcast<f32>(0x3EAAAB7A) + t * (bitcast<f32>(0xBE80024D) + t * (bitcast<f32>(0x3E4C6960) + t * (bitcast<f32>(0xBE29AE98) + t * (bitcast<f32>(0x3E18C293) + t * (bitcast<f32>(0xBE128250) + t * bitcast<f32>(0x3DB2E3BE))))))))

// Section 6.2's `neg_ln_u64` and 6.1's `ln_core` in f64.

/// The number of significant bits of a u32 (0 for 0), from the exponent of
/// an exactly converted f32 (the value below 2^24, or shifted below it).
fn _tandem_bitlen(x) = where(x == 0, 0, _tandem_top(where(x >= 16777216, x >> 8, x)) + where(x >= 16777216, 8, 0))

fn _tandem_top(y) = (bitcast<u32>(f32(y)) >> 23) - 126

/// The number of significant bits of a u64, as a u32.
fn _tandem_bitlen64(m) = where(u32(m >> 32) != 0, _tandem_bitlen(u32(m >> 32)) + 32, _tandem_bitlen(u32(m)))

fn _tandem_neg_ln64(x) = where(x == ~u64(0), f64(0.0), _tandem_nl64_e(x + 1, _tandem_bitlen64(x + 1) - 1))

/// `m = 2^e (1 + f)`: with `f`'s top 52 bits at or above sqrt(2)'s, `t` is
/// `-(2^(e+1) - m) / 2^(e+1)`, else `(m - 2^e) / 2^e`, numerators exact.
fn _tandem_nl64_e(m, e) = _tandem_nl64_f(m, e, m ^ (u64(1) << u64(e)))

fn _tandem_nl64_f(m, e, below) = _tandem_nl64_r(m, e, below, where(e >= 52, below >> u64(e - 52), below << u64(52 - e)) >= u64(0x6A09E667F3BCD))

fn _tandem_nl64_r(m, e, below, neg) = _tandem_nl64_s(neg, i32(e) + i32(neg) - 64, where(neg, ((u64(1) << u64(e)) << u64(1)) - m, below), e + u32(neg))

/// `t = sign num 2^-texp` with `num` cut to its top 53 bits: an exact
/// conversion times an exact power of two.
fn _tandem_nl64_s(neg, k, num, texp) = _tandem_nl64_l(neg, k, num, texp, _tandem_bitlen64(num))

fn _tandem_nl64_l(neg, k, num, texp, len) = _tandem_nl64_v(neg, k, f64(where(len > 53, num >> u64(len - 53), num)) * bitcast<f64>(u64(1023 + where(len > 53, i32(len) - 53, 0) - i32(texp)) << u64(52)))

fn _tandem_nl64_v(neg, k, t) = -_tandem_ln_core64(f64(k), where(neg, -t, t))

/// `ln_core_f64(k, t)` (section 6.1): `ln(2^k (1 + t))` by the atanh series.
fn _tandem_ln_core64(kf, t) = _tandem_lc64_s(kf, t / (f64(2.0) + t))

fn _tandem_lc64_s(kf, s) = _tandem_lc64_z(kf, s, s * s)

fn _tandem_lc64_z(kf, s, z) = kf * bitcast<f64>(0x3FE62E42FEE00000) + (kf * bitcast<f64>(0x3DEA39EF35793C76) + ((s + s) + (s * z) * (bitcast<f64>(0x3FE5555555555555) + z * (bitcast<f64>(0x3FD999999999999A) + z * (bitcast<f64>(0x3FD2492492492492) + z * (bitcast<f64>(0x3FCC71C71C71C71C) + z * (bitcast<f64>(0x3FC745D1745D1746) + z * (bitcast<f64>(0x3FC3B13B13B13B14) + z * (bitcast<f64>(0x3FC1111111111111) + z * (bitcast<f64>(0x3FBE1E1E1E1E1E1E) + z * bitcast<f64>(0x3FBAF286BCA1AF28)))))))))))

/// The cosine of the angle `2 pi (q 2^30 + y) / 2^32` for the quadrant `q`
/// and the 30-bit position `y` in it (section 6.4); the sine is the cosine
/// of quadrant `q + 3`. The reduction to [0, pi/4] is on integers.
fn _tandem_turn(y, q) = _tandem_turn_a(y < 536870912, f32(where(y < 536870912, y, 1073741824 - y) >> 6) * bitcast<f32>(0x33C90FDB), q)

fn _tandem_turn_a(first, a, q) = _tandem_turn_cs(first, _tandem_cos_poly(a), _tandem_sin_poly(a), q)

fn _tandem_turn_cs(first, cp, sp, q) = _tandem_turn_q(where(first, cp, sp), where(first, sp, cp), q)

fn _tandem_turn_q(c, s, q) = where(q == 0, c, where(q == 1, -s, where(q == 2, -c, s)))

fn _tandem_cos_poly(a) = _tandem_cos_z(a * a)

fn _tandem_cos_z(z) = 1.0 + z * (bitcast<f32>(0xBF000000) + z * (bitcast<f32>(0x3D2AAAAB) + z * (bitcast<f32>(0xBAB60B61) + z * (bitcast<f32>(0x37D00D01) + z * bitcast<f32>(0xB493F27E)))))

fn _tandem_sin_poly(a) = _tandem_sin_z(a, a * a)

fn _tandem_sin_z(a, z) = a + (a * z) * (bitcast<f32>(0xBE2AAAAB) + z * (bitcast<f32>(0x3C088889) + z * (bitcast<f32>(0xB9500D01) + z * bitcast<f32>(0x3638EF1D))))
