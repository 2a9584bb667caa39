//! The terminal preview of an output: a tile of shaded cells, as in the
//! figure of the random-numbers page, and its statistics.

use phobos_core::tensor::{Data, Tensor};
use serde_json::json;
use std::fmt::Write;

const SHADES: [&str; 5] = ["  ", "░░", "▒▒", "▓▓", "██"];
const MAX_ROWS: usize = 16;
const MAX_COLS: usize = 48;

/// Shades the top-left corner of a tensor (the last axis across), with a
/// caption giving the element count and the mean.
pub fn render(name: &str, t: &Tensor) -> String {
    let mut out = String::new();
    let cols = t.shape.last().copied().unwrap_or(1).max(1);
    let rows = t.len() / cols;
    let (show_r, show_c) = (rows.min(MAX_ROWS), cols.min(MAX_COLS));
    let shape: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
    let _ = writeln!(out, "{name}  [{}] {}", shape.join(", "), t.elem());
    let vals: Vec<f64> = (0..show_r)
        .flat_map(|r| (0..show_c).map(move |c| r * cols + c))
        .map(|i| t.get(i).as_f64())
        .collect();
    let finite = vals.iter().copied().filter(|v| v.is_finite());
    let lo = finite.clone().fold(f64::INFINITY, f64::min);
    let hi = finite.fold(f64::NEG_INFINITY, f64::max);
    for r in 0..show_r {
        out.push_str("  ");
        for c in 0..show_c {
            let v = vals[r * show_c + c];
            out.push_str(if v.is_nan() {
                "??"
            } else if hi > lo {
                SHADES[(((v - lo) / (hi - lo)) * 4.0).round().clamp(0.0, 4.0) as usize]
            } else {
                SHADES[if v != 0.0 { 4 } else { 0 }]
            });
        }
        out.push('\n');
    }
    if show_r < rows || show_c < cols {
        let _ = writeln!(
            out,
            "  (showing {show_r} of {rows} rows, {show_c} of {cols} columns)"
        );
    }
    let s = Stats::of(t);
    let _ = writeln!(out, "{name}: {} counters, mean {:.3}", s.count, s.mean);
    // With no finite value (empty, or all NaN) there is no range to show.
    let range = if s.min <= s.max {
        format!("min {}, max {}, ", fmt(s.min), fmt(s.max))
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  {range}nonzero {:.2}%{}",
        100.0 * s.nonzero as f64 / s.count.max(1) as f64,
        if s.nan > 0 {
            format!(", {} NaN", s.nan)
        } else {
            String::new()
        }
    );
    if hi > lo {
        let _ = writeln!(
            out,
            "  shades from {} (blank) to {} (full)",
            fmt(lo),
            fmt(hi)
        );
    }
    out
}

fn fmt(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v}")
    } else {
        format!("{v:.4}")
    }
}

struct Stats {
    count: usize,
    mean: f64,
    min: f64,
    max: f64,
    nonzero: usize,
    nan: usize,
}

impl Stats {
    /// The statistics of every element, on all cores: a 3 GiB output took
    /// 2.4 s element by element through `Tensor::get` on the H200's host.
    /// The sum runs in pieces of [`PIECE`] elements added in order, so the
    /// mean does not depend on the number of threads.
    fn of(t: &Tensor) -> Stats {
        let p = match &t.data {
            Data::Bool(v) => partials(v, |x| f64::from(u8::from(x))),
            Data::I32(v) => partials(v, f64::from),
            Data::U32(v) => partials(v, f64::from),
            Data::I64(v) => partials(v, |x| x as f64),
            Data::U64(v) => partials(v, |x| x as f64),
            Data::F32(v) => partials(v, f64::from),
            Data::F64(v) => partials(v, |x| x),
            Data::F16(v) => partials(v, f64::from),
            Data::BF16(v) => partials(v, f64::from),
        };
        let count = t.len();
        Stats {
            count,
            mean: p.sum / (count - p.nan).max(1) as f64,
            min: p.min,
            max: p.max,
            nonzero: p.nonzero,
            nan: p.nan,
        }
    }
}

/// Elements per piece of [`Stats::of`]'s sum.
const PIECE: usize = 1 << 20;

/// The statistics of some elements, before the mean.
#[derive(Clone, Copy)]
struct Partial {
    sum: f64,
    min: f64,
    max: f64,
    nonzero: usize,
    nan: usize,
}

impl Partial {
    const EMPTY: Partial = Partial {
        sum: 0.0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        nonzero: 0,
        nan: 0,
    };

    fn of<T: Copy>(v: &[T], f: impl Fn(T) -> f64) -> Partial {
        let mut p = Partial::EMPTY;
        for &x in v {
            let v = f(x);
            if v.is_nan() {
                p.nan += 1;
                continue;
            }
            p.sum += v;
            p.min = p.min.min(v);
            p.max = p.max.max(v);
            p.nonzero += usize::from(v != 0.0);
        }
        p
    }

    /// `self`, then `next`'s elements.
    fn then(self, next: Partial) -> Partial {
        Partial {
            sum: self.sum + next.sum,
            min: self.min.min(next.min),
            max: self.max.max(next.max),
            nonzero: self.nonzero + next.nonzero,
            nan: self.nan + next.nan,
        }
    }
}

/// [`Partial::of`] each piece of `v`, the pieces shared among the cores,
/// combined in order.
fn partials<T: Copy + Sync>(v: &[T], f: impl Fn(T) -> f64 + Sync) -> Partial {
    let pieces: Vec<&[T]> = v.chunks(PIECE).collect();
    if pieces.len() <= 1 {
        return Partial::of(v, f);
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(pieces.len());
    let f = &f;
    let each: Vec<Partial> = std::thread::scope(|s| {
        let handles: Vec<_> = pieces
            .chunks(pieces.len().div_ceil(threads))
            .map(|group| {
                s.spawn(move || {
                    group
                        .iter()
                        .map(|piece| Partial::of(piece, f))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a statistics thread does not panic"))
            .collect()
    });
    each.into_iter().fold(Partial::EMPTY, Partial::then)
}

pub fn stats_json(t: &Tensor, saved: Option<String>) -> serde_json::Value {
    let s = Stats::of(t);
    json!({
        "shape": t.shape,
        "dtype": t.elem().name(),
        "count": s.count,
        "mean": s.mean,
        "min": s.min,
        "max": s.max,
        "nonzero": s.nonzero,
        "nonzero_fraction": s.nonzero as f64 / s.count.max(1) as f64,
        "nan": s.nan,
        "saved_to": saved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use phobos_core::types::Scalar;

    /// Over several pieces, with NaNs, zeros and the extremes in the last,
    /// partial piece: the counts and extremes are exact, and the mean is
    /// the element-by-element one up to the order of the additions.
    #[test]
    fn statistics_over_pieces_match_element_by_element() {
        let n = 3 * PIECE + 5;
        let value = |i: usize| match i % 7 {
            0 => f32::NAN,
            1 => 0.0,
            _ => (i % 1000) as f32 * 0.25,
        };
        let mut t = Tensor::zeros(Scalar::F32, &[n]);
        let Data::F32(v) = &mut t.data else {
            unreachable!()
        };
        for (i, x) in v.iter_mut().enumerate() {
            *x = value(i);
        }
        v[n - 1] = -3.5;
        v[n - 2] = 1e6;
        let finite: Vec<f64> = v
            .iter()
            .map(|&x| f64::from(x))
            .filter(|x| !x.is_nan())
            .collect();
        let s = Stats::of(&t);
        assert_eq!(s.count, n);
        assert_eq!(s.nan, n - finite.len());
        assert_eq!(s.nonzero, finite.iter().filter(|&&x| x != 0.0).count());
        assert_eq!((s.min, s.max), (-3.5, 1e6));
        let mean = finite.iter().sum::<f64>() / finite.len() as f64;
        assert!(
            (s.mean - mean).abs() <= 1e-12 * mean.abs(),
            "{} vs {mean}",
            s.mean
        );
    }
}
