// std/random.ph: stateless counter-based random numbers.
//
// Each value is a hash of a seed and the element's own counter, so a tile of
// them is a few integer instructions an element, fused into the statement that
// uses them. The same seed and counter always give the same value.
//
// Quality: this is a dropout/dither-grade source, good for about 10^8 draws per
// seed. In counter mode the 32-bit words of `hash32` fail PractRand within 1 MB
// and TestU01's SmallCrush, and the 23 bits `uniform` keeps fail PractRand at
// 1 GB (see RNG-EVIDENCE.md). Use the Tandem draws where statistical quality
// matters. These definitions are kept bit-exact because users rely on the bits.

/// A logical right shift of the i32 `x` by `s` (0 < s < 32) xor-ed into `x`:
/// `>>` is arithmetic on a signed integer, so the bits it copies in are masked off.
fn _mix(x, s) = x ^ ((x >> s) & ((1 << (32 - s)) - 1))

/// The lowbias32 hash of each element of the i32 value `x`, in wrapping i32
/// arithmetic. A bijection on 32-bit words, good for scrambling counters.
fn hash32(x) = _mix(_mix(_mix(x, 16) * 2146121005, 15) * -2073254261, 16)

/// A number in [0, 1) for each counter, uniform on a grid of 2^-23: the hash's
/// low 23 bits m, as m * 2^-23. Good for dropout masks and dithering, not
/// for Monte Carlo.
///
/// Computed as the f32 1 + m 2^-23 (exponent 0, fraction m) minus 1, which
/// is m 2^-23 exactly (zero when m is 0): the same bits as
/// `f32(m) * 2^-23`, without a conversion from integer to float, which
/// GPUs issue at a fraction of the rate of an add.
fn uniform(seed, counter) = bitcast<f32>((hash32(counter ^ hash32(seed)) & 8388607) | 1065353216) - 1.0

/// A standard normal number for each counter, the Box-Muller transform of the
/// uniform pair at counters 2 counter and 2 counter + 1. The uniform's grid ends
/// its tails near 5.6, so do not use it where the tails matter.
fn randn(seed, counter) = sqrt(-2.0 * log(1.0 - uniform(seed, 2 * counter))) * cos(6.283185307179586 * uniform(seed, 2 * counter + 1))

/// Dropout: each element of `x` zeroed with probability `p` and the kept ones
/// scaled by 1 / (1 - p), so the expectation is `x`. `p` in [0, 1).
fn dropout(x, p, seed, counter) = where(uniform(seed, counter) >= p, x / (1.0 - p), 0.0)
