//! Which elements of each stored tensor a range of blocks writes, and the
//! refusal of a split whose devices' writes could meet; which elements of
//! each input it reads, so that a GPU receives only those.
//!
//! A split runs blocks `b0 .. b1` of the split grid axis on one device and
//! gathers, from that device, the elements those blocks write. That is
//! only the single-device result when no element is written by blocks of
//! two devices and no block reads what another device's blocks write. So
//! the split asks, before anything runs:
//!
//! - a tensor both read and written is read by each device only in rows
//!   it writes itself (every load of it follows the blocks along the axis
//!   its stores do, within the device's slab), so no device reads rows
//!   another writes;
//! - every store to a tensor starts, along one axis of the tensor (the same
//!   axis for every store to it), at `s * ctx.block.a + c` with `s > 0`
//!   (`ir::analysis::block_affine`: constants, dims, `let`s, sums and
//!   products by constants), where `a` is the split grid axis and no other
//!   block axis enters that start. Blocks `b0 .. b1` then write only
//!   positions `s * b0 + c .. s * (b1 - 1) + c + len` along that axis (all of
//!   every other axis, at most);
//! - those intervals of different devices do not meet.
//!
//! The CPU backend's test for running blocks on threads
//! (`phobos-cpu`'s `parallel.rs`) is the same idea per block; here it is
//! per range of blocks, so that a kernel whose blocks overlap only inside
//! one device's range still splits.

use phobos_core::ir::analysis::block_affine;
use phobos_core::ir::{ExprId, ExprKind, Index, Kernel, LocalId, ParamKind, Place, Stmt};
use phobos_core::launch::Bound;
use phobos_core::types::Value;
use std::collections::HashMap;
use std::ops::Range;

/// The elements of one stored tensor that each device writes: positions
/// `parts[i]` along tensor axis `axis` (every position of the other axes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slab {
    /// The tensor's parameter index.
    pub param: usize,
    /// The tensor's axis the devices' writes are cut along.
    pub axis: usize,
    /// For each device, in order, the positions along `axis` its blocks
    /// write (within the tensor; empty for a device without blocks).
    pub parts: Vec<Range<u64>>,
}

/// The grid axis a launch of grid `grid` is split along: the one with the
/// most blocks (`x` on a tie), or an empty one, so that a grid without
/// blocks gives every device none.
pub fn split_axis(grid: [u64; 3]) -> u8 {
    if let Some(empty) = grid.iter().position(|&g| g == 0) {
        return empty as u8;
    }
    let mut best = 0;
    for a in 1..3 {
        if grid[a] > grid[best] {
            best = a;
        }
    }
    best as u8
}

/// The slab of every stored tensor when grid axis `axis`'s blocks are cut
/// into `ranges`, or why the split would not give the single-device bits
/// (the message names the tensor).
pub fn slabs(
    k: &Kernel,
    bound: &Bound,
    axis: u8,
    ranges: &[Range<u64>],
) -> Result<Vec<Slab>, String> {
    let affine = affine_in(k, bound);
    let mut out = Vec::new();
    // One device with every block: its writes are the whole launch's.
    if ranges.iter().filter(|r| !r.is_empty()).count() <= 1 {
        for (p, param) in k.params.iter().enumerate() {
            if let ParamKind::Tensor {
                shape,
                written: true,
                ..
            } = &param.kind
            {
                let rows = shape.first().map_or(1, |d| d.extent(&bound.dims) as u64);
                out.push(Slab {
                    param: p,
                    axis: 0,
                    parts: ranges
                        .iter()
                        .map(|r| if r.is_empty() { 0..0 } else { 0..rows })
                        .collect(),
                });
            }
        }
        return Ok(out);
    }
    for (p, param) in k.params.iter().enumerate() {
        let ParamKind::Tensor {
            shape,
            read,
            written: true,
            ..
        } = &param.kind
        else {
            continue;
        };
        let name = &param.name;
        let extents: Vec<u64> = shape.iter().map(|d| d.extent(&bound.dims) as u64).collect();
        // Per store: the tensor axis, stride, offset and length.
        let mut cuts: Vec<Cut> = Vec::new();
        for (n, s) in k.body.iter().enumerate() {
            let Stmt::Store {
                place: Place::Param(q),
                index,
                ..
            } = s
            else {
                continue;
            };
            if *q != p {
                continue;
            }
            let cut = cut_of(index, bound, axis, &affine);
            let Some(cut) = cut else {
                return Err(format!(
                    "statement {n} stores to `{name}` at positions that do not follow \
                     ctx.block.{} (a slice `s * ctx.block.{} + c :+ len` along one axis), so \
                     blocks on different devices could write the same elements; run it on \
                     one device",
                    ["x", "y", "z"][usize::from(axis)],
                    ["x", "y", "z"][usize::from(axis)],
                ));
            };
            if index.len() != extents.len() {
                return Err(format!(
                    "statement {n} indexes `{name}` with {} positions for its {} axes",
                    index.len(),
                    extents.len()
                ));
            }
            if let Some(first) = cuts.first()
                && first.0 != cut.0
            {
                return Err(format!(
                    "the stores to `{name}` follow the blocks along its axes {} and {}, so \
                     the devices' writes cannot be cut into slabs; run it on one device",
                    first.0, cut.0
                ));
            }
            cuts.push(cut);
        }
        let Some(&(tensor_axis, ..)) = cuts.first() else {
            // Written in the IR's flags but by no store here: nothing to
            // gather.
            out.push(Slab {
                param: p,
                axis: 0,
                parts: vec![0..0; ranges.len()],
            });
            continue;
        };
        let parts = intervals(&cuts, extents[tensor_axis], ranges);
        // A tensor read as well as written splits when every device reads
        // only rows it writes itself: then no device reads what another
        // writes, and each is sent its own rows (`read_slabs`).
        if *read {
            let reads = load_cuts(k, p, &|ix| cut_of(ix, bound, axis, &affine));
            let within = reads
                .filter(|r| r.iter().all(|c| c.0 == tensor_axis))
                .is_some_and(|r| {
                    let read = intervals(&r, extents[tensor_axis], ranges);
                    (read.iter().zip(&parts))
                        .all(|(r, w)| r.is_empty() || (w.start <= r.start && r.end <= w.end))
                });
            if !within {
                return Err(format!(
                    "`{name}` is both read and written, and its blocks read rows that are \
                     not their own, so a device could read elements that another writes; \
                     run it on one device"
                ));
            }
        }
        let mut last: Option<(usize, &Range<u64>)> = None;
        for (i, part) in parts.iter().enumerate() {
            if part.is_empty() {
                continue;
            }
            if let Some((j, prev)) = last
                && prev.end > part.start
            {
                return Err(format!(
                    "blocks {:?} and {:?} of ctx.block.{} (devices {j} and {i}) both write \
                     positions {}..{} of axis {tensor_axis} of `{name}`: its blocks write \
                     overlapping slices, so one device's bits cannot be gathered; run it on \
                     one device",
                    ranges[j],
                    ranges[i],
                    ["x", "y", "z"][usize::from(axis)],
                    part.start,
                    prev.end.min(part.end),
                ));
            }
            last = Some((i, part));
        }
        out.push(Slab {
            param: p,
            axis: tensor_axis,
            parts,
        });
    }
    Ok(out)
}

/// A node as an affine form of the block id ([`block_affine`]), with the
/// launch's dims and `let`s seen through.
fn affine_in<'k>(
    k: &'k Kernel,
    bound: &'k Bound,
) -> impl Fn(ExprId) -> Option<([i64; 3], i64)> + 'k {
    let lets: HashMap<LocalId, ExprId> = (k.body.iter())
        .filter_map(|s| match s {
            Stmt::Let { local, value } => Some((*local, *value)),
            Stmt::Var { .. } | Stmt::Store { .. } | Stmt::For { .. } | Stmt::EndFor => None,
        })
        .collect();
    move |x| {
        let konst = |x: ExprId| match k.exprs[x].kind {
            ExprKind::Const(Value::I32(v)) => Some(i64::from(v)),
            ExprKind::DimValue(s) => bound.dims.get(s).map(|&d| d as i64),
            _ => None,
        };
        block_affine(k, x, &konst, &|l| lets.get(&l).copied())
    }
}

/// A slice that follows the blocks of grid axis `axis`: the tensor axis,
/// the stride `s > 0`, the offset `c` and the length of the first index of
/// `index` whose start is `s * ctx.block.axis + c` (no other block axis in
/// it).
type Cut = (usize, i64, i64, u64);

fn cut_of(
    index: &[Index],
    bound: &Bound,
    axis: u8,
    affine: &dyn Fn(ExprId) -> Option<([i64; 3], i64)>,
) -> Option<Cut> {
    index.iter().enumerate().find_map(|(d, ix)| {
        let (start, len) = match ix {
            Index::Range {
                start: Some(s),
                len,
            } => (*s, len.extent(&bound.dims) as u64),
            Index::Single(s) => (*s, 1),
            Index::Range { start: None, .. } => return None,
        };
        let (coef, offset) = affine(start)?;
        let a = usize::from(axis);
        let others_zero = (0..3).all(|b| b == a || coef[b] == 0);
        (coef[a] > 0 && others_zero).then_some((d, coef[a], offset, len))
    })
}

/// For each range of blocks, the positions along the cuts' tensor axis
/// (of extent `extent`) that slices `cuts` of those blocks cover.
fn intervals(cuts: &[Cut], extent: u64, ranges: &[Range<u64>]) -> Vec<Range<u64>> {
    ranges
        .iter()
        .map(|r| {
            if r.is_empty() || cuts.is_empty() {
                return 0..0;
            }
            let (b0, b1) = (r.start as i128, r.end as i128 - 1);
            let lo = (cuts.iter())
                .map(|&(_, s, c, _)| i128::from(s) * b0 + i128::from(c))
                .min()
                .unwrap_or(0);
            let hi = (cuts.iter())
                .map(|&(_, s, c, len)| i128::from(s) * b1 + i128::from(c) + i128::from(len))
                .max()
                .unwrap_or(0);
            let clip = |v: i128| v.clamp(0, i128::from(extent)) as u64;
            clip(lo)..clip(hi).max(clip(lo))
        })
        .collect()
}

/// The slab of every tensor the kernel only reads that each range of
/// blocks reads, where every load of it follows the blocks along one
/// tensor axis (as stores must, [`slabs`]); `None` for a tensor some load
/// reads otherwise (whole, as a weight or a bias is read, or through a
/// loop variable), which every device then receives whole.
pub fn read_slabs(k: &Kernel, bound: &Bound, axis: u8, ranges: &[Range<u64>]) -> Vec<Option<Slab>> {
    let affine = affine_in(k, bound);
    (k.params.iter().enumerate())
        .map(|(p, param)| {
            let ParamKind::Tensor {
                shape,
                read: true,
                written: false,
                ..
            } = &param.kind
            else {
                return None;
            };
            let cuts = load_cuts(k, p, &|ix| {
                cut_of(ix, bound, axis, &affine).filter(|_| ix.len() == shape.len())
            })?;
            let tensor_axis = cuts.first()?.0;
            if cuts.iter().any(|c| c.0 != tensor_axis) {
                return None;
            }
            let extent = shape[tensor_axis].extent(&bound.dims) as u64;
            Some(Slab {
                param: p,
                axis: tensor_axis,
                parts: intervals(&cuts, extent, ranges),
            })
        })
        .collect()
}

/// The cut of every load of parameter `p` (every node of the arena, so
/// none is missed), or `None` when one has none.
fn load_cuts(k: &Kernel, p: usize, cut: &dyn Fn(&[Index]) -> Option<Cut>) -> Option<Vec<Cut>> {
    let mut cuts = Vec::new();
    for e in &k.exprs {
        let ExprKind::Load {
            place: Place::Param(q),
            index,
        } = &e.kind
        else {
            continue;
        };
        if *q == p {
            cuts.push(cut(index)?);
        }
    }
    Some(cuts)
}
