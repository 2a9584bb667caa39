//! Spreading a check kernel over a grid of blocks.
//!
//! A check line is an expression over whole tensors, so the checker builds
//! it as a kernel of one block whose statement's tile is the whole check
//! output (`check::check_expr_kernel`). One block is one workgroup on the
//! GPU and one thread on the CPU: on the H200 the two checks of the 3 GiB
//! `dropout_rows` took 4.3 s on one multiprocessor of 132, and lavapipe,
//! which runs at most 65,535 iterations of an invocation's loop, counted
//! too few elements past about 67M.
//!
//! [`spread`] rewrites such a kernel into one of `cdiv(E0, R)` blocks,
//! block `b` taking rows `b * R :+ R` of the output's first axis (extent
//! `E0`): every node of the output's rank whose first extent is `E0` (the
//! nodes that run along that axis, since shapes broadcast from the right)
//! takes extent `R` instead, and the loads among them start `b * R`
//! further along that axis. Every
//! element is computed from the same operand elements as before, so its
//! value (and its bits) is unchanged; the last block's rows past `E0` are
//! outside the output, and a store writes only the elements inside its
//! destination. A kernel this cannot be said of is left as it is: one
//! that reduces along the first axis, or has any statement besides its
//! store (a reduction the checker moved into a `let`).

use crate::ir::{BinOp, Expr, ExprId, ExprKind, GridExpr, IdVec, Index, Kernel, Place, Stmt};
use crate::types::{Dim, Scalar, Value};

/// The elements a block of a spread check aims at: enough to keep an
/// invocation busy for a few iterations on a GPU and to make a block worth
/// a thread on the CPU, few enough that a grid of them fills either.
const BLOCK_ELEMENTS: u64 = 4096;

/// `k` spread over blocks of rows of its output, as the module doc says;
/// `k` itself where it cannot be, or where one block already covers it.
pub fn spread(k: Kernel) -> Kernel {
    let [
        Stmt::Store {
            place: Place::Param(out),
            index,
            value,
        },
    ] = k.body.as_slice()
    else {
        return k;
    };
    let (out, value) = (*out, *value);
    let shape: Vec<Dim> = index
        .iter()
        .filter_map(|i| match i {
            Index::Range { start: None, len } => Some(*len),
            _ => None,
        })
        .collect();
    if shape.is_empty() || shape.len() != index.len() {
        return k;
    }
    let rank = shape.len();
    let e0 = shape[0];
    let inner = shape[1..].iter().try_fold(1u64, |n, d| match d {
        Dim::Const(v) => n.checked_mul(*v),
        Dim::Sym(_) => None,
    });
    // Rows a block: a power of two, so that rows of constant extent tile
    // evenly; one row where the rows' extent is only known at launch.
    let rows = match inner {
        Some(n) if n > 0 => {
            let want = (BLOCK_ELEMENTS / n).max(1);
            1u64 << (63 - want.leading_zeros())
        }
        _ => 1,
    };
    if matches!(e0, Dim::Const(n) if n <= rows) {
        return k;
    }
    let along = |e: &Expr| e.shape.len() == rank && e.shape[0] == e0;
    // Every node, reachable or not, so that the arena stays well typed.
    // Every kind is named, so that a new one is decided here.
    for e in &k.exprs {
        let keeps_one_block = match &e.kind {
            ExprKind::Reduce { axis, arg, .. } => *axis == 0 && along(&k.exprs[*arg]),
            // A product or transpose reads other rows than its own.
            ExprKind::Dot { .. } | ExprKind::Transpose(_) => true,
            // The checker refuses `iota` and `ctx` in checks; were they
            // allowed, their positions would be the block's.
            ExprKind::Iota(_)
            | ExprKind::BlockId(_)
            | ExprKind::GridSize(_)
            | ExprKind::Local(_) => true,
            ExprKind::Const(_)
            | ExprKind::Param(_)
            | ExprKind::DimValue(_)
            | ExprKind::Load { .. }
            | ExprKind::Unary(..)
            | ExprKind::Binary(..)
            | ExprKind::Cast(_)
            | ExprKind::Bitcast(_)
            | ExprKind::Select(..)
            | ExprKind::Builtin(..) => false,
        };
        if keeps_one_block {
            return k;
        }
    }

    let mut s = Kernel {
        exprs: IdVec::with_capacity(k.exprs.len() + 8),
        body: Vec::new(),
        ..k.clone()
    };
    let scalar = |kind, ty| Expr {
        kind,
        ty,
        shape: Vec::new(),
    };
    let block = push(&mut s, scalar(ExprKind::BlockId(0), Scalar::I32));
    let r = push(
        &mut s,
        scalar(ExprKind::Const(Value::I32(rows as i32)), Scalar::I32),
    );
    let first = push(
        &mut s,
        scalar(ExprKind::Binary(BinOp::Mul, block, r), Scalar::I32),
    );
    let mut map: IdVec<ExprId, ExprId> = IdVec::with_capacity(k.exprs.len());
    for e in &k.exprs {
        let m = |x: &ExprId| map[*x];
        let split = along(e);
        let mut shape = e.shape.clone();
        if split {
            shape[0] = Dim::Const(rows);
        }
        let kind = match &e.kind {
            ExprKind::Load { place, index } => {
                let mut index: Vec<Index> = index
                    .iter()
                    .map(|i| match i {
                        Index::Range { start, len } => Index::Range {
                            start: start.as_ref().map(m),
                            len: *len,
                        },
                        Index::Single(x) => Index::Single(m(x)),
                    })
                    .collect();
                if split {
                    let axis = index
                        .iter()
                        .position(|i| matches!(i, Index::Range { .. }))
                        .expect("a load with axes has a range");
                    let Index::Range { start, .. } = index[axis] else {
                        unreachable!("found as a range")
                    };
                    let start = match start {
                        None => first,
                        Some(at) => {
                            let ty = s.exprs[at].ty;
                            let first = if ty == Scalar::I32 {
                                first
                            } else {
                                push(&mut s, scalar(ExprKind::Cast(first), ty))
                            };
                            push(&mut s, scalar(ExprKind::Binary(BinOp::Add, at, first), ty))
                        }
                    };
                    index[axis] = Index::Range {
                        start: Some(start),
                        len: Dim::Const(rows),
                    };
                }
                ExprKind::Load {
                    place: *place,
                    index,
                }
            }
            ExprKind::Unary(op, a) => ExprKind::Unary(*op, m(a)),
            ExprKind::Binary(op, a, b) => ExprKind::Binary(*op, m(a), m(b)),
            ExprKind::Cast(a) => ExprKind::Cast(m(a)),
            ExprKind::Bitcast(a) => ExprKind::Bitcast(m(a)),
            ExprKind::Select(c, a, b) => ExprKind::Select(m(c), m(a), m(b)),
            ExprKind::Builtin(b, xs) => ExprKind::Builtin(*b, xs.iter().map(m).collect()),
            ExprKind::Reduce { op, arg, axis } => ExprKind::Reduce {
                op: *op,
                arg: m(arg),
                axis: *axis,
            },
            leaf => leaf.clone(),
        };
        let new = push(
            &mut s,
            Expr {
                kind,
                ty: e.ty,
                shape,
            },
        );
        map.push(new);
    }
    let mut index = vec![Index::Range {
        start: Some(first),
        len: Dim::Const(rows),
    }];
    index.extend(shape[1..].iter().map(|d| Index::Range {
        start: None,
        len: *d,
    }));
    s.body = vec![Stmt::Store {
        place: Place::Param(out),
        index,
        value: map[value],
    }];
    let extent = match e0 {
        Dim::Const(n) => GridExpr::Const(n as i64),
        Dim::Sym(d) => GridExpr::Dim(d),
    };
    s.grid = [
        GridExpr::Cdiv(Box::new(extent), Box::new(GridExpr::Const(rows as i64))),
        GridExpr::Const(1),
        GridExpr::Const(1),
    ];
    s
}

fn push(k: &mut Kernel, e: Expr) -> ExprId {
    k.exprs.push(e)
}
