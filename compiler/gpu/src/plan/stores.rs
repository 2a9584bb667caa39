//! Which stores may write 16 bytes at a time: a store whose slice allows
//! groups of 4 consecutive elements (`lower::stmt::quad_slice`) keeps them
//! unless each element computes too many exact divisions for the target
//! (below). Loads use the same test ([`quad_slice`]). The emitter stores such a statement by groups (`quad_store`,
//! or over the kept rows' leaves) where its other conditions hold, and
//! element by element otherwise.

use crate::{GpuOptions, Precision};
use phobos_core::ir::{BinOp, Builtin, ExprId, ExprKind, Index, Kernel, Place, Stmt, analysis};
use phobos_core::types::{Dim, Scalar};

/// The most exact-mode f32 `/` and `sqrt` nodes one element of a store by
/// groups of 4 may compute where `GpuOptions::heavy_groups` is off (modules
/// for WebGPU). Each is a call of a function with a loop
/// (`lower/exact.rs`), and a group holds four copies of its element's value.
/// Chromium's SwiftShader spent 150-190 s creating the pipeline of
/// `examples/random_tile.ph`, whose `randn` has one `/` and one `sqrt` an
/// element, and then dropped the page's WebGPU instance; it takes 3 s for
/// `dropout_rows` (one `/`) and 0.1 s for the same `randn` stored one
/// element at a time (docs/playground.md). Such a store goes element by
/// element instead.
const QUAD_EXACT_CALLS: usize = 1;

/// The plan of one store to a tensor whose slice allows groups of 4.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorePlan {
    /// The statement, by index in the plan's kernel.
    pub stmt: usize,
    /// Whether it may go by groups of 4 with 16-byte stores.
    pub groups: bool,
    /// Why, as `phobosc build --explain` prints it.
    pub why: String,
}

/// The stores of `k` whose slices allow groups of 4, each with its choice.
pub fn plan(k: &Kernel, options: &GpuOptions) -> Vec<StorePlan> {
    let mut out = Vec::new();
    for (stmt, s) in k.body.iter().enumerate() {
        let Stmt::Store {
            place,
            index,
            value,
        } = s
        else {
            continue;
        };
        if !quad_slice(k, *place, index) {
            continue;
        }
        let calls = exact_calls(k, *value, options);
        let (groups, why) = if calls > QUAD_EXACT_CALLS && !options.heavy_groups {
            (
                false,
                format!(
                    "element by element: each element computes {calls} exact `/` or `sqrt`, and \
                     modules for WebGPU keep four copies of them out of one group \
                     (SwiftShader takes minutes to compile that)"
                ),
            )
        } else {
            (true, "by groups of 4 elements, 16-byte stores".to_string())
        };
        out.push(StorePlan { stmt, groups, why });
    }
    out
}

/// The exact-mode f32 `/` and `sqrt` nodes one element of `value` computes
/// (0 in fast mode, and where Tandem draws are stepped: the stepped loop
/// pairs a group with a block of the stream, so such a store keeps its
/// groups).
fn exact_calls(k: &Kernel, value: phobos_core::ir::ExprId, options: &GpuOptions) -> usize {
    if options.precision != Precision::Exact {
        return 0;
    }
    let nodes = k.reachable(value);
    let draws = nodes.iter().any(|&id| {
        matches!(
            k.exprs[id].kind,
            ExprKind::Builtin(Builtin::TandemWord | Builtin::TandemBelowRetry, _)
        )
    });
    if draws {
        return 0;
    }
    nodes
        .iter()
        .filter(|&&id| {
            let e = &k.exprs[id];
            e.ty == Scalar::F32
                && !e.shape.is_empty()
                && matches!(
                    e.kind,
                    ExprKind::Binary(BinOp::Div, ..) | ExprKind::Builtin(Builtin::Sqrt, _)
                )
        })
        .count()
}

/// Whether a store to or load from `place` at `index` goes by groups of 4:
/// `place` is a tensor of a 32-bit type whose rows (last axis) have a
/// constant length that is a multiple of 4, and the slice's last axis is a
/// range of a constant, positive multiple of 4 starting at a multiple of 4
/// (`ir::range::zero_low_bits_at_origin`). Then the 4 elements of a group of the tile (4
/// consecutive positions from a multiple of 4 along the last axis) are
/// consecutive in memory from a flat index that is a multiple of 4, and lie
/// all inside the tensor or all outside.
pub(crate) fn quad_slice(k: &Kernel, place: Place, index: &[Index]) -> bool {
    let Place::Param(i) = place else {
        return false;
    };
    let phobos_core::ir::ParamKind::Tensor { shape, elem, .. } = &k.params[i].kind else {
        return false;
    };
    if !matches!(elem, Scalar::I32 | Scalar::U32 | Scalar::F32) {
        return false;
    }
    let (Some(row), Some(last)) = (shape.last(), index.last()) else {
        return false;
    };
    // A row a multiple of 4 long: constant, or a dim the launch's value
    // shows is (`specialize`, `Kernel::dim_align`).
    let row_quads = match row {
        Dim::Const(row) => row % 4 == 0,
        Dim::Sym(s) => k.dim_multiple(*s).is_multiple_of(4),
    };
    match last {
        Index::Range {
            start,
            len: Dim::Const(len),
        } => {
            row_quads
                && *len > 0
                && len % 4 == 0
                // A start known to be a multiple of 4 (`ir::range`: a slice start
                // has no `iota`, so its value at the origin is its value).
                && start.is_none_or(|s| phobos_core::ir::range::zero_low_bits_at_origin(k, s) >= 2)
                // A row of other ranges: the same positions in every group.
                && index.len() == shape.len()
        }
        _ => false,
    }
}

/// Whether a load node is made once per group of 4 with a 16-byte load in
/// a statement stored by groups: a tile load ([`quad_slice`]) whose last
/// axis is the statement tile's last axis (not broadcast).
pub(crate) fn quad_load(k: &Kernel, id: ExprId) -> bool {
    let e = &k.exprs[id];
    let ExprKind::Load { place, index } = &e.kind else {
        return false;
    };
    matches!(e.shape.last(), Some(&Dim::Const(n)) if n != 1) && quad_slice(k, *place, index)
}

/// Which tensors (by parameter index) some statement stores or loads by
/// groups of 4: they are bound as `array<vec4<T>>` (their element count is
/// a multiple of 4, their rows' length being one), the leaves of
/// reductions the workgroup computes included (`lower/coop_warp.rs`).
pub(crate) fn vec4_tensors(k: &Kernel) -> Vec<bool> {
    let mut quad = vec![false; k.params.len()];
    // The leaves of reductions computed by the workgroup read 4 elements
    // at a time (`coop_warp.rs`), in any statement.
    for s in &k.body {
        let Some(value) = s.value() else { continue };
        for id in k.reachable(value) {
            let ExprKind::Reduce { arg, .. } = k.exprs[id].kind else {
                continue;
            };
            for l in k.reachable(arg) {
                if let ExprKind::Load {
                    place: Place::Param(i),
                    ..
                } = k.exprs[l].kind
                    && quad_load(k, l)
                {
                    quad[i] = true;
                }
            }
        }
    }
    for s in &k.body {
        let Stmt::Store {
            place,
            index,
            value,
        } = s
        else {
            continue;
        };
        let empty = index.iter().any(|i| {
            matches!(
                i,
                Index::Range {
                    len: Dim::Const(0),
                    ..
                }
            )
        });
        if empty || !quad_slice(k, *place, index) || analysis::reads_place(k, *value, *place) {
            continue;
        }
        if let Place::Param(i) = place {
            quad[*i] = true;
        }
        for id in k.reachable(*value) {
            if let ExprKind::Load {
                place: Place::Param(i),
                ..
            } = k.exprs[id].kind
                && quad_load(k, id)
            {
                quad[i] = true;
            }
        }
    }
    quad
}
