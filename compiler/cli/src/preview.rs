//! The terminal preview of an output: a tile of shaded cells, as in the
//! figure of the random-numbers page, and its statistics.

use phobos_core::tensor::Tensor;
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
    fn of(t: &Tensor) -> Stats {
        let mut s = Stats {
            count: t.len(),
            mean: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            nonzero: 0,
            nan: 0,
        };
        let mut sum = 0.0;
        for i in 0..t.len() {
            let v = t.get(i).as_f64();
            if v.is_nan() {
                s.nan += 1;
                continue;
            }
            sum += v;
            s.min = s.min.min(v);
            s.max = s.max.max(v);
            s.nonzero += usize::from(v != 0.0);
        }
        s.mean = sum / (s.count - s.nan).max(1) as f64;
        s
    }
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
