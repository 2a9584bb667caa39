//! The barrier each loop needs between its iterations, decided from the IR.
//!
//! The emitter puts a barrier between two statements whose places conflict
//! (one writes what the other reads or writes; `lower/stmt.rs`). A loop's
//! next iteration runs its body's statements again after the last ones, so
//! the back edge needs a barrier where a place written in the body is read
//! in the body, or written by two of its statements. A place written by one
//! statement only, and read by none, does not: that statement maps each
//! element of its tile to the same invocation at every iteration, so an
//! invocation's writes to an element are ordered by its own program order.
//!
//! The barrier has the kind of the places that conflict: `WORK_GROUP` for
//! tiles in workgroup memory, `STORAGE` for tensors. A storage barrier
//! waits for the invocation's stores to reach the whole device (naga writes
//! its memory scope as `Device`), so a loop that stores a chunk of a row
//! at each iteration and reads nothing it wrote (softmax's third pass over
//! chunks) is better off without one.
//!
//! Scalars are each invocation's own and never conflict. The compiler's own
//! workgroup arrays (a reduction's scratch, staged draws) are the
//! emitter's to order: it keeps a back-edge barrier wherever a body's
//! last statements touch one (`lower/stmt.rs`).

use phobos_core::ir::{Kernel, Place, Stmt, analysis};

/// A barrier between statements, by the memory it orders.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sync {
    /// Tiles in workgroup memory.
    pub workgroup: bool,
    /// Tensors (device memory).
    pub storage: bool,
}

impl Sync {
    /// Also orders the memory `p` lives in.
    pub fn order(&mut self, p: Place) {
        match p {
            Place::Param(_) => self.storage = true,
            Place::Local(_) => self.workgroup = true,
        }
    }

    pub fn is_none(self) -> bool {
        !self.workgroup && !self.storage
    }
}

/// The plan of one `for` loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopPlan {
    /// The `for` bracket, by statement index in the plan's kernel.
    pub start: usize,
    /// The matching `end for`.
    pub end: usize,
    /// Every place the body's statements (nested loops included) read and
    /// write, scalars left out.
    pub body: analysis::Access,
    /// The barrier at the end of each iteration.
    pub back: Sync,
    /// Why, as `phobosc build --explain` prints it.
    pub why: String,
}

/// The barrier that orders accesses `later` after `earlier`:
/// a place one writes and the other reads or writes. Scalars (`private`)
/// never conflict.
pub fn conflicts(
    earlier: &analysis::Access,
    later: &analysis::Access,
    private: impl Fn(Place) -> bool,
) -> Sync {
    let mut sync = Sync::default();
    let hits = earlier
        .writes
        .iter()
        .filter(|p| later.reads.contains(p) || later.writes.contains(p))
        .chain(earlier.reads.iter().filter(|p| later.writes.contains(p)));
    for &p in hits.filter(|p| !private(**p)) {
        sync.order(p);
    }
    sync
}
/// Whether a local of `k` is a scalar, which each invocation keeps.
fn private(k: &Kernel, p: Place) -> bool {
    matches!(p, Place::Local(l) if k.locals[l].shape.is_empty())
}

/// Every loop of `k`, outermost first where they nest. `folds` are the
/// accumulator updates planned as folds (`folds.rs`): in its own loop, a
/// fold's accumulator is touched by one invocation an element, which
/// orders itself.
pub fn plan(k: &Kernel, folds: &[super::Fold]) -> Vec<LoopPlan> {
    let ends = k.loops();
    k.body
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Stmt::For { .. }))
        .map(|(start, _)| {
            let end = ends[start].expect("the verifier matched loops");
            one(k, folds, start, end)
        })
        .collect()
}

fn one(k: &Kernel, folds: &[super::Fold], start: usize, end: usize) -> LoopPlan {
    let mut body = analysis::Access::default();
    // The accesses that may race across iterations, and the places
    // written with how many statements write each.
    let mut reads: Vec<Place> = Vec::new();
    let mut writers: Vec<(Place, usize)> = Vec::new();
    for (j, s) in k.body.iter().enumerate().take(end).skip(start + 1) {
        let mut a = analysis::access(k, s);
        for &p in &a.reads {
            if !private(k, p) && !body.reads.contains(&p) {
                body.reads.push(p);
            }
        }
        for &p in &a.writes {
            if !private(k, p) && !body.writes.contains(&p) {
                body.writes.push(p);
            }
        }
        for f in folds.iter().filter(|f| f.within == Some(start)) {
            // The reduction's `let` is never stored, and the accumulator
            // is its element's owner's alone.
            if j == f.stmt || j == f.stmt + 1 {
                let own = [Place::Local(f.result), Place::Local(f.acc)];
                a.reads.retain(|p| !own.contains(p));
                a.writes.retain(|p| !own.contains(p));
            }
        }
        for p in a.reads {
            if !private(k, p) && !reads.contains(&p) {
                reads.push(p);
            }
        }
        for p in a.writes.into_iter().filter(|p| !private(k, *p)) {
            match writers.iter_mut().find(|(q, _)| *q == p) {
                Some((_, n)) => *n += 1,
                None => writers.push((p, 1)),
            }
        }
    }
    let mut back = Sync::default();
    let mut places = Vec::new();
    for (p, n) in writers {
        if n > 1 || reads.contains(&p) {
            back.order(p);
            places.push(p);
        }
    }
    let name = |p: Place| match p {
        Place::Param(i) => format!("`{}`", k.params[i].name),
        Place::Local(l) => format!("`{}`", k.locals[l].name),
    };
    let folded: Vec<String> = folds
        .iter()
        .filter(|f| f.within == Some(start))
        .map(|f| format!("`{}`", k.locals[f.acc].name))
        .collect();
    let folded = match folded.len() {
        0 => String::new(),
        _ => format!(
            "; {} folded into {} reduction (item 0 of each row updates its element)",
            folded.join(", "),
            if folded.len() == 1 { "its" } else { "their" }
        ),
    };
    let why = if places.is_empty() {
        format!(
            "no barrier between iterations: the body reads nothing it writes, and each place it \
             writes has one writer{folded}"
        )
    } else {
        let kind = match (back.workgroup, back.storage) {
            (true, true) => "a workgroup and storage barrier",
            (false, true) => "a storage barrier",
            _ => "a workgroup barrier",
        };
        let list: Vec<String> = places.into_iter().map(name).collect();
        format!(
            "{kind} between iterations: the body writes {} and reads or writes {} again{folded}",
            list.join(", "),
            if list.len() == 1 { "it" } else { "them" }
        )
    };
    LoopPlan {
        start,
        end,
        body,
        back,
        why,
    }
}
