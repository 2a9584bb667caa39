//! The grid: how many blocks a launch has along x, y and z.
//!
//! `@grid(...)` gives it. Otherwise it is inferred from block-indexed stores:
//! `Y[ctx.block.x * R :+ R, :]` on an axis of extent `M` tiles that axis with
//! `cdiv(M, R)` blocks. An axis whose `ctx.block` is never used has one block.

use super::check::Checker;
use crate::diag::{Diagnostic, code};
use crate::ir::{ExprId, GridExpr, Index, Place, Stmt};
use crate::span::Span;
use crate::syntax::ast::{self, AnnArg, BinOp, ExprKind as AK};
use crate::types::Dim;

pub fn set_grid(c: &mut Checker<'_>, def: &ast::KernelDef) {
    if let Some(a) = def.annotations.iter().find(|a| a.name.name == "grid") {
        explicit(c, a);
        return;
    }
    let mut found: [Option<GridExpr>; 3] = [None, None, None];
    let stores: Vec<(usize, Vec<Index>)> =
        c.k.body
            .iter()
            .filter_map(|s| match s {
                Stmt::Store {
                    place: Place::Param(p),
                    index,
                    ..
                } => Some((*p, index.clone())),
                _ => None,
            })
            .collect();
    for (param, index) in stores {
        let dims = c.place_shape(Place::Param(param));
        for (k, ix) in index.iter().enumerate() {
            let Index::Range {
                start: Some(start),
                len: Dim::Const(len),
            } = ix
            else {
                continue;
            };
            let Some((coef, offset)) = affine(c, *start) else {
                continue;
            };
            let axes: Vec<usize> = (0..3).filter(|a| coef[*a] != 0).collect();
            let [axis] = axes[..] else { continue };
            if coef[axis] != *len as i64 || offset != 0 {
                continue;
            }
            let extent = match dims[k] {
                Dim::Const(v) => GridExpr::Const(v as i64),
                Dim::Sym(s) => GridExpr::Dim(s),
            };
            let g = GridExpr::Cdiv(Box::new(extent), Box::new(GridExpr::Const(*len as i64)));
            match &found[axis] {
                Some(prev) if *prev != g => {
                    let span = c.block_uses[axis].unwrap_or(def.name.span);
                    let (a, b) = (prev.display(&c.k.dims), g.display(&c.k.dims));
                    c.error(
                        Diagnostic::error(
                            code::GRID_NOT_INFERRED,
                            format!(
                                "the stores disagree on the number of blocks along {}",
                                axis_name(axis)
                            ),
                        )
                        .label(span, format!("one store needs {a} blocks, another {b}"))
                        .help(format!("say which with @grid(...), e.g. @grid({a})")),
                    );
                    return;
                }
                _ => found[axis] = Some(g),
            }
        }
    }
    for (axis, g) in found.iter().enumerate() {
        match (g, c.block_uses[axis]) {
            (Some(g), _) => c.k.grid[axis] = g.clone(),
            // Earlier errors may have dropped the store that gives the grid.
            (None, Some(_)) if !c.diags.is_empty() => {}
            (None, Some(span)) => {
                c.error(
                    Diagnostic::error(code::GRID_NOT_INFERRED, format!("cannot infer the number of blocks along {}", axis_name(axis)))
                        .label(span, format!("ctx.block.{} is used here", axis_name(axis)))
                        .note("the grid is inferred from a store whose slice starts at ctx.block.x * n with length n")
                        .help("give the grid before the kernel, e.g. @grid(cdiv(M, 16))"),
                );
            }
            (None, None) => {}
        }
    }
}

fn axis_name(a: usize) -> &'static str {
    ["x", "y", "z"][a]
}

/// `start` as `coef . block + offset`, when it is affine in the block index.
fn affine(c: &Checker<'_>, id: ExprId) -> Option<([i64; 3], i64)> {
    crate::ir::analysis::block_affine(&c.k, id, &|x| i64::try_from(c.const_value(x)?).ok(), &|l| {
        c.let_values.get(&l).copied()
    })
}

fn explicit(c: &mut Checker<'_>, a: &ast::Annotation) {
    if a.args.is_empty() || a.args.len() > 3 {
        c.error(
            Diagnostic::error(code::ANNOTATION, "@grid takes one to three extents")
                .label(a.span, "give the number of blocks along x, then y and z")
                .help("for example @grid(cdiv(M, R))"),
        );
        return;
    }
    for (axis, arg) in a.args.iter().enumerate() {
        let AnnArg::Expr(e) = arg else {
            c.error(
                Diagnostic::error(code::ANNOTATION, "@grid takes extents, not choices")
                    .label(a.span, "expected an expression such as cdiv(M, R)")
                    .help("choices belong in @autotune"),
            );
            return;
        };
        if let Some(g) = grid_expr(c, e) {
            c.k.grid[axis] = g;
        }
    }
}

fn grid_expr(c: &mut Checker<'_>, e: &ast::Expr) -> Option<GridExpr> {
    let bin = |c: &mut Checker<'_>, a: &ast::Expr, b: &ast::Expr| {
        Some((Box::new(grid_expr(c, a)?), Box::new(grid_expr(c, b)?)))
    };
    match &e.kind {
        AK::Binary(op, a, b) => {
            let (a, b) = bin(c, a, b)?;
            match op {
                BinOp::Add => Some(GridExpr::Add(a, b)),
                BinOp::Sub => Some(GridExpr::Sub(a, b)),
                BinOp::Mul => Some(GridExpr::Mul(a, b)),
                BinOp::Div => Some(GridExpr::Div(a, b)),
                _ => not_grid(c, e.span),
            }
        }
        AK::Call(f, args) if f.name == "cdiv" && args.len() == 2 => {
            let (a, b) = bin(c, &args[0], &args[1])?;
            Some(GridExpr::Cdiv(a, b))
        }
        _ => match c.const_dim(e)? {
            Dim::Const(v) => Some(GridExpr::Const(v as i64)),
            Dim::Sym(s) => Some(GridExpr::Dim(s)),
        },
    }
}

fn not_grid(c: &mut Checker<'_>, span: Span) -> Option<GridExpr> {
    c.error(
        Diagnostic::error(code::ANNOTATION, "not a grid extent")
            .label(
                span,
                "only + - * / and cdiv(a, b) of dims and constants are allowed",
            )
            .help("for example @grid(cdiv(M, R))"),
    );
    None
}
