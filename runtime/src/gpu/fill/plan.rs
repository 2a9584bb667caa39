//! What a Tandem fill asks of the GPU kernels: the map of a `Dist`, the
//! stream blocks that cover an element range, the uniform block of each
//! piece, and the miss list's capacity.

use super::super::GpuError;
use phobos_gpu::tandem::{FillMap, FillParams};
use phobos_tandem::{Dist, PURPOSE_BELOW, PURPOSE_NORMAL64, Tandem};

/// The most miss-list entries one piece may have (16 MiB of list); a piece
/// of a fill with many rejections is cut so that its expected misses fit.
const MAX_CAP: u64 = 1 << 22;

/// The share of `normal_f64` draws that miss the ziggurat's fast path
/// (SPEC.md 7.8: 0.428 %), with a margin.
const NORMAL64_MISS_RATE: f64 = 0.0045;

/// The GPU map of `dist` (every fill has one).
pub fn fill_map(dist: &Dist) -> Result<FillMap, GpuError> {
    Ok(match dist {
        Dist::U8 | Dist::U16 | Dist::U32 | Dist::U64 => FillMap::Raw,
        Dist::F16Bits => FillMap::F16,
        Dist::F32 => FillMap::F32,
        Dist::F64 => FillMap::F64,
        Dist::Bool => FillMap::Bool,
        Dist::BelowU32 { .. } | Dist::BelowI32 { .. } => FillMap::Below32,
        Dist::BelowI64U32 { .. } => FillMap::Below32To64,
        Dist::BelowU64 { .. } | Dist::BelowI64 { .. } => FillMap::Below64,
        Dist::Choice(_) => FillMap::Choice,
        Dist::NormalF32 => FillMap::NormalF32,
        Dist::ExponentialF32 => FillMap::ExponentialF32,
        Dist::ExponentialF64 => FillMap::ExponentialF64,
        Dist::NormalF64 => FillMap::NormalF64,
    })
}

/// One fill's shape: its map, how elements sit in stream blocks, and the
/// parameters every piece's uniform block shares.
pub(super) struct Shape {
    pub map: FillMap,
    /// Elements per stream block.
    pub per_block: u64,
    /// Bytes per element.
    pub size: usize,
    /// Output bytes per stream block.
    pub block_bytes: u64,
    n: u64,
    threshold: u64,
    low: u64,
    sub: [u32; 4],
    /// The probability that a draw is rejected.
    miss_rate: f64,
    /// A miss-list capacity set by tests of the in-place retries.
    pub cap_override: Option<u32>,
}

impl Shape {
    pub fn new(dist: &Dist, rng: &Tandem) -> Result<Shape, GpuError> {
        dist.check()
            .map_err(|e| GpuError::Fill(format!("Tandem fill: {e}")))?;
        let map = fill_map(dist)?;
        let size = dist.elem_size();
        let block_bytes = u64::from(map.out_words()) * 4;
        let per_block = block_bytes / size as u64;
        let r32 = |n: u32| u64::from(n.wrapping_neg() % n);
        let (n, threshold, low, bits) = match *dist {
            Dist::BelowU32 { n } => (u64::from(n), r32(n), 0, 32),
            Dist::BelowI32 { low, n } => (u64::from(n), r32(n), low as i64 as u64, 32),
            Dist::BelowI64U32 { low, n } => (u64::from(n), r32(n), low as u64, 32),
            Dist::BelowU64 { n } => (n, n.wrapping_neg() % n, 0, 64),
            Dist::BelowI64 { low, n } => (n, n.wrapping_neg() % n, low as u64, 64),
            Dist::Choice(ref t) => (t.len() as u64, 0, 0, 64),
            _ => (0, 0, 0, 64),
        };
        Ok(Shape {
            map,
            per_block,
            size,
            block_bytes,
            n,
            threshold,
            low,
            sub: rng
                .key()
                .sub(match map {
                    FillMap::NormalF64 => PURPOSE_NORMAL64,
                    _ => PURPOSE_BELOW,
                })
                .words(),
            miss_rate: match map {
                FillMap::NormalF64 => NORMAL64_MISS_RATE,
                _ => threshold as f64 / 2f64.powi(bits),
            },
            cap_override: None,
        })
    }

    /// The parameters of the dispatch that writes the output of stream
    /// blocks `pb0 .. pb0 + pn` from index 0 of its binding.
    pub fn params(&self, rng: &Tandem, pb0: u64, pn: u64, piece: u32) -> FillParams {
        let per_group = 8 * u64::from(rng.k());
        let group = pb0 / per_group;
        let skip = pb0 % per_group;
        let groups = (skip + pn).div_ceil(per_group);
        FillParams {
            key: rng.key().words(),
            k: rng.k(),
            first_chunk: group * 8,
            n_chunks: u32::try_from(groups * 8).expect("pieces are below 2^28 blocks"),
            skip: skip as u32,
            n_blocks: u32::try_from(pn).expect("pieces are below 2^28 blocks"),
            piece,
            cap: self.cap(pn),
            sub: self.sub,
            n: self.n,
            threshold: self.threshold,
            low: self.low,
            elem_base: pb0.wrapping_mul(self.per_block),
        }
    }

    /// Miss-list entries for a piece of `pn` blocks: the expected misses
    /// plus eight standard deviations and a margin, at most the piece's
    /// elements and [`MAX_CAP`]. More misses are still right: the fill
    /// kernel then retries them in place.
    pub fn cap(&self, pn: u64) -> u32 {
        if !self.map.has_misses() {
            return 0;
        }
        if let Some(cap) = self.cap_override {
            return cap.max(1);
        }
        let m = (pn * self.per_block) as f64;
        let expected = m * self.miss_rate;
        let cap = (expected + 8.0 * expected.sqrt() + 1024.0).ceil() as u64;
        cap.min(pn * self.per_block).clamp(1, MAX_CAP) as u32
    }

    /// The most blocks a piece may have so that its expected misses fit
    /// half the largest list.
    pub fn miss_piece_blocks(&self) -> u64 {
        if !self.map.has_misses() || self.miss_rate == 0.0 {
            return u64::MAX;
        }
        let elems = (MAX_CAP as f64 / 2.0 / self.miss_rate) as u64;
        (elems / self.per_block).max(1)
    }

    /// The alias table as `(threshold lo, threshold hi, alias, 0)` words
    /// per column.
    pub fn table_words(dist: &Dist) -> Vec<u32> {
        match dist {
            Dist::Choice(t) => (0..t.len())
                .flat_map(|c| {
                    let (thr, alias) = t.column(c);
                    [thr as u32, (thr >> 32) as u32, alias, 0]
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// What one fill covers: stream blocks `b0 .. b0 + n_blocks`, where the
/// elements' bytes start inside the first block's output, and their total.
pub(super) struct Span {
    pub b0: u64,
    pub n_blocks: u64,
    pub lead: usize,
    pub bytes: u64,
}

pub(super) fn span(shape: &Shape, start: u64, count: u64) -> Result<Span, GpuError> {
    if u128::from(start) + u128::from(count) > 1u128 << 64 {
        return Err(GpuError::Fill(format!(
            "Tandem fill from element {start} of {count} elements passes the stream's 2^64 elements"
        )));
    }
    let per = u128::from(shape.per_block);
    let end = u128::from(start) + u128::from(count);
    let b0 = u128::from(start) / per;
    let b1 = end.div_ceil(per);
    let bytes = u64::try_from(u128::from(count) * shape.size as u128)
        .map_err(|_| GpuError::Fill(format!("{count} elements are more than 2^64 bytes")))?;
    Ok(Span {
        b0: b0 as u64,
        n_blocks: (b1 - b0) as u64,
        lead: ((u128::from(start) % per) as usize) * shape.size,
        bytes,
    })
}
