//! The f64 normal: a 1024-layer ziggurat (Marsaglia and Tsang 2000) with one
//! u64 draw per element whose layer, sign and abscissa use disjoint bits
//! (Doornik 2005), and the slow path that continues a miss on a continuation
//! sequence.
//!
//! The table is computed, not stored: from the two hex constants [`R`] and
//! [`V`] by a recursion that uses only the basic operations and the
//! functions of [`crate::math`], so every port can regenerate it bit for bit
//! (SPEC.md section 7.9 gives the recursion, section 10 a checksum).

use std::sync::OnceLock;

use crate::core::Continuation;
use crate::math::{exp_neg_f64, ln_f64, neg_ln_u64};

/// Layers of the ziggurat; the layer index is the low 10 bits of a draw.
pub const LAYERS: usize = 1024;

/// The rightmost layer edge r, solved for 1024 layers with 60-digit
/// arithmetic (mpmath) and rounded to f64: 4.038849846109504...
pub const R: f64 = f64::from_bits(0x4010_27C8_4109_FAD5);

/// The common layer area v = r f(r) + integral of f from r to infinity,
/// f(x) = exp(-x^2/2), rounded to f64: 0.001226324646353088...
pub const V: f64 = f64::from_bits(0x3F54_1794_1005_FC17);

/// Layer edges and heights: layer `i` spans heights `[f[i], f[i+1]]` and
/// abscissae `[0, x[i]]`; its part `x < x[i+1]` lies under the curve.
/// `x[0] = V / f(R)` is the base layer's virtual width, `x[1] = R`,
/// `x[1024] = 0`, `f[0] = 0` (unused), `f[1024] = 1`.
#[derive(Debug)]
pub struct Table {
    pub x: [f64; LAYERS + 1],
    pub f: [f64; LAYERS + 1],
}

/// `f(x) = exp(-x*x/2)` with the exact operation order of the spec.
pub fn density(x: f64) -> f64 {
    exp_neg_f64((x * x) * 0.5)
}

fn build() -> Table {
    let mut x = [0.0; LAYERS + 1];
    let mut f = [0.0; LAYERS + 1];
    x[1] = R;
    f[1] = density(R);
    x[0] = V / f[1];
    for i in 1..LAYERS - 1 {
        // The next edge is where the curve reaches this layer's top.
        let top = f[i] + V / x[i];
        let h = -ln_f64(top);
        x[i + 1] = (h + h).sqrt();
        f[i + 1] = density(x[i + 1]);
    }
    x[LAYERS] = 0.0;
    f[LAYERS] = 1.0;
    Table { x, f }
}

/// The table, computed once per process.
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(build)
}

/// `(x >> 11) * 2^-53`: the 53-bit abscissa fraction of a draw in [0, 1).
#[inline]
fn fraction53(x: u64) -> f64 {
    (x >> 11) as f64 * f64::from_bits(0x3CA0_0000_0000_0000)
}

/// Applies the sign bit (bit 10) of a draw.
#[inline]
fn signed(x: u64, value: f64) -> f64 {
    if (x >> 10) & 1 == 1 { -value } else { value }
}

/// The fast path: `Some(z)` for the 99.57 % of draws inside a layer's
/// rectangle, `None` for a miss.
#[inline]
pub fn fast(t: &Table, x: u64) -> Option<f64> {
    let layer = (x & 0x3FF) as usize;
    let xv = fraction53(x) * t.x[layer];
    if xv < t.x[layer + 1] {
        Some(signed(x, xv))
    } else {
        None
    }
}

/// Resolves the draw `x` completely, taking further draws from `more` when
/// it misses: a wedge test with one draw, or the tail with two draws per
/// attempt, or a fresh draw after a rejected wedge.
pub fn slow(t: &Table, mut x: u64, more: &mut Continuation) -> f64 {
    loop {
        let layer = (x & 0x3FF) as usize;
        let xv = fraction53(x) * t.x[layer];
        if xv < t.x[layer + 1] {
            return signed(x, xv);
        }
        if layer == 0 {
            // Marsaglia's tail beyond R: exact, and terminates on its own.
            loop {
                let a = neg_ln_u64(more.next_u64()) / R;
                let b = neg_ln_u64(more.next_u64());
                if b + b > a * a {
                    return signed(x, R + a);
                }
            }
        }
        let y = t.f[layer] + fraction53(more.next_u64()) * (t.f[layer + 1] - t.f[layer]);
        if y < density(xv) {
            return signed(x, xv);
        }
        x = more.next_u64();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_closes_and_has_equal_areas() {
        let t = table();
        // The recursion should land the last edge where its layer reaches 1.
        let last = t.x[LAYERS - 1] * (1.0 - t.f[LAYERS - 1]);
        assert!(
            (last - V).abs() < 1e-12 * V.max(1.0),
            "top layer area {last}"
        );
        for i in 1..LAYERS - 1 {
            let area = t.x[i] * (t.f[i + 1] - t.f[i]);
            assert!((area - V).abs() < 1e-9, "layer {i} area {area}");
            assert!(t.x[i + 1] < t.x[i]);
        }
        let fast: f64 = (0..LAYERS).map(|i| t.x[i + 1] / t.x[i]).sum::<f64>() / LAYERS as f64;
        assert!((fast - 0.995_723_433).abs() < 1e-8, "fast path {fast}");
    }
}
