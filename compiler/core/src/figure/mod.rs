//! The tile figure: one tensor drawn as a tile of cells, written once here
//! as SVG text and shown by the web playground (its `figure` request) and
//! by Python (`phobos.figure`, `_repr_html_` in a notebook).
//!
//! The last axis runs across, every other axis down. A tensor is shaded by
//! its name, as the seed's random-numbers figure shades it: `uniform` by its
//! value in [0, 1), `randn` from -3 to 3 (blue below zero, red above),
//! `dropout` filled where kept and empty where dropped; any other tensor is
//! a heat map over its own finite range (viridis). A heat map of more than
//! [`MAX_RECT_CELLS`] cells is one PNG image in the SVG, a pixel a cell;
//! every other figure is one `<rect>` a cell, each with a `<title>` giving
//! its index and value. The legend is a second SVG, and [`Figure::caption`]
//! is the sentence under the figure, computed from the values.
//!
//! The SVG is self-contained: its colours are presentation attributes (the
//! playground's light theme), which a page's CSS overrides through the
//! classes every shape carries (`cell`, `neg`, `pos`, `kept`, `dropped`,
//! `stop-ink`, ...), as the playground's `style.css` does for its themes.
//! Every string that reaches the SVG (a tensor's name) is escaped, so the
//! text is safe to parse as XML or HTML. Numbers are written as JavaScript
//! writes them (`String(x)`, `x.toFixed(d)`), the form the page showed when
//! it drew the figure itself.

mod png;

use crate::types::Scalar;
use std::fmt::Write as _;

/// The most cells drawn as rectangles; a heat map of more is an image.
pub const MAX_RECT_CELLS: u64 = 4096;

/// The side of a cell and the gap between cells, in SVG units.
const CELL: u64 = 14;
const GAP: u64 = 2;
/// The longest side a figure is shown at by default, in CSS pixels (a page
/// may size it otherwise; the playground fits it to its pane).
const MAX_SIDE: f64 = 720.0;

/// The playground's light theme, the colours of a figure outside the page.
const INK: &str = "#1d1f24";
const MUTED: &str = "#6b6f78";
const LINE: &str = "#d9d7d0";
const NEG: &str = "#2f5fd0";
const POS: &str = "#d0532f";

/// How a figure's cells are shaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shading {
    /// Opacity by the value, clamped to [0, 1].
    Uniform,
    /// Blue below zero, red above, opacity by |value| / 3.
    Randn,
    /// Filled where the value is not zero, empty where it is.
    Dropout,
    /// Viridis over the tensor's finite range.
    Heat,
}

impl Shading {
    pub const ALL: [Shading; 4] = [
        Shading::Uniform,
        Shading::Randn,
        Shading::Dropout,
        Shading::Heat,
    ];

    /// The shading of a tensor named `name`: the seed's three names shade
    /// as random numbers, every other name as a heat map.
    pub fn of_name(name: &str) -> Shading {
        Shading::from_name(name).unwrap_or(Shading::Heat)
    }

    /// The shading called `name` (`uniform`, `randn`, `dropout`, `heat`).
    pub fn from_name(name: &str) -> Option<Shading> {
        Shading::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Shading::Uniform => "uniform",
            Shading::Randn => "randn",
            Shading::Dropout => "dropout",
            Shading::Heat => "heat",
        }
    }
}

/// The values of a tensor of `elem` from its 32-bit little-endian words
/// (the playground's transfer form: a bool as one word, a 64-bit element as
/// two, low first; two 16-bit elements a word, so an odd count has one
/// value too many). 64-bit integers become the nearest `f64`.
pub fn values(elem: Scalar, words: &[u32]) -> Vec<f64> {
    let pairs = || {
        words
            .chunks_exact(2)
            .map(|w| u64::from(w[0]) | u64::from(w[1]) << 32)
    };
    match elem {
        Scalar::F32 => words
            .iter()
            .map(|&w| f64::from(f32::from_bits(w)))
            .collect(),
        Scalar::I32 => words.iter().map(|&w| f64::from(w as i32)).collect(),
        Scalar::F64 => pairs().map(f64::from_bits).collect(),
        Scalar::I64 => pairs().map(|w| w as i64 as f64).collect(),
        Scalar::U64 => pairs().map(|w| w as f64).collect(),
        Scalar::U32 | Scalar::Bool => words.iter().map(|&w| f64::from(w)).collect(),
        // Two elements a word, low half first (a padded last half too).
        Scalar::F16 | Scalar::BF16 => words
            .iter()
            .flat_map(|&w| [w as u16, (w >> 16) as u16])
            .map(|h| f64::from(crate::types::half_value(elem, h)))
            .collect(),
    }
}

/// A tensor to draw: its name, shape and values in row-major order.
#[derive(Clone, Debug)]
pub struct Figure<'a> {
    name: &'a str,
    rows: u64,
    cols: u64,
    values: &'a [f64],
    shading: Shading,
}

impl<'a> Figure<'a> {
    /// The figure of a tensor, shaded by its name ([`Shading::of_name`]).
    /// Fails when the values are not as many as the shape's elements.
    pub fn new(name: &'a str, shape: &[u64], values: &'a [f64]) -> Result<Figure<'a>, String> {
        let (rows, cols) = match shape.split_last() {
            None => (1, 1),
            Some((&cols, rest)) => (rest.iter().fold(1u64, |a, &b| a.saturating_mul(b)), cols),
        };
        let elements = rows.saturating_mul(cols);
        if elements != values.len() as u64 || elements == u64::MAX {
            return Err(format!(
                "`{name}` has {} values, but its shape {shape:?} holds {}",
                values.len(),
                shape
                    .iter()
                    .fold(1u128, |a, &b| a.saturating_mul(u128::from(b)))
            ));
        }
        Ok(Figure {
            name,
            rows,
            cols,
            values,
            shading: Shading::of_name(name),
        })
    }

    /// The same figure with another shading.
    pub fn with_shading(mut self, shading: Shading) -> Figure<'a> {
        self.shading = shading;
        self
    }

    pub fn shading(&self) -> Shading {
        self.shading
    }

    /// Rows and columns of the tile: the last axis across, the others down.
    pub fn grid(&self) -> (u64, u64) {
        (self.rows, self.cols)
    }

    /// Whether the tile is one image rather than a rectangle a cell.
    pub fn is_image(&self) -> bool {
        self.shading == Shading::Heat && self.rows * self.cols > MAX_RECT_CELLS
    }

    /// The lowest and highest finite values, or (0, 0) if none is finite.
    fn finite_range(&self) -> (f64, f64) {
        let finite = self.values.iter().copied().filter(|v| v.is_finite());
        let lo = finite.clone().fold(f64::INFINITY, f64::min);
        let hi = finite.fold(f64::NEG_INFINITY, f64::max);
        if lo == f64::INFINITY {
            (0.0, 0.0)
        } else {
            (lo, hi)
        }
    }

    /// The tile as an SVG element.
    pub fn tile_svg(&self) -> String {
        let (rows, cols) = (self.rows, self.cols);
        let kind = self.shading.name();
        let name = escape(self.name);
        let mut s = String::new();
        if self.is_image() {
            let (w, h) = display_size(cols as f64, rows as f64, true);
            let _ = write!(
                s,
                r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {cols} {rows}" width="{w:.0}" height="{h:.0}" preserveAspectRatio="none" class="tile tile-heat heat-map" role="img" aria-label="{name}: heat map of {rows} by {cols}" data-rows="{rows}" data-cols="{cols}">"#
            );
            let (lo, hi) = self.finite_range();
            let mut rgb = Vec::with_capacity(3 * self.values.len());
            for &v in self.values {
                rgb.extend_from_slice(&ramp(scale(v, lo, hi)).unwrap_or([255, 0, 255]));
            }
            let uri = png::data_uri(&png::rgb(cols as u32, rows as u32, &rgb));
            let _ = write!(
                s,
                r#"<image x="0" y="0" width="{cols}" height="{rows}" preserveAspectRatio="none" style="image-rendering:pixelated" href="{uri}"/></svg>"#
            );
            return s;
        }
        let step = CELL + GAP;
        let (vw, vh) = (
            (cols * step).saturating_sub(GAP),
            (rows * step).saturating_sub(GAP),
        );
        let (w, h) = display_size(vw as f64, vh as f64, false);
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {vw} {vh}" width="{w:.0}" height="{h:.0}" class="tile tile-{kind}" role="img" aria-label="{name}: a tile of {rows} rows of {cols}" data-rows="{rows}" data-cols="{cols}">"#
        );
        let (lo, hi) = self.finite_range();
        for r in 0..rows {
            for c in 0..cols {
                let v = self.values[(r * cols + c) as usize];
                let (x, y) = (c * step, r * step);
                let cell = format!(r#"x="{x}" y="{y}" width="{CELL}" height="{CELL}" rx="2""#);
                let attrs = match self.shading {
                    Shading::Uniform => format!(
                        r#"{cell} class="cell" fill="{INK}" fill-opacity="{}" stroke="{LINE}" stroke-width="0.5""#,
                        to_fixed(v.clamp(0.0, 1.0), 3)
                    ),
                    Shading::Randn => format!(
                        r#"{cell} class="cell {}" fill="{}" fill-opacity="{}""#,
                        if v < 0.0 { "neg" } else { "pos" },
                        if v < 0.0 { NEG } else { POS },
                        to_fixed((v.abs() / 3.0).min(1.0), 3)
                    ),
                    Shading::Dropout => {
                        let inset = format!(
                            r#"x="{}.5" y="{}.5" width="{}" height="{}" rx="2""#,
                            x,
                            y,
                            CELL - 1,
                            CELL - 1
                        );
                        if v != 0.0 {
                            format!(
                                r#"{inset} class="cell kept" fill="{INK}" stroke="{INK}" stroke-width="1""#
                            )
                        } else {
                            format!(
                                r#"{inset} class="cell dropped" fill="none" stroke="{MUTED}" stroke-width="1""#
                            )
                        }
                    }
                    Shading::Heat => {
                        let [r, g, b] = ramp(scale(v, lo, hi)).unwrap_or([255, 0, 255]);
                        format!(r#"{cell} fill="rgb({r},{g},{b})""#)
                    }
                };
                let _ = write!(
                    s,
                    "<rect {attrs}><title>[{r}, {c}] = {}</title></rect>",
                    js_string(v)
                );
            }
        }
        s.push_str("</svg>");
        s
    }

    /// The legend as an SVG element: the value scale (a gradient bar with
    /// its ends and middle labelled), or for `dropout` the two swatches.
    pub fn legend_svg(&self) -> String {
        let kind = self.shading.name();
        let text = format!(
            r#"class="legend-label" fill="{MUTED}" font-family="ui-monospace, SFMono-Regular, Menlo, monospace" font-size="11""#
        );
        if self.shading == Shading::Dropout {
            return format!(
                concat!(
                    r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 150 14" width="150" height="14" class="legend tile-dropout" role="img" aria-label="kept and dropped">"#,
                    r#"<rect x="0.5" y="0.5" width="13" height="13" rx="2" class="cell kept" fill="{ink}" stroke="{ink}" stroke-width="1"/>"#,
                    r#"<text x="19" y="11" {text}>kept</text>"#,
                    r#"<rect x="70.5" y="0.5" width="13" height="13" rx="2" class="cell dropped" fill="none" stroke="{muted}" stroke-width="1"/>"#,
                    r#"<text x="89" y="11" {text}>dropped</text></svg>"#
                ),
                ink = INK,
                muted = MUTED,
                text = text
            );
        }
        let stop = |offset: &str, class: &str, colour: &str, opacity: u8| {
            format!(
                r#"<stop offset="{offset}" class="{class}" stop-color="{colour}" stop-opacity="{opacity}"/>"#
            )
        };
        let (stops, labels) = match self.shading {
            Shading::Uniform => (
                stop("0", "stop-ink", INK, 0) + &stop("1", "stop-ink", INK, 1),
                ["0".to_string(), "0.5".to_string(), "1".to_string()],
            ),
            Shading::Randn => (
                stop("0", "stop-neg", NEG, 1)
                    + &stop("0.5", "stop-clear", NEG, 0)
                    + &stop("1", "stop-pos", POS, 1),
                ["-3".to_string(), "0".to_string(), "3".to_string()],
            ),
            Shading::Heat | Shading::Dropout => {
                let (lo, hi) = self.finite_range();
                let stops = RAMP
                    .iter()
                    .enumerate()
                    .map(|(i, [r, g, b])| {
                        let at = i as f64 / (RAMP.len() - 1) as f64;
                        stop(
                            &at.to_string(),
                            "stop-ramp",
                            &format!("rgb({r},{g},{b})"),
                            1,
                        )
                    })
                    .collect();
                (
                    stops,
                    [
                        to_fixed(lo, 3),
                        to_fixed((lo + hi) / 2.0, 3),
                        to_fixed(hi, 3),
                    ],
                )
            }
        };
        let [left, mid, right] = labels.map(|l| escape(&l));
        format!(
            concat!(
                r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 192 26" width="192" height="26" class="legend legend-{kind}" role="img" aria-label="scale from {left} to {right}">"#,
                r#"<defs><linearGradient id="phobos-bar-{kind}">{stops}</linearGradient></defs>"#,
                r#"<rect x="0.5" y="0.5" width="191" height="9" rx="2" class="scale-bar bar-{kind}" fill="url(#phobos-bar-{kind})" stroke="{line}"/>"#,
                r#"<text x="0" y="23" text-anchor="start" {text}>{left}</text>"#,
                r#"<text x="96" y="23" text-anchor="middle" {text}>{mid}</text>"#,
                r#"<text x="192" y="23" text-anchor="end" {text}>{right}</text></svg>"#
            ),
            kind = kind,
            stops = stops,
            line = LINE,
            text = text,
            left = left,
            mid = mid,
            right = right
        )
    }

    /// The sentence under the figure, from the values themselves.
    pub fn caption(&self) -> String {
        let vals = self.values;
        let n = vals.len();
        let name = self.name;
        if n == 0 {
            return format!("{name}: no elements.");
        }
        let mean = vals.iter().sum::<f64>() / n as f64;
        match self.shading {
            Shading::Uniform => {
                let grid23 = vals
                    .iter()
                    .all(|&v| (0.0..1.0).contains(&v) && (v * 8388608.0).fract() == 0.0);
                let tail = if grid23 {
                    "; each a multiple of 2^-23 in [0, 1)."
                } else {
                    "."
                };
                format!("uniform: {n} counters, mean {}{tail}", to_fixed(mean, 3))
            }
            Shading::Randn => {
                let sq: f64 = vals.iter().map(|v| (v - mean) * (v - mean)).sum();
                let inside = vals.iter().filter(|v| (-3.0..=3.0).contains(*v)).count();
                format!(
                    "randn: {n} counters, mean {}, standard deviation {}; {inside} of {n} in [-3, 3].",
                    to_fixed(mean, 3),
                    to_fixed((sq / n as f64).sqrt(), 3)
                )
            }
            Shading::Dropout => {
                let kept: Vec<f64> = vals.iter().copied().filter(|&v| v != 0.0).collect();
                let first = kept.first().copied();
                // One distinct kept value (NaN counted as one value, as a
                // JavaScript Set counts it).
                let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
                let each = match first {
                    Some(f) if kept.iter().all(|&v| same(v, f)) => {
                        format!("; every kept value is {}", to_fixed(f, 1))
                    }
                    _ => String::new(),
                };
                format!(
                    "dropout: {n} counters, {} kept ({}%){each}.",
                    kept.len(),
                    to_fixed(100.0 * kept.len() as f64 / n as f64, 1)
                )
            }
            Shading::Heat => {
                // NaN is skipped (as `v < lo` skips it); infinities count.
                let lo = vals
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, |a, v| if v < a { v } else { a });
                let hi = vals
                    .iter()
                    .copied()
                    .fold(f64::NEG_INFINITY, |a, v| if v > a { v } else { a });
                format!(
                    "{name}: {n} values, mean {}, from {} to {}.",
                    to_fixed(mean, 3),
                    to_fixed(lo, 3),
                    to_fixed(hi, 3)
                )
            }
        }
    }

    /// The whole figure as one HTML fragment (what a notebook shows): the
    /// tile, the legend and the caption, styled inline.
    pub fn html(&self) -> String {
        format!(
            concat!(
                r#"<figure class="phobos-figure" data-name="{name}" data-shading="{kind}" style="margin:0;padding:8px;display:inline-block;background:#ffffff;color:{ink};font:13px/1.4 system-ui,sans-serif">"#,
                "{tile}",
                r#"<div style="margin-top:6px">{legend}</div>"#,
                r#"<figcaption style="margin-top:4px">{caption}</figcaption></figure>"#
            ),
            name = escape(self.name),
            kind = self.shading.name(),
            ink = INK,
            tile = self.tile_svg(),
            legend = self.legend_svg(),
            caption = escape(&self.caption())
        )
    }
}

/// The size to show a figure of `w` by `h` units at: the longest side at
/// most [`MAX_SIDE`] pixels, and an image (a pixel a cell) scaled up to at
/// least half of that.
fn display_size(w: f64, h: f64, image: bool) -> (f64, f64) {
    let longest = w.max(h).max(1.0);
    let k = if longest > MAX_SIDE {
        MAX_SIDE / longest
    } else if image && longest < MAX_SIDE / 2.0 {
        (MAX_SIDE / 2.0 / longest).floor()
    } else {
        1.0
    };
    ((w * k).max(1.0), (h * k).max(1.0))
}

/// Where `v` lies between `lo` and `hi` (0.5 when they are equal).
fn scale(v: f64, lo: f64, hi: f64) -> f64 {
    if hi > lo { (v - lo) / (hi - lo) } else { 0.5 }
}

/// A perceptual ramp (viridis, five stops) for heat maps.
const RAMP: [[u8; 3]; 5] = [
    [68, 1, 84],
    [59, 82, 139],
    [33, 145, 140],
    [94, 201, 98],
    [253, 231, 37],
];

/// The ramp's colour at `t` (clamped to [0, 1]); `None` for NaN.
fn ramp(t: f64) -> Option<[u8; 3]> {
    if !t.is_finite() {
        return None;
    }
    let x = t.clamp(0.0, 1.0) * (RAMP.len() - 1) as f64;
    let i = (x.floor() as usize).min(RAMP.len() - 2);
    let f = x - i as f64;
    let (a, b) = (RAMP[i], RAMP[i + 1]);
    // JavaScript's Math.round: halves go up.
    let mix =
        |k: usize| (f64::from(a[k]) + f * (f64::from(b[k]) - f64::from(a[k])) + 0.5).floor() as u8;
    Some([mix(0), mix(1), mix(2)])
}

/// `x` as JavaScript's `String(x)` writes it.
pub fn js_string(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if x == 0.0 {
        "0".into()
    } else if x.abs() >= 1e21 || x.abs() < 1e-6 {
        let e = format!("{x:e}");
        match e.split_once('e') {
            Some((m, exp)) if !exp.starts_with('-') => format!("{m}e+{exp}"),
            _ => e,
        }
    } else {
        format!("{x}")
    }
}

/// `x` as JavaScript's `x.toFixed(digits)` writes it (for non-finite `x`,
/// `String(x)`).
pub fn to_fixed(x: f64, digits: usize) -> String {
    if !x.is_finite() || x.abs() >= 1e21 {
        return js_string(x);
    }
    // Rust rounds an exact half to even, JavaScript away from zero; the
    // exact expansion (at most 1,074 digits after the point) tells a half.
    let exact = format!("{:.1074}", x.abs());
    let point = exact.find('.').unwrap_or(exact.len());
    let rest = &exact[point + 1 + digits..];
    if !rest.starts_with('5') || rest[1..].bytes().any(|b| b != b'0') {
        return format!("{x:.digits$}");
    }
    // A half: the kept digits, plus one in the last place.
    let mut kept: Vec<u8> = exact[..point + 1 + digits].bytes().collect();
    if digits == 0 {
        kept.pop();
    }
    let mut i = kept.len();
    loop {
        if i == 0 {
            kept.insert(0, b'1');
            break;
        }
        i -= 1;
        match kept[i] {
            b'.' => continue,
            b'9' => kept[i] = b'0',
            d => {
                kept[i] = d + 1;
                break;
            }
        }
    }
    let sign = if x < 0.0 { "-" } else { "" };
    format!("{sign}{}", String::from_utf8(kept).unwrap_or_default())
}

/// Text escaped for XML and HTML, in content and in quoted attributes.
fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            _ => s.push(ch),
        }
    }
    s
}

#[cfg(test)]
mod tests;
