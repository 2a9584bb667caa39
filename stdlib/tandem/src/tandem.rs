//! The generator type [`Tandem`]: a key and a chunk length, random access to
//! every draw, and the fills. Each fill writes element `i = start + j` to
//! `out[j]` as a function of `(key, K, i)` only, so a fill started anywhere
//! equals the tail of the whole fill.

use crate::alias::AliasTable;
use crate::bounded::{below_u32, below_u64};
use crate::core::Continuation;
use crate::core::{Block, BlockSource, DEFAULT_K, Direct, GroupCursor, MAX_K};
use crate::elements;
use crate::error::Error;
use crate::key::{Key, PURPOSE_NORMAL64};
use crate::ziggurat;

/// A Tandem stream: 2^64 16-byte blocks determined by a key and `K`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tandem {
    key: Key,
    k: u32,
}

/// Checks that elements `start .. start + len` exist (indices below 2^64).
fn check_capacity(start: u64, len: usize) -> Result<(), Error> {
    if u128::from(start) + len as u128 > 1u128 << 64 {
        return Err(Error::BeyondCapacity { start, len });
    }
    Ok(())
}

fn check_n(n: u64) -> Result<(), Error> {
    if n == 0 {
        return Err(Error::EmptyRange { parameter: "n" });
    }
    Ok(())
}

/// Checks that `low + n - 1 <= max` so every value fits the output type.
fn check_range(low: i128, n: u128, max: i128) -> Result<(), Error> {
    check_n(n as u64)?;
    if low + (n as i128 - 1) > max {
        return Err(Error::RangeOverflow {
            parameter: "n",
            low,
            n,
        });
    }
    Ok(())
}

// Element maps shared by the fills and the single draws. Each takes the
// source of blocks and the element index.

#[inline]
fn u8_at(s: &mut impl BlockSource, i: u64) -> u8 {
    (s.word(i >> 2) >> (8 * (i & 3))) as u8
}

#[inline]
fn u16_at(s: &mut impl BlockSource, i: u64) -> u16 {
    (s.word(i >> 1) >> (16 * (i & 1))) as u16
}

#[inline]
fn bool_at(s: &mut impl BlockSource, i: u64) -> bool {
    // Bit i % 128 of block i / 128, bits of a word from the least significant.
    let b = s.block(i >> 7);
    (b[((i >> 5) & 3) as usize] >> (i & 31)) & 1 == 1
}

#[inline]
fn normal_f32_at(s: &mut impl BlockSource, i: u64) -> f32 {
    let w0 = s.word(i & !1);
    let w1 = s.word(i | 1);
    let (z0, z1) = elements::normal_pair_f32(w0, w1);
    if i & 1 == 0 { z0 } else { z1 }
}

#[inline]
fn normal_f64_at(key: Key, s: &mut impl BlockSource, i: u64) -> f64 {
    let t = ziggurat::table();
    let x = s.draw_u64(i);
    match ziggurat::fast(t, x) {
        Some(z) => z,
        None => normal_f64_miss(key, t, x, i),
    }
}

/// A ziggurat miss of element `i` continues on `sub(PURPOSE_NORMAL64).split(i)`.
#[cold]
fn normal_f64_miss(key: Key, t: &ziggurat::Table, x: u64, i: u64) -> f64 {
    let mut more = Continuation::new(key.sub(PURPOSE_NORMAL64).split(i).words());
    ziggurat::slow(t, x, &mut more)
}

impl Tandem {
    /// The stream of `key` with the default chunk length `K = 32`.
    pub fn new(key: Key) -> Tandem {
        Tandem { key, k: DEFAULT_K }
    }

    /// The stream of `key` with chunk length `k`, a power of two in
    /// `1..=4096`. `K` is part of the stream's identity: another `K` gives
    /// other bits.
    pub fn with_k(key: Key, k: u32) -> Result<Tandem, Error> {
        if !k.is_power_of_two() || k > MAX_K {
            return Err(Error::InvalidK { k });
        }
        Ok(Tandem { key, k })
    }

    /// The key.
    pub fn key(&self) -> Key {
        self.key
    }

    /// The chunk length in 16-byte blocks.
    pub fn k(&self) -> u32 {
        self.k
    }

    fn direct(&self) -> Direct {
        Direct {
            key: self.key.words(),
            k: self.k,
        }
    }

    fn cursor(&self) -> GroupCursor {
        GroupCursor::new(self.key.words(), self.k)
    }

    /// Runs `f` for every element of `out`, indices from `start`, sharing one
    /// group cache across the fill.
    fn fill_with<T>(
        &self,
        out: &mut [T],
        start: u64,
        mut f: impl FnMut(&mut GroupCursor, u64) -> T,
    ) -> Result<(), Error> {
        check_capacity(start, out.len())?;
        let mut cur = self.cursor();
        for (j, o) in out.iter_mut().enumerate() {
            *o = f(&mut cur, start + j as u64);
        }
        Ok(())
    }

    // Single draws: element `i` of the matching fill, computed directly.

    /// Stream block `b` (16 bytes).
    pub fn block(&self, b: u64) -> Block {
        self.direct().block(b)
    }

    /// 32-bit draw `i`: element `i` of [`Tandem::fill_u32`].
    pub fn word(&self, i: u64) -> u32 {
        self.direct().word(i)
    }

    /// 64-bit draw `i`: element `i` of [`Tandem::fill_u64`].
    pub fn draw_u64(&self, i: u64) -> u64 {
        self.direct().draw_u64(i)
    }

    /// Element `i` of [`Tandem::fill_f32`].
    pub fn uniform_f32(&self, i: u64) -> f32 {
        elements::uniform_f32(self.word(i))
    }

    /// Element `i` of [`Tandem::fill_f64`].
    pub fn uniform_f64(&self, i: u64) -> f64 {
        elements::uniform_f64(self.draw_u64(i))
    }

    /// Element `i` of [`Tandem::fill_normal_f32`].
    pub fn normal_f32(&self, i: u64) -> f32 {
        normal_f32_at(&mut self.direct(), i)
    }

    /// Element `i` of [`Tandem::fill_normal_f64`].
    pub fn normal_f64(&self, i: u64) -> f64 {
        normal_f64_at(self.key, &mut self.direct(), i)
    }

    /// Element `i` of [`Tandem::fill_exponential_f32`].
    pub fn exponential_f32(&self, i: u64) -> f32 {
        elements::exponential_f32(self.word(i))
    }

    /// Element `i` of [`Tandem::fill_exponential_f64`].
    pub fn exponential_f64(&self, i: u64) -> f64 {
        elements::exponential_f64(self.draw_u64(i))
    }

    /// Element `i` of [`Tandem::fill_below_u32`].
    pub fn below_u32(&self, i: u64, n: u32) -> Result<u32, Error> {
        check_n(u64::from(n))?;
        Ok(below_u32(self.key, i, self.word(i), n))
    }

    /// Element `i` of [`Tandem::fill_below_u64`].
    pub fn below_u64(&self, i: u64, n: u64) -> Result<u64, Error> {
        check_n(n)?;
        Ok(below_u64(self.key, i, self.draw_u64(i), n))
    }

    /// Element `i` of [`Tandem::fill_choice`].
    pub fn choice(&self, i: u64, table: &AliasTable) -> u32 {
        table.pick(self.draw_u64(i))
    }

    // Fills. Each checks its parameters first and writes nothing on error.

    /// Bytes of the stream.
    pub fn fill_u8(&self, out: &mut [u8], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, u8_at)
    }

    /// 16-bit halves of the stream's words, low half first.
    pub fn fill_u16(&self, out: &mut [u16], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, u16_at)
    }

    /// The stream's 32-bit words.
    pub fn fill_u32(&self, out: &mut [u32], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, |s, i| s.word(i))
    }

    /// The stream's 64-bit draws (pairs of words, low word first).
    pub fn fill_u64(&self, out: &mut [u64], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, |s, i| s.draw_u64(i))
    }

    /// Half-float bits of uniforms in [0, 1), multiples of 2^-11.
    pub fn fill_f16_bits(&self, out: &mut [u16], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, |s, i| elements::uniform_f16_bits(u16_at(s, i)))
    }

    /// f32 uniforms in [0, 1), multiples of 2^-24.
    pub fn fill_f32(&self, out: &mut [f32], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, |s, i| elements::uniform_f32(s.word(i)))
    }

    /// f64 uniforms in [0, 1), multiples of 2^-53.
    pub fn fill_f64(&self, out: &mut [f64], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, |s, i| elements::uniform_f64(s.draw_u64(i)))
    }

    /// Fair bools: each bit of the stream becomes one element.
    pub fn fill_bool(&self, out: &mut [bool], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, bool_at)
    }

    /// Uniform integers in `[0, n)` from 32-bit draws.
    pub fn fill_below_u32(&self, out: &mut [u32], start: u64, n: u32) -> Result<(), Error> {
        check_n(u64::from(n))?;
        let key = self.key;
        self.fill_with(out, start, |s, i| below_u32(key, i, s.word(i), n))
    }

    /// Uniform integers in `[0, n)` from 64-bit draws.
    pub fn fill_below_u64(&self, out: &mut [u64], start: u64, n: u64) -> Result<(), Error> {
        check_n(n)?;
        let key = self.key;
        self.fill_with(out, start, |s, i| below_u64(key, i, s.draw_u64(i), n))
    }

    /// Uniform integers in `[low, low + n)` from 32-bit draws into i32.
    pub fn fill_below_i32(
        &self,
        out: &mut [i32],
        start: u64,
        low: i32,
        n: u32,
    ) -> Result<(), Error> {
        check_range(i128::from(low), u128::from(n), i128::from(i32::MAX))?;
        let key = self.key;
        self.fill_with(out, start, |s, i| {
            low.wrapping_add(below_u32(key, i, s.word(i), n) as i32)
        })
    }

    /// Uniform integers in `[low, low + n)` from 32-bit draws into i64
    /// (element `i` takes word `i`, as [`Tandem::fill_below_u32`]).
    pub fn fill_below_i64_u32(
        &self,
        out: &mut [i64],
        start: u64,
        low: i64,
        n: u32,
    ) -> Result<(), Error> {
        check_range(i128::from(low), u128::from(n), i128::from(i64::MAX))?;
        let key = self.key;
        self.fill_with(out, start, |s, i| {
            low + i64::from(below_u32(key, i, s.word(i), n))
        })
    }

    /// Uniform integers in `[low, low + n)` from 64-bit draws into i64.
    pub fn fill_below_i64(
        &self,
        out: &mut [i64],
        start: u64,
        low: i64,
        n: u64,
    ) -> Result<(), Error> {
        check_range(i128::from(low), u128::from(n), i128::from(i64::MAX))?;
        let key = self.key;
        self.fill_with(out, start, |s, i| {
            low.wrapping_add(below_u64(key, i, s.draw_u64(i), n) as i64)
        })
    }

    /// Standard normals in f32 by Box-Muller: element `2p` is `r cos`, `2p + 1`
    /// is `r sin` of the pair drawn from words `2p` and `2p + 1`.
    pub fn fill_normal_f32(&self, out: &mut [f32], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, normal_f32_at)
    }

    /// Standard normals in f64 by the 1024-layer ziggurat, one 64-bit draw per
    /// element.
    pub fn fill_normal_f64(&self, out: &mut [f64], start: u64) -> Result<(), Error> {
        let key = self.key;
        self.fill_with(out, start, |s, i| normal_f64_at(key, s, i))
    }

    /// Exponential(1) in f32 from 32-bit draws.
    pub fn fill_exponential_f32(&self, out: &mut [f32], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, |s, i| elements::exponential_f32(s.word(i)))
    }

    /// Exponential(1) in f64 from 64-bit draws.
    pub fn fill_exponential_f64(&self, out: &mut [f64], start: u64) -> Result<(), Error> {
        self.fill_with(out, start, |s, i| elements::exponential_f64(s.draw_u64(i)))
    }

    /// Indices drawn with the table's probabilities, one 64-bit draw each.
    pub fn fill_choice(
        &self,
        out: &mut [u32],
        start: u64,
        table: &AliasTable,
    ) -> Result<(), Error> {
        self.fill_with(out, start, |s, i| table.pick(s.draw_u64(i)))
    }
}
