//! One device's part of a split launch, as a kernel of its own for the GPU.
//!
//! The GPU backend numbers a launch's blocks from 0 (`ctx.block`), reads
//! the grid's extents (`ctx.grid`) from the launch, and binds each tensor
//! whole. A device that runs blocks `first .. first + count` of grid axis
//! `a` runs [`part_kernel`]: the same kernel with
//!
//! - `ctx.block.a` replaced by `ctx.block.a + first`, `ctx.grid.a` by the
//!   whole grid's extent, and a grid of `count` blocks along `a`;
//! - each dim that only cut axes of tensors have replaced by its value in
//!   the whole launch, so that it keeps its value; the other dims stay
//!   symbolic, bound as before, so that a part differs from the kernel in
//!   no more than it must;
//! - each tensor of [`Slice`] cut to the slab the device's blocks read or
//!   write (positions `lo .. lo + extent` along one axis): its extent
//!   there is the slab's, and every load and store of it starts `lo`
//!   earlier along that axis.
//!
//! Every block then computes, from the same values, what block `first + b`
//! computes in the whole launch, so the bits are the same: positions and
//! counters are computed as before, and only the address of an element of
//! a cut tensor moves. A load or store outside the slab happens only
//! outside the whole tensor too (the slab holds every position the blocks
//! reach inside it, `writes.rs`), where it reads 0 or writes nothing either
//! way. The CPU backend needs no rewriting: `phobos_cpu::run_blocks` runs a
//! range of the grid over the host's tensors.

use phobos_core::ir::{
    BinOp, Expr, ExprId, ExprKind, GridExpr, IdVec, Index, Kernel, ParamKind, Place, Stmt,
};
use phobos_core::types::{Dim, Scalar, Value};
use std::collections::HashMap;

/// A tensor parameter a device holds only a slab of: positions
/// `lo .. lo + extent` along tensor axis `axis`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    pub param: usize,
    pub axis: usize,
    pub lo: u64,
    pub extent: u64,
}

/// `k` running blocks `first .. first + count` of grid axis `axis` of a
/// grid whose extent along it is `whole`, numbered from 0, with the
/// launch's `dims` and the tensors of `slices` cut (module doc).
pub fn part_kernel(
    k: &Kernel,
    axis: u8,
    (first, count, whole): (u64, u64, u64),
    dims: &[u64],
    slices: &[Slice],
) -> Kernel {
    let mut out = Kernel {
        exprs: IdVec::with_capacity(k.exprs.len() + 4),
        body: Vec::with_capacity(k.body.len()),
        ..k.clone()
    };
    // The dims some tensor axis that is not cut still binds.
    let mut bound = vec![false; k.dims.len()];
    for (p, param) in k.params.iter().enumerate() {
        if let ParamKind::Tensor { shape, .. } = &param.kind {
            for (d, e) in shape.iter().enumerate() {
                if let Dim::Sym(s) = e
                    && !slices.iter().any(|c| c.param == p && c.axis == d)
                {
                    bound[*s] = true;
                }
            }
        }
    }
    let konst = |d: Dim| match d {
        Dim::Sym(s) if !bound[s] => Dim::Const(dims[s]),
        d => d,
    };
    // The grid is this launch's (a formula of a dim made constant would
    // no longer evaluate).
    for (a, g) in out.grid.iter_mut().enumerate() {
        let n = if a == usize::from(axis) {
            Some(count as i64)
        } else {
            g.eval(dims)
        };
        if let Some(n) = n {
            *g = GridExpr::Const(n);
        }
    }
    for (p, param) in out.params.iter_mut().enumerate() {
        if let ParamKind::Tensor { shape, .. } = &mut param.kind {
            for (d, e) in shape.iter_mut().enumerate() {
                *e = match slices.iter().find(|s| s.param == p && s.axis == d) {
                    Some(s) => Dim::Const(s.extent),
                    None => konst(*e),
                };
            }
        }
    }
    for l in k.locals.ids() {
        if let Some(local) = out.locals.get_mut(l) {
            local.shape = local.shape.iter().map(|d| konst(*d)).collect();
        }
    }
    let scalar = |kind| Expr {
        kind,
        ty: Scalar::I32,
        shape: Vec::new(),
    };
    // The starts of stores on a cut axis, moved right after the start is
    // (a store's slice must come before its value in the arena).
    let mut store_starts: HashMap<ExprId, Vec<u64>> = HashMap::new();
    for st in &k.body {
        if let Stmt::Store {
            place: Place::Param(p),
            index,
            ..
        } = st
            && let Some(c) = slices.iter().find(|c| c.param == *p && c.lo > 0)
            && let Some(start) = index.get(c.axis).and_then(Index::expr)
        {
            store_starts.entry(start).or_default().push(c.lo);
        }
    }
    let mut moved: HashMap<(ExprId, u64), ExprId> = HashMap::new();
    let mut map: IdVec<ExprId, ExprId> = IdVec::with_capacity(k.exprs.len());
    for (id, e) in k.exprs.iter_enumerated() {
        let shape = e.shape.iter().map(|d| konst(*d)).collect();
        let new = match &e.kind {
            // Each replacement where its node was, so that the arena keeps
            // its order (operands before users, a store's slice before its
            // value).
            ExprKind::BlockId(a) if *a == axis => {
                let block = out.exprs.push(scalar(ExprKind::BlockId(axis)));
                let offset = out
                    .exprs
                    .push(scalar(ExprKind::Const(Value::I32(first as i32))));
                out.exprs
                    .push(scalar(ExprKind::Binary(BinOp::Add, block, offset)))
            }
            ExprKind::GridSize(a) if *a == axis => out
                .exprs
                .push(scalar(ExprKind::Const(Value::I32(whole as i32)))),
            ExprKind::DimValue(s) if !bound[*s] => out.exprs.push(Expr {
                kind: ExprKind::Const(Value::I32(dims[*s] as i32)),
                ty: e.ty,
                shape,
            }),
            ExprKind::Load { place, index } => {
                let index = cut(&mut out, *place, index, &map, slices, &konst, None);
                out.exprs.push(Expr {
                    kind: ExprKind::Load {
                        place: *place,
                        index,
                    },
                    ty: e.ty,
                    shape,
                })
            }
            kind => {
                let kind = kind.map_operands(|x| map[x]);
                out.exprs.push(Expr {
                    kind,
                    ty: e.ty,
                    shape,
                })
            }
        };
        map.push(new);
        for &lo in store_starts.get(&id).into_iter().flatten() {
            let at = shift(&mut out, new, lo);
            moved.insert((id, lo), at);
        }
    }
    let mut body = Vec::with_capacity(k.body.len());
    for s in &k.body {
        body.push(match s {
            Stmt::Let { local, value } => Stmt::Let {
                local: *local,
                value: map[*value],
            },
            Stmt::Var { local, value } => Stmt::Var {
                local: *local,
                value: map[*value],
            },
            Stmt::Store {
                place,
                index,
                value,
            } => Stmt::Store {
                place: *place,
                index: cut(&mut out, *place, index, &map, slices, &konst, Some(&moved)),
                value: map[*value],
            },
            Stmt::For { local, start, end } => Stmt::For {
                local: *local,
                start: map[*start],
                end: map[*end],
            },
            Stmt::EndFor => Stmt::EndFor,
        });
    }
    out.body = body;
    out
}

/// A new node `at - lo`.
fn shift(out: &mut Kernel, at: ExprId, lo: u64) -> ExprId {
    let lo = out.exprs.push(Expr {
        kind: ExprKind::Const(Value::I32(lo as i32)),
        ty: Scalar::I32,
        shape: Vec::new(),
    });
    out.exprs.push(Expr {
        kind: ExprKind::Binary(BinOp::Sub, at, lo),
        ty: Scalar::I32,
        shape: Vec::new(),
    })
}

/// `index` (of the original arena) in the new one: operands mapped, lengths
/// of the dims made constant made so (`konst`), and on the cut axis of a
/// sliced tensor the start moved `lo` earlier: a new node (the start may
/// have other uses), for a store the one made right after its start
/// (`stored`).
fn cut(
    out: &mut Kernel,
    place: Place,
    index: &[Index],
    map: &IdVec<ExprId, ExprId>,
    slices: &[Slice],
    konst: &dyn Fn(Dim) -> Dim,
    stored: Option<&HashMap<(ExprId, u64), ExprId>>,
) -> Vec<Index> {
    let slice = match place {
        Place::Param(p) => slices.iter().find(|s| s.param == p),
        Place::Local(_) => None,
    };
    let mut moved = |at: ExprId, d: usize| -> ExprId {
        match (slice, stored) {
            (Some(s), Some(stored)) if s.axis == d && s.lo > 0 => stored[&(at, s.lo)],
            (Some(s), None) if s.axis == d && s.lo > 0 => shift(out, map[at], s.lo),
            _ => map[at],
        }
    };
    index
        .iter()
        .enumerate()
        .map(|(d, i)| match i {
            Index::Range { start, len } => Index::Range {
                start: start.map(|s| moved(s, d)),
                len: konst(*len),
            },
            Index::Single(x) => Index::Single(moved(*x, d)),
        })
        .collect()
}
