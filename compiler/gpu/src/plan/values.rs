//! Where each `let` and `var` lives on the GPU, decided from the IR alone.
//!
//! `let` names a value; it does not place it. A tile bound by `let` is
//! planned like the same expression written inline wherever that computes
//! the same bits and costs no more:
//!
//! - **inline**: every use reads the tile whole, at the position of the
//!   statement that uses it (`ExprKind::Local`), and nothing the value
//!   reads is written between the `let` and its last use. The value is then
//!   substituted into its uses, so the lowering sees the kernel as if the
//!   user had written the expression there: its loads go 16 bytes at a
//!   time, the row cache (`lower/row_cache.rs`) keeps the values that the
//!   reductions and the store share in registers by value number, and
//!   Tandem draws are stepped along the store. A `let` cannot name `iota`
//!   (the checker refuses it), so its value at a position is the same
//!   wherever it is computed: inlining moves work, never bits.
//! - **workgroup memory**: a value that reduces (a row's `sum` is computed
//!   once by the whole workgroup, `lower/coop_reduce.rs`), one broadcast
//!   over a larger tile (a per-row value, such as `1.0 / s`, computed once
//!   per row rather than once per element), one read through a slice or
//!   from inside a loop it was not bound in (recomputed at every
//!   iteration otherwise), one whose reads are overwritten before its last
//!   use, a product several statements read (each would compute it again;
//!   through the `let`s it reads inline too), and a Tandem draw used by
//!   several statements (each would step its chunks again).
//! - **registers**: scalars; each invocation computes and keeps its own.
//!
//! A `var` assigned after its declaration (one that `versions.rs` does not
//! split: an accumulator in a loop, an assignment through a slice) keeps
//! its home: workgroup memory for tiles, registers for scalars. One never
//! assigned again (a tile a loop's body declares and reduces, say, or a
//! version of a split `var`) names a value as a `let` does, and is planned
//! as one.

use phobos_core::ir::{
    Builtin, ExprId, ExprKind, IdVec, Kernel, LocalId, LocalKind, Place, Stmt, analysis,
};
use phobos_core::types::{Dim, Shape};

/// Where the plan puts one `let`, `var` or loop variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Home {
    /// Substituted into its uses and computed there (in registers, shared
    /// through the row cache where the reductions and the store read it).
    Inline,
    /// A scalar in each invocation's own variable.
    Registers,
    /// A tile in workgroup memory, of this many bytes (`None` where the
    /// extent depends on a dim that a launch fixes).
    Workgroup(Option<u64>),
}

/// The plan of one local: where it lives, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValuePlan {
    pub name: String,
    pub kind: LocalKind,
    /// The local's type as the source writes it (`f32[R, N]`).
    pub ty: String,
    pub home: Home,
    pub why: String,
}

/// Decides every local's home; `inline[l]` is true for the `let`s that
/// [`inline`] substitutes.
pub fn place(k: &Kernel) -> (Vec<ValuePlan>, IdVec<LocalId, bool>) {
    let uses = Uses::of(k);
    let mut plans = Vec::new();
    let mut inline = IdVec::<LocalId, bool>::from_elem(false, k.locals.len());
    // Locals no statement declares (a loop written out leaves its
    // variable, and the constant `let`s it substituted, `unroll.rs`) have
    // no value to place.
    let mut declared = IdVec::<LocalId, bool>::from_elem(false, k.locals.len());
    for s in &k.body {
        match s {
            Stmt::Let { local, .. } | Stmt::Var { local, .. } | Stmt::For { local, .. } => {
                declared[*local] = true;
            }
            Stmt::Store { .. } | Stmt::EndFor => {}
        }
    }
    for (l, local) in k.locals.iter_enumerated() {
        let (home, why) = decide(k, &uses, &inline, l);
        inline[l] = home == Home::Inline;
        if !declared[l] {
            continue;
        }
        plans.push(ValuePlan {
            name: local.name.clone(),
            kind: local.kind,
            ty: format!("{}{}", local.elem, k.shape_text(&local.shape)),
            home,
            why,
        });
    }
    (plans, inline)
}

fn workgroup(k: &Kernel, l: LocalId) -> Home {
    let local = &k.locals[l];
    let bytes = local
        .shape
        .iter()
        .try_fold(local.elem.size().max(4) as u64, |n, d| match d {
            Dim::Const(v) => Some(n.saturating_mul(*v)),
            Dim::Sym(_) => None,
        });
    Home::Workgroup(bytes)
}

/// The nodes `value` computes where it is inlined: those it reaches, and
/// those of the `let`s and `var`s it reads that are already planned
/// inline (`inline`, decided in declaration order), which it then
/// computes too.
fn computed(k: &Kernel, uses: &Uses, inline: &IdVec<LocalId, bool>, value: ExprId) -> Vec<ExprId> {
    let mut out = Vec::new();
    let mut seen = IdVec::<ExprId, bool>::from_elem(false, k.exprs.len());
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        for n in k.reachable(v) {
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            if let ExprKind::Local(l) = k.exprs[n].kind
                && inline[l]
                && let Some((_, d)) = uses.defs[l]
            {
                stack.push(d);
            }
            out.push(n);
        }
    }
    out
}

fn decide(k: &Kernel, uses: &Uses, inline: &IdVec<LocalId, bool>, l: LocalId) -> (Home, String) {
    let local = &k.locals[l];
    if local.kind == LocalKind::Loop {
        return (Home::Registers, "a loop variable".into());
    }
    if local.shape.is_empty() {
        return (
            Home::Registers,
            "a scalar: each invocation computes and keeps its own".into(),
        );
    }
    if local.kind == LocalKind::Var && uses.assigned[l] {
        return (
            workgroup(k, l),
            "a `var` tile: assigned in place, shared by the workgroup".into(),
        );
    }
    let Some((at, value)) = uses.defs[l] else {
        return (workgroup(k, l), "never bound (unreachable)".into());
    };
    let keep = |why: &str| (workgroup(k, l), why.to_string());
    if k.exprs[value].shape != local.shape {
        return keep("a `var` declared by broadcasting a smaller value");
    }
    let nodes = k.reachable(value);
    let computed = computed(k, uses, inline, value);
    // A `var` never assigned after its declaration names a value as a
    // `let` does, but it may name `iota`, whose value is the position it
    // is computed at: it moves only to readers at its own positions.
    // A product computes its operands at positions of their own, and the
    // IR keeps `iota` out of them. A `let` holds `iota` through the
    // `var`s it reads inline.
    if computed
        .iter()
        .any(|&n| matches!(k.exprs[n].kind, ExprKind::Iota(_)))
    {
        if uses.broadcast[l] {
            return keep("`iota` read over a larger tile: computed once at its own positions");
        }
        let in_dot = k.exprs.iter().any(|e| {
            matches!(e.kind, ExprKind::Dot { .. })
                && e.kind.operands().into_iter().any(|x| {
                    k.reachable(x)
                        .iter()
                        .any(|&n| k.exprs[n].kind == ExprKind::Local(l))
                })
        });
        if in_dot {
            return keep("`iota` read by a product: computed once at its own positions");
        }
    }
    if nodes
        .iter()
        .any(|&n| matches!(k.exprs[n].kind, ExprKind::Reduce { .. }))
    {
        return keep("it reduces: the workgroup computes it once for every use");
    }
    if uses.sliced[l] {
        return keep("read through a slice, not whole at each position");
    }
    let stmts = &uses.stmts[l];
    if stmts.is_empty() {
        return (Home::Inline, "never read: not computed at all".into());
    }
    if stmts.iter().any(|&s| uses.scope[s] != uses.scope[at]) {
        return keep(
            "read inside a loop it was not bound in: computed once, not at every iteration",
        );
    }
    // Where several statements read a product, inlining would compute it
    // in each of them, whether the product is the value's own or that of
    // a `let` it reads, itself inline.
    if stmts.len() > 1
        && computed
            .iter()
            .any(|&n| matches!(k.exprs[n].kind, ExprKind::Dot { .. }))
    {
        return keep("a product that several statements read: computed once");
    }
    let cheap = nodes.len() <= 2
        && nodes
            .iter()
            .all(|&n| !matches!(k.exprs[n].kind, ExprKind::Builtin(..)));
    if !cheap && uses.broadcast[l] {
        return keep(match uses.product_operand[l] {
            true => "an operand of a product: computed once, not once per tile of the result",
            false => "broadcast over a larger tile: computed once per row, not once per element",
        });
    }
    let draws = computed
        .iter()
        .any(|&n| matches!(k.exprs[n].kind, ExprKind::Builtin(Builtin::TandemWord, _)));
    if draws && stmts.len() > 1 {
        return keep("Tandem draws read by several statements: drawn once");
    }
    let reads = analysis::reads(k, value);
    let last = *stmts.iter().max().expect("not empty");
    for s in &k.body[at + 1..=last] {
        if analysis::access(k, s)
            .writes
            .iter()
            .any(|w| reads.contains(w))
        {
            return keep("what it reads is written before its last use");
        }
    }
    // The substitution keeps the arena in topological order only where
    // the value precedes every node that names or reads the local.
    if uses.readers[l].iter().any(|&r| r <= value) {
        return keep("its value follows a reader in the arena");
    }
    let n = stmts.len();
    (
        Home::Inline,
        if n == 1 {
            "computed where its one statement reads it".into()
        } else {
            format!(
                "computed where each of its {n} statements reads it (a row's values are kept in registers)"
            )
        },
    )
}

/// What the decisions need to know of each local's uses.
struct Uses {
    /// The statement that binds a `let` or declares a `var`, and its value.
    defs: IdVec<LocalId, Option<(usize, ExprId)>>,
    /// Whether a `var` is assigned after its declaration.
    assigned: IdVec<LocalId, bool>,
    /// The statements that read it (sorted, each once).
    stmts: IdVec<LocalId, Vec<usize>>,
    /// The `Local(l)` nodes, and the nodes that have one as an operand.
    readers: IdVec<LocalId, Vec<ExprId>>,
    /// Whether some reader broadcasts it to a larger shape.
    broadcast: IdVec<LocalId, bool>,
    /// Whether it is read through a slice (`Load` of the local).
    sliced: IdVec<LocalId, bool>,
    /// Whether a product reads it as an operand (a reader of another
    /// shape, so [`Uses::broadcast`] too).
    product_operand: IdVec<LocalId, bool>,
    /// The innermost `for` around each statement.
    scope: Vec<Option<usize>>,
}

impl Uses {
    fn of(k: &Kernel) -> Uses {
        let n = k.locals.len();
        let mut u = Uses {
            defs: IdVec::from_elem(None, n),
            assigned: IdVec::from_elem(false, n),
            stmts: IdVec::from_elem(Vec::new(), n),
            readers: IdVec::from_elem(Vec::new(), n),
            broadcast: IdVec::from_elem(false, n),
            sliced: IdVec::from_elem(false, n),
            product_operand: IdVec::from_elem(false, n),
            scope: k.scopes(),
        };
        for (id, e) in k.exprs.iter_enumerated() {
            if let ExprKind::Load {
                place: Place::Local(l),
                ..
            } = e.kind
            {
                u.sliced[l] = true;
            }
            if let ExprKind::Local(l) = e.kind {
                u.readers[l].push(id);
            }
            for x in e.kind.operands() {
                if let ExprKind::Local(l) = k.exprs[x].kind {
                    u.readers[l].push(id);
                    // A reduction reads its operand over the operand's own
                    // shape; every other node over its own.
                    let over: &Shape = match e.kind {
                        ExprKind::Reduce { .. } => &k.exprs[x].shape,
                        _ => &e.shape,
                    };
                    if *over != k.locals[l].shape {
                        u.broadcast[l] = true;
                    }
                    if matches!(e.kind, ExprKind::Dot { .. }) {
                        u.product_operand[l] = true;
                    }
                }
            }
        }
        for (s, stmt) in k.body.iter().enumerate() {
            match stmt {
                Stmt::Let { local, value } | Stmt::Var { local, value } => {
                    u.defs[*local] = Some((s, *value));
                }
                Stmt::Store {
                    place: Place::Local(l),
                    ..
                } => u.assigned[*l] = true,
                Stmt::Store { .. } | Stmt::For { .. } | Stmt::EndFor => {}
            }
            let mut roots: Vec<ExprId> = stmt.value().into_iter().collect();
            if let Stmt::Store { index, .. } = stmt {
                roots.extend(index.iter().filter_map(|i| i.expr()));
            }
            let mut read = Vec::new();
            for r in roots {
                for id in k.reachable(r) {
                    if let ExprKind::Local(l) = k.exprs[id].kind
                        && !read.contains(&l)
                    {
                        read.push(l);
                    }
                }
            }
            for l in read {
                u.stmts[l].push(s);
                // A statement's value that is the local itself reads it at
                // the statement's tile.
                if stmt
                    .value()
                    .is_some_and(|v| k.exprs[v].kind == ExprKind::Local(l))
                    && analysis::stmt_tile(k, stmt).as_ref() != Some(&k.locals[l].shape)
                {
                    u.broadcast[l] = true;
                }
            }
        }
        u
    }
}

/// `k` with every `let` marked in `inline` substituted into its uses, its
/// statement removed and its local dropped from the arena (the others
/// renumbered in order, so a kernel with nothing inlined is unchanged).
pub fn inline(k: &Kernel, inline: &IdVec<LocalId, bool>) -> Kernel {
    if !inline.iter().any(|&b| b) {
        return k.clone();
    }
    let mut value = IdVec::<LocalId, Option<ExprId>>::from_elem(None, k.locals.len());
    for s in &k.body {
        if let Stmt::Let { local, value: v } | Stmt::Var { local, value: v } = s
            && inline[*local]
        {
            value[*local] = Some(*v);
        }
    }
    // The node that stands for each node: a `Local` node of an inlined
    // `let` stands for its value (itself resolved, for chains of lets).
    let mut to = IdVec::<ExprId, ExprId>::with_capacity(k.exprs.len());
    for (id, e) in k.exprs.iter_enumerated() {
        let target = match e.kind {
            ExprKind::Local(l) => value[l].map_or(id, |v| to[v]),
            _ => id,
        };
        to.push(target);
    }
    let mut renumber = IdVec::<LocalId, Option<LocalId>>::from_elem(None, k.locals.len());
    let mut locals = IdVec::new();
    for (l, local) in k.locals.iter_enumerated() {
        if !inline[l] {
            renumber[l] = Some(locals.push(local.clone()));
        }
    }
    let new = |l: LocalId| renumber[l].expect("an inlined local is no longer read");
    let place = |p: Place| match p {
        Place::Local(l) => Place::Local(new(l)),
        Place::Param(_) => p,
    };
    let mut out = k.clone();
    out.locals = locals;
    for (id, e) in k.exprs.iter_enumerated() {
        let kind = match &e.kind {
            // Nothing reads an inlined local's node any more; it becomes a
            // copy of its value's (already mapped: `place` keeps every
            // value before the nodes that name its local), so no node names
            // a dropped local.
            ExprKind::Local(l) if inline[*l] => out.exprs[to[id]].kind.clone(),
            ExprKind::Local(l) => ExprKind::Local(new(*l)),
            ExprKind::Load { place: p, .. } => match e.kind.map_operands(|x| to[x]) {
                ExprKind::Load { index, .. } => ExprKind::Load {
                    place: place(*p),
                    index,
                },
                _ => unreachable!("map_operands keeps the kind"),
            },
            other => other.map_operands(|x| to[x]),
        };
        out.exprs[id].kind = kind;
    }
    out.body = k
        .body
        .iter()
        .filter(
            |s| !matches!(s, Stmt::Let { local, .. } | Stmt::Var { local, .. } if inline[*local]),
        )
        .map(|s| match s {
            Stmt::Let { local, value } => Stmt::Let {
                local: new(*local),
                value: to[*value],
            },
            Stmt::Var { local, value } => Stmt::Var {
                local: new(*local),
                value: to[*value],
            },
            Stmt::Store {
                place: p,
                index,
                value,
            } => Stmt::Store {
                place: place(*p),
                index: index
                    .iter()
                    .map(|i| match i {
                        phobos_core::ir::Index::Range { start, len } => {
                            phobos_core::ir::Index::Range {
                                start: start.map(|x| to[x]),
                                len: *len,
                            }
                        }
                        phobos_core::ir::Index::Single(x) => phobos_core::ir::Index::Single(to[*x]),
                    })
                    .collect(),
                // A store of the local itself (`Y[r :+ R, :] = u`) keeps
                // its node, now a copy of the value: the value may precede
                // the store's slice starts, which a statement's value may
                // not.
                value: match k.exprs[*value].kind {
                    ExprKind::Local(l) if inline[l] => *value,
                    _ => to[*value],
                },
            },
            Stmt::For { local, start, end } => Stmt::For {
                local: new(*local),
                start: to[*start],
                end: to[*end],
            },
            Stmt::EndFor => Stmt::EndFor,
        })
        .collect();
    out
}
