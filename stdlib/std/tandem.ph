// std/tandem.ph: Tandem draws inside kernels.
//
// Draw `i` of `tandem_*(key, i)` is element `i` of the matching fill of the
// reference crate for the stream `Tandem::new(Key::from_seed(key))` (K = 32),
// the stream `phobosc fill TYPE --key KEY` writes, bit for bit on every
// backend (stdlib/tandem/SPEC.md section 12). Keys are u32 seeds; counters are
// i32 (read as their bits) or u32, so draws 0 to 2^32 - 1 are reachable.
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

/// The number of significant bits of a u32 (0 for 0): the exponent of the
/// value as an f32, converted exactly (below 2^24, or shifted below it).
fn _tandem_bitlen(x) = where(x == 0, 0, _tandem_top(where(x >= 16777216, x >> 8, x)) + where(x >= 16777216, 8, 0))

fn _tandem_top(y) = (bitcast<u32>(f32(y)) >> 23) - 126

/// `2^p` for `-126 <= p <= 127`.
fn _tandem_pow2(p) = bitcast<f32>(u32(127 + p) << 23)

/// `neg_ln_u32(x)` (section 6.2): `-ln((x + 1) 2^-32)`, with the reduced
/// argument's numerator computed exactly on integers.
fn _tandem_neg_ln(x) = where(x == 4294967295, 0.0, _tandem_neg_ln_m(x + 1))

fn _tandem_neg_ln_m(m) = _tandem_neg_ln_e(m, _tandem_bitlen(m) - 1)

fn _tandem_neg_ln_e(m, e) = _tandem_neg_ln_f(m, e, m ^ (1 << e))

fn _tandem_neg_ln_f(m, e, below) = _tandem_neg_ln_r(m, e, below, where(e >= 23, below >> (e - 23), below << (23 - e)) >= 3474675)

fn _tandem_neg_ln_r(m, e, below, neg) = _tandem_neg_ln_t(neg, i32(e) + i32(neg) - 32, where(neg, ((1 << e) << 1) - m, below), e + u32(neg))

fn _tandem_neg_ln_t(neg, k, num, texp) = _tandem_neg_ln_s(neg, k, num, texp, _tandem_bitlen(num))

fn _tandem_neg_ln_s(neg, k, num, texp, len) = _tandem_neg_ln_v(neg, k, f32(where(len > 24, num >> (len - 24), num)) * _tandem_pow2(where(len > 24, i32(len) - 24, 0) - i32(texp)))

fn _tandem_neg_ln_v(neg, k, t) = -_tandem_ln_core(k, where(neg, -t, t))

/// `ln_core_f32(k, t)` (section 6.1): `ln(2^k (1 + t))` by the atanh series.
fn _tandem_ln_core(k, t) = _tandem_ln_s(f32(k), t / (2.0 + t))

fn _tandem_ln_s(kf, s) = _tandem_ln_z(kf, s, s * s)

fn _tandem_ln_z(kf, s, z) = kf * bitcast<f32>(0x3F317180) + (kf * bitcast<f32>(0x3717F7D1) + ((s + s) + (s * z) * (bitcast<f32>(0x3F2AAAAB) + z * (bitcast<f32>(0x3ECCCCCD) + z * (bitcast<f32>(0x3E924925) + z * bitcast<f32>(0x3E638E39))))))

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
