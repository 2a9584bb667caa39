//! Moving a slab's elements ([`super::writes::Slab`]): out of a host
//! tensor or a device's bytes, and into the host tensor the split launch
//! returns.

use super::writes::Slab;
use phobos_core::tensor::{Data, Tensor};
use std::ops::Range;

/// The element ranges of `t` that positions `part` along axis `slab.axis`
/// cover (every position of the other axes), in order.
pub fn segments(shape: &[usize], axis: usize, part: &Range<u64>) -> Vec<Range<usize>> {
    if part.is_empty() {
        return Vec::new();
    }
    // A tensor of rank 0 is one element.
    if shape.is_empty() {
        return std::iter::once(0..1).collect();
    }
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let extent = shape[axis];
    let (lo, hi) = (part.start as usize, part.end as usize);
    (0..outer)
        .map(|o| (o * extent + lo) * inner..(o * extent + hi) * inner)
        .filter(|r| !r.is_empty())
        .collect()
}

/// The elements of `segs` of `data`, one after another.
pub fn gather(data: &Data, segs: &[Range<usize>]) -> Data {
    fn pick<T: Clone>(v: &[T], segs: &[Range<usize>]) -> Vec<T> {
        segs.iter()
            .flat_map(|r| v[r.clone()].iter().cloned())
            .collect()
    }
    match data {
        Data::Bool(v) => Data::Bool(pick(v, segs)),
        Data::I32(v) => Data::I32(pick(v, segs)),
        Data::U32(v) => Data::U32(pick(v, segs)),
        Data::I64(v) => Data::I64(pick(v, segs)),
        Data::U64(v) => Data::U64(pick(v, segs)),
        Data::F32(v) => Data::F32(pick(v, segs)),
        Data::F64(v) => Data::F64(pick(v, segs)),
        Data::F16(v) => Data::F16(pick(v, segs)),
        Data::BF16(v) => Data::BF16(pick(v, segs)),
    }
}

/// Writes `from` (as [`gather`] made it, of the same type) into `segs` of
/// `data`.
pub fn scatter(data: &mut Data, segs: &[Range<usize>], from: &Data) {
    fn put<T: Copy>(v: &mut [T], segs: &[Range<usize>], from: &[T]) {
        let mut at = 0;
        for r in segs {
            v[r.clone()].copy_from_slice(&from[at..at + r.len()]);
            at += r.len();
        }
    }
    match (data, from) {
        (Data::Bool(v), Data::Bool(f)) => put(v, segs, f),
        (Data::I32(v), Data::I32(f)) => put(v, segs, f),
        (Data::U32(v), Data::U32(f)) => put(v, segs, f),
        (Data::I64(v), Data::I64(f)) => put(v, segs, f),
        (Data::U64(v), Data::U64(f)) => put(v, segs, f),
        (Data::F32(v), Data::F32(f)) => put(v, segs, f),
        (Data::F64(v), Data::F64(f)) => put(v, segs, f),
        (Data::F16(v), Data::F16(f)) => put(v, segs, f),
        (Data::BF16(v), Data::BF16(f)) => put(v, segs, f),
        _ => unreachable!("a slab is gathered from a tensor of its own type"),
    }
}

/// What one device made of one slab: the elements, or (from a GPU) their
/// bytes from the first segment's start to the last one's end.
pub enum Piece {
    Elements(Data),
    Bytes {
        first: usize,
        bytes: Vec<u8>,
    },
    /// The segments' bytes one after another (a GPU's buffer of a cut
    /// tensor, which holds the slab alone).
    Packed(Vec<u8>),
}

/// The byte span of `segs` in a tensor of `size`-byte elements.
pub fn byte_span(segs: &[Range<usize>], size: usize) -> Option<Range<u64>> {
    Some((segs.first()?.start * size) as u64..(segs.last()?.end * size) as u64)
}

/// Writes `piece` into the tensor `t` at `segs`.
pub fn place(t: &mut Tensor, segs: &[Range<usize>], piece: &Piece) {
    match piece {
        Piece::Elements(d) => scatter(&mut t.data, segs, d),
        Piece::Packed(bytes) => {
            let size = t.elem().size();
            let out = crate::gpu::bytes_of_mut(&mut t.data).expect("the GPU refuses bool tensors");
            let mut at = 0;
            for r in segs {
                let n = r.len() * size;
                out[r.start * size..r.end * size].copy_from_slice(&bytes[at..at + n]);
                at += n;
            }
        }
        Piece::Bytes { first, bytes } => {
            let size = t.elem().size();
            let out = crate::gpu::bytes_of_mut(&mut t.data).expect("the GPU refuses bool tensors");
            for r in segs {
                let (a, b) = (r.start * size, r.end * size);
                out[a..b].copy_from_slice(&bytes[a - first..b - first]);
            }
        }
    }
}

/// The slab's segments for device `i` in tensor `t`.
pub fn slab_segments(slab: &Slab, t: &Tensor, i: usize) -> Vec<Range<usize>> {
    segments(&t.shape, slab.axis, &slab.parts[i])
}
