//! Accumulators that a loop folds a reduction into, updated by one
//! invocation a row with no barrier between iterations.
//!
//! A loop over chunks of a row is written with a `var` accumulator:
//!
//! ```text
//! var m: tile<f32>[R, 1] = -_inf()
//! for j in 0 .. N / 256 {
//!   m = max(m, max(X[r :+ R, j * 256 :+ 256], axis = 1))
//! }
//! ```
//!
//! The checker binds the reduction to a `let` of its own (`_max`, the
//! statement before the assignment). Emitted as two statements, each
//! iteration writes `_max` with the workgroup, waits at a barrier, updates
//! `m` with a loop over its elements, and waits again before the next
//! iteration may write `_max`: two barriers a chunk.
//!
//! Planned as a fold, the pair is one step: the invocation that holds a
//! row's reduced value (item 0 of the row, `lower/coop_reduce.rs`) computes
//! the assignment's value for that row itself, reading the accumulator's
//! old element and the reduced value in place of the `let`, and writes the
//! accumulator's element. `_max` is never stored. The same invocation owns
//! each element at every iteration, so nothing orders the iterations but
//! its own program order (`loops.rs` leaves the back edge without a
//! barrier unless another statement of the body touches the accumulator).
//! Where the workgroup cannot compute the reduction (no arrays left, say),
//! the emitter computes the pair element by element instead, each element
//! again by one invocation at every iteration. The arithmetic is the same
//! nodes in the same order either way, so the bits do not change.
//!
//! A pair folds where:
//! - the `let` is a reduction, of constant shape, read by the assignment
//!   and nothing else;
//! - the assignment writes the whole of a `var` tile of the reduction's
//!   shape and type, and its value reads only that `var` and the `let`
//!   whole, scalars, and element-wise operations (no tensor, `iota`, Tandem
//!   draw, other reduction or product);
//! - where they lie in a loop, its body touches the `var` nowhere else.
//!
//! Outside loops (a chunked loop the plan wrote out, `unroll.rs`), a fold
//! is ordered against other statements as any statement is; two folds of
//! one accumulator in a row, whose reductions have the same owners, need
//! no barrier between them (`Lower::body`).

use phobos_core::ir::{Builtin, ExprId, ExprKind, Index, Kernel, LocalId, LocalKind, Place, Stmt};
use phobos_core::types::Dim;

/// One accumulator update planned as a fold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fold {
    /// The `let` of the reduction, by statement index in the plan's
    /// kernel; the assignment is the next statement.
    pub stmt: usize,
    /// The reduction's `let`.
    pub result: LocalId,
    /// The accumulator `var`.
    pub acc: LocalId,
    /// The assignment's value.
    pub value: ExprId,
    /// The innermost loop around the pair, by its `for` statement; `None`
    /// outside loops (a written-out loop's, `unroll.rs`), where the emitter
    /// orders the accumulator's accesses as any statement's, but leaves
    /// the accumulator's element to its owner between two folds of the
    /// same owners (`Lower::body`).
    pub within: Option<usize>,
}

/// The folds of `k`, the plan's kernel: there every local that is a tile
/// lives in workgroup memory (the others were inlined).
pub fn plan(k: &Kernel) -> Vec<Fold> {
    let mut out = Vec::new();
    for i in 0..k.body.len().saturating_sub(1) {
        if let Some(f) = fold_at(k, i) {
            out.push(f);
        }
    }
    out
}

fn fold_at(k: &Kernel, i: usize) -> Option<Fold> {
    let Stmt::Let {
        local: result,
        value: red,
    } = k.body[i]
    else {
        return None;
    };
    let Stmt::Store {
        place: Place::Local(acc),
        ref index,
        value,
    } = k.body[i + 1]
    else {
        return None;
    };
    let r = &k.locals[result];
    let a = &k.locals[acc];
    let constant = r.shape.iter().all(|d| matches!(d, Dim::Const(_)));
    if !matches!(k.exprs[red].kind, ExprKind::Reduce { .. })
        || !whole(index, &a.shape)
        || acc == result
        || a.kind != LocalKind::Var
        || a.shape != r.shape
        || a.elem != r.elem
        || r.shape.is_empty()
        || !constant
        || !elementwise(k, value, acc, result)
    {
        return None;
    }
    // The `let` is read by the assignment alone.
    let reads_result = |s: &Stmt| {
        phobos_core::ir::analysis::access(k, s)
            .reads
            .contains(&Place::Local(result))
    };
    if k.body
        .iter()
        .enumerate()
        .any(|(j, s)| j != i + 1 && reads_result(s))
    {
        return None;
    }
    // In a loop, one whose body touches the accumulator nowhere else.
    let within = k.scopes()[i];
    if let Some(start) = within {
        let end = k.loops()[start]?;
        let touches = |s: &Stmt| {
            let a = phobos_core::ir::analysis::access(k, s);
            a.reads.contains(&Place::Local(acc)) || a.writes.contains(&Place::Local(acc))
        };
        if (start + 1..end).any(|j| j != i && j != i + 1 && touches(&k.body[j])) {
            return None;
        }
    }
    Some(Fold {
        stmt: i,
        result,
        acc,
        value,
        within,
    })
}

/// Whether a store's index is the whole of a tile of `shape` (as `m = ...`
/// writes it).
fn whole(index: &[Index], shape: &[Dim]) -> bool {
    index.len() == shape.len()
        && index.iter().zip(shape).all(|(i, d)| match i {
            Index::Range { start: None, len } => len == d,
            Index::Range { start: Some(_), .. } | Index::Single(_) => false,
        })
}

/// Whether `value` reads only `acc` and `result` whole, scalars and
/// constants, through element-wise operations.
fn elementwise(k: &Kernel, value: ExprId, acc: LocalId, result: LocalId) -> bool {
    let shape = &k.locals[acc].shape;
    k.reachable(value).into_iter().all(|id| {
        let e = &k.exprs[id];
        let whole = e.shape.is_empty() || e.shape == *shape;
        whole
            && match &e.kind {
                ExprKind::Const(_)
                | ExprKind::Param(_)
                | ExprKind::DimValue(_)
                | ExprKind::BlockId(_)
                | ExprKind::GridSize(_)
                | ExprKind::Unary(..)
                | ExprKind::Binary(..)
                | ExprKind::Cast(_)
                | ExprKind::Bitcast(_)
                | ExprKind::Select(..) => true,
                ExprKind::Local(l) => *l == acc || *l == result || k.locals[*l].shape.is_empty(),
                ExprKind::Builtin(b, _) => match b {
                    Builtin::Sqrt
                    | Builtin::Abs
                    | Builtin::Min
                    | Builtin::Max
                    | Builtin::Native(_)
                    | Builtin::RoundF16
                    | Builtin::RoundBF16 => true,
                    // Draws: each step of a stream belongs to its statement.
                    Builtin::TandemKey(_) | Builtin::TandemWord | Builtin::TandemBelowRetry => {
                        false
                    }
                },
                ExprKind::Iota(_)
                | ExprKind::Load { .. }
                | ExprKind::Reduce { .. }
                | ExprKind::Dot { .. }
                | ExprKind::Transpose(_) => false,
            }
    })
}
