//! Bounded integers by Lemire's method: the high half of `draw * n`, rejected
//! when the low half falls below `2^w mod n`, which makes every value in
//! `[0, n)` exactly equally likely. A rejected element retries on the
//! continuation of `sub(PURPOSE_BELOW).split(i)`, so element `i` depends only
//! on `i` (random access), and the common path has no loop.

use crate::core::Continuation;
use crate::key::{Key, PURPOSE_BELOW};

/// One attempt of Lemire's method for a 32-bit draw: `Some(value)` or
/// `None` when the draw falls in the rejected zone. `n` must be non-zero.
///
/// Rejection happens exactly when `low32(x * n) < 2^32 mod n`; checking
/// `low < n` first lets the common case skip the modulo.
#[inline]
pub fn lemire32(x: u32, n: u32) -> Option<u32> {
    let m = u64::from(x) * u64::from(n);
    let low = m as u32;
    if low < n {
        let threshold = n.wrapping_neg() % n;
        if low < threshold {
            return None;
        }
    }
    Some((m >> 32) as u32)
}

/// One attempt of Lemire's method for a 64-bit draw (128-bit product).
#[inline]
pub fn lemire64(x: u64, n: u64) -> Option<u64> {
    let m = u128::from(x) * u128::from(n);
    let low = m as u64;
    if low < n {
        let threshold = n.wrapping_neg() % n;
        if low < threshold {
            return None;
        }
    }
    Some((m >> 64) as u64)
}

/// The continuation on which element `index`'s rejections are retried.
pub fn retry_sequence(key: Key, index: u64) -> Continuation {
    Continuation::new(key.sub(PURPOSE_BELOW).split(index).words())
}

/// Element `index` of `below(n)` whose own draw was `x` (32-bit draws).
#[inline]
pub fn below_u32(key: Key, index: u64, x: u32, n: u32) -> u32 {
    match lemire32(x, n) {
        Some(v) => v,
        None => retry_u32(key, index, n),
    }
}

#[cold]
fn retry_u32(key: Key, index: u64, n: u32) -> u32 {
    let mut more = retry_sequence(key, index);
    loop {
        if let Some(v) = lemire32(more.next_u32(), n) {
            return v;
        }
    }
}

/// Element `index` of `below(n)` whose own draw was `x` (64-bit draws).
#[inline]
pub fn below_u64(key: Key, index: u64, x: u64, n: u64) -> u64 {
    match lemire64(x, n) {
        Some(v) => v,
        None => retry_u64(key, index, n),
    }
}

#[cold]
fn retry_u64(key: Key, index: u64, n: u64) -> u64 {
    let mut more = retry_sequence(key, index);
    loop {
        if let Some(v) = lemire64(more.next_u64(), n) {
            return v;
        }
    }
}
