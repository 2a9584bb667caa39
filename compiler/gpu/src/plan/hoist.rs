//! Values that are uniform along a statement's rows, computed once per row.
//!
//! A statement over `[R, N]` that divides by a row's sum (`e * (1.0 /
//! s)`, layer norm's `x - sum(x, axis = 1) / f32(N)`) holds a node of
//! shape `[R, 1]` whose value is the same at every position of its row.
//! Left in place, the lowering computes it at every element: an exact
//! division (tens of operations) per element instead of per row. The plan
//! moves each such node that costs something (a division, a remainder or a
//! builtin below it) into a `let` of its own shape before the statement,
//! as the examples spell it by hand (`let inv = 1.0 / sum(...)`): the
//! workgroup computes it once per row, and the statement reads it. The
//! node is the same node, evaluated at the same positions of its own
//! shape, so the bits do not change.
//!
//! A reduction's operand is evaluated over its own shape, so below a
//! reduction the same holds of nodes uniform along the operand's rows.
//! Not moved: nodes with `iota` or a reduction below (a position of the
//! statement's tile; a reduction is computed ahead already), nodes that
//! read what the statement writes, and nodes whose shape is not constant
//! or is larger than [`HOIST_BYTES`].

use phobos_core::ir::{
    BinOp, Expr, ExprId, ExprKind, IdVec, Kernel, Local, LocalKind, Stmt, analysis,
};
use phobos_core::types::{Dim, Shape};

/// The largest value moved into a `let` (as `sema::reduce`'s hoisted
/// reductions): 1 KiB, 256 rows of f32.
pub const HOIST_BYTES: u64 = 1024;

/// One value moved out of a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hoisted {
    /// The `let` it became (`_row0`, ...).
    pub name: String,
    /// Its type as the source writes it (`f32[4, 1]`).
    pub ty: String,
    /// The statement it was moved out of (index in the input kernel's
    /// body, after inlining).
    pub stmt: usize,
}

/// `k` with every costly row-uniform node of a statement moved into a
/// `let` before it, and what was moved.
pub fn hoist(k: &Kernel) -> (Kernel, Vec<Hoisted>) {
    let mut out = k.clone();
    let mut body = Vec::new();
    let mut moved = Vec::new();
    // Nodes already moved, and the node that reads their local: a later
    // statement reads the same local while nothing the node reads has been
    // written and no loop bracket lies between.
    let mut live: std::collections::HashMap<ExprId, ExprId> = std::collections::HashMap::new();
    for (n, s) in k.body.iter().enumerate() {
        let (Some(tile), Some(value)) = (analysis::stmt_tile(k, s), s.value()) else {
            live.clear();
            body.push(s.clone());
            continue;
        };
        let writes = analysis::access(k, s).writes;
        let mut found = Vec::new();
        let mut seen = IdVec::<ExprId, bool>::from_elem(false, k.exprs.len());
        candidates(k, value, &tile, &writes, &mut seen, &mut found);
        if found.is_empty() {
            live.retain(|&id, _| !analysis::reads(k, id).iter().any(|p| writes.contains(p)));
            body.push(s.clone());
            continue;
        }
        // The node becomes the `let`'s value; this statement (only: the
        // node may be shared with others) reads the local instead, through
        // copies of the nodes above it, appended after it so that the
        // arena stays in topological order.
        let mut to = std::collections::HashMap::new();
        for id in found {
            if let Some(&read) = live.get(&id) {
                to.insert(id, read);
                continue;
            }
            let e = &k.exprs[id];
            let name = format!("_row{}", moved.len());
            let local = out.locals.push(Local {
                name: name.clone(),
                kind: LocalKind::Let,
                elem: e.ty,
                shape: e.shape.clone(),
                span: None,
            });
            let read = out.exprs.push(Expr {
                kind: ExprKind::Local(local),
                ty: e.ty,
                shape: e.shape.clone(),
            });
            to.insert(id, read);
            live.insert(id, read);
            body.push(Stmt::Let { local, value: id });
            moved.push(Hoisted {
                name,
                ty: format!("{}{}", e.ty, k.shape_text(&e.shape)),
                stmt: n,
            });
        }
        let mut memo = std::collections::HashMap::new();
        let value = rewrite(&mut out, value, &to, &mut memo);
        let mut s = s.clone();
        match &mut s {
            Stmt::Let { value: v, .. }
            | Stmt::Var { value: v, .. }
            | Stmt::Store { value: v, .. } => *v = value,
            Stmt::For { .. } | Stmt::EndFor => unreachable!("loop brackets have no value"),
        }
        body.push(s);
        live.retain(|&id, _| !analysis::reads(k, id).iter().any(|p| writes.contains(p)));
    }
    out.body = body;
    (out, moved)
}

/// `id` with every node in `to` replaced, copying the nodes above a
/// replaced one (appended, so operands precede them); `id` itself where
/// nothing below it is replaced.
fn rewrite(
    k: &mut Kernel,
    id: ExprId,
    to: &std::collections::HashMap<ExprId, ExprId>,
    memo: &mut std::collections::HashMap<ExprId, ExprId>,
) -> ExprId {
    if let Some(&r) = to.get(&id).or_else(|| memo.get(&id)) {
        return r;
    }
    let e = k.exprs[id].clone();
    let mut changed = false;
    let mut ops = Vec::new();
    for x in e.kind.operands() {
        let y = rewrite(k, x, to, memo);
        changed |= y != x;
        ops.push(y);
    }
    let out = if changed {
        let mut next = ops.into_iter();
        let kind = e
            .kind
            .map_operands(|_| next.next().expect("one per operand"));
        k.exprs.push(Expr { kind, ..e })
    } else {
        id
    };
    memo.insert(id, out);
    out
}

/// The largest costly nodes under `root` (not below a reduction) whose
/// shape is smaller than `tile` along some axis, constant, and small.
fn candidates(
    k: &Kernel,
    root: ExprId,
    tile: &Shape,
    writes: &[phobos_core::ir::Place],
    seen: &mut IdVec<ExprId, bool>,
    found: &mut Vec<ExprId>,
) {
    if std::mem::replace(&mut seen[root], true) {
        return;
    }
    let e = &k.exprs[root];
    // A reduction's operand is evaluated over its own shape: a node there
    // that is uniform along the reduced rows (layer norm's `x - sum(x, axis
    // = 1) / f32(N)` inside `sum(d * d, axis = 1)`) is per row too.
    if let ExprKind::Reduce { arg, .. } = e.kind {
        let over = k.exprs[arg].shape.clone();
        return candidates(k, arg, &over, writes, seen, found);
    }
    // Leaves and loads are read where they are (a load's index is
    // computed once per statement already).
    if e.kind.operands().is_empty() || matches!(e.kind, ExprKind::Load { .. }) {
        return;
    }
    if e.shape.len() == tile.len() && uniform_along(&e.shape, tile) && movable(k, root, writes) {
        found.push(root);
        return;
    }
    for x in e.kind.operands() {
        candidates(k, x, tile, writes, seen, found);
    }
}

/// Whether a node of `shape` has extent 1 along an axis where `tile` has
/// more, and a constant shape of at most [`HOIST_BYTES`] (4 bytes an
/// element).
fn uniform_along(shape: &Shape, tile: &Shape) -> bool {
    let smaller = shape
        .iter()
        .zip(tile)
        .any(|(s, t)| *s == Dim::Const(1) && *t != Dim::Const(1));
    let bytes = shape.iter().try_fold(4u64, |n, d| match d {
        Dim::Const(v) => n.checked_mul(*v),
        Dim::Sym(_) => None,
    });
    smaller && bytes.is_some_and(|b| b <= HOIST_BYTES)
}

/// Whether the node costs enough to move, and may move: a division,
/// remainder or builtin below it; no `iota`, reduction or read of what the
/// statement writes.
fn movable(k: &Kernel, id: ExprId, writes: &[phobos_core::ir::Place]) -> bool {
    let nodes = k.reachable(id);
    let kind = |n: &ExprId| &k.exprs[*n].kind;
    let fixed = nodes
        .iter()
        .any(|n| matches!(kind(n), ExprKind::Iota(_) | ExprKind::Reduce { .. }));
    let costly = nodes.iter().any(|n| {
        matches!(
            kind(n),
            ExprKind::Binary(BinOp::Div | BinOp::Rem, ..) | ExprKind::Builtin(..)
        )
    });
    costly && !fixed && !analysis::reads(k, id).iter().any(|p| writes.contains(p))
}
