//! Fast fills: the same bits as [`Tandem`]'s element-by-element fills, made
//! by stepping the eight chunks of a group together (one step writes 128
//! contiguous bytes), seeding each chunk once per tile instead of looking
//! blocks up per element, and running tiles on several threads.
//!
//! The element maps are the reference's own ([`crate::elements`], Lemire,
//! the ziggurat, the alias table); only the way stream blocks are produced
//! differs, and every fill here is tested against [`Tandem`]'s (random
//! cut points included) in `tests/bulk.rs`.
//!
//! ```
//! use phobos_tandem::{Bulk, Dist, Key, Tandem};
//!
//! let rng = Tandem::new(Key::from_seed(42));
//! let bulk = Bulk::new(rng).threads(2);
//! let mut fast = vec![0.0f32; 10_000];
//! bulk.fill_normal_f32(&mut fast, 5)?;
//! let mut slow = vec![0.0f32; 10_000];
//! rng.fill_normal_f32(&mut slow, 5)?;
//! assert_eq!(fast, slow);
//!
//! // The byte form: little-endian elements, as `phobosc fill` writes them.
//! let mut bytes = vec![0u8; 4 * 8];
//! bulk.fill_bytes(&Dist::U32, 0, &mut bytes)?;
//! assert_eq!(bytes[..4], rng.word(0).to_le_bytes());
//! # Ok::<(), phobos_tandem::Error>(())
//! ```

use std::thread;

use crate::alias::AliasTable;
use crate::bounded::{lemire32, lemire64};
use crate::core::{Block, Continuation, GROUP_CHUNKS, WARM_UP_STEPS, WEYL_STREAM};
use crate::elements;
use crate::error::Error;
use crate::key::{Key, PURPOSE_BELOW, PURPOSE_NORMAL64};
use crate::tandem::Tandem;
use crate::ziggurat;

/// What a fill produces per element, with its parameters. Each variant is
/// one of [`Tandem`]'s fills (SPEC.md section 5); [`Dist::elem_size`] is the
/// size of one little-endian element in [`Bulk::fill_bytes`].
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    /// [`Tandem::fill_u8`].
    U8,
    /// [`Tandem::fill_u16`].
    U16,
    /// [`Tandem::fill_u32`].
    U32,
    /// [`Tandem::fill_u64`].
    U64,
    /// [`Tandem::fill_f16_bits`]: binary16 bits.
    F16Bits,
    /// [`Tandem::fill_f32`].
    F32,
    /// [`Tandem::fill_f64`].
    F64,
    /// [`Tandem::fill_bool`]: one byte, 0 or 1.
    Bool,
    /// [`Tandem::fill_below_u32`].
    BelowU32 { n: u32 },
    /// [`Tandem::fill_below_u64`].
    BelowU64 { n: u64 },
    /// [`Tandem::fill_below_i32`].
    BelowI32 { low: i32, n: u32 },
    /// [`Tandem::fill_below_i64_u32`].
    BelowI64U32 { low: i64, n: u32 },
    /// [`Tandem::fill_below_i64`].
    BelowI64 { low: i64, n: u64 },
    /// [`Tandem::fill_normal_f32`].
    NormalF32,
    /// [`Tandem::fill_normal_f64`].
    NormalF64,
    /// [`Tandem::fill_exponential_f32`].
    ExponentialF32,
    /// [`Tandem::fill_exponential_f64`].
    ExponentialF64,
    /// [`Tandem::fill_choice`]: u32 indices.
    Choice(AliasTable),
}

impl Dist {
    /// Bytes per element in [`Bulk::fill_bytes`].
    pub fn elem_size(&self) -> usize {
        match self {
            Dist::U8 | Dist::Bool => 1,
            Dist::U16 | Dist::F16Bits => 2,
            Dist::U32
            | Dist::F32
            | Dist::BelowU32 { .. }
            | Dist::BelowI32 { .. }
            | Dist::NormalF32
            | Dist::ExponentialF32
            | Dist::Choice(_) => 4,
            Dist::U64
            | Dist::F64
            | Dist::BelowU64 { .. }
            | Dist::BelowI64U32 { .. }
            | Dist::BelowI64 { .. }
            | Dist::NormalF64
            | Dist::ExponentialF64 => 8,
        }
    }

    /// Elements whose own draws lie in one 16-byte block (element `i` reads
    /// block `i / per_block`; a normal_f32 pair never straddles blocks).
    fn per_block(&self) -> u64 {
        match self {
            Dist::Bool => 128,
            Dist::U8 => 16,
            Dist::U16 | Dist::F16Bits => 8,
            Dist::U32
            | Dist::F32
            | Dist::BelowU32 { .. }
            | Dist::BelowI32 { .. }
            | Dist::BelowI64U32 { .. }
            | Dist::NormalF32
            | Dist::ExponentialF32 => 4,
            Dist::U64
            | Dist::F64
            | Dist::BelowU64 { .. }
            | Dist::BelowI64 { .. }
            | Dist::NormalF64
            | Dist::ExponentialF64
            | Dist::Choice(_) => 2,
        }
    }

    /// The same parameter checks as the reference fills (SPEC.md section 8).
    pub fn check(&self) -> Result<(), Error> {
        let range = |low: i128, n: u128, max: i128| {
            if n == 0 {
                Err(Error::EmptyRange { parameter: "n" })
            } else if low + (n as i128 - 1) > max {
                Err(Error::RangeOverflow {
                    parameter: "n",
                    low,
                    n,
                })
            } else {
                Ok(())
            }
        };
        match *self {
            Dist::BelowU32 { n } => range(0, n.into(), u32::MAX.into()),
            Dist::BelowU64 { n } => range(0, n.into(), u64::MAX.into()),
            Dist::BelowI32 { low, n } => range(low.into(), n.into(), i32::MAX.into()),
            Dist::BelowI64U32 { low, n } => range(low.into(), n.into(), i64::MAX.into()),
            Dist::BelowI64 { low, n } => range(low.into(), n.into(), i64::MAX.into()),
            _ => Ok(()),
        }
    }
}

/// A fast filler: a stream and a thread count.
#[derive(Clone, Copy, Debug)]
pub struct Bulk {
    rng: Tandem,
    threads: usize,
}

/// Stream blocks per tile when `K` is small: 32 KiB of stream, so a tile's
/// blocks stay in the L1/L2 cache between generation and the element map.
const TILE_BLOCKS: u64 = 2048;

impl Bulk {
    /// A filler for `rng` that uses every core
    /// (`std::thread::available_parallelism`).
    pub fn new(rng: Tandem) -> Bulk {
        let threads = thread::available_parallelism().map_or(1, |n| n.get());
        Bulk { rng, threads }
    }

    /// The same filler with `threads` threads (at least 1). The bits never
    /// depend on it.
    pub fn threads(self, threads: usize) -> Bulk {
        Bulk {
            threads: threads.max(1),
            ..self
        }
    }

    /// The thread count.
    pub fn thread_count(&self) -> usize {
        self.threads
    }

    /// The stream.
    pub fn tandem(&self) -> Tandem {
        self.rng
    }

    /// Elements `start ..` of `dist` as little-endian bytes, `dist.elem_size()`
    /// bytes each (bools one byte, 0 or 1); `out.len()` must be a multiple of
    /// the element size. Checks everything before writing anything.
    pub fn fill_bytes(&self, dist: &Dist, start: u64, out: &mut [u8]) -> Result<(), Error> {
        dist.check()?;
        let size = dist.elem_size();
        if !out.len().is_multiple_of(size) {
            return Err(Error::OutputLength {
                len: out.len(),
                elem_size: size,
            });
        }
        let n = out.len() / size;
        if u128::from(start) + n as u128 > 1u128 << 64 {
            return Err(Error::BeyondCapacity { start, len: n });
        }
        if n == 0 {
            return Ok(());
        }
        let plan = Plan::new(self.rng, dist);
        let per_tile = plan.tile_blocks * dist.per_block();
        let first = start / per_tile;
        let tiles = (start + (n as u64 - 1)) / per_tile - first + 1;
        let parts = (self.threads as u64).min(tiles);
        // Part p takes tiles [first + tiles*p/parts, first + tiles*(p+1)/parts),
        // clipped to the fill; each part is one contiguous piece of `out`.
        let mut pieces = Vec::with_capacity(parts as usize);
        let mut rest = out;
        let mut at = start;
        for p in 1..=parts {
            let end_tile = first + (u128::from(tiles) * u128::from(p) / u128::from(parts)) as u64;
            let end = if p == parts {
                start + (n as u64 - 1)
            } else {
                end_tile * per_tile - 1
            };
            // `end` is the last element of the piece (inclusive, so that a
            // fill ending at 2^64 - 1 does not overflow).
            let count = (end - at + 1) as usize;
            let (piece, tail) = rest.split_at_mut(count * size);
            pieces.push((at, piece));
            rest = tail;
            at = end.wrapping_add(1);
        }
        let plan = &plan;
        thread::scope(|scope| {
            let mut pieces = pieces.into_iter();
            let own = pieces.next();
            for (s, piece) in pieces {
                scope.spawn(move || plan.run(s, piece));
            }
            if let Some((s, piece)) = own {
                plan.run(s, piece);
            }
        });
        Ok(())
    }

    fn typed<T: Plain>(&self, dist: &Dist, out: &mut [T], start: u64) -> Result<(), Error> {
        self.fill_bytes(dist, start, bytes_of(out))?;
        for x in out.iter_mut() {
            x.fix_le();
        }
        Ok(())
    }

    /// [`Tandem::fill_u8`], fast.
    pub fn fill_u8(&self, out: &mut [u8], start: u64) -> Result<(), Error> {
        self.fill_bytes(&Dist::U8, start, out)
    }

    /// [`Tandem::fill_u16`], fast.
    pub fn fill_u16(&self, out: &mut [u16], start: u64) -> Result<(), Error> {
        self.typed(&Dist::U16, out, start)
    }

    /// [`Tandem::fill_u32`], fast.
    pub fn fill_u32(&self, out: &mut [u32], start: u64) -> Result<(), Error> {
        self.typed(&Dist::U32, out, start)
    }

    /// [`Tandem::fill_u64`], fast.
    pub fn fill_u64(&self, out: &mut [u64], start: u64) -> Result<(), Error> {
        self.typed(&Dist::U64, out, start)
    }

    /// [`Tandem::fill_f16_bits`], fast.
    pub fn fill_f16_bits(&self, out: &mut [u16], start: u64) -> Result<(), Error> {
        self.typed(&Dist::F16Bits, out, start)
    }

    /// [`Tandem::fill_f32`], fast.
    pub fn fill_f32(&self, out: &mut [f32], start: u64) -> Result<(), Error> {
        self.typed(&Dist::F32, out, start)
    }

    /// [`Tandem::fill_f64`], fast.
    pub fn fill_f64(&self, out: &mut [f64], start: u64) -> Result<(), Error> {
        self.typed(&Dist::F64, out, start)
    }

    /// [`Tandem::fill_bool`], fast.
    pub fn fill_bool(&self, out: &mut [bool], start: u64) -> Result<(), Error> {
        // SAFETY: bool has size and alignment 1, and `fill_bytes` writes only
        // 0 or 1 into every byte (and nothing on error), so every byte
        // remains a valid bool.
        let bytes = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast(), out.len()) };
        self.fill_bytes(&Dist::Bool, start, bytes)
    }

    /// [`Tandem::fill_below_u32`], fast.
    pub fn fill_below_u32(&self, out: &mut [u32], start: u64, n: u32) -> Result<(), Error> {
        self.typed(&Dist::BelowU32 { n }, out, start)
    }

    /// [`Tandem::fill_below_u64`], fast.
    pub fn fill_below_u64(&self, out: &mut [u64], start: u64, n: u64) -> Result<(), Error> {
        self.typed(&Dist::BelowU64 { n }, out, start)
    }

    /// [`Tandem::fill_below_i32`], fast.
    pub fn fill_below_i32(
        &self,
        out: &mut [i32],
        start: u64,
        low: i32,
        n: u32,
    ) -> Result<(), Error> {
        self.typed(&Dist::BelowI32 { low, n }, out, start)
    }

    /// [`Tandem::fill_below_i64_u32`], fast.
    pub fn fill_below_i64_u32(
        &self,
        out: &mut [i64],
        start: u64,
        low: i64,
        n: u32,
    ) -> Result<(), Error> {
        self.typed(&Dist::BelowI64U32 { low, n }, out, start)
    }

    /// [`Tandem::fill_below_i64`], fast.
    pub fn fill_below_i64(
        &self,
        out: &mut [i64],
        start: u64,
        low: i64,
        n: u64,
    ) -> Result<(), Error> {
        self.typed(&Dist::BelowI64 { low, n }, out, start)
    }

    /// [`Tandem::fill_normal_f32`], fast.
    pub fn fill_normal_f32(&self, out: &mut [f32], start: u64) -> Result<(), Error> {
        self.typed(&Dist::NormalF32, out, start)
    }

    /// [`Tandem::fill_normal_f64`], fast.
    pub fn fill_normal_f64(&self, out: &mut [f64], start: u64) -> Result<(), Error> {
        self.typed(&Dist::NormalF64, out, start)
    }

    /// [`Tandem::fill_exponential_f32`], fast.
    pub fn fill_exponential_f32(&self, out: &mut [f32], start: u64) -> Result<(), Error> {
        self.typed(&Dist::ExponentialF32, out, start)
    }

    /// [`Tandem::fill_exponential_f64`], fast.
    pub fn fill_exponential_f64(&self, out: &mut [f64], start: u64) -> Result<(), Error> {
        self.typed(&Dist::ExponentialF64, out, start)
    }

    /// [`Tandem::fill_choice`], fast.
    pub fn fill_choice(
        &self,
        out: &mut [u32],
        start: u64,
        table: &AliasTable,
    ) -> Result<(), Error> {
        self.typed(&Dist::Choice(table.clone()), out, start)
    }
}

/// Plain numbers whose bytes may be written directly.
trait Plain: Copy {
    /// Converts from little-endian in place (nothing on little-endian machines).
    fn fix_le(&mut self);
}

macro_rules! plain_int {
    ($($t:ty)*) => {$(
        impl Plain for $t {
            #[inline]
            fn fix_le(&mut self) {
                *self = <$t>::from_le(*self);
            }
        }
    )*};
}
plain_int!(u16 u32 u64 i32 i64);

impl Plain for f32 {
    #[inline]
    fn fix_le(&mut self) {
        *self = f32::from_bits(u32::from_le(self.to_bits()));
    }
}

impl Plain for f64 {
    #[inline]
    fn fix_le(&mut self) {
        *self = f64::from_bits(u64::from_le(self.to_bits()));
    }
}

fn bytes_of<T: Plain>(out: &mut [T]) -> &mut [u8] {
    // SAFETY: `Plain` is private and implemented only for integers and
    // floats: no padding, alignment at least 1, and every bit pattern is a
    // valid value, so the bytes may be viewed and written freely.
    unsafe {
        std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(out))
    }
}

/// Everything a thread needs: the key, `K`, the distribution and the keys
/// derived for its out-of-line paths.
struct Plan<'a> {
    key: Block,
    k: u32,
    tile_blocks: u64,
    dist: &'a Dist,
    /// `key.sub(PURPOSE_BELOW)` for bounded fills, `key.sub(PURPOSE_NORMAL64)`
    /// for normal_f64; the reference derives it per miss, with the same value.
    retry: Key,
}

impl<'a> Plan<'a> {
    fn new(rng: Tandem, dist: &'a Dist) -> Plan<'a> {
        let key = rng.key();
        let retry = match dist {
            Dist::NormalF64 => key.sub(PURPOSE_NORMAL64),
            Dist::BelowU32 { .. }
            | Dist::BelowU64 { .. }
            | Dist::BelowI32 { .. }
            | Dist::BelowI64U32 { .. }
            | Dist::BelowI64 { .. } => key.sub(PURPOSE_BELOW),
            _ => key,
        };
        if matches!(dist, Dist::NormalF64) {
            ziggurat::table();
        }
        Plan {
            key: key.words(),
            k: rng.k(),
            // Whole groups per tile, so only a fill's first tile skips steps.
            tile_blocks: TILE_BLOCKS.max(GROUP_CHUNKS * u64::from(rng.k())),
            dist,
            retry,
        }
    }

    /// Elements `start .. start + out.len() / size` into `out`, tile by tile.
    fn run(&self, start: u64, out: &mut [u8]) {
        let size = self.dist.elem_size();
        let per_block = self.dist.per_block();
        let per_tile = self.tile_blocks * per_block;
        let mut scratch = vec![0u8; 16 * self.tile_blocks as usize];
        let mut at = start;
        let mut rest = out;
        while !rest.is_empty() {
            let left = (rest.len() / size) as u64;
            // Up to the end of this tile, or of the piece.
            let count = (per_tile - at % per_tile).min(left);
            let (dst, tail) = rest.split_at_mut(count as usize * size);
            let b0 = at / per_block;
            let b1 = (at + (count - 1)) / per_block + 1;
            let blocks = &mut scratch[..16 * (b1 - b0) as usize];
            if self.raw() {
                self.raw_tile(at, dst, b0, blocks);
            } else {
                generate(self.key, self.k, b0, blocks);
                self.map(at, dst, b0, blocks);
            }
            rest = tail;
            at = at.wrapping_add(count);
        }
    }

    /// The integer fills are the stream's bytes themselves.
    fn raw(&self) -> bool {
        matches!(self.dist, Dist::U8 | Dist::U16 | Dist::U32 | Dist::U64)
    }

    /// Stream bytes straight into `dst` where whole blocks fit, through
    /// `scratch` at the edges.
    fn raw_tile(&self, at: u64, dst: &mut [u8], b0: u64, scratch: &mut [u8]) {
        let size = self.dist.elem_size() as u64;
        // Offset of the first byte within block b0 (elements never straddle blocks).
        let skip = ((at % self.dist.per_block()) * size) as usize;
        if skip == 0 && dst.len().is_multiple_of(16) {
            generate(self.key, self.k, b0, dst);
        } else {
            generate(self.key, self.k, b0, scratch);
            dst.copy_from_slice(&scratch[skip..skip + dst.len()]);
        }
    }

    /// The element map of every non-raw fill, from the tile's blocks.
    fn map(&self, at: u64, dst: &mut [u8], b0: u64, blocks: &[u8]) {
        let t = Words {
            bytes: blocks,
            block: b0,
        };
        let retry = self.retry;
        match *self.dist {
            Dist::U8 | Dist::U16 | Dist::U32 | Dist::U64 => unreachable!("raw fills"),
            Dist::F16Bits => each(dst, at, |i| {
                elements::uniform_f16_bits((t.word(i >> 1) >> (16 * (i & 1))) as u16).to_le_bytes()
            }),
            Dist::F32 => each(dst, at, |i| elements::uniform_f32(t.word(i)).to_le_bytes()),
            Dist::F64 => each(dst, at, |i| elements::uniform_f64(t.draw(i)).to_le_bytes()),
            Dist::Bool => each(dst, at, |i| [((t.word(i >> 5) >> (i & 31)) & 1) as u8]),
            Dist::BelowU32 { n } => {
                each(dst, at, |i| below32(retry, i, t.word(i), n).to_le_bytes())
            }
            Dist::BelowU64 { n } => {
                each(dst, at, |i| below64(retry, i, t.draw(i), n).to_le_bytes())
            }
            Dist::BelowI32 { low, n } => each(dst, at, |i| {
                low.wrapping_add(below32(retry, i, t.word(i), n) as i32)
                    .to_le_bytes()
            }),
            Dist::BelowI64U32 { low, n } => each(dst, at, |i| {
                (low + i64::from(below32(retry, i, t.word(i), n))).to_le_bytes()
            }),
            Dist::BelowI64 { low, n } => each(dst, at, |i| {
                low.wrapping_add(below64(retry, i, t.draw(i), n) as i64)
                    .to_le_bytes()
            }),
            Dist::NormalF32 => normal_pairs(dst, at, &t),
            Dist::NormalF64 => {
                let table = ziggurat::table();
                each(dst, at, |i| {
                    let x = t.draw(i);
                    match ziggurat::fast(table, x) {
                        Some(z) => z,
                        None => normal_miss(retry, table, x, i),
                    }
                    .to_le_bytes()
                })
            }
            Dist::ExponentialF32 => each(dst, at, |i| {
                elements::exponential_f32(t.word(i)).to_le_bytes()
            }),
            Dist::ExponentialF64 => each(dst, at, |i| {
                elements::exponential_f64(t.draw(i)).to_le_bytes()
            }),
            Dist::Choice(ref table) => each(dst, at, |i| table.pick(t.draw(i)).to_le_bytes()),
        }
    }
}

/// Writes element `at + j` as the `j`-th `N`-byte piece of `dst`.
#[inline(always)]
fn each<const N: usize>(dst: &mut [u8], at: u64, mut f: impl FnMut(u64) -> [u8; N]) {
    for (j, o) in dst.chunks_exact_mut(N).enumerate() {
        o.copy_from_slice(&f(at + j as u64));
    }
}

/// Box-Muller pairs: element `2p` is `r cos`, `2p + 1` is `r sin` of pair
/// `p`; each pair is computed once, even when the piece starts or ends
/// inside it.
fn normal_pairs(dst: &mut [u8], at: u64, t: &Words) {
    let pair = |p: u64| elements::normal_pair_f32(t.word(2 * p), t.word(2 * p + 1));
    let mut i = at;
    let mut rest = dst;
    if i & 1 == 1 {
        let (one, tail) = rest.split_at_mut(4);
        one.copy_from_slice(&pair(i >> 1).1.to_le_bytes());
        rest = tail;
        i = i.wrapping_add(1);
    }
    let mut pairs = rest.chunks_exact_mut(8);
    for o in &mut pairs {
        let (c, s) = pair(i >> 1);
        o[..4].copy_from_slice(&c.to_le_bytes());
        o[4..].copy_from_slice(&s.to_le_bytes());
        i = i.wrapping_add(2);
    }
    let last = pairs.into_remainder();
    if !last.is_empty() {
        last.copy_from_slice(&pair(i >> 1).0.to_le_bytes());
    }
}

/// The words of a tile that starts at stream block `block`. Word and draw
/// indices wrap modulo 2^64 (the u64 view reaches word 2^65), but their
/// distance from the tile's start is small, so the offsets are exact.
struct Words<'a> {
    bytes: &'a [u8],
    block: u64,
}

impl Words<'_> {
    #[inline(always)]
    fn word(&self, n: u64) -> u32 {
        let o = 4 * n.wrapping_sub(self.block.wrapping_mul(4)) as usize;
        u32::from_le_bytes([
            self.bytes[o],
            self.bytes[o + 1],
            self.bytes[o + 2],
            self.bytes[o + 3],
        ])
    }

    /// 64-bit draw `d`: words `2d` (low) and `2d + 1`.
    #[inline(always)]
    fn draw(&self, d: u64) -> u64 {
        let o = 8 * d.wrapping_sub(self.block.wrapping_mul(2)) as usize;
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.bytes[o..o + 8]);
        u64::from_le_bytes(b)
    }
}

/// `below_u32` of element `i` with the retry key `key.sub(PURPOSE_BELOW)`
/// already derived (SPEC.md section 7.5).
#[inline(always)]
fn below32(retry: Key, i: u64, x: u32, n: u32) -> u32 {
    match lemire32(x, n) {
        Some(v) => v,
        None => retry32(retry, i, n),
    }
}

#[cold]
fn retry32(retry: Key, i: u64, n: u32) -> u32 {
    let mut more = Continuation::new(retry.split(i).words());
    loop {
        if let Some(v) = lemire32(more.next_u32(), n) {
            return v;
        }
    }
}

#[inline(always)]
fn below64(retry: Key, i: u64, x: u64, n: u64) -> u64 {
    match lemire64(x, n) {
        Some(v) => v,
        None => retry64(retry, i, n),
    }
}

#[cold]
fn retry64(retry: Key, i: u64, n: u64) -> u64 {
    let mut more = Continuation::new(retry.split(i).words());
    loop {
        if let Some(v) = lemire64(more.next_u64(), n) {
            return v;
        }
    }
}

/// A ziggurat miss of element `i` continues on
/// `key.sub(PURPOSE_NORMAL64).split(i)` (SPEC.md section 7.8).
#[cold]
fn normal_miss(retry: Key, table: &ziggurat::Table, x: u64, i: u64) -> f64 {
    let mut more = Continuation::new(retry.split(i).words());
    ziggurat::slow(table, x, &mut more)
}

/// The eight chunks of a group, stepped together: word `q` of lane `l` is
/// `s[q][l]`, so each operation of the step is one 8-wide vector operation.
#[derive(Clone, Copy)]
struct Lanes {
    s: [[u32; 8]; 4],
    t: u32,
}

impl Lanes {
    /// Chunks `8 group .. 8 group + 7` of `key`, seeded (SPEC.md 3.2), not
    /// yet warmed up.
    #[inline(always)]
    fn seed(key: Block, k: u32, group: u64) -> Lanes {
        let c = |l: u64| group * GROUP_CHUNKS + l;
        Lanes {
            s: [
                [key[0]; 8],
                [key[1] ^ k; 8],
                std::array::from_fn(|l| key[2] ^ c(l as u64) as u32),
                std::array::from_fn(|l| key[3] ^ (c(l as u64) >> 32) as u32),
            ],
            t: 0,
        }
    }

    /// One step of every lane; returns the round's input for the feed-forward.
    #[inline(always)]
    fn round(&mut self) -> [[u32; 8]; 4] {
        self.t = self.t.wrapping_add(1);
        let w = self.t.wrapping_mul(WEYL_STREAM);
        let [a, b, c, d] = &mut self.s;
        for x in a.iter_mut() {
            *x = x.wrapping_add(w);
        }
        let input = [*a, *b, *c, *d];
        for _ in 0..2 {
            for l in 0..8 {
                a[l] = a[l].wrapping_add(b[l]);
                d[l] = (d[l] ^ a[l]).rotate_left(16);
                c[l] = c[l].wrapping_add(d[l]);
                b[l] = (b[l] ^ c[l]).rotate_left(12);
                a[l] = a[l].wrapping_add(b[l]);
                d[l] = (d[l] ^ a[l]).rotate_left(8);
                c[l] = c[l].wrapping_add(d[l]);
                b[l] = (b[l] ^ c[l]).rotate_left(7);
            }
        }
        input
    }

    /// Steps without output (warm-up and skipping).
    #[inline(always)]
    fn skip(&mut self, n: u64) {
        for _ in 0..n {
            self.round();
        }
    }

    /// One step: lane `l`'s output block into bytes `16 l .. 16 l + 16`.
    #[inline(always)]
    fn step_into(&mut self, line: &mut [u8; 128]) {
        let input = self.round();
        let mut words = [0u32; 32];
        for q in 0..4 {
            for l in 0..8 {
                words[4 * l + q] = self.s[q][l].wrapping_add(input[q][l]);
            }
        }
        for (o, w) in line.chunks_exact_mut(4).zip(words) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }
}

/// Stream blocks `b0 .. b0 + out.len() / 16` of `(key, k)` into `out`,
/// little-endian, equal to [`crate::core::block_at`] for each.
fn generate(key: Block, k: u32, b0: u64, out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::generate(key, k, b0, out) };
    }
    generate_any(key, k, b0, out)
}

/// Cuts stream blocks `b0 .. b0 + len / 16` at group boundaries and calls
/// `group_fn(group, r0, r1)` for each group met, with the range `r0 .. r1`
/// of the group's blocks (in stream order within the group) to produce.
/// Shared by both generators so that they cut the stream identically.
#[inline(always)]
fn walk(k: u32, b0: u64, len: usize, mut group_fn: impl FnMut(u64, u64, u64)) {
    let per_group = GROUP_CHUNKS * u64::from(k);
    let end = b0 + (len / 16) as u64;
    let mut b = b0;
    while b < end {
        let group = b / per_group;
        let g0 = group * per_group;
        let r0 = b - g0;
        let r1 = (end - g0).min(per_group);
        group_fn(group, r0, r1);
        b = g0 + r1;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! The generator with AVX2 intrinsics: the eight lanes of a group in
    //! one 256-bit register per state word, rotations by 16 and 8 as byte
    //! shuffles, and a 4x8 transpose so each step stores 128 bytes.

    use super::{GROUP_CHUNKS, WARM_UP_STEPS, WEYL_STREAM, walk};
    use crate::core::Block;
    use std::arch::x86_64::*;

    #[derive(Clone, Copy)]
    struct Lanes {
        s: [__m256i; 4],
        t: u32,
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn rotl<const L: i32, const R: i32>(x: __m256i) -> __m256i {
        _mm256_or_si256(_mm256_slli_epi32::<L>(x), _mm256_srli_epi32::<R>(x))
    }

    impl Lanes {
        #[inline]
        #[target_feature(enable = "avx2")]
        fn seed(key: Block, k: u32, group: u64) -> Lanes {
            let c = group * GROUP_CHUNKS;
            let lo = |l: u32| (key[2] ^ (c as u32 | l)) as i32;
            Lanes {
                s: [
                    _mm256_set1_epi32(key[0] as i32),
                    _mm256_set1_epi32((key[1] ^ k) as i32),
                    _mm256_setr_epi32(lo(0), lo(1), lo(2), lo(3), lo(4), lo(5), lo(6), lo(7)),
                    _mm256_set1_epi32((key[3] ^ (c >> 32) as u32) as i32),
                ],
                t: 0,
            }
        }

        #[inline]
        #[target_feature(enable = "avx2")]
        fn round(&mut self) -> [__m256i; 4] {
            self.t = self.t.wrapping_add(1);
            let w = _mm256_set1_epi32(self.t.wrapping_mul(WEYL_STREAM) as i32);
            let [mut a, mut b, mut c, mut d] = self.s;
            a = _mm256_add_epi32(a, w);
            let input = [a, b, c, d];
            let r16 = _mm256_setr_epi8(
                2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10,
                11, 8, 9, 14, 15, 12, 13,
            );
            let r8 = _mm256_setr_epi8(
                3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11,
                8, 9, 10, 15, 12, 13, 14,
            );
            for _ in 0..2 {
                a = _mm256_add_epi32(a, b);
                d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), r16);
                c = _mm256_add_epi32(c, d);
                b = rotl::<12, 20>(_mm256_xor_si256(b, c));
                a = _mm256_add_epi32(a, b);
                d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), r8);
                c = _mm256_add_epi32(c, d);
                b = rotl::<7, 25>(_mm256_xor_si256(b, c));
            }
            self.s = [a, b, c, d];
            input
        }

        /// One step: lane `l`'s block into bytes `16 l ..` of `line`.
        #[inline]
        #[target_feature(enable = "avx2")]
        fn step_into(&mut self, line: &mut [u8; 128]) {
            let input = self.round();
            let o: [__m256i; 4] = std::array::from_fn(|q| _mm256_add_epi32(self.s[q], input[q]));
            let t0 = _mm256_unpacklo_epi32(o[0], o[1]);
            let t1 = _mm256_unpackhi_epi32(o[0], o[1]);
            let t2 = _mm256_unpacklo_epi32(o[2], o[3]);
            let t3 = _mm256_unpackhi_epi32(o[2], o[3]);
            let u0 = _mm256_unpacklo_epi64(t0, t2); // lanes 0 | 4
            let u1 = _mm256_unpackhi_epi64(t0, t2); // lanes 1 | 5
            let u2 = _mm256_unpacklo_epi64(t1, t3); // lanes 2 | 6
            let u3 = _mm256_unpackhi_epi64(t1, t3); // lanes 3 | 7
            let v = [
                _mm256_permute2x128_si256::<0x20>(u0, u1),
                _mm256_permute2x128_si256::<0x20>(u2, u3),
                _mm256_permute2x128_si256::<0x31>(u0, u1),
                _mm256_permute2x128_si256::<0x31>(u2, u3),
            ];
            for (i, x) in v.into_iter().enumerate() {
                // SAFETY: bytes 32 i .. 32 i + 32 lie inside the 128-byte
                // line; storeu has no alignment requirement.
                unsafe { _mm256_storeu_si256(line.as_mut_ptr().add(32 * i).cast(), x) };
            }
        }
    }

    /// [`super::generate`] with AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) fn generate(key: Block, k: u32, b0: u64, out: &mut [u8]) {
        let per_group = GROUP_CHUNKS * u64::from(k);
        walk(k, b0, out.len(), |group, r0, r1| {
            let g0 = group * per_group;
            let mut lanes = Lanes::seed(key, k, group);
            for _ in 0..u64::from(WARM_UP_STEPS) + r0 / 8 {
                lanes.round();
            }
            for j in r0 / 8..r1.div_ceil(8) {
                let lo = r0.max(8 * j);
                let hi = r1.min(8 * j + 8);
                let at = (16 * (g0 + lo - b0)) as usize;
                if hi - lo == 8 {
                    let line: &mut [u8; 128] = (&mut out[at..at + 128])
                        .try_into()
                        .unwrap_or_else(|_| unreachable!());
                    lanes.step_into(line);
                } else {
                    let mut line = [0u8; 128];
                    lanes.step_into(&mut line);
                    let from = (16 * (lo - 8 * j)) as usize;
                    let len = (16 * (hi - lo)) as usize;
                    out[at..at + len].copy_from_slice(&line[from..from + len]);
                }
            }
        });
    }
}

/// The portable generator (no SIMD intrinsics; the compiler may vectorise).
fn generate_any(key: Block, k: u32, b0: u64, out: &mut [u8]) {
    debug_assert_eq!(out.len() % 16, 0);
    let per_group = GROUP_CHUNKS * u64::from(k);
    walk(k, b0, out.len(), |group, r0, r1| {
        let g0 = group * per_group;
        let mut lanes = Lanes::seed(key, k, group);
        lanes.skip(u64::from(WARM_UP_STEPS) + r0 / 8);
        for j in r0 / 8..r1.div_ceil(8) {
            // Blocks 8j .. 8j + 8 of the group, clipped to [r0, r1).
            let lo = r0.max(8 * j);
            let hi = r1.min(8 * j + 8);
            let at = (16 * (g0 + lo - b0)) as usize;
            if hi - lo == 8 {
                let line: &mut [u8; 128] = (&mut out[at..at + 128])
                    .try_into()
                    .unwrap_or_else(|_| unreachable!());
                lanes.step_into(line);
            } else {
                let mut line = [0u8; 128];
                lanes.step_into(&mut line);
                let from = (16 * (lo - 8 * j)) as usize;
                let len = (16 * (hi - lo)) as usize;
                out[at..at + len].copy_from_slice(&line[from..from + len]);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::block_at;

    #[test]
    fn generated_blocks_equal_direct_blocks() {
        let key = [5, 6, 7, 8];
        for k in [1, 2, 8, 32, 64] {
            for (b0, n) in [
                (0u64, 1usize),
                (0, 600),
                (3, 17),
                (255, 2),
                (1 << 40, 300),
                (u64::MAX / 2 - 40, 41),
            ] {
                let mut out = vec![0u8; 16 * n];
                generate(key, k, b0, &mut out);
                let mut portable = vec![0u8; 16 * n];
                generate_any(key, k, b0, &mut portable);
                assert_eq!(out, portable, "k={k} b0={b0}");
                for (j, blk) in out.chunks_exact(16).enumerate() {
                    let want = block_at(key, k, b0 + j as u64);
                    let got: Vec<u32> = blk
                        .chunks_exact(4)
                        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
                        .collect();
                    assert_eq!(got, want, "k={k} b={}", b0 + j as u64);
                }
            }
        }
    }
}
