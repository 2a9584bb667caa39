//! Loads that sibling loops repeat, kept in workgroup memory by the first.
//!
//! A chunked kernel walks its rows in several passes of the same loop
//! (`for j in 0 .. (N + 255) / 256`: softmax's maximum, then its sum, then
//! the store), and each pass reads the same chunk `X[r :+ R, j * 256 :+
//! 256]` again. Where the rows' chunks fit the workgroup memory that is
//! left, the plan keeps them: before the first loop that reads a chunk it
//! declares a workgroup tile of `T` slots (the loop's trip count), that
//! loop also stores each chunk in slot `j`, and the later loops read the
//! slot instead of the tensor. The rows then cross the memory bus once
//! instead of once a pass. The values are the same loads at the same
//! iterations, so the bits do not change.
//!
//! Two loads are the same when their loops have the same bounds and the
//! loads the same form, reading each loop's variable, and the `let`s its
//! body defines, as that loop's ([`signature`]). Kept only: loads of
//! tensors the kernel never writes, of constant shape and 32-bit elements,
//! that depend on the loop's variable, in top-level loops with no loop in
//! them and a constant trip count (a launch's kernel: [`crate::specialize`]
//! fixes the extents where [`repeats`] finds such loads), the largest
//! saving first, while they fit the workgroup memory left ([`MARGIN`]).

use crate::GpuOptions;
use phobos_core::ir::id::Idx;
use phobos_core::ir::{
    BinOp, Expr, ExprId, ExprKind, Index, Kernel, Local, LocalId, LocalKind, Place, Stmt, analysis,
};
use phobos_core::types::{Dim, Scalar, Value};
use std::collections::HashMap;

/// Workgroup memory left for the compiler's own arrays (a reduction's
/// partials, staged draws) beside the kept chunks and the kernel's tiles.
pub const MARGIN: u64 = 4096;

/// One load kept for later loops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    /// The workgroup tile (`_kept0`, ...).
    pub name: String,
    /// The tensor it holds chunks of.
    pub tensor: String,
    /// The loops that read it, numbered as `explain` numbers them (from
    /// 1, in order): the first stores it, the others read the tile.
    pub loops: Vec<usize>,
    pub bytes: u64,
}

/// A load repeated by sibling loops: for each loop that reads it (its
/// `For` statement), the nodes that read it there.
struct Group {
    tensor: usize,
    loops: Vec<(usize, Vec<ExprId>)>,
}

/// Whether `k` has loads that sibling loops repeat (whatever their trip
/// counts): a launch then fixes its extents, so that the plan can keep
/// them.
pub fn repeats(k: &Kernel) -> bool {
    !groups(k).is_empty()
}

/// `k` with the repeated loads that fit kept in workgroup memory, and
/// what was kept.
pub fn keep(k: &Kernel, options: &GpuOptions) -> (Kernel, Vec<Kept>) {
    let groups = groups(k);
    if groups.is_empty() {
        return (k.clone(), Vec::new());
    }
    let consts = analysis::constant_values(k);
    let trips = |f: usize| -> Option<u64> {
        let Stmt::For { start, end, .. } = k.body[f] else {
            return None;
        };
        match (consts[start], consts[end]) {
            (Some(Value::I32(s)), Some(Value::I32(e))) if e > s => u64::try_from(e - s).ok(),
            _ => None,
        }
    };
    // The tiles the kernel declares, counted whole, whatever the plan made
    // of them: an estimate from above.
    let mut used: u64 = k
        .body
        .iter()
        .filter_map(|s| match s {
            Stmt::Let { local, .. } | Stmt::Var { local, .. } => tile_bytes(&k.locals[*local]),
            Stmt::Store { .. } | Stmt::For { .. } | Stmt::EndFor => None,
        })
        .sum();
    let mut chosen: Vec<(Group, u64, u64)> = groups
        .into_iter()
        .filter_map(|g| {
            let first = g.loops[0].1[0];
            let trip = trips(g.loops[0].0)?;
            let bytes = tile_bytes_of(&k.exprs[first].shape)?.checked_mul(trip)?;
            Some((g, trip, bytes))
        })
        .collect();
    chosen.sort_by_key(|(g, _, bytes)| std::cmp::Reverse(bytes * (g.loops.len() as u64 - 1)));
    chosen.retain(|(_, _, bytes)| {
        let fits = used + bytes + MARGIN <= options.workgroup_memory;
        if fits {
            used += bytes;
        }
        fits
    });
    if chosen.is_empty() {
        return (k.clone(), Vec::new());
    }
    let order: Vec<usize> = (0..k.body.len())
        .filter(|&n| matches!(k.body[n], Stmt::For { .. }))
        .collect();
    let mut out = k.clone();
    // Before statement n: the statements to insert; the nodes statement n
    // reads in place of the kept loads.
    let mut before: HashMap<usize, Vec<Stmt>> = HashMap::new();
    let mut to: HashMap<usize, HashMap<ExprId, ExprId>> = HashMap::new();
    let mut kept = Vec::new();
    for (g, trip, bytes) in chosen {
        let first = &k.exprs[g.loops[0].1[0]];
        let (elem, slot) = (first.ty, first.shape.clone());
        let d0 = match slot[0] {
            Dim::Const(d) => d,
            Dim::Sym(_) => unreachable!("kept loads have constant shapes"),
        };
        let mut shape = slot.clone();
        shape[0] = Dim::Const(d0 * trip);
        let name = format!("_kept{}", kept.len());
        let local = out.locals.push(Local {
            name: name.clone(),
            kind: LocalKind::Var,
            elem,
            shape,
            span: None,
        });
        let zero = out.exprs.push(Expr {
            kind: ExprKind::Const(zero_of(elem)),
            ty: elem,
            shape: Vec::new(),
        });
        let (writer, writes) = &g.loops[0];
        before
            .entry(*writer)
            .or_default()
            .push(Stmt::Var { local, value: zero });
        let index = slot_index(&mut out, *writer, &slot, d0);
        let load = writes[0];
        let at = first_reader(k, *writer, load);
        before.entry(at).or_default().push(Stmt::Store {
            place: Place::Local(local),
            index: index.clone(),
            value: load,
        });
        for (f, reads) in &g.loops[1..] {
            let index = slot_index(&mut out, *f, &slot, d0);
            let read = out.exprs.push(Expr {
                kind: ExprKind::Load {
                    place: Place::Local(local),
                    index,
                },
                ty: elem,
                shape: slot.clone(),
            });
            let map = to.entry(*f).or_default();
            for id in reads {
                map.insert(*id, read);
            }
        }
        let ordinal = |f: usize| order.iter().position(|&o| o == f).expect("a loop") + 1;
        kept.push(Kept {
            name,
            tensor: k.params[g.tensor].name.clone(),
            loops: g.loops.iter().map(|(f, _)| ordinal(*f)).collect(),
            bytes,
        });
    }
    let scopes = k.scopes();
    let mut body = Vec::new();
    for (n, s) in k.body.iter().enumerate() {
        body.extend(before.remove(&n).unwrap_or_default());
        let mut s = s.clone();
        let reader = scopes[n].and_then(|f| to.get(&f));
        if let Some(map) = reader {
            let mut memo = HashMap::new();
            match &mut s {
                Stmt::Let { value, .. } | Stmt::Var { value, .. } | Stmt::Store { value, .. } => {
                    *value = super::hoist::rewrite(&mut out, *value, map, &mut memo);
                }
                Stmt::For { .. } | Stmt::EndFor => {}
            }
        }
        body.push(s);
    }
    out.body = body;
    (out, kept)
}

/// The repeated loads of `k`, in the order of their first loop.
fn groups(k: &Kernel) -> Vec<Group> {
    let pairs = k.loops();
    let scopes = k.scopes();
    let stored: Vec<usize> = k
        .body
        .iter()
        .filter_map(|s| match s {
            Stmt::Store {
                place: Place::Param(p),
                ..
            } => Some(*p),
            _ => None,
        })
        .collect();
    // (bounds, load) signature -> the loops that read it, each with its nodes.
    let mut found: Vec<((String, String), usize, Vec<(usize, Vec<ExprId>)>)> = Vec::new();
    for (f, s) in k.body.iter().enumerate() {
        let Stmt::For { local, start, end } = *s else {
            continue;
        };
        let Some(close) = pairs[f] else { continue };
        let body = f + 1..close;
        if scopes[f].is_some() || body.clone().any(|n| matches!(k.body[n], Stmt::For { .. })) {
            continue;
        }
        let mut defs = HashMap::new();
        for n in body.clone() {
            if let Stmt::Let { local, value } = k.body[n] {
                defs.insert(local, value);
            }
        }
        let outer = Context {
            var: None,
            defs: HashMap::new(),
        };
        let (Some(a), Some(b)) = (signature(k, &outer, start), signature(k, &outer, end)) else {
            continue;
        };
        let bounds = format!("{a}..{b}");
        let cx = Context {
            var: Some(local),
            defs,
        };
        for n in body {
            let Some(value) = k.body[n].value() else {
                continue;
            };
            for id in k.reachable(value) {
                let e = &k.exprs[id];
                let ExprKind::Load {
                    place: Place::Param(p),
                    ..
                } = e.kind
                else {
                    continue;
                };
                if stored.contains(&p)
                    || !matches!(e.ty, Scalar::F32 | Scalar::I32 | Scalar::U32)
                    || e.shape.is_empty()
                    || tile_bytes_of(&e.shape).is_none()
                {
                    continue;
                }
                let Some(sig) = signature(k, &cx, id).filter(|s| s.contains("$j")) else {
                    continue;
                };
                let key = (bounds.clone(), sig);
                let at = match found.iter().position(|(k2, _, _)| *k2 == key) {
                    Some(i) => i,
                    None => {
                        found.push((key, p, Vec::new()));
                        found.len() - 1
                    }
                };
                let loops = &mut found[at].2;
                match loops.iter_mut().find(|(g, _)| *g == f) {
                    Some((_, ids)) => {
                        if !ids.contains(&id) {
                            ids.push(id);
                        }
                    }
                    None => loops.push((f, vec![id])),
                }
            }
        }
    }
    found
        .into_iter()
        .filter(|(_, _, loops)| loops.len() > 1)
        .map(|(_, tensor, loops)| Group { tensor, loops })
        .collect()
}

/// What a signature reads a loop's locals as.
struct Context {
    /// The loop's variable.
    var: Option<LocalId>,
    /// The `let`s its body defines, by their values.
    defs: HashMap<LocalId, ExprId>,
}

/// The form of node `id`, the same for two nodes that compute the same
/// values at the same iteration of their loops: each node's kind with its
/// operands' forms, the loop's variable read as `$j` and the body's `let`s
/// as their values. `None` where it reads what may differ between loops:
/// another `var` or loop variable, a local tile, or `iota` (a position of
/// the statement, which differs between them).
fn signature(k: &Kernel, cx: &Context, id: ExprId) -> Option<String> {
    let e = &k.exprs[id];
    match &e.kind {
        ExprKind::Local(l) if cx.var == Some(*l) => return Some("$j".into()),
        ExprKind::Local(l) => {
            if let Some(&v) = cx.defs.get(l) {
                return signature(k, cx, v);
            }
            let local = &k.locals[*l];
            return (local.kind == LocalKind::Let && !in_loop(k, *l)).then(|| format!("$l{l}"));
        }
        ExprKind::Load {
            place: Place::Local(_),
            ..
        }
        | ExprKind::Iota(_) => return None,
        _ => {}
    }
    let mut parts = Vec::new();
    for x in e.kind.operands() {
        parts.push(signature(k, cx, x)?);
    }
    let kind = e.kind.map_operands(|_| ExprId::from_index(0));
    Some(format!(
        "{kind:?}:{}{:?}({})",
        e.ty,
        e.shape,
        parts.join(",")
    ))
}

/// Whether local `l` is defined inside some loop.
fn in_loop(k: &Kernel, l: LocalId) -> bool {
    let scopes = k.scopes();
    k.body.iter().enumerate().any(|(n, s)| {
        matches!(s, Stmt::Let { local, .. } | Stmt::Var { local, .. } if *local == l)
            && scopes[n].is_some()
    })
}

/// The first statement of loop `f`'s body that reads node `id`.
fn first_reader(k: &Kernel, f: usize, id: ExprId) -> usize {
    (f + 1..k.body.len())
        .find(|&n| {
            k.body[n]
                .value()
                .is_some_and(|v| k.reachable(v).contains(&id))
        })
        .expect("the loop reads the load")
}

/// The index of slot `j - start` of loop `f` in a tile of slots `slot`
/// stacked along the first axis (`d0` each).
fn slot_index(k: &mut Kernel, f: usize, slot: &[Dim], d0: u64) -> Vec<Index> {
    let Stmt::For { local, start, .. } = k.body[f] else {
        unreachable!("a loop");
    };
    let scalar = |kind| Expr {
        kind,
        ty: Scalar::I32,
        shape: Vec::new(),
    };
    let j = k.exprs.push(scalar(ExprKind::Local(local)));
    let from = k.exprs.push(scalar(ExprKind::Binary(BinOp::Sub, j, start)));
    let d = k.exprs.push(scalar(ExprKind::Const(Value::I32(d0 as i32))));
    let at = k.exprs.push(scalar(ExprKind::Binary(BinOp::Mul, from, d)));
    let mut index = vec![Index::Range {
        start: Some(at),
        len: Dim::Const(d0),
    }];
    index.extend(slot[1..].iter().map(|d| Index::Range {
        start: None,
        len: *d,
    }));
    index
}

fn zero_of(elem: Scalar) -> Value {
    match elem {
        Scalar::I32 => Value::I32(0),
        Scalar::U32 => Value::U32(0),
        _ => Value::F32(0.0),
    }
}

/// The bytes of a tile local of constant shape (not a scalar).
fn tile_bytes(l: &Local) -> Option<u64> {
    if l.shape.iter().all(|d| *d == Dim::Const(1)) {
        return None;
    }
    tile_bytes_of(&l.shape)
}

/// 4 bytes an element of a constant shape.
fn tile_bytes_of(shape: &[Dim]) -> Option<u64> {
    shape.iter().try_fold(4u64, |n, d| match d {
        Dim::Const(v) => n.checked_mul(*v),
        Dim::Sym(_) => None,
    })
}
