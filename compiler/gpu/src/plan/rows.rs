//! Values of a row kept in a lane's registers across statements (the row
//! cache, emitted by `lower/row_cache.rs`): where a kernel's whole-row
//! reductions all take the subgroup path with one geometry
//! ([`super::reductions`]), every lane reduces the same leaves of the row in
//! each of them, so a value computed at a leaf in one statement (`X`, or
//! `exp(X - m)`) can be kept by that lane and read back by the next
//! statement instead of being loaded and computed again. A store over the
//! same tile then runs over the same leaves and reads what it shares with
//! the reductions from there too.
//!
//! What is kept: the nodes of the row's full shape that more than one of
//! those regions (a reduction's operand, or a store's value) computes, by
//! value number (`ir::analysis::value_numbers`), that read memory, read
//! only tensors the kernel never writes and `let` locals, and draw no
//! Tandem words; the costliest first, while the words a lane keeps stay
//! within `Knobs::row_cache_words`. Only where a value is computed
//! changes, never how, so the bits are the interpreter's.

use super::reductions::{LEAF, Levels, Reduction};
use super::{Plan, StorePlan};
use crate::GpuOptions;
use crate::lower::tandem_draw::staged::{has_words, row_words_fit};
use phobos_core::ir::{ExprId, ExprKind, Index, Kernel, LocalKind, Place, Stmt, analysis};
use phobos_core::types::{Dim, Scalar};
use std::collections::{HashMap, HashSet};

/// The leaves every region of the kernel reduces or stores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geom {
    /// The row's full shape (the reduced axis last).
    pub shape: Vec<u32>,
    pub per_row: u32,
    pub block: u32,
}

impl Geom {
    /// The leaves of `LEAF` elements a lane takes in a row.
    pub fn segments(&self) -> u32 {
        self.block / LEAF
    }
}

/// The kept values of a kernel (module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowPlan {
    pub geom: Geom,
    /// The value numbers kept, costliest first.
    pub kept: Vec<ExprId>,
    /// The 32-bit words a lane keeps.
    pub words: u32,
}

/// The row geometry of reduction `r` where it can keep values: 16-byte
/// leaves along the last axis, taken by the subgroup path, or one a lane
/// (whose levels may go through workgroup memory: a row of a chunked
/// loop's chunk, `unroll.rs`).
pub fn geometry(k: &Kernel, r: &Reduction) -> Option<Geom> {
    let shape = const_shape(&k.exprs[r.arg].shape)?;
    let leaves = r.levels == Levels::Subgroups || r.block == LEAF;
    let here = leaves && quad_leaves(k, r) && r.axis + 1 == shape.len();
    here.then_some(Geom {
        shape,
        per_row: r.per_row,
        block: r.block,
    })
}

/// Whether reduction `r`'s leaves are 16 bytes of its operand: its axis is
/// the last, its length a multiple of `LEAF`, and it draws no Tandem words.
pub fn quad_leaves(k: &Kernel, r: &Reduction) -> bool {
    let shape = &k.exprs[r.arg].shape;
    r.axis + 1 == shape.len() && r.len.is_multiple_of(LEAF) && !has_words(k, r.arg)
}

/// Whether a store of `value` to `place` at `index` runs over the kept
/// rows' leaves of `geom`: a tensor slice of the rows' tile by groups of
/// 4 that reads nothing of its destination, and whose Tandem words, if
/// any, fit in `room` bytes (`staged.rs`).
pub fn store_ok(
    k: &Kernel,
    (stores, options, room): (&[StorePlan], &GpuOptions, u64),
    geom: &Geom,
    (place, index, value): (Place, &[Index], ExprId),
) -> bool {
    let tile = analysis::slice_tile(index);
    let elementwise = stores
        .iter()
        .any(|p| !p.groups && k.body[p.stmt].value() == Some(value));
    matches!(place, Place::Param(_))
        && const_shape(&tile).as_deref() == Some(&geom.shape[..])
        && super::stores::quad_slice(k, place, index)
        && !elementwise
        && row_words_fit(k, value, &tile, (options.knobs.row_words_max, room))
        && !analysis::reads_place(k, value, place)
}

/// The kept values of `plan`'s kernel, or `None` where nothing is shared.
pub fn plan(plan: &Plan, options: &GpuOptions) -> Option<RowPlan> {
    let k = &plan.kernel;
    let budget = options.knobs.row_cache_words;
    if budget == 0 || !plan.subgroups {
        return None;
    }
    let room = plan.upfront.row_room(options);
    // The geometry every whole-row reduction shares, and the regions in
    // statement order: each reduction's operand (inner ones first), and
    // each store over the same leaves; `true` for a reduction.
    let mut geom: Option<Geom> = None;
    let mut per_stmt: Vec<Vec<ExprId>> = Vec::new();
    for s in &k.body {
        let value = s.value()?;
        let mut here: Vec<ExprId> = k
            .reachable(value)
            .into_iter()
            .filter(|id| matches!(k.exprs[*id].kind, ExprKind::Reduce { .. }))
            .collect();
        here.sort_unstable();
        let mut args = Vec::new();
        for id in here {
            let Some(r) = plan.reductions.iter().find(|r| r.expr == id) else {
                continue;
            };
            let Some(g) = geometry(k, r) else {
                continue;
            };
            match &geom {
                Some(have) if *have != g => return None,
                _ => geom = Some(g),
            }
            args.push(r.arg);
        }
        per_stmt.push(args);
    }
    let geom = geom?;
    let mut regions: Vec<(ExprId, bool)> = Vec::new();
    for (s, args) in k.body.iter().zip(per_stmt) {
        regions.extend(args.into_iter().map(|a| (a, true)));
        if let Stmt::Store {
            place,
            index,
            value,
        } = s
            && store_ok(
                k,
                (&plan.stores, options, room),
                &geom,
                (*place, index, *value),
            )
        {
            regions.push((*value, false));
        }
    }
    let numbers = analysis::value_numbers(k);
    let full: Vec<Dim> = geom.shape.iter().map(|&e| Dim::Const(e.into())).collect();
    // The value numbers a region computes, given the values kept so far
    // (by number: the region that first computes it): it reads a kept
    // value that an earlier region computed instead of computing it.
    let computes = |r: usize, kept: &HashMap<ExprId, usize>| -> HashSet<ExprId> {
        let mut here = HashSet::new();
        let mut stack = vec![regions[r].0];
        while let Some(id) = stack.pop() {
            let e = &k.exprs[id];
            if e.shape != full || matches!(e.kind, ExprKind::Reduce { .. }) {
                continue;
            }
            let n = numbers[id];
            if !here.insert(n) || kept.get(&n).is_some_and(|&first| first < r) {
                continue;
            }
            stack.extend(e.kind.operands());
        }
        here
    };
    // The candidates: every node some region computes, the costliest
    // first (ties by value number, so the choice is deterministic). A
    // value is kept where a reduction computes it first (a store's
    // leaves are computed under masks, so a store only reads) and a
    // later region would compute it again; its operands are then
    // computed by the first region alone, so a node is judged after
    // those above it.
    let mut candidates: Vec<(usize, ExprId)> = (0..regions.len())
        .flat_map(|r| computes(r, &HashMap::new()))
        .collect::<HashSet<_>>()
        .into_iter()
        .filter(|&n| keepable(k, n))
        .map(|n| (k.reachable(n).len(), n))
        .collect();
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    let mut kept: HashMap<ExprId, usize> = HashMap::new();
    let mut order = Vec::new();
    for (_, n) in candidates {
        let by: Vec<usize> = (0..regions.len())
            .filter(|&r| computes(r, &kept).contains(&n))
            .collect();
        if by.len() > 1 && regions[by[0]].1 {
            kept.insert(n, by[0]);
            order.push(n);
        }
    }
    let per_slot = geom.segments() * LEAF;
    let slots = (budget / per_slot.max(1)) as usize;
    order.truncate(slots);
    (!order.is_empty()).then(|| RowPlan {
        words: per_slot * order.len() as u32,
        kept: order,
        geom,
    })
}

/// Whether node `id` may be kept: a 32-bit value that reads memory, whose
/// reads no statement changes after it is first computed, and that draws
/// no Tandem words.
fn keepable(k: &Kernel, id: ExprId) -> bool {
    let e = &k.exprs[id];
    if !matches!(e.ty, Scalar::F32 | Scalar::I32 | Scalar::U32) || has_words(k, id) {
        return false;
    }
    let loads = k
        .reachable(id)
        .iter()
        .any(|&n| matches!(k.exprs[n].kind, ExprKind::Load { .. }));
    let unchanged = analysis::reads(k, id).iter().all(|p| match *p {
        Place::Param(i) => !k
            .body
            .iter()
            .any(|s| matches!(s, Stmt::Store { place: Place::Param(j), .. } if *j == i)),
        Place::Local(l) => k.locals[l].kind == LocalKind::Let,
    });
    loads && unchanged
}

/// The extents of `shape`, where all are constants that fit in u32.
pub fn const_shape(shape: &[Dim]) -> Option<Vec<u32>> {
    shape
        .iter()
        .map(|d| match d {
            Dim::Const(v) => u32::try_from(*v).ok(),
            Dim::Sym(_) => None,
        })
        .collect()
}
