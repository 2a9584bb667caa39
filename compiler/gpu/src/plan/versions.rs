//! A `var` tile assigned whole, in order, becomes one `var` per assignment
//! before the values are placed, so that each can be planned as a `let`
//! (`values.rs`): `var e = exp(x - m)` then `e = e / s` names two values,
//! as `let e = ...` then `let e = e / s` does, and neither needs the tile
//! in workgroup memory.
//!
//! A `var` is split where every assignment after its declaration writes
//! the whole tile (no slice) in the declaration's own scope (not inside a
//! loop the declaration is not in), and it is never read through a slice.
//! Then a read sees the value of the last assignment before its statement
//! in program order, whichever iteration of an enclosing loop runs, so each
//! read node is renamed to the version its statement sees. A read node
//! that statements of two versions share, or any other shape of use,
//! leaves the `var` as it is. Splitting only renames: every value is
//! computed as before, so the bits are the same.

use phobos_core::ir::{ExprId, ExprKind, IdVec, Index, Kernel, LocalId, LocalKind, Place, Stmt};
use std::collections::HashSet;

/// `k` with every splittable `var` not in `keep` split into its versions,
/// and for each split `var` its versions' locals (the declaration's first,
/// which keeps the `var`'s id; the others are appended to the arena).
pub fn split(k: &Kernel, keep: &HashSet<LocalId>) -> (Kernel, Vec<(LocalId, Vec<LocalId>)>) {
    let scope = k.scopes();
    let mut out = k.clone();
    let mut split = Vec::new();
    for (l, local) in k.locals.iter_enumerated() {
        if local.kind != LocalKind::Var || local.shape.is_empty() || keep.contains(&l) {
            continue;
        }
        let Some(versions) = versions_of(k, &scope, l) else {
            continue;
        };
        if versions.len() < 2 {
            continue;
        }
        // The statement of each read node; one version per node.
        let mut seen = IdVec::<ExprId, Option<usize>>::from_elem(None, k.exprs.len());
        let mut ok = true;
        for (s, stmt) in k.body.iter().enumerate() {
            let version = versions.iter().rposition(|&at| at < s).unwrap_or(0);
            for id in reads_of(k, stmt, l) {
                match seen[id] {
                    Some(v) if v != version => ok = false,
                    _ => seen[id] = Some(version),
                }
            }
        }
        if !ok {
            continue;
        }
        let mut ids = vec![l];
        for _ in 1..versions.len() {
            ids.push(out.locals.push(local.clone()));
        }
        for (id, v) in seen.iter_enumerated() {
            if let Some(v) = v {
                out.exprs[id].kind = ExprKind::Local(ids[*v]);
            }
        }
        for (n, &at) in versions.iter().enumerate().skip(1) {
            let value = k.body[at].value().expect("an assignment has a value");
            out.body[at] = Stmt::Var {
                local: ids[n],
                value,
            };
        }
        split.push((l, ids));
    }
    (out, split)
}

/// The statements that give `l` its versions (its declaration, then each
/// assignment), where `l` can be split (module doc).
fn versions_of(k: &Kernel, scope: &[Option<usize>], l: LocalId) -> Option<Vec<usize>> {
    let shape = &k.locals[l].shape;
    let mut at = Vec::new();
    for (s, stmt) in k.body.iter().enumerate() {
        match stmt {
            Stmt::Var { local, .. } if *local == l => at.push(s),
            Stmt::Store {
                place: Place::Local(p),
                index,
                ..
            } if *p == l => {
                let whole = index.len() == shape.len()
                    && index
                        .iter()
                        .zip(shape)
                        .all(|(i, d)| matches!(i, Index::Range { start: None, len } if len == d));
                if !whole || at.is_empty() || scope[s] != scope[at[0]] {
                    return None;
                }
                at.push(s);
            }
            Stmt::Let { .. }
            | Stmt::Var { .. }
            | Stmt::Store { .. }
            | Stmt::For { .. }
            | Stmt::EndFor => {}
        }
    }
    let sliced = k.exprs.iter().any(|e| {
        matches!(
            e.kind,
            ExprKind::Load {
                place: Place::Local(p),
                ..
            } if p == l
        )
    });
    (!sliced && !at.is_empty()).then_some(at)
}

/// The `Local(l)` nodes that statement `stmt` reads.
fn reads_of(k: &Kernel, stmt: &Stmt, l: LocalId) -> Vec<ExprId> {
    let mut roots: Vec<ExprId> = stmt.value().into_iter().collect();
    match stmt {
        Stmt::Store { index, .. } => roots.extend(index.iter().filter_map(Index::expr)),
        Stmt::For { start, end, .. } => roots.extend([*start, *end]),
        Stmt::Let { .. } | Stmt::Var { .. } | Stmt::EndFor => {}
    }
    let mut found = HashSet::new();
    for r in roots {
        for id in k.reachable(r) {
            if k.exprs[id].kind == ExprKind::Local(l) {
                found.insert(id);
            }
        }
    }
    let mut found: Vec<ExprId> = found.into_iter().collect();
    found.sort_unstable();
    found
}
