//! Loads issued one iteration ahead: where a `for` loop's reductions read
//! a tensor at a slice that moves by a constant step each iteration (a row
//! taken in chunks: `X[r :+ R, j * 256 :+ 256]`), each lane loads its
//! elements for the next iteration while it reduces this one's
//! (`lower/ahead.rs`). A loop of reductions over chunks is otherwise a chain
//! of load, wait, reduce at every iteration: issue 28 measured the chunked
//! softmax at about half the whole-row kernel's rate with its tensor inside
//! the L2, so latency, not bandwidth, held it.
//!
//! A load qualifies where it is read by a reduction the workgroup computes
//! ahead ([`super::Reduction`]) in a statement of the loop's own body (not
//! of a loop nested in it), its tensor has 32-bit elements and is never
//! stored to by the kernel (so the value loaded early is the value the
//! iteration would load), and every start of its slice moves by a
//! constant from one iteration to the next ([`analysis::loop_slope`]), one
//! of them by a nonzero one. The emitter loads a place once for each use,
//! at the same address it would have loaded a whole iteration later, so
//! the bits never change.

use super::{LoopPlan, Reduction};
use phobos_core::ir::{
    ExprId, ExprKind, IdVec, Index, Kernel, LocalId, ParamKind, Place, Stmt, analysis,
};
use phobos_core::types::{Scalar, Value};

/// A load one loop reads one iteration ahead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ahead {
    /// The `Load` node.
    pub load: ExprId,
    /// How far each entry of its index moves an iteration (modulo 2^32, as
    /// 32-bit integers wrap).
    pub step: Vec<i64>,
}

/// The loads of loop `l` read one iteration ahead (module doc), in node
/// order.
pub fn plan(
    k: &Kernel,
    l: &LoopPlan,
    reductions: &[Reduction],
    consts: &IdVec<ExprId, Option<Value>>,
) -> Vec<Ahead> {
    let Stmt::For { local: var, .. } = k.body[l.start] else {
        return Vec::new();
    };
    let stored: Vec<Place> = k
        .body
        .iter()
        .filter_map(|s| match s {
            Stmt::Store { place, .. } => Some(*place),
            _ => None,
        })
        .collect();
    // Every place written inside the loop, scalars and nested loops'
    // variables included, and the loop's own variable.
    let mut written = vec![Place::Local(var)];
    for s in &k.body[l.start + 1..l.end] {
        written.extend(analysis::access(k, s).writes);
    }
    let varies = |p: Place| written.contains(&p);
    // The scalar `let`s of the body's own statements (depth 0), and the
    // values those statements compute.
    let mut own = Vec::new();
    let mut lets: Vec<(LocalId, ExprId)> = Vec::new();
    let mut depth = 0;
    for s in &k.body[l.start + 1..l.end] {
        match s {
            Stmt::For { .. } => depth += 1,
            Stmt::EndFor => depth -= 1,
            Stmt::Let { local, value } if depth == 0 => {
                if k.locals[*local].shape.is_empty() {
                    lets.push((*local, *value));
                }
                own.push(*value);
            }
            Stmt::Var { value, .. } | Stmt::Store { value, .. } if depth == 0 => own.push(*value),
            Stmt::Let { .. } | Stmt::Var { .. } | Stmt::Store { .. } => {}
        }
    }
    let scalar_let = |x: LocalId| lets.iter().find(|(l, _)| *l == x).map(|(_, v)| *v);
    let mut out: Vec<Ahead> = Vec::new();
    for &root in &own {
        let reached = k.reachable(root);
        for r in reductions.iter().filter(|r| reached.contains(&r.expr)) {
            for id in leaf_loads(k, r.arg) {
                let ExprKind::Load { place, index } = &k.exprs[id].kind else {
                    continue;
                };
                let Place::Param(p) = *place else { continue };
                let word = matches!(
                    k.params[p].kind,
                    ParamKind::Tensor {
                        elem: Scalar::F32 | Scalar::I32 | Scalar::U32,
                        ..
                    }
                );
                if !word || stored.contains(place) || out.iter().any(|a| a.load == id) {
                    continue;
                }
                let step: Option<Vec<i64>> = index
                    .iter()
                    .map(|ix| match ix {
                        Index::Range { start: None, .. } => Some(0),
                        Index::Range { start: Some(s), .. } | Index::Single(s) => {
                            analysis::loop_slope(k, *s, var, &scalar_let, &varies, consts)
                        }
                    })
                    .collect();
                if let Some(step) = step
                    && step.iter().any(|d| *d != 0)
                {
                    out.push(Ahead { load: id, step });
                }
            }
        }
    }
    out.sort_by_key(|a| a.load);
    out
}

/// The loads a reduction's leaves read of its operand `arg`: not those
/// under another reduction or product, which their own loops compute, nor
/// those inside a load's index.
fn leaf_loads(k: &Kernel, arg: ExprId) -> Vec<ExprId> {
    let mut seen = IdVec::<ExprId, _>::from_elem(false, k.exprs.len());
    let mut out = Vec::new();
    let mut stack = vec![arg];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id], true) {
            continue;
        }
        match &k.exprs[id].kind {
            ExprKind::Load { .. } => out.push(id),
            ExprKind::Reduce { .. } | ExprKind::Dot { .. } => {}
            kind => stack.extend(kind.operands()),
        }
    }
    out
}
