//! The Tandem fills by name, as `phobosc fill` and the Python package's
//! `phobos.fill` take them: a TYPE string read into a [`Dist`] with its
//! parameters checked ([`parse_type`]), the NumPy dtype of its elements
//! ([`descr`]), and the three engines that make them ([`Engine`]: the fast
//! CPU fill, the reference crate element by element, the GPU fill), so that
//! every front end gives the same bits from the same words.

use crate::gpu::{Gpu, fill_map};
use phobos_tandem::{AliasTable, Bulk, Dist, Error as TandemError, Key, Tandem};

/// The types a fill knows, as listed in errors and `--help`.
pub const TYPES: &str = "u8, u16, u32, u64, f16, f32, f64, bool, below:N, below:LOW:N, \
                         normal_f32, normal_f64, exp_f32, exp_f64, choice:W1,W2,...";

/// A u64 in decimal or `0x` hexadecimal (underscores allowed).
pub fn parse_u64(s: &str) -> Option<u64> {
    let t = s.trim().replace('_', "");
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() => u64::from_str_radix(hex, 16).ok(),
        Some(_) => None,
        None if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => t.parse().ok(),
        None => None,
    }
}

/// An i64 in decimal or `0x` hexadecimal, with an optional `-`.
pub fn parse_i64(s: &str) -> Option<i64> {
    let t = s.trim();
    match t.strip_prefix('-') {
        Some(m) => {
            let v = parse_u64(m)?;
            0i64.checked_sub_unsigned(v)
        }
        None => i64::try_from(parse_u64(t)?).ok(),
    }
}

/// Whether `k` is a chunk length the stream takes: a power of two from 1
/// to 4096, as `Tandem::with_k` checks it.
pub fn valid_k(k: u32) -> bool {
    Tandem::with_k(Key::from_seed(0), k).is_ok()
}

/// The distribution named by TYPE, with its parameters checked; the error
/// starts with ``TYPE `...`:`` or says TYPE is not a fill type.
pub fn parse_type(ty: &str) -> Result<Dist, String> {
    let simple = match ty {
        "u8" => Some(Dist::U8),
        "u16" => Some(Dist::U16),
        "u32" => Some(Dist::U32),
        "u64" => Some(Dist::U64),
        "f16" => Some(Dist::F16Bits),
        "f32" => Some(Dist::F32),
        "f64" => Some(Dist::F64),
        "bool" => Some(Dist::Bool),
        "normal_f32" => Some(Dist::NormalF32),
        "normal_f64" => Some(Dist::NormalF64),
        "exp_f32" => Some(Dist::ExponentialF32),
        "exp_f64" => Some(Dist::ExponentialF64),
        _ => None,
    };
    if let Some(d) = simple {
        return Ok(d);
    }
    if let Some(params) = ty.strip_prefix("below:") {
        return parse_below(ty, params);
    }
    if let Some(weights) = ty.strip_prefix("choice:") {
        return parse_choice(ty, weights);
    }
    Err(format!(
        "TYPE `{ty}` is not a fill type; the types are {TYPES}"
    ))
}

fn parse_below(ty: &str, params: &str) -> Result<Dist, String> {
    let (low, n) = match params.split_once(':') {
        None => (None, params),
        Some((low, n)) => {
            let low = parse_i64(low).ok_or_else(|| {
                format!("TYPE `{ty}`: LOW `{low}` is not an integer in the i64 range")
            })?;
            (Some(low), n)
        }
    };
    let n = parse_u64(n).ok_or_else(|| {
        format!("TYPE `{ty}`: N `{n}` is not an integer from 1 to 2^64 - 1 (decimal or 0x hex)")
    })?;
    if n == 0 {
        return Err(format!(
            "TYPE `{ty}`: N must be at least 1 (below:N draws from 0 to N - 1)"
        ));
    }
    let d = match low {
        None if n <= u64::from(u32::MAX) => Dist::BelowU32 { n: n as u32 },
        None => Dist::BelowU64 { n },
        Some(low) => {
            let last = i128::from(low) + i128::from(n) - 1;
            if last > i128::from(i64::MAX) {
                return Err(format!(
                    "TYPE `{ty}`: LOW + N - 1 = {last} passes i64's largest value {}",
                    i64::MAX
                ));
            }
            if n <= u64::from(u32::MAX) {
                if low >= i64::from(i32::MIN) && last <= i128::from(i32::MAX) {
                    Dist::BelowI32 {
                        low: low as i32,
                        n: n as u32,
                    }
                } else {
                    Dist::BelowI64U32 { low, n: n as u32 }
                }
            } else {
                Dist::BelowI64 { low, n }
            }
        }
    };
    d.check().map_err(|e| format!("TYPE `{ty}`: {e}"))?;
    Ok(d)
}

fn parse_choice(ty: &str, list: &str) -> Result<Dist, String> {
    if list.trim().is_empty() {
        return Err(format!(
            "TYPE `{ty}`: no weights; write choice:W1,W2,... with at least one weight"
        ));
    }
    let mut weights = Vec::new();
    for (i, w) in list.split(',').enumerate() {
        let v: f64 = w
            .trim()
            .parse()
            .map_err(|_| format!("TYPE `{ty}`: weight {i} `{w}` is not a number"))?;
        weights.push(v);
    }
    let table = AliasTable::new(&weights).map_err(|e| match e {
        TandemError::InvalidWeight { index, value } => {
            format!("TYPE `{ty}`: weight {index} is {value}; weights must be finite and >= 0")
        }
        TandemError::AllWeightsZero => {
            format!("TYPE `{ty}`: every weight is zero, so nothing can be chosen")
        }
        e => format!("TYPE `{ty}`: {e}"),
    })?;
    Ok(Dist::Choice(table))
}

/// The NumPy dtype (the `.npy` header's `descr`) of each distribution's
/// elements.
pub fn descr(d: &Dist) -> &'static str {
    match d {
        Dist::U8 => "|u1",
        Dist::U16 => "<u2",
        Dist::F16Bits => "<f2",
        Dist::Bool => "|b1",
        Dist::U32 | Dist::BelowU32 { .. } | Dist::Choice(_) => "<u4",
        Dist::BelowI32 { .. } => "<i4",
        Dist::U64 | Dist::BelowU64 { .. } => "<u8",
        Dist::BelowI64U32 { .. } | Dist::BelowI64 { .. } => "<i8",
        Dist::F32 | Dist::NormalF32 | Dist::ExponentialF32 => "<f4",
        Dist::F64 | Dist::NormalF64 | Dist::ExponentialF64 => "<f8",
    }
}

/// What makes a fill's elements: the fast CPU fill on every core (or as
/// many threads as asked), the reference crate element by element (slow,
/// for cross-checks), or the GPU. All three give the same bits.
pub enum Engine {
    Fast(Bulk),
    Reference(Tandem),
    Gpu(&'static Gpu, Tandem),
    /// Several devices at once, each making a contiguous range of every
    /// piece (`crate::split`): the same bits as one.
    Split(crate::split::fill::SplitFill),
}

impl Engine {
    /// Elements `start ..` of `d` as little-endian bytes into `out`, whose
    /// length is a multiple of the element size.
    pub fn fill(&self, d: &Dist, start: u64, out: &mut [u8]) -> Result<(), String> {
        match self {
            Engine::Fast(b) => b.fill_bytes(d, start, out).map_err(|e| e.to_string()),
            Engine::Reference(r) => reference_fill(r, d, start, out).map_err(|e| e.to_string()),
            Engine::Gpu(g, r) => g.fill(d, *r, start, out).map_err(|e| e.to_string()),
            Engine::Split(s) => s.fill(d, start, out),
        }
    }

    /// The GPU engine for `d`, or why not: the map has no GPU fill
    /// ([`fill_map`]), or no device opens.
    pub fn gpu(d: &Dist, rng: Tandem) -> Result<Engine, String> {
        fill_map(d).map_err(|e| e.to_string())?;
        let g = Gpu::shared().map_err(|e| e.to_string())?;
        Ok(Engine::Gpu(g, rng))
    }
}

/// The reference crate's element-by-element fill, as little-endian bytes.
pub fn reference_fill(r: &Tandem, d: &Dist, start: u64, out: &mut [u8]) -> Result<(), TandemError> {
    fn le<T: Copy + Default, const N: usize>(
        out: &mut [u8],
        f: impl FnOnce(&mut [T]) -> Result<(), TandemError>,
        b: impl Fn(T) -> [u8; N],
    ) -> Result<(), TandemError> {
        let mut v = vec![T::default(); out.len() / N];
        f(&mut v)?;
        for (o, x) in out.chunks_exact_mut(N).zip(v) {
            o.copy_from_slice(&b(x));
        }
        Ok(())
    }
    let s = start;
    match *d {
        Dist::U8 => r.fill_u8(out, s),
        Dist::U16 => le(out, |o| r.fill_u16(o, s), u16::to_le_bytes),
        Dist::U32 => le(out, |o| r.fill_u32(o, s), u32::to_le_bytes),
        Dist::U64 => le(out, |o| r.fill_u64(o, s), u64::to_le_bytes),
        Dist::F16Bits => le(out, |o| r.fill_f16_bits(o, s), u16::to_le_bytes),
        Dist::F32 => le(out, |o| r.fill_f32(o, s), f32::to_le_bytes),
        Dist::F64 => le(out, |o| r.fill_f64(o, s), f64::to_le_bytes),
        Dist::Bool => le(out, |o| r.fill_bool(o, s), |x: bool| [u8::from(x)]),
        Dist::BelowU32 { n } => le(out, |o| r.fill_below_u32(o, s, n), u32::to_le_bytes),
        Dist::BelowU64 { n } => le(out, |o| r.fill_below_u64(o, s, n), u64::to_le_bytes),
        Dist::BelowI32 { low, n } => le(out, |o| r.fill_below_i32(o, s, low, n), i32::to_le_bytes),
        Dist::BelowI64U32 { low, n } => le(
            out,
            |o| r.fill_below_i64_u32(o, s, low, n),
            i64::to_le_bytes,
        ),
        Dist::BelowI64 { low, n } => le(out, |o| r.fill_below_i64(o, s, low, n), i64::to_le_bytes),
        Dist::NormalF32 => le(out, |o| r.fill_normal_f32(o, s), f32::to_le_bytes),
        Dist::NormalF64 => le(out, |o| r.fill_normal_f64(o, s), f64::to_le_bytes),
        Dist::ExponentialF32 => le(out, |o| r.fill_exponential_f32(o, s), f32::to_le_bytes),
        Dist::ExponentialF64 => le(out, |o| r.fill_exponential_f64(o, s), f64::to_le_bytes),
        Dist::Choice(ref t) => le(out, |o| r.fill_choice(o, s, t), u32::to_le_bytes),
    }
}
