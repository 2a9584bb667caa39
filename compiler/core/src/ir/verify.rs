//! The IR verifier. It checks these invariants and reports every violation
//! with the entity it concerns (`%n` for an expression, `stmt n`, `local n`,
//! `param n`, `grid`):
//!
//! 1. Every reference points at an existing entity: expressions refer only to
//!    earlier expressions (the arena is in topological order), parameters,
//!    locals and dims exist, places are tensors or locals.
//! 2. Types: operands of an operation agree; comparisons give bool; `where`
//!    takes a bool condition and branches of its own type; a bitcast keeps the
//!    size; builtins take the number and types of arguments their row of
//!    `ir::builtin::TABLE` gives (its typing rule, the checker's own), and
//!    have the broadcast of their arguments' shapes; constants carry their
//!    node's type; iota, block and grid values and dim values are i32.
//! 3. Shapes: an operation's shape is the broadcast of its operands'; a load
//!    has one index per axis of its place and the shape of its range axes;
//!    slice starts and single indices are scalar integers; `iota(a)` has an
//!    axis `a` in its shape; a reduction's shape is its operand's with the
//!    reduced axis of extent 1, and no `iota` lies below its operand.
//! 4. Statements: loops nest like brackets, each loop's variable is a
//!    scalar i32 `Loop` local, readable until its `EndFor`, and its bounds
//!    are scalar i32 nodes built from constants, dims and enclosing loop
//!    variables only;
//!    a local is defined (`let`/`var`) before it is read; a store
//!    writes a tensor or a `var`, never a `let`; its value has the place's
//!    element type and broadcasts to the slice's shape.
//! 5. Flags: every tensor a statement reads (its value, its slice's starts
//!    and positions; `ir::analysis::access`) is marked `read`, and every
//!    one it writes `written`, since backends bind, upload and read back
//!    tensors by these flags. Checked once the IR is otherwise sound.
//!
//! The checker builds IR that satisfies all of this; a violation is a
//! compiler bug, reported as an internal error with the printed IR.

use super::analysis;
use super::{BinOp, UnOp};
use super::{ExprId, ExprKind, IdVec, Index, Kernel, LocalId, LocalKind, ParamKind, Place, Stmt};
use crate::types::{Dim, Scalar, Shape};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub entity: String,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.entity, self.message)
    }
}

/// Every violation of the invariants above, in arena and statement order.
pub fn verify(k: &Kernel) -> Vec<VerifyError> {
    let mut v = Verifier {
        k,
        errors: Vec::new(),
        iota_below: IdVec::with_capacity(k.exprs.len()),
    };
    for id in k.exprs.ids() {
        v.expr(id);
    }
    v.stmts();
    for (axis, g) in k.grid.iter().enumerate() {
        v.grid(g, axis);
    }
    if v.errors.is_empty() {
        v.flags();
    }
    v.errors
}

struct Verifier<'k> {
    k: &'k Kernel,
    errors: Vec<VerifyError>,
    /// Whether an `iota` is reachable from each expression verified so far.
    iota_below: IdVec<ExprId, bool>,
}

fn broadcast(a: &Shape, b: &Shape) -> Option<Shape> {
    crate::sema::broadcast_shapes(a, b)
}

impl Verifier<'_> {
    /// Invariant 5: the tensors the body reads and writes carry the flags.
    fn flags(&mut self) {
        let k = self.k;
        for (n, s) in k.body.iter().enumerate() {
            let a = analysis::access(k, s);
            for (places, reading) in [(&a.reads, true), (&a.writes, false)] {
                for p in places {
                    let Place::Param(i) = *p else { continue };
                    let Some(ParamKind::Tensor { read, written, .. }) =
                        k.params.get(i).map(|p| &p.kind)
                    else {
                        continue;
                    };
                    let (flag, what) = if reading {
                        (*read, "reads")
                    } else {
                        (*written, "writes")
                    };
                    if !flag {
                        let mark = if reading { "read" } else { "written" };
                        self.err(
                            format!("param {i}"),
                            format!("stmt {n} {what} it, but it is not marked {mark}"),
                        );
                    }
                }
            }
        }
    }

    fn err(&mut self, entity: impl Into<String>, message: impl Into<String>) {
        self.errors.push(VerifyError {
            entity: entity.into(),
            message: message.into(),
        });
    }

    /// Whether `r` is a valid reference from `%id`.
    fn operand(&mut self, id: ExprId, r: ExprId) -> bool {
        if r >= id {
            self.err(
                format!("%{id}"),
                format!("refers to %{r}, which is not an earlier expression"),
            );
            return false;
        }
        true
    }

    fn place(&mut self, entity: &str, p: Place) -> Option<(Scalar, Shape, bool)> {
        match p {
            Place::Param(i) => match self.k.params.get(i).map(|p| &p.kind) {
                Some(ParamKind::Tensor { elem, shape, .. }) => Some((*elem, shape.clone(), true)),
                Some(ParamKind::Scalar(_)) => {
                    self.err(entity, format!("param {i} is a scalar, not a tensor"));
                    None
                }
                None => {
                    self.err(entity, format!("param {i} does not exist"));
                    None
                }
            },
            Place::Local(l) => match self.k.locals.get(l) {
                Some(local) => Some((
                    local.elem,
                    local.shape.clone(),
                    local.kind == LocalKind::Var,
                )),
                None => {
                    self.err(entity, format!("local {l} does not exist"));
                    None
                }
            },
        }
    }

    fn dim(&mut self, entity: &str, d: Dim) {
        if let Dim::Sym(s) = d
            && s >= self.k.dims.len()
        {
            self.err(entity, format!("dim {s} does not exist"));
        }
    }

    /// Checks a slice; returns the shape of its range axes.
    fn index(&mut self, entity: &str, at: usize, index: &[Index], place_shape: &Shape) -> Shape {
        if index.len() != place_shape.len() {
            self.err(
                entity,
                format!(
                    "{} indices for a place of {} axes",
                    index.len(),
                    place_shape.len()
                ),
            );
        }
        let mut shape = Vec::new();
        for ix in index {
            let start = match ix {
                Index::Range { start, len } => {
                    self.dim(entity, *len);
                    shape.push(*len);
                    *start
                }
                Index::Single(s) => Some(*s),
            };
            if let Some(s) = start {
                if s.index() >= at {
                    self.err(
                        entity,
                        format!("slice start %{s} is not an earlier expression"),
                    );
                    continue;
                }
                let e = &self.k.exprs[s];
                if !e.shape.is_empty() || !e.ty.is_int() {
                    self.err(entity, format!("slice start %{s} is not a scalar integer"));
                }
            }
        }
        shape
    }

    fn expr(&mut self, id: ExprId) {
        let k = self.k;
        let e = &k.exprs[id];
        let me = format!("%{id}");
        let below = matches!(e.kind, ExprKind::Iota(_))
            || e.kind
                .operands()
                .iter()
                .any(|x| self.iota_below.get(*x).copied().unwrap_or(false));
        self.iota_below.push(below);
        for d in &e.shape {
            self.dim(&me, *d);
        }
        if e.ty.is_half() {
            self.err(&me, format!("a node of the storage type {}", e.ty));
        }
        let want_i32 = |this: &mut Self| {
            if e.ty != Scalar::I32 || !e.shape.is_empty() && !matches!(e.kind, ExprKind::Iota(_)) {
                this.err(
                    &me,
                    format!(
                        "must be a scalar i32, is {}{}",
                        e.ty,
                        k.shape_text(&e.shape)
                    ),
                );
            }
        };
        match &e.kind {
            ExprKind::Const(v) => {
                if v.scalar() != e.ty {
                    self.err(
                        &me,
                        format!("constant of type {} in a {} node", v.scalar(), e.ty),
                    );
                }
            }
            ExprKind::Param(i) => match k.params.get(*i).map(|p| &p.kind) {
                Some(ParamKind::Scalar(s)) if *s == e.ty => {}
                Some(ParamKind::Scalar(s)) => {
                    self.err(&me, format!("param {i} is {s}, node is {}", e.ty))
                }
                _ => self.err(&me, format!("param {i} is not a scalar parameter")),
            },
            ExprKind::DimValue(s) => {
                self.dim(&me, Dim::Sym(*s));
                want_i32(self);
            }
            ExprKind::BlockId(a) | ExprKind::GridSize(a) => {
                if *a > 2 {
                    self.err(&me, format!("axis {a} is not x, y or z"));
                }
                want_i32(self);
            }
            ExprKind::Iota(a) => {
                if *a as usize >= e.shape.len() {
                    self.err(
                        &me,
                        format!("iota({a}) in a tile of {} axes", e.shape.len()),
                    );
                }
                want_i32(self);
            }
            ExprKind::Local(l) => match k.locals.get(*l) {
                Some(local) if local.elem == e.ty && local.shape == e.shape => {}
                Some(_) => self.err(
                    &me,
                    format!("does not have the type and shape of local {l}"),
                ),
                None => self.err(&me, format!("local {l} does not exist")),
            },
            ExprKind::Load { place, index } => {
                if let Some((elem, shape, _)) = self.place(&me, *place) {
                    let got = self.index(&me, id.index(), index, &shape);
                    if elem.value_type() != e.ty || got != e.shape {
                        self.err(
                            &me,
                            format!(
                                "a load of {elem}{} in a {}{} node",
                                k.shape_text(&got),
                                e.ty,
                                k.shape_text(&e.shape)
                            ),
                        );
                    }
                }
            }
            ExprKind::Unary(op, a) => {
                if self.operand(id, *a) {
                    let x = &k.exprs[*a];
                    let ok = match op {
                        UnOp::Neg => x.ty.is_float() || x.ty.is_int(),
                        UnOp::Not => x.ty == Scalar::Bool || x.ty.is_int(),
                        UnOp::BitNot => x.ty.is_int(),
                    };
                    if !ok || x.ty != e.ty || x.shape != e.shape {
                        self.err(&me, format!("`{}` of {} gives {}", op.symbol(), x.ty, e.ty));
                    }
                }
            }
            ExprKind::Binary(op, a, b) => {
                if self.operand(id, *a) && self.operand(id, *b) {
                    let (x, y) = (&k.exprs[*a], &k.exprs[*b]);
                    if x.ty != y.ty {
                        self.err(
                            &me,
                            format!("operands of `{}` are {} and {}", op.symbol(), x.ty, y.ty),
                        );
                    }
                    let want = if op.is_comparison() {
                        Scalar::Bool
                    } else {
                        x.ty
                    };
                    if e.ty != want {
                        self.err(
                            &me,
                            format!(
                                "`{}` of {} gives {want}, node is {}",
                                op.symbol(),
                                x.ty,
                                e.ty
                            ),
                        );
                    }
                    let ok = match op {
                        BinOp::Rem | BinOp::Shl | BinOp::Shr => x.ty.is_int(),
                        BinOp::And | BinOp::Or => x.ty == Scalar::Bool,
                        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => x.ty != Scalar::Bool,
                        _ => true,
                    };
                    if !ok {
                        self.err(&me, format!("`{}` is not defined on {}", op.symbol(), x.ty));
                    }
                    if broadcast(&x.shape, &y.shape).as_ref() != Some(&e.shape) {
                        self.err(&me, "shape is not the broadcast of the operands' shapes");
                    }
                }
            }
            ExprKind::Cast(a) => {
                if self.operand(id, *a) && k.exprs[*a].shape != e.shape {
                    self.err(&me, "a conversion changes the shape");
                }
            }
            ExprKind::Bitcast(a) => {
                if self.operand(id, *a) {
                    let x = &k.exprs[*a];
                    if x.ty.size() != e.ty.size()
                        || x.ty == Scalar::Bool
                        || e.ty == Scalar::Bool
                        || x.shape != e.shape
                    {
                        self.err(&me, format!("bitcast of {} to {}", x.ty, e.ty));
                    }
                }
            }
            ExprKind::Select(c, a, b) => {
                if self.operand(id, *c) && self.operand(id, *a) && self.operand(id, *b) {
                    let (c, x, y) = (&k.exprs[*c], &k.exprs[*a], &k.exprs[*b]);
                    if c.ty != Scalar::Bool {
                        self.err(&me, format!("condition is {}, not bool", c.ty));
                    }
                    if x.ty != e.ty || y.ty != e.ty {
                        self.err(
                            &me,
                            format!("branches are {} and {}, node is {}", x.ty, y.ty, e.ty),
                        );
                    }
                    let s = broadcast(&x.shape, &y.shape).and_then(|s| broadcast(&c.shape, &s));
                    if s.as_ref() != Some(&e.shape) {
                        self.err(
                            &me,
                            "shape is not the broadcast of the condition's and branches' shapes",
                        );
                    }
                }
            }
            ExprKind::Builtin(f, xs) => {
                let def = f.def();
                if xs.len() != def.arity {
                    self.err(
                        &me,
                        format!(
                            "{} takes {} arguments, has {}",
                            f.name(),
                            def.arity,
                            xs.len()
                        ),
                    );
                }
                if let (Some(q), Some(n)) = (f.word(), def.word)
                    && q >= n
                {
                    self.err(&me, format!("{} has words 0 to {}", f.name(), n - 1));
                }
                if !xs.iter().all(|x| self.operand(id, *x)) {
                    return;
                }
                let types: Vec<Scalar> = xs.iter().map(|x| k.exprs[*x].ty).collect();
                match def.typing.result(&types) {
                    Ok(t) if t == e.ty => {}
                    Ok(t) => self.err(&me, format!("{} gives {t}, node is {}", f.name(), e.ty)),
                    Err(i) => self.err(
                        &me,
                        format!(
                            "argument %{} of {} is {}, which its typing rule {:?} refuses",
                            xs[i],
                            f.name(),
                            types[i],
                            def.typing
                        ),
                    ),
                }
                let shape = xs
                    .iter()
                    .try_fold(Vec::new(), |acc, x| broadcast(&acc, &k.exprs[*x].shape));
                if shape.as_ref() != Some(&e.shape) {
                    self.err(&me, "shape is not the broadcast of the arguments' shapes");
                }
            }
            ExprKind::Reduce { op, arg, axis } => {
                if !self.operand(id, *arg) {
                    return;
                }
                let x = &k.exprs[*arg];
                let a = *axis as usize;
                let mut want = x.shape.clone();
                if a < want.len() {
                    want[a] = Dim::Const(1);
                } else {
                    self.err(
                        &me,
                        format!(
                            "{} over axis {a} of a rank-{} operand",
                            op.name(),
                            want.len()
                        ),
                    );
                }
                if e.shape != want {
                    self.err(
                        &me,
                        "shape is not the operand's with the reduced axis of extent 1",
                    );
                }
                let ty = if op.is_index() { Scalar::I32 } else { x.ty };
                if e.ty != ty || x.ty == Scalar::Bool {
                    self.err(&me, format!("{} of {} is {}", op.name(), x.ty, e.ty));
                }
            }
            ExprKind::Dot { a, b, acc } => {
                let ops: Vec<ExprId> = [*a, *b].into_iter().chain(*acc).collect();
                if !ops.iter().all(|x| self.operand(id, *x)) {
                    return;
                }
                let (x, y) = (&k.exprs[*a], &k.exprs[*b]);
                let ok = x.shape.len() == 2
                    && y.shape.len() == 2
                    && x.shape[1] == y.shape[0]
                    && e.shape == [x.shape[0], y.shape[1]];
                if !ok {
                    self.err(&me, "dot of shapes that are not [M, K] x [K, N] -> [M, N]");
                }
                if let Some(c) = acc
                    && broadcast(&k.exprs[*c].shape, &e.shape).as_ref() != Some(&e.shape)
                {
                    self.err(&me, "the accumulator does not broadcast to the product");
                }
                if ops.iter().any(|o| k.exprs[*o].ty != Scalar::F32) || e.ty != Scalar::F32 {
                    self.err(&me, "dot is of f32");
                }
                if self.iota_below[*a] || self.iota_below[*b] {
                    self.err(&me, "an iota lies below an operand of dot");
                }
            }
            ExprKind::Transpose(x) => {
                if !self.operand(id, *x) {
                    return;
                }
                let x = &k.exprs[*x];
                if x.shape.len() != 2 || e.shape != [x.shape[1], x.shape[0]] || e.ty != x.ty {
                    self.err(
                        &me,
                        "trans of a tile that is not 2-D, or of another shape or type",
                    );
                }
            }
        }
    }

    fn stmts(&mut self) {
        let k = self.k;
        let mut defined = IdVec::from_elem(false, k.locals.len());
        let mut reads: Vec<(ExprId, LocalId)> = Vec::new();
        // The statement (plus one) that last reached each expression, so
        // that each statement walks only its own value: linear in the IR.
        let mut seen = IdVec::from_elem(0usize, k.exprs.len());
        let mut stack = Vec::new();
        let loops = k.loops();
        for (n, s) in k.body.iter().enumerate() {
            let me = format!("stmt {n}");
            if let Stmt::For { .. } | Stmt::EndFor = s
                && loops[n].is_none()
            {
                self.err(&me, "a loop bracket without its match");
            }
            let value = match s {
                Stmt::Let { value, .. } | Stmt::Var { value, .. } | Stmt::Store { value, .. } => {
                    *value
                }
                Stmt::For { local, start, end } => {
                    self.loop_header(&me, *local, [*start, *end], &defined);
                    if let Some(d) = defined.get_mut(*local) {
                        *d = true;
                    }
                    continue;
                }
                Stmt::EndFor => {
                    if let Some(Stmt::For { local, .. }) = loops[n].map(|f| &k.body[f])
                        && let Some(d) = defined.get_mut(*local)
                    {
                        *d = false;
                    }
                    continue;
                }
            };
            if value.index() >= k.exprs.len() {
                self.err(&me, format!("value %{value} does not exist"));
                continue;
            }
            // Locals read by this statement must be defined by an earlier one.
            reads.clear();
            reachable(k, value, n + 1, &mut seen, &mut stack, |id| {
                if let ExprKind::Local(l)
                | ExprKind::Load {
                    place: Place::Local(l),
                    ..
                } = k.exprs[id].kind
                {
                    reads.push((id, l));
                }
            });
            reads.sort_unstable();
            for &(id, l) in &reads {
                if !defined.get(l).copied().unwrap_or(false) {
                    self.err(&me, format!("%{id} reads local {l} before it is defined"));
                }
            }
            let v = &k.exprs[value];
            match s {
                Stmt::Let { local, .. } | Stmt::Var { local, .. } => {
                    let Some(l) = k.locals.get(*local) else {
                        self.err(&me, format!("local {local} does not exist"));
                        continue;
                    };
                    let want = if matches!(s, Stmt::Let { .. }) {
                        LocalKind::Let
                    } else {
                        LocalKind::Var
                    };
                    if l.kind != want {
                        self.err(
                            &me,
                            format!("local {local} is a {:?}, defined by a {want:?}", l.kind),
                        );
                    }
                    if v.ty != l.elem || broadcast(&v.shape, &l.shape).as_ref() != Some(&l.shape) {
                        self.err(
                            &me,
                            format!(
                                "value {}{} does not fit local {local}",
                                v.ty,
                                k.shape_text(&v.shape)
                            ),
                        );
                    }
                    defined[*local] = true;
                }
                Stmt::For { .. } | Stmt::EndFor => unreachable!("handled above"),
                Stmt::Store { place, index, .. } => {
                    if let Some((elem, shape, writable)) = self.place(&me, *place) {
                        if !writable {
                            self.err(&me, "stores to a let");
                        }
                        if let Place::Local(l) = place
                            && !defined[*l]
                        {
                            self.err(&me, format!("stores to local {l} before it is defined"));
                        }
                        let target = self.index(&me, value.index() + 1, index, &shape);
                        if v.ty != elem.value_type() {
                            self.err(&me, format!("stores {} into {elem}", v.ty));
                        }
                        if broadcast(&v.shape, &target).as_ref() != Some(&target) {
                            self.err(
                                &me,
                                format!(
                                    "value shape {} does not broadcast to {}",
                                    k.shape_text(&v.shape),
                                    k.shape_text(&target)
                                ),
                            );
                        }
                    }
                }
            }
        }
    }

    /// A loop's variable is a scalar i32 `Loop` local, and its bounds are
    /// scalar i32 nodes whose leaves are constants, dims and the variables
    /// of enclosing loops (open: `defined`).
    fn loop_header(
        &mut self,
        me: &str,
        local: LocalId,
        bounds: [ExprId; 2],
        defined: &IdVec<LocalId, bool>,
    ) {
        let k = self.k;
        match k.locals.get(local) {
            Some(l) if l.kind == LocalKind::Loop && l.elem == Scalar::I32 && l.shape.is_empty() => {
            }
            _ => self.err(
                me,
                format!("local {local} is not a scalar i32 loop variable"),
            ),
        }
        for b in bounds {
            let Some(e) = k.exprs.get(b) else {
                self.err(me, format!("bound %{b} does not exist"));
                continue;
            };
            if e.ty != Scalar::I32 || !e.shape.is_empty() {
                self.err(me, format!("bound %{b} is not a scalar i32"));
            }
            let mut bad = Vec::new();
            let mut seen = IdVec::from_elem(0, k.exprs.len());
            reachable(k, b, 1, &mut seen, &mut Vec::new(), |id| {
                match k.exprs[id].kind {
                    ExprKind::Const(_) | ExprKind::DimValue(_) => {}
                    ExprKind::Local(l)
                        if k.locals.get(l).is_some_and(|l| l.kind == LocalKind::Loop)
                            && defined.get(l).copied().unwrap_or(false) => {}
                    ExprKind::Unary(..) | ExprKind::Binary(..) | ExprKind::Cast(_) => {}
                    _ => bad.push(id),
                }
            });
            if let Some(id) = bad.first() {
                self.err(me, format!("bound %{b} depends on %{id}, which is not a constant, dim or enclosing loop variable"));
            }
        }
    }

    fn grid(&mut self, g: &super::GridExpr, axis: usize) {
        use super::GridExpr::*;
        match g {
            Const(_) => {}
            Dim(s) => {
                if *s >= self.k.dims.len() {
                    self.err(
                        "grid",
                        format!("axis {axis} uses dim {s}, which does not exist"),
                    );
                }
            }
            Add(a, b) | Sub(a, b) | Mul(a, b) | Div(a, b) | Cdiv(a, b) => {
                self.grid(a, axis);
                self.grid(b, axis);
            }
        }
    }
}

/// Calls `visit` once on each expression `root` depends on (itself
/// included) that `seen` does not already mark with `stamp`, and marks it.
/// Operands are always earlier expressions (checked per expression), so
/// anything later than `root` is not followed.
fn reachable(
    k: &Kernel,
    root: ExprId,
    stamp: usize,
    seen: &mut IdVec<ExprId, usize>,
    stack: &mut Vec<ExprId>,
    mut visit: impl FnMut(ExprId),
) {
    stack.clear();
    stack.push(root);
    while let Some(id) = stack.pop() {
        if id > root || seen[id] == stamp {
            continue;
        }
        seen[id] = stamp;
        visit(id);
        stack.extend(k.exprs[id].kind.operands());
    }
}
