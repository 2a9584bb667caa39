//! Statistics shared by the integration tests: exact CDFs (normal,
//! exponential), chi-square and Kolmogorov-Smirnov p-values, Poisson tails.
//! libm is used freely here: this is the oracle, not the generator.
//! `compiler/cli/tests/fill_statistics.rs` includes this file by path to test
//! `phobosc fill` output with the same statistics: keep it self-contained
//! (std only) and keep that path in step if it moves.
#![allow(dead_code)]

use std::f64::consts::PI;

/// Smallest p-value a test accepts. With fixed keys the tests are
/// deterministic; the threshold only says how surprising a result must be
/// before it counts as a defect.
pub const P_MIN: f64 = 1e-4;

/// erfc(x) to about 1e-14 relative for x >= 0, 1e-13 absolute below.
pub fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 3.0 {
        // erf(x) = 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (1 3 5 ... (2n+1)),
        // a series of positive terms.
        let mut term = x;
        let mut sum = x;
        let mut n = 0.0;
        while term > 1e-17 * sum {
            n += 1.0;
            term *= 2.0 * x * x / (2.0 * n + 1.0);
            sum += term;
        }
        1.0 - 2.0 / PI.sqrt() * (-x * x).exp() * sum
    } else {
        // Continued fraction, evaluated backwards from a fixed depth.
        let mut f = x;
        for k in (1..200).rev() {
            f = x + (k as f64 / 2.0) / f;
        }
        (-x * x).exp() / PI.sqrt() / f
    }
}

/// The standard normal CDF.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// P(Z > x) for a standard normal.
pub fn normal_sf(x: f64) -> f64 {
    0.5 * erfc(x / std::f64::consts::SQRT_2)
}

fn ln_gamma(x: f64) -> f64 {
    // Lanczos (g = 7, n = 9).
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, &c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The upper regularized incomplete gamma function Q(a, x).
pub fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let front = (-x + a * x.ln() - ln_gamma(a)).exp();
    if x < a + 1.0 {
        let (mut sum, mut term, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..100_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term < sum * 1e-16 {
                break;
            }
        }
        1.0 - sum * front
    } else {
        // Lentz's continued fraction.
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..100_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        front * h
    }
}

/// Chi-square p-value of observed counts against expected counts.
pub fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
    assert_eq!(observed.len(), expected.len());
    let stat: f64 = observed
        .iter()
        .zip(expected)
        .map(|(&o, &e)| {
            let d = o as f64 - e;
            d * d / e
        })
        .sum();
    gamma_q((observed.len() - 1) as f64 / 2.0, stat / 2.0)
}

/// Chi-square p-value for counts that should be equal.
pub fn chi_square_uniform(observed: &[u64]) -> f64 {
    let total: u64 = observed.iter().sum();
    let e = total as f64 / observed.len() as f64;
    chi_square(observed, &vec![e; observed.len()])
}

/// Kolmogorov-Smirnov p-value of samples against a continuous CDF.
pub fn ks(samples: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in s.iter().enumerate() {
        let f = cdf(x);
        d = d.max((i as f64 + 1.0) / n - f).max(f - i as f64 / n);
    }
    let en = n.sqrt();
    let lambda = (en + 0.12 + 0.11 / en) * d;
    // Kolmogorov's distribution: Q(l) = 2 sum (-1)^(j-1) exp(-2 j^2 l^2).
    let mut q = 0.0;
    let mut sign = 1.0;
    for j in 1..=100 {
        let term = sign * 2.0 * (-2.0 * (j * j) as f64 * lambda * lambda).exp();
        q += term;
        if term.abs() < 1e-12 {
            break;
        }
        sign = -sign;
    }
    q.clamp(0.0, 1.0)
}

/// Two-sided p-value of a Poisson count against its mean (exact sums).
pub fn poisson_two_sided(count: u64, mean: f64) -> f64 {
    let pmf = |k: u64| (-mean + k as f64 * mean.ln() - ln_gamma(k as f64 + 1.0)).exp();
    let lower: f64 = (0..=count).map(pmf).sum();
    let upper: f64 = 1.0 - (0..count).map(pmf).sum::<f64>();
    (2.0 * lower.min(upper)).min(1.0)
}

/// Two-sided p-value of a binomial count by the normal approximation.
pub fn binomial_two_sided(count: u64, n: u64, p: f64) -> f64 {
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    let z = ((count as f64 - mean).abs() - 0.5).max(0.0) / sd;
    2.0 * normal_sf(z)
}

#[test]
fn oracles_are_right() {
    assert!((normal_cdf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-13);
    assert!((normal_sf(6.0) / 9.865_876_450_376_98e-10 - 1.0).abs() < 1e-10);
    assert!((normal_sf(4.0) / 3.167_124_183_311_992e-5 - 1.0).abs() < 1e-10);
    // Chi-square with 10 dof at its 95th percentile.
    assert!((gamma_q(5.0, 18.307_038_053_275_146 / 2.0) - 0.05).abs() < 1e-9);
    assert!((gamma_q(511.5, 511.5) - 0.494_12).abs() < 1e-3);
}
