//! Cutting `0 .. total` (blocks of a grid axis, or elements of a fill)
//! into contiguous ranges, one per device, in proportion to their weights.

use std::ops::Range;

/// `0 .. total` cut into `weights.len()` contiguous ranges in order, range
/// `i` about `total * w_i / sum(w)` long: range `i` ends at the prefix sum
/// of the weights up to `i`, scaled and rounded down, the last at `total`.
/// Ranges may be empty (more devices than blocks); together they cover
/// every index once.
pub fn weighted(total: u64, weights: &[f64]) -> Vec<Range<u64>> {
    let sum: f64 = weights.iter().sum();
    let mut out = Vec::with_capacity(weights.len());
    let mut start = 0;
    let mut prefix = 0.0;
    for (i, w) in weights.iter().enumerate() {
        prefix += w;
        let usable = sum.is_finite() && sum > 0.0;
        let end = if i + 1 == weights.len() || !usable {
            total
        } else {
            // Exact for the totals a grid or a fill piece has (below 2^53).
            ((total as f64 * (prefix / sum)).floor() as u64).clamp(start, total)
        };
        out.push(start..end);
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::weighted;

    #[test]
    fn ranges_cover_in_order() {
        assert_eq!(weighted(10, &[1.0, 1.0]), vec![0..5, 5..10]);
        assert_eq!(weighted(10, &[1.0, 1.0, 1.0]), vec![0..3, 3..6, 6..10]);
        assert_eq!(weighted(8, &[3.0, 1.0]), vec![0..6, 6..8]);
        assert_eq!(weighted(2, &[1.0, 1.0, 1.0]), vec![0..0, 0..1, 1..2]);
        assert_eq!(weighted(0, &[1.0, 2.0]), vec![0..0, 0..0]);
        for total in 0..50 {
            for ws in [&[1.0][..], &[0.3, 7.0], &[1.0, 2.0, 3.0, 4.0]] {
                let r = weighted(total, ws);
                assert_eq!(r.len(), ws.len());
                assert_eq!(r[0].start, 0);
                assert_eq!(r.last().unwrap().end, total);
                assert!(r.windows(2).all(|w| w[0].end == w[1].start));
            }
        }
    }
}
