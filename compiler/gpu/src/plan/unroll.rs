//! Chunked loops unrolled, so that their chunks stay on chip between the
//! loops (issue 28).
//!
//! A user who reduces a row in chunks writes three loops over the same
//! slices (`max` of each chunk, `sum` of `exp(x - m)`, then the store).
//! Kept as loops, each chunk is loaded three times: twice the bytes of
//! the whole-row spelling, and the kernel runs at the DRAM ceiling of
//! that traffic. Where every loop of a kernel runs a constant number of
//! times (its bounds fold to constants, as a launch's specialised kernel
//! gives them) and holds a reduction of a tensor's slice that moves with
//! the loop's variable, the plan writes each loop out, iteration by
//! iteration: the loop's variable becomes the iteration's constant, and
//! each `let` or `var` declared in the body becomes a local of its own
//! per iteration. The statements then run in the same order over the same
//! values, so the bits are the loop's; and a chunk read by several loops
//! is the same node (by value number) in each, which the row cache
//! (`rows.rs`) keeps in a lane's registers from the first reduction that
//! computes it.
//!
//! Not unrolled: loops that nest, that take products (`dot`, whose loops
//! the plan stages and carries, `dots.rs`) or Tandem words (whose fills
//! carry their chunks across iterations, `draws.rs`), and kernels whose
//! unrolled body would pass [`MAX_STATEMENTS`].
//!
//! Nor in exact mode, nor past [`MAX_TRIPS`] iterations: each iteration
//! is a copy of the body's code, and on the H200 (session 31,
//! `bench/logs/2026-12-07-s31-q*.log`) the copies cost more than the
//! re-reads they save once the code grows. s17's `c1` (three loops) at
//! R=1 and 64 invocations, GiB/s written out against kept as loops: fast
//! 2798 / 2186 at 4 iterations a loop, 2416 / 2147 at 8, 1766 / 1805 at
//! 16; exact (the correctly rounded `exp` and `/` are long) 1141 / 1079 at
//! 4, 697 / 1082 at 8, 439 / 1058 at 16. Tuned, exact mode lost at every
//! trip count (4-6% at 4), fast mode won at 4 and 8 (up to 14%) and lost
//! at 16 (up to 16%).

use crate::Precision;
use crate::lower::tandem_draw::staged::has_words;
use phobos_core::ir::{Expr, ExprId, ExprKind, Kernel, LocalId, Place, Stmt, analysis};
use phobos_core::types::Value;
use std::collections::HashMap;

/// The most iterations a loop is written out for (module doc).
pub const MAX_TRIPS: i64 = 8;

/// The most statements an unrolled kernel may have.
pub const MAX_STATEMENTS: usize = 256;

/// `k` with every loop written out (module doc), and each loop's
/// variable's name and iterations; `None` in exact mode, and where some
/// loop does not qualify or there is none.
pub fn unroll(k: &Kernel, precision: Precision) -> Option<(Kernel, Vec<(String, u32)>)> {
    if precision == Precision::Exact {
        return None;
    }
    let loops = k.loops();
    let values = analysis::constant_values(k);
    let mut trips = Vec::new();
    let mut chunked = false;
    let mut n = 0;
    while n < k.body.len() {
        let Stmt::For { local, start, end } = &k.body[n] else {
            n += 1;
            continue;
        };
        let close = loops[n]?;
        let (Some(Value::I32(a)), Some(Value::I32(b))) = (values[*start], values[*end]) else {
            return None;
        };
        let count = i64::from(b) - i64::from(a);
        let body = &k.body[n + 1..close];
        if !(1..=MAX_TRIPS).contains(&count) {
            return None;
        }
        chunked |= qualifies(k, *local, body)?;
        trips.push((n, close, *local, a, b));
        n = close + 1;
    }
    if !chunked {
        return None;
    }
    let mut out = k.clone();
    let mut body = Vec::new();
    let written = trips
        .iter()
        .map(|&(_, _, var, a, b)| (k.locals[var].name.clone(), b.abs_diff(a)))
        .collect();
    let mut at = 0;
    for (open, close, var, a, b) in trips {
        body.extend_from_slice(&k.body[at..open]);
        for j in a..b {
            Copy::new(k, &mut out, (var, j, j == a), &k.body[open + 1..close]).emit(&mut body);
        }
        at = close + 1;
    }
    body.extend_from_slice(&k.body[at..]);
    if body.len() > MAX_STATEMENTS {
        return None;
    }
    out.body = body;
    // The body's own nodes are no longer read (each iteration has its
    // copies); left in the arena, they would count as readers of its
    // locals (`values.rs`).
    Some((out.without_unread_nodes(), written))
}

/// Whether a loop over `var` whose body is `body` may be written out (no
/// nested loop, no product, no Tandem word), and if so whether it reduces
/// a tensor slice whose position moves with `var`.
fn qualifies(k: &Kernel, var: LocalId, body: &[Stmt]) -> Option<bool> {
    // The values of the locals the body declares, which a reduction's
    // operand may read (the checker moves each reduction into a `let`).
    let defs: HashMap<LocalId, ExprId> = body
        .iter()
        .filter_map(|s| match s {
            Stmt::Let { local, value } | Stmt::Var { local, value } => Some((*local, *value)),
            Stmt::Store { .. } | Stmt::For { .. } | Stmt::EndFor => None,
        })
        .collect();
    let mut chunked = false;
    for s in body {
        let value = s.value()?;
        if has_words(k, value) {
            return None;
        }
        for id in k.reachable(value) {
            let kind = &k.exprs[id].kind;
            if matches!(kind, ExprKind::Dot { .. }) {
                return None;
            }
            if let ExprKind::Reduce { arg, .. } = kind {
                chunked |= moving_slice(k, &defs, *arg, var);
            }
        }
    }
    Some(chunked)
}

/// Whether `root` loads a tensor through an index that reads `var`,
/// following the body's locals (`defs`) to their values, in the loaded
/// values and in the indices (`let c = j * 256` then `X[r, c :+ 256]`).
fn moving_slice(k: &Kernel, defs: &HashMap<LocalId, ExprId>, root: ExprId, var: LocalId) -> bool {
    through_locals(k, defs, root)
        .into_iter()
        .any(|id| match &k.exprs[id].kind {
            ExprKind::Load {
                place: Place::Param(_),
                index,
            } => index
                .iter()
                .filter_map(|i| i.expr())
                .flat_map(|e| through_locals(k, defs, e))
                .any(|e| k.exprs[e].kind == ExprKind::Local(var)),
            _ => false,
        })
}

/// Every node under `root`, and under the values of the body's locals
/// (`defs`) that they read, each once.
fn through_locals(k: &Kernel, defs: &HashMap<LocalId, ExprId>, root: ExprId) -> Vec<ExprId> {
    let mut stack = vec![root];
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    while let Some(at) = stack.pop() {
        for id in k.reachable(at) {
            if !seen.insert(id) {
                continue;
            }
            if let ExprKind::Local(l) = &k.exprs[id].kind {
                stack.extend(defs.get(l));
            }
            out.push(id);
        }
    }
    out
}

/// One iteration of a loop, written into the output kernel.
struct Copy<'a> {
    input: &'a Kernel,
    out: &'a mut Kernel,
    body: &'a [Stmt],
    /// The locals renamed in this iteration (the body's own), and the
    /// loop's variable's value.
    renamed: HashMap<LocalId, LocalId>,
    var: LocalId,
    j: i32,
    memo: HashMap<ExprId, ExprId>,
    /// The body's scalar `let`s whose value folds to a constant in this
    /// iteration (`let c = j * 256`, `analysis::constant_values`), and a
    /// node of that constant: their reads read it, so that the same chunk
    /// named through `c` in two loops is one value number.
    constants: HashMap<LocalId, ExprId>,
}

impl<'a> Copy<'a> {
    fn new(
        input: &'a Kernel,
        out: &'a mut Kernel,
        (var, j, first): (LocalId, i32, bool),
        body: &'a [Stmt],
    ) -> Self {
        // Each local the body declares gets a local of its own per
        // iteration: a `let` (or a `var` whose first statement is in the
        // body) is not read after its loop.
        // The first iteration keeps the body's own locals.
        let mut renamed = HashMap::new();
        for s in body {
            if let Stmt::Let { local, .. } | Stmt::Var { local, .. } = s
                && !renamed.contains_key(local)
            {
                let copy = match first {
                    true => *local,
                    false => out.locals.push(input.locals[*local].clone()),
                };
                renamed.insert(*local, copy);
            }
        }
        Copy {
            input,
            out,
            body,
            renamed,
            var,
            j,
            memo: HashMap::new(),
            constants: HashMap::new(),
        }
    }

    fn emit(mut self, into: &mut Vec<Stmt>) {
        for s in self.body {
            if let Stmt::Let { local, value } = s
                && self.input.locals[*local].shape.is_empty()
            {
                let v = self.expr(*value);
                if let Some(c) = analysis::constant_values(self.out)[v] {
                    let e = &self.out.exprs[v];
                    let (ty, shape) = (e.ty, e.shape.clone());
                    let node = self.out.exprs.push(Expr {
                        kind: ExprKind::Const(c),
                        ty,
                        shape,
                    });
                    self.constants.insert(*local, node);
                    continue;
                }
            }
            let s = match s {
                Stmt::Let { local, value } => Stmt::Let {
                    local: self.renamed[local],
                    value: self.expr(*value),
                },
                Stmt::Var { local, value } => Stmt::Var {
                    local: self.renamed[local],
                    value: self.expr(*value),
                },
                Stmt::Store {
                    place,
                    index,
                    value,
                } => Stmt::Store {
                    place: self.place(*place),
                    index: index.iter().map(|i| i.map(|e| self.expr(e))).collect(),
                    value: self.expr(*value),
                },
                Stmt::For { .. } | Stmt::EndFor => unreachable!("`qualifies` takes no nested loop"),
            };
            into.push(s);
        }
    }

    fn place(&self, p: Place) -> Place {
        match p {
            Place::Local(l) => Place::Local(self.renamed.get(&l).copied().unwrap_or(l)),
            Place::Param(_) => p,
        }
    }

    /// Node `id` of this iteration: itself where it reads no local, else a
    /// copy appended to the arena (after its operands).
    fn expr(&mut self, id: ExprId) -> ExprId {
        if let Some(&to) = self.memo.get(&id) {
            return to;
        }
        let input = self.input;
        let e = &input.exprs[id];
        let kind = match &e.kind {
            ExprKind::Local(l) if *l == self.var => ExprKind::Const(Value::I32(self.j)),
            ExprKind::Local(l) if self.constants.contains_key(l) => {
                let to = self.constants[l];
                self.memo.insert(id, to);
                return to;
            }
            ExprKind::Local(l) => ExprKind::Local(self.renamed.get(l).copied().unwrap_or(*l)),
            ExprKind::Load { place, .. } => {
                let place = self.place(*place);
                match e.kind.map_operands(|x| self.expr(x)) {
                    ExprKind::Load { index, .. } => ExprKind::Load { place, index },
                    _ => unreachable!("a load maps to a load"),
                }
            }
            other => other.map_operands(|x| self.expr(x)),
        };
        // A local's read is a node of its own in each iteration, so that
        // each iteration's reads can see their own version of a `var`
        // (`versions.rs` splits a `var` only where no node is shared).
        let read = matches!(e.kind, ExprKind::Local(_));
        let to = if kind == e.kind && !read {
            id
        } else {
            self.out.exprs.push(Expr {
                kind,
                ty: e.ty,
                shape: e.shape.clone(),
            })
        };
        self.memo.insert(id, to);
        to
    }
}
