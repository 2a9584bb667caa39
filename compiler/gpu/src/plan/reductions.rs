//! The reductions' geometry: for every reduction of the plan's kernel that
//! the workgroup computes ahead of its statement (`lower/coop_reduce.rs`),
//! how its rows are spread over the block's invocations, and whether its
//! levels below a subgroup go through subgroup shuffles with one barrier
//! above them (`lower/coop_warp.rs`) or through workgroup memory.
//!
//! A reduction qualifies where its shape is constant, its elements are 32
//! bits, and its result has at most half as many elements (rows) as the
//! block has invocations. Each row then gets `T` invocations (a power of
//! two, at most the block's share of a row and at most the row's length
//! rounded up), and invocation `t` reduces the block of `B` elements
//! starting at `t B` in its registers, `T B >= L`. The others keep the
//! loop per element (`lower/reduce.rs`). The emitter may still take that
//! loop where the arrays a qualifying reduction needs do not fit in what
//! the statements before it left of the workgroup memory; its notes say
//! so.

use crate::GpuOptions;
use phobos_core::ir::{ExprId, ExprKind, Kernel, ReduceOp};
use phobos_core::types::Scalar;

/// The elements a lane reduces in its registers for one segment of the
/// subgroup path.
pub const LEAF: u32 = 4;

/// How a reduction's levels combine across invocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Levels {
    /// Every lane reduces `B / LEAF` segments of `LEAF` elements, a
    /// butterfly of subgroup shuffles pairs them, and the subgroups of a
    /// row meet through one barrier.
    Subgroups,
    /// Subgroup shuffles for the levels below the subgroup width where the
    /// block's subgroups allow, workgroup memory with a barrier a level
    /// above (and for all of them where they do not).
    Workgroup,
}

/// How one reduction is spread over the block (module doc).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Reduction {
    /// The reduction's node in the plan's kernel.
    #[serde(skip)]
    pub expr: ExprId,
    #[serde(skip)]
    pub op: ReduceOp,
    /// Its operand, the tile reduced.
    #[serde(skip)]
    pub arg: ExprId,
    pub axis: usize,
    #[serde(skip)]
    pub elem: Scalar,
    /// The reduced length `L`.
    pub len: u32,
    /// The result's extents (the reduced axis 1).
    pub ext_out: Vec<u32>,
    /// Rows: elements of the result.
    pub rows: u32,
    /// Invocations a row, `T`.
    pub per_row: u32,
    /// Elements an invocation reduces in registers, `B`.
    pub block: u32,
    pub levels: Levels,
}

/// Whether reductions of a kernel lowered with `block_invocations`
/// invocations a block (`packed` blocks a workgroup) may take their levels
/// through subgroups of `options.subgroup_width`: every subgroup then lies
/// in one block. Where the device's layout is not known, the block checks
/// it at its start (`Lower::subgroup_check`) and takes workgroup memory
/// where it differs, with the same bits.
pub fn subgroups(
    kernel: &Kernel,
    options: &GpuOptions,
    block_invocations: u32,
    packed: u32,
) -> bool {
    let g = options.subgroup_width;
    g >= 2
        && block_invocations.is_multiple_of(g)
        && packed == 1
        && kernel
            .exprs
            .iter()
            .any(|e| matches!(e.kind, ExprKind::Reduce { .. }))
}

/// The geometry of every qualifying reduction of `kernel`, in node order;
/// `subgroups`: whether they may take subgroup levels ([`subgroups`], and
/// room for the block's check of them).
pub fn plan(
    kernel: &Kernel,
    options: &GpuOptions,
    block_invocations: u32,
    subgroups: bool,
) -> Vec<Reduction> {
    kernel
        .exprs
        .iter_enumerated()
        .filter_map(|(id, _)| geometry(kernel, id, block_invocations))
        .map(|mut r| {
            if subgroups && warp_shaped(&r, options.subgroup_width) {
                r.levels = Levels::Subgroups;
            }
            r
        })
        .collect()
}

/// Whether a row has whole subgroups of `g` lanes, and each lane's block
/// holds at least two leaves and at most `g` of them.
fn warp_shaped(r: &Reduction, g: u32) -> bool {
    g > 1 && r.per_row >= g && r.block >= 2 * LEAF && r.block / LEAF <= g
}

/// How reduction `id` is spread over `w` invocations, or `None` where it
/// keeps the loop per element.
fn geometry(k: &Kernel, id: ExprId, w: u32) -> Option<Reduction> {
    let ExprKind::Reduce { op, arg, axis } = k.exprs[id].kind else {
        return None;
    };
    let axis = axis as usize;
    let elem = k.exprs[arg].ty;
    let ext_in = super::rows::const_shape(&k.exprs[arg].shape)?;
    let ext_out = super::rows::const_shape(&k.exprs[id].shape)?;
    let len = ext_in[axis];
    let rows: u32 = ext_out.iter().product();
    if !matches!(elem, Scalar::I32 | Scalar::U32 | Scalar::F32)
        || len < 2
        || rows == 0
        || rows.checked_mul(2).is_none_or(|r| r > w)
    {
        return None;
    }
    let most = prev_pow2(w / rows);
    let per_row_max = most.min(len.next_power_of_two());
    let block = len.div_ceil(per_row_max).next_power_of_two();
    let per_row = len.div_ceil(block).next_power_of_two();
    if per_row < 2 {
        return None;
    }
    Some(Reduction {
        expr: id,
        op,
        arg,
        axis,
        elem,
        len,
        ext_out,
        rows,
        per_row,
        block,
        levels: Levels::Workgroup,
    })
}

/// The largest power of two at most `n` (1 for 0).
fn prev_pow2(n: u32) -> u32 {
    if n == 0 {
        1
    } else {
        1 << (31 - n.leading_zeros())
    }
}
