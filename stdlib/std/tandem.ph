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
