//! Weighted choice through an alias table (Vose 1991) built in exact integer
//! arithmetic, so that the table's implied probabilities equal the scaled
//! weights exactly and every port builds the same table.
//!
//! A draw `x` (u64) picks column `c = hi64(x * n)` and keeps `c` when
//! `lo64(x * n) < threshold[c]`, else takes `alias[c]`: one multiply, one
//! compare, no loop and no float, so choice fills run at fill speed.

use crate::error::Error;

/// An alias table over `n` weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasTable {
    /// Per column: the kept share of the column is `threshold / 2^64`.
    threshold: Vec<u64>,
    /// Per column: the index taken when the column's own share is missed.
    alias: Vec<u32>,
    /// Per column: its own mass in units where a full column holds `total`.
    cut: Vec<u128>,
    /// The weights as integers: `floor(w * 2^(62 - e_max))`.
    scaled: Vec<u64>,
    /// The sum of `scaled`.
    total: u128,
}

/// `(mantissa, exponent)` with `w = mantissa * 2^exponent` exactly.
fn decompose(w: f64) -> (u64, i32) {
    let bits = w.to_bits();
    let biased = ((bits >> 52) & 0x7FF) as i32;
    let frac = bits & ((1 << 52) - 1);
    if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), biased - 1075)
    }
}

/// `floor(num * 2^64 / den)` for `num < den < 2^96`, by long division so
/// that nothing wider than 128 bits is needed.
fn scaled_quotient(num: u128, den: u128) -> u64 {
    let mut rem = num;
    let mut q = 0u64;
    for _ in 0..64 {
        rem <<= 1;
        q <<= 1;
        if rem >= den {
            rem -= den;
            q |= 1;
        }
    }
    q
}

impl AliasTable {
    /// Builds the table. Weights must be finite and non-negative, not all
    /// zero, and at most 2^32 of them.
    ///
    /// The weights are first made integers relative to the largest:
    /// `q_i = floor(w_i * 2^(62 - e))` where `2^e <= max w < 2^(e+1)`, so
    /// the largest has 63 bits and a weight below 2^-62 of the largest
    /// becomes 0. The choice probabilities are then exactly `q_i / sum q`.
    pub fn new(weights: &[f64]) -> Result<AliasTable, Error> {
        if weights.is_empty() {
            return Err(Error::EmptyWeights);
        }
        if weights.len() as u64 > 1 << 32 {
            return Err(Error::TooManyWeights { len: weights.len() });
        }
        for (index, &value) in weights.iter().enumerate() {
            if !value.is_finite() || value < 0.0 {
                return Err(Error::InvalidWeight { index, value });
            }
        }
        let max = weights.iter().copied().fold(0.0, f64::max);
        if max == 0.0 {
            return Err(Error::AllWeightsZero);
        }
        let (m, e) = decompose(max);
        let e_max = e + 63 - m.leading_zeros() as i32;
        let scaled: Vec<u64> = weights
            .iter()
            .map(|&w| {
                let (m, e) = decompose(w);
                let shift = e + 62 - e_max;
                if shift >= 0 {
                    m << shift
                } else if shift > -64 {
                    m >> -shift
                } else {
                    0
                }
            })
            .collect();
        let total: u128 = scaled.iter().map(|&q| u128::from(q)).sum();
        let n = weights.len();
        // Masses in units where one column holds `total`: q_i * n.
        let mut mass: Vec<u128> = scaled.iter().map(|&q| u128::from(q) * n as u128).collect();
        let mut cut = vec![total; n];
        let mut alias: Vec<u32> = (0..n as u64).map(|i| i as u32).collect();
        // Vose: both worklists are stacks filled in index order, popped from
        // the end; the order is part of the spec because it shapes the table.
        let mut small = Vec::new();
        let mut large = Vec::new();
        for (i, &m) in mass.iter().enumerate() {
            if m < total {
                small.push(i)
            } else {
                large.push(i)
            }
        }
        while !small.is_empty() && !large.is_empty() {
            let l = small.pop().unwrap_or_default();
            let g = large.pop().unwrap_or_default();
            cut[l] = mass[l];
            alias[l] = g as u32;
            mass[g] -= total - mass[l];
            if mass[g] < total {
                small.push(g)
            } else {
                large.push(g)
            }
        }
        // With exact arithmetic the small list empties with the large one;
        // whatever remains is a full column that keeps itself.
        let threshold = cut
            .iter()
            .map(|&c| {
                if c == total {
                    u64::MAX
                } else {
                    scaled_quotient(c, total)
                }
            })
            .collect();
        Ok(AliasTable {
            threshold,
            alias,
            cut,
            scaled,
            total,
        })
    }

    /// The number of weights (columns).
    pub fn len(&self) -> usize {
        self.alias.len()
    }

    /// Always false: a table has at least one weight.
    pub fn is_empty(&self) -> bool {
        self.alias.is_empty()
    }

    /// The index chosen by the 64-bit draw `x`.
    #[inline]
    pub fn pick(&self, x: u64) -> u32 {
        let p = u128::from(x) * self.alias.len() as u128;
        let c = (p >> 64) as usize;
        if (p as u64) < self.threshold[c] {
            c as u32
        } else {
            self.alias[c]
        }
    }

    /// Column `c`'s threshold and alias, as a port would upload them.
    pub fn column(&self, c: usize) -> (u64, u32) {
        (self.threshold[c], self.alias[c])
    }

    /// Column `c`'s own mass, in units where a full column holds [`Self::total`].
    pub fn cut(&self, c: usize) -> u128 {
        self.cut[c]
    }

    /// The integer weights the table realises exactly.
    pub fn scaled_weights(&self) -> &[u64] {
        &self.scaled
    }

    /// The sum of the integer weights.
    pub fn total(&self) -> u128 {
        self.total
    }
}
