//! The checked kernel: every name resolved, every type and shape known, every
//! `fn` inlined, one configuration chosen. Backends read only this.
//!
//! Expressions live in one arena per kernel and refer to each other by
//! [`ExprId`]; an argument used twice by an inlined `fn` is one shared node.
//! Ids are typed ([`id`]): an expression id, a local id and a plain index
//! are different types, and the arenas are indexed by their own id only.

use crate::span::Span;
use crate::types::{Dim, Scalar, Shape, SymId, Value};
use std::fmt::Write;

pub mod analysis;
mod builtin;
pub mod id;
mod op;
pub mod range;
pub mod reduce;
mod verify;
pub use builtin::{Builtin, Def as BuiltinDef, Native, TABLE as BUILTINS, Typing};
pub use id::{ExprId, IdVec, LocalId};
pub use op::{BinOp, UnOp};
pub use reduce::ReduceOp;
pub use verify::{VerifyError, verify};

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    /// Symbolic dimension names, bound at launch from the tensors given.
    pub dims: Vec<String>,
    /// For each symbolic dim, a power of two its launch value is known to
    /// be a multiple of (missing: 1). Sema knows nothing; a backend that
    /// lowers for a launch may record what the launch's values show
    /// (`phobos_gpu::specialize`: a tensor whose rows are a multiple of 4
    /// long moves 16 bytes at a time). Part of the printed form.
    pub dim_align: Vec<u64>,
    /// The chosen value of each `@autotune` parameter.
    pub config: Vec<(String, i64)>,
    pub grid: [GridExpr; 3],
    pub locals: IdVec<LocalId, Local>,
    pub exprs: IdVec<ExprId, Expr>,
    pub body: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    /// Where the kernel's signature declares it, for diagnostics (`None`
    /// for the parameters the compiler adds, such as a check's output).
    /// Neither printed nor part of the fingerprint.
    pub span: Option<Span>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    Tensor {
        elem: Scalar,
        shape: Shape,
        /// Whether the kernel loads from it, and whether it stores to it.
        read: bool,
        written: bool,
    },
    Scalar(Scalar),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalKind {
    Let,
    Var,
    /// The variable of a `for` loop: a scalar i32 that only its loop sets.
    Loop,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    pub name: String,
    pub kind: LocalKind,
    pub elem: Scalar,
    pub shape: Shape,
    /// The statement that declares it (a `let`, `var` or `for`, or the one
    /// whose reduction the checker moved into it), for diagnostics that
    /// concern the value, such as a GPU's workgroup memory; `None` for the
    /// locals a backend makes. Neither printed nor part of the fingerprint.
    pub span: Option<Span>,
}

/// The number of blocks along one grid axis, as a formula of the launch's dims.
#[derive(Clone, Debug, PartialEq)]
pub enum GridExpr {
    Const(i64),
    Dim(SymId),
    Add(Box<GridExpr>, Box<GridExpr>),
    Sub(Box<GridExpr>, Box<GridExpr>),
    Mul(Box<GridExpr>, Box<GridExpr>),
    Div(Box<GridExpr>, Box<GridExpr>),
    /// Division rounded up.
    Cdiv(Box<GridExpr>, Box<GridExpr>),
}

impl GridExpr {
    /// Evaluates with the launch's dims; `None` when a division by zero occurs.
    pub fn eval(&self, dims: &[u64]) -> Option<i64> {
        Some(match self {
            GridExpr::Const(v) => *v,
            GridExpr::Dim(s) => dims[*s] as i64,
            GridExpr::Add(a, b) => a.eval(dims)?.checked_add(b.eval(dims)?)?,
            GridExpr::Sub(a, b) => a.eval(dims)?.checked_sub(b.eval(dims)?)?,
            GridExpr::Mul(a, b) => a.eval(dims)?.checked_mul(b.eval(dims)?)?,
            GridExpr::Div(a, b) => a.eval(dims)?.checked_div(b.eval(dims)?)?,
            GridExpr::Cdiv(a, b) => {
                let (a, b) = (a.eval(dims)?, b.eval(dims)?);
                if b == 0 {
                    return None;
                }
                a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0)
            }
        })
    }

    pub fn display(&self, names: &[String]) -> String {
        match self {
            GridExpr::Const(v) => v.to_string(),
            GridExpr::Dim(s) => names[*s].clone(),
            GridExpr::Add(a, b) => format!("({} + {})", a.display(names), b.display(names)),
            GridExpr::Sub(a, b) => format!("({} - {})", a.display(names), b.display(names)),
            GridExpr::Mul(a, b) => format!("({} * {})", a.display(names), b.display(names)),
            GridExpr::Div(a, b) => format!("({} / {})", a.display(names), b.display(names)),
            GridExpr::Cdiv(a, b) => format!("cdiv({}, {})", a.display(names), b.display(names)),
        }
    }
}

/// Where a load reads or a store writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Param(usize),
    Local(LocalId),
}

/// One axis of a slice.
#[derive(Clone, Debug, PartialEq)]
pub enum Index {
    /// `start :+ len` (`:` is `0 :+ dim`); the axis is kept.
    Range { start: Option<ExprId>, len: Dim },
    /// A single position; the axis is dropped.
    Single(ExprId),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// Evaluates `value` over the local's own shape, once per block.
    Let { local: LocalId, value: ExprId },
    /// Evaluates `value` over the declared shape; `iota` is a position in it.
    Var { local: LocalId, value: ExprId },
    /// Evaluates `value` over the slice's shape and writes the elements that
    /// lie inside the destination; `iota` is a position in the slice.
    Store {
        place: Place,
        index: Vec<Index>,
        value: ExprId,
    },
    /// `for local in start .. end`: the statements up to the matching
    /// [`Stmt::EndFor`] (loops nest like brackets, [`Kernel::loops`]) run
    /// once for each i32 value of `local` from `start` up to `end`
    /// excluded, in order; none when `end <= start`. `start` and `end` are
    /// scalar i32 nodes of constants, dims and enclosing loop variables
    /// only, evaluated once when the loop starts, so every loop is finite
    /// and every invocation of a block runs it the same number of times.
    For {
        local: LocalId,
        start: ExprId,
        end: ExprId,
    },
    /// The end of the innermost open [`Stmt::For`].
    EndFor,
}

impl Stmt {
    /// The value a statement computes, if it computes one.
    pub fn value(&self) -> Option<ExprId> {
        match self {
            Stmt::Let { value, .. } | Stmt::Var { value, .. } | Stmt::Store { value, .. } => {
                Some(*value)
            }
            Stmt::For { .. } | Stmt::EndFor => None,
        }
    }

    /// Every node the statement reads directly: its value, a store's
    /// index expressions, a loop's bounds.
    pub fn roots(&self) -> Vec<ExprId> {
        match self {
            Stmt::Let { value, .. } | Stmt::Var { value, .. } => vec![*value],
            Stmt::Store { index, value, .. } => index
                .iter()
                .filter_map(|i| i.expr())
                .chain([*value])
                .collect(),
            Stmt::For { start, end, .. } => vec![*start, *end],
            Stmt::EndFor => Vec::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Scalar,
    pub shape: Shape,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Const(Value),
    /// A scalar parameter.
    Param(usize),
    /// The launch's extent of a symbolic dimension, as i32.
    DimValue(SymId),
    /// `ctx.block.{x,y,z}`: this block's index (i32).
    BlockId(u8),
    /// `ctx.grid.{x,y,z}`: the number of blocks (i32).
    GridSize(u8),
    /// The position along an axis of the tile being computed (i32): the
    /// statement's, or a reduction operand's own, where the operand is
    /// computed over its shape. The checker refuses `iota` inside a
    /// reduction in source, where the two would be ambiguous; the GPU plan
    /// moves a `var` that names it into a reduction that reads it whole
    /// (`phobos_gpu::plan::values`), where the positions coincide.
    Iota(u8),
    Local(LocalId),
    Load {
        place: Place,
        index: Vec<Index>,
    },
    Unary(UnOp, ExprId),
    Binary(BinOp, ExprId, ExprId),
    /// A value conversion to `ty`.
    Cast(ExprId),
    /// A reinterpretation of the bits as `ty`.
    Bitcast(ExprId),
    Select(ExprId, ExprId, ExprId),
    Builtin(Builtin, Vec<ExprId>),
    /// A reduction of `arg` along its axis `axis` (an axis of the node's own
    /// shape, which is `arg`'s with that axis of extent 1). Its order of
    /// evaluation is [`reduce`]'s, on every backend.
    Reduce {
        op: ReduceOp,
        arg: ExprId,
        axis: u8,
    },
    /// `dot(a, b)` or `dot(a, b, acc)`: the matrix product of `a`, of
    /// shape `[M, K]`, and `b`, `[K, N]`, f32, of shape `[M, N]`. Element
    /// `(i, j)` starts from `acc`'s element (or `+0.0`) and adds
    /// `a(i, k) * b(k, j)` for `k` from 0 up to `K`, in that order, each
    /// product and each sum rounded on its own (never fused). Its value
    /// depends only on its position, as a reduction's does; `iota` is
    /// refused inside `a` and `b`.
    Dot {
        a: ExprId,
        b: ExprId,
        acc: Option<ExprId>,
    },
    /// `trans(x)`: the 2-D tile `x` with its two axes swapped, so element
    /// `(i, j)` is `x`'s `(j, i)`.
    Transpose(ExprId),
}

impl ExprKind {
    /// The node's operands, in order: the one definition of the expression
    /// DAG's edges that every walk uses. A load's operands are the
    /// expressions of its index (slice starts and single positions); the
    /// leaves (constants, parameters, dims, `ctx`, `iota`, locals) have
    /// none. A new node kind is added here, and every walk follows it.
    pub fn operands(&self) -> Vec<ExprId> {
        match self {
            ExprKind::Const(_)
            | ExprKind::Param(_)
            | ExprKind::DimValue(_)
            | ExprKind::BlockId(_)
            | ExprKind::GridSize(_)
            | ExprKind::Iota(_)
            | ExprKind::Local(_) => Vec::new(),
            ExprKind::Load { index, .. } => index.iter().filter_map(Index::expr).collect(),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::Bitcast(a) => vec![*a],
            ExprKind::Binary(_, a, b) => vec![*a, *b],
            ExprKind::Select(c, a, b) => vec![*c, *a, *b],
            ExprKind::Builtin(_, xs) => xs.clone(),
            ExprKind::Reduce { arg, .. } => vec![*arg],
            ExprKind::Dot { a, b, acc } => [*a, *b].into_iter().chain(*acc).collect(),
            ExprKind::Transpose(x) => vec![*x],
        }
    }

    /// The operands this node contracts along an axis: a reduction's
    /// argument and a product's two factors (not its accumulator). How
    /// such a node is computed depends on the extents of these operands,
    /// so a backend that plans the work (the GPU's `specialize`) asks
    /// whether any of them is symbolic.
    pub fn contracted(&self) -> Vec<ExprId> {
        match self {
            ExprKind::Reduce { arg, .. } => vec![*arg],
            ExprKind::Dot { a, b, .. } => vec![*a, *b],
            ExprKind::Const(_)
            | ExprKind::Param(_)
            | ExprKind::DimValue(_)
            | ExprKind::BlockId(_)
            | ExprKind::GridSize(_)
            | ExprKind::Iota(_)
            | ExprKind::Local(_)
            | ExprKind::Load { .. }
            | ExprKind::Unary(..)
            | ExprKind::Cast(_)
            | ExprKind::Bitcast(_)
            | ExprKind::Binary(..)
            | ExprKind::Select(..)
            | ExprKind::Builtin(..)
            | ExprKind::Transpose(_) => Vec::new(),
        }
    }

    /// The same node with every operand `x` (as [`ExprKind::operands`]
    /// lists them) replaced by `f(x)`.
    pub fn map_operands(&self, mut f: impl FnMut(ExprId) -> ExprId) -> ExprKind {
        let index = |ix: &Index, f: &mut dyn FnMut(ExprId) -> ExprId| ix.map(f);
        match self {
            ExprKind::Const(_)
            | ExprKind::Param(_)
            | ExprKind::DimValue(_)
            | ExprKind::BlockId(_)
            | ExprKind::GridSize(_)
            | ExprKind::Iota(_)
            | ExprKind::Local(_) => self.clone(),
            ExprKind::Load { place, index: ix } => ExprKind::Load {
                place: *place,
                index: ix.iter().map(|i| index(i, &mut f)).collect(),
            },
            ExprKind::Unary(op, a) => ExprKind::Unary(*op, f(*a)),
            ExprKind::Cast(a) => ExprKind::Cast(f(*a)),
            ExprKind::Bitcast(a) => ExprKind::Bitcast(f(*a)),
            ExprKind::Binary(op, a, b) => ExprKind::Binary(*op, f(*a), f(*b)),
            ExprKind::Select(c, a, b) => ExprKind::Select(f(*c), f(*a), f(*b)),
            ExprKind::Builtin(b, xs) => ExprKind::Builtin(*b, xs.iter().map(|x| f(*x)).collect()),
            ExprKind::Reduce { op, arg, axis } => ExprKind::Reduce {
                op: *op,
                arg: f(*arg),
                axis: *axis,
            },
            ExprKind::Dot { a, b, acc } => ExprKind::Dot {
                a: f(*a),
                b: f(*b),
                acc: acc.map(&mut f),
            },
            ExprKind::Transpose(x) => ExprKind::Transpose(f(*x)),
        }
    }
}

impl Index {
    /// The expression of a slice start or a single position; `None` for a
    /// whole axis (`:`).
    pub fn expr(&self) -> Option<ExprId> {
        match self {
            Index::Range { start, .. } => *start,
            Index::Single(x) => Some(*x),
        }
    }

    /// The same axis with its expression `x`, if any, replaced by `f(x)`.
    pub fn map(&self, mut f: impl FnMut(ExprId) -> ExprId) -> Index {
        match self {
            Index::Range { start, len } => Index::Range {
                start: start.map(&mut f),
                len: *len,
            },
            Index::Single(x) => Index::Single(f(*x)),
        }
    }
}

impl Kernel {
    /// Every node of the expression DAG under `root`, itself included, each
    /// once (through [`ExprKind::operands`]), in no particular order.
    pub fn reachable(&self, root: ExprId) -> Vec<ExprId> {
        let mut seen = IdVec::<ExprId, _>::from_elem(false, self.exprs.len());
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id], true) {
                continue;
            }
            out.push(id);
            stack.extend(self.exprs[id].kind.operands());
        }
        out
    }

    /// The kernel's nodes that no statement reaches dropped, the rest kept
    /// in their order (so operands still precede their readers). A pass
    /// that rewrites statements over fresh nodes (`phobos_gpu::plan::unroll`)
    /// leaves the old ones unread, and analyses that scan the arena, such
    /// as which nodes name a local, would count them.
    pub fn without_unread_nodes(&self) -> Kernel {
        let mut live = IdVec::<ExprId, _>::from_elem(false, self.exprs.len());
        for s in &self.body {
            for root in s.roots() {
                for id in self.reachable(root) {
                    live[id] = true;
                }
            }
        }
        let mut to = IdVec::<ExprId, Option<ExprId>>::from_elem(None, self.exprs.len());
        let mut out = self.clone();
        out.exprs = IdVec::new();
        for (id, e) in self.exprs.iter_enumerated() {
            if live[id] {
                let kind = e
                    .kind
                    .map_operands(|x| to[x].expect("operands precede their readers"));
                to[id] = Some(out.exprs.push(Expr { kind, ..e.clone() }));
            }
        }
        let m = |x: ExprId| to[x].expect("a statement's nodes are live");
        for s in &mut out.body {
            match s {
                Stmt::Let { value, .. } | Stmt::Var { value, .. } => *value = m(*value),
                Stmt::Store { index, value, .. } => {
                    *index = index.iter().map(|i| i.map(m)).collect();
                    *value = m(*value);
                }
                Stmt::For { start, end, .. } => {
                    *start = m(*start);
                    *end = m(*end);
                }
                Stmt::EndFor => {}
            }
        }
        out
    }

    /// For each statement, the index of its matching `EndFor` if it is a
    /// `For` (and of its `For` if it is an `EndFor`); `None` for the rest,
    /// and for a bracket without a match (which the verifier reports).
    pub fn loops(&self) -> Vec<Option<usize>> {
        let mut out = vec![None; self.body.len()];
        let mut open = Vec::new();
        for (n, s) in self.body.iter().enumerate() {
            match s {
                Stmt::For { .. } => open.push(n),
                Stmt::EndFor => {
                    if let Some(f) = open.pop() {
                        out[f] = Some(n);
                        out[n] = Some(f);
                    }
                }
                Stmt::Let { .. } | Stmt::Var { .. } | Stmt::Store { .. } => {}
            }
        }
        out
    }

    /// For each statement, the innermost `For` around it, by statement
    /// index (a loop's own `For` and `EndFor` are outside it).
    pub fn scopes(&self) -> Vec<Option<usize>> {
        let mut open: Vec<usize> = Vec::new();
        let mut out = Vec::with_capacity(self.body.len());
        for (n, s) in self.body.iter().enumerate() {
            if let Stmt::EndFor = s {
                open.pop();
            }
            out.push(open.last().copied());
            if let Stmt::For { .. } = s {
                open.push(n);
            }
        }
        out
    }

    /// The element type a place holds.
    pub fn place_elem(&self, place: Place) -> Scalar {
        match place {
            Place::Param(i) => match &self.params[i].kind {
                ParamKind::Tensor { elem, .. } => *elem,
                ParamKind::Scalar(s) => *s,
            },
            Place::Local(l) => self.locals[l].elem,
        }
    }

    /// The shape of a place (a scalar parameter has none).
    pub fn place_shape(&self, place: Place) -> Shape {
        match place {
            Place::Param(i) => match &self.params[i].kind {
                ParamKind::Tensor { shape, .. } => shape.clone(),
                ParamKind::Scalar(_) => Vec::new(),
            },
            Place::Local(l) => self.locals[l].shape.clone(),
        }
    }

    pub fn dim_name(&self, d: Dim) -> String {
        match d {
            Dim::Const(v) => v.to_string(),
            Dim::Sym(s) => self.dims[s].clone(),
        }
    }

    pub fn shape_text(&self, shape: &[Dim]) -> String {
        let v: Vec<String> = shape.iter().map(|d| self.dim_name(*d)).collect();
        format!("[{}]", v.join(", "))
    }

    /// The power of two dim `s`'s launch value is known to be a multiple
    /// of ([`Kernel::dim_align`]).
    pub fn dim_multiple(&self, s: SymId) -> u64 {
        self.dim_align.get(s).copied().unwrap_or(1)
    }

    /// The kernel's identity, for caches keyed by what a backend compiles:
    /// its printed form and every local's shape (which the printed form
    /// leaves out), so two kernels with one fingerprint lower alike.
    pub fn fingerprint(&self) -> String {
        let mut key = self.print();
        for l in &self.locals {
            key.push_str(&format!("\nlocal {}: {:?}", l.name, l.shape));
        }
        key
    }

    /// The printed form of the kernel, one line per expression node.
    pub fn print(&self) -> String {
        let mut out = String::new();
        let cfg: Vec<String> = self
            .config
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = writeln!(out, "kernel {} config({})", self.name, cfg.join(", "));
        let grid: Vec<String> = self.grid.iter().map(|g| g.display(&self.dims)).collect();
        let _ = writeln!(out, "  grid ({})", grid.join(", "));
        let aligned: Vec<String> = (0..self.dims.len())
            .filter(|&d| self.dim_multiple(d) > 1)
            .map(|d| format!("{} % {} == 0", self.dims[d], self.dim_multiple(d)))
            .collect();
        if !aligned.is_empty() {
            let _ = writeln!(out, "  known {}", aligned.join(", "));
        }
        for (i, p) in self.params.iter().enumerate() {
            let desc = match &p.kind {
                ParamKind::Tensor {
                    elem,
                    shape,
                    read,
                    written,
                } => format!(
                    "tensor<{elem}>{}{}{}",
                    self.shape_text(shape),
                    if *read { " read" } else { "" },
                    if *written { " written" } else { "" }
                ),
                ParamKind::Scalar(s) => s.to_string(),
            };
            let _ = writeln!(out, "  param {i} {}: {desc}", p.name);
        }
        for (i, e) in self.exprs.iter_enumerated() {
            let _ = writeln!(
                out,
                "  %{i}: {}{} = {}",
                e.ty,
                self.shape_text(&e.shape),
                self.expr_text(&e.kind)
            );
        }
        let mut depth = 0;
        for s in &self.body {
            if let Stmt::EndFor = s {
                depth = usize::max(depth, 1) - 1;
            }
            let line = match s {
                Stmt::Let { local, value } => {
                    format!("let {} = %{value}", self.locals[*local].name)
                }
                Stmt::Var { local, value } => {
                    format!("var {} = %{value}", self.locals[*local].name)
                }
                Stmt::Store {
                    place,
                    index,
                    value,
                } => format!(
                    "{}{} = %{value}",
                    self.place_text(*place),
                    self.index_text(index)
                ),
                Stmt::For { local, start, end } => {
                    format!(
                        "for {}.{local} in %{start} .. %{end} {{",
                        self.locals[*local].name
                    )
                }
                Stmt::EndFor => "}".to_string(),
            };
            let _ = writeln!(out, "  {}{line}", "  ".repeat(depth));
            if let Stmt::For { .. } = s {
                depth += 1;
            }
        }
        out
    }

    fn place_text(&self, p: Place) -> String {
        match p {
            Place::Param(i) => self.params[i].name.clone(),
            Place::Local(l) => format!("{}.{l}", self.locals[l].name),
        }
    }

    fn index_text(&self, index: &[Index]) -> String {
        let v: Vec<String> = index
            .iter()
            .map(|i| match i {
                Index::Range { start, len } => format!(
                    "{} :+ {}",
                    start.map_or("0".to_string(), |s| format!("%{s}")),
                    self.dim_name(*len)
                ),
                Index::Single(e) => format!("%{e}"),
            })
            .collect();
        format!("[{}]", v.join(", "))
    }

    fn expr_text(&self, k: &ExprKind) -> String {
        let axis = |a: &u8| ["x", "y", "z"][*a as usize];
        match k {
            ExprKind::Const(v) => format!("const {v}"),
            ExprKind::Param(i) => format!("param {}", self.params[*i].name),
            ExprKind::DimValue(s) => format!("dim {}", self.dims[*s]),
            ExprKind::BlockId(a) => format!("block.{}", axis(a)),
            ExprKind::GridSize(a) => format!("grid.{}", axis(a)),
            ExprKind::Iota(a) => format!("iota {a}"),
            ExprKind::Local(l) => format!("local {}.{l}", self.locals[*l].name),
            ExprKind::Load { place, index } => {
                format!("load {}{}", self.place_text(*place), self.index_text(index))
            }
            ExprKind::Unary(op, a) => format!("{} %{a}", op.symbol()),
            ExprKind::Binary(op, a, b) => format!("%{a} {} %{b}", op.symbol()),
            ExprKind::Cast(a) => format!("cast %{a}"),
            ExprKind::Bitcast(a) => format!("bitcast %{a}"),
            ExprKind::Select(c, a, b) => format!("select %{c} %{a} %{b}"),
            ExprKind::Builtin(f, args) => {
                let v: Vec<String> = args.iter().map(|a| format!("%{a}")).collect();
                match f.word() {
                    Some(q) => format!("{}.{q} {}", f.name(), v.join(" ")),
                    None => format!("{} {}", f.name(), v.join(" ")),
                }
            }
            ExprKind::Reduce { op, arg, axis } => format!("{} %{arg} axis={axis}", op.name()),
            ExprKind::Dot { a, b, acc } => match acc {
                Some(c) => format!("dot %{a} %{b} %{c}"),
                None => format!("dot %{a} %{b}"),
            },
            ExprKind::Transpose(x) => format!("trans %{x}"),
        }
    }
}
