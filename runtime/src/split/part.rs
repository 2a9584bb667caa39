//! One device's part of a split launch, as a kernel of its own for the GPU.
//!
//! The GPU backend numbers a launch's blocks from 0 (`ctx.block`) and reads
//! the grid's extents (`ctx.grid`) from the launch. A device that runs
//! blocks `first .. first + count` of grid axis `a` runs [`part_kernel`]:
//! the same kernel with `ctx.block.a` replaced by `ctx.block.a + first`,
//! `ctx.grid.a` by the whole grid's extent, and a grid of `count` blocks
//! along `a`. Every block then computes, from the same values, what block
//! `first + b` computes in the whole launch, so the bits are the same; the
//! tensors keep their shapes, so positions and counters do too. The CPU
//! backend needs no rewriting: `phobos_cpu::run_blocks` runs a range of
//! the grid directly.

use phobos_core::ir::{BinOp, Expr, ExprId, ExprKind, GridExpr, IdVec, Index, Kernel, Stmt};
use phobos_core::types::{Scalar, Value};

/// `k` running blocks `first .. first + count` of grid axis `axis` of a
/// grid whose extent along it is `whole`, numbered from 0 (module doc).
pub fn part_kernel(k: &Kernel, axis: u8, first: u64, count: u64, whole: u64) -> Kernel {
    let mut out = Kernel {
        exprs: IdVec::with_capacity(k.exprs.len() + 4),
        body: Vec::with_capacity(k.body.len()),
        ..k.clone()
    };
    out.grid[usize::from(axis)] = GridExpr::Const(count as i64);
    let scalar = |kind| Expr {
        kind,
        ty: Scalar::I32,
        shape: Vec::new(),
    };
    // The replacements come first, so that the arena stays in topological
    // order (every operand before its users).
    let block = out.exprs.push(scalar(ExprKind::BlockId(axis)));
    let offset = out
        .exprs
        .push(scalar(ExprKind::Const(Value::I32(first as i32))));
    let shifted = out
        .exprs
        .push(scalar(ExprKind::Binary(BinOp::Add, block, offset)));
    let grid = out
        .exprs
        .push(scalar(ExprKind::Const(Value::I32(whole as i32))));
    let mut map: IdVec<ExprId, ExprId> = IdVec::with_capacity(k.exprs.len());
    for e in &k.exprs {
        let new = match e.kind {
            ExprKind::BlockId(a) if a == axis => shifted,
            ExprKind::GridSize(a) if a == axis => grid,
            ref kind => {
                let kind = kind.map_operands(|x| map[x]);
                out.exprs.push(Expr {
                    kind,
                    ty: e.ty,
                    shape: e.shape.clone(),
                })
            }
        };
        map.push(new);
    }
    out.body = k
        .body
        .iter()
        .map(|s| match s {
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
                index: remap_index(index, &map),
                value: map[*value],
            },
            Stmt::For { local, start, end } => Stmt::For {
                local: *local,
                start: map[*start],
                end: map[*end],
            },
            Stmt::EndFor => Stmt::EndFor,
        })
        .collect();
    out
}

fn remap_index(index: &[Index], map: &IdVec<ExprId, ExprId>) -> Vec<Index> {
    index
        .iter()
        .map(|i| match i {
            Index::Range { start, len } => Index::Range {
                start: start.map(|s| map[s]),
                len: *len,
            },
            Index::Single(x) => Index::Single(map[*x]),
        })
        .collect()
}
