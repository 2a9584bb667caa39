//! Analyses of the IR that more than one stage needs, written once:
//!
//! - what an expression reads ([`reads`], [`reads_place`]) and what a
//!   statement reads and writes ([`access`]): the places behind barriers
//!   on the GPU, a store's temporary tile on the CPU, and the parameters'
//!   `read`/`written` flags the verifier checks;
//! - the tile a statement is evaluated over ([`slice_tile`],
//!   [`stmt_tile`]);
//! - how an integer node varies over that tile ([`Slopes`]): the
//!   counter-slope analysis through which both backends see that the
//!   counters of Tandem draws run along a tile (the CPU's stepped words,
//!   the GPU's stepped and staged words).
//!
//! - which nodes compute the same value at the same tile position
//!   ([`value_numbers`]), so that a backend may compute a value once and
//!   reuse it across statements;
//! - the value of every node whose leaves are all constants
//!   ([`constant_values`]), computed with the interpreter's operations;
//! - where the seed of a Tandem key comes from ([`seed_of`], [`key_of`],
//!   [`param_seeds`]): a constant (its key is computed by the compiler), a
//!   scalar parameter (its key derived once per launch, by the host on the
//!   GPU), or another node; the GPU's uniform block, its key nodes and its
//!   staged words' buffers, and the CPU's key words all read this one
//!   answer.
//!
//! Every walk follows [`ExprKind::operands`], so a load's index
//! expressions count as read.

use super::{BinOp, Builtin, ExprId, ExprKind, IdVec, Index, Kernel, Place, Stmt, UnOp};
use crate::interp::ops;
use crate::types::{Dim, Scalar, Value};
use std::collections::HashMap;

/// Every place the expression DAG under `root` reads (a `Load` reads its
/// place, a `Local` its local), each once, in no particular order.
pub fn reads(k: &Kernel, root: ExprId) -> Vec<Place> {
    let mut out = Vec::new();
    for id in k.reachable(root) {
        if let Some(p) = read_by(&k.exprs[id].kind)
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    out
}

/// Whether the expression DAG under `root` reads `place`.
pub fn reads_place(k: &Kernel, root: ExprId, place: Place) -> bool {
    k.reachable(root)
        .into_iter()
        .any(|id| read_by(&k.exprs[id].kind) == Some(place))
}

/// The place one node reads, if it reads one.
fn read_by(kind: &ExprKind) -> Option<Place> {
    match kind {
        ExprKind::Load { place, .. } => Some(*place),
        ExprKind::Local(l) => Some(Place::Local(*l)),
        ExprKind::Const(_)
        | ExprKind::Param(_)
        | ExprKind::DimValue(_)
        | ExprKind::BlockId(_)
        | ExprKind::GridSize(_)
        | ExprKind::Iota(_)
        | ExprKind::Unary(..)
        | ExprKind::Binary(..)
        | ExprKind::Cast(_)
        | ExprKind::Bitcast(_)
        | ExprKind::Select(..)
        | ExprKind::Builtin(..)
        | ExprKind::Reduce { .. }
        | ExprKind::Dot { .. }
        | ExprKind::Transpose(_) => None,
    }
}

/// The places a statement reads and writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    pub reads: Vec<Place>,
    pub writes: Vec<Place>,
}

/// What statement `s` reads and writes: a `let`/`var` reads its value's
/// places and writes its local; a store reads its value's places and those
/// of its slice's starts and positions, and writes its place; a loop
/// bracket reads its bounds' places (loop variables of enclosing loops)
/// and writes its own variable.
pub fn access(k: &Kernel, s: &Stmt) -> Access {
    let mut a = Access::default();
    let read = |root: ExprId, a: &mut Access| {
        for p in reads(k, root) {
            if !a.reads.contains(&p) {
                a.reads.push(p);
            }
        }
    };
    match s {
        Stmt::Let { local, value } | Stmt::Var { local, value } => {
            read(*value, &mut a);
            a.writes.push(Place::Local(*local));
        }
        Stmt::Store {
            place,
            index,
            value,
        } => {
            read(*value, &mut a);
            for i in index.iter().filter_map(Index::expr) {
                read(i, &mut a);
            }
            a.writes.push(*place);
        }
        Stmt::For { local, start, end } => {
            read(*start, &mut a);
            read(*end, &mut a);
            a.writes.push(Place::Local(*local));
        }
        Stmt::EndFor => {}
    }
    a
}

/// The tile of a slice: the extents of its range axes (a single position
/// drops its axis).
pub fn slice_tile(index: &[Index]) -> Vec<Dim> {
    index
        .iter()
        .filter_map(|i| match i {
            Index::Range { len, .. } => Some(*len),
            Index::Single(_) => None,
        })
        .collect()
}

/// The tile statement `s` evaluates its value over (where `iota` is a
/// position): a `let`/`var`'s local's shape, a store's slice; `None` for
/// loop brackets, which compute no value.
pub fn stmt_tile(k: &Kernel, s: &Stmt) -> Option<Vec<Dim>> {
    match s {
        Stmt::Let { local, .. } | Stmt::Var { local, .. } => Some(k.locals[*local].shape.clone()),
        Stmt::Store { index, .. } => Some(slice_tile(index)),
        Stmt::For { .. } | Stmt::EndFor => None,
    }
}

/// How an integer node varies over a tile: `coef[a]` per step along tile
/// axis `a` of an affine form, and whether the node is that form itself
/// (`mono == false`) or a non-decreasing function of it (`mono == true`:
/// masks `& !(2^k - 1)`, `| (2^k - 1)`, right shifts by constants, and
/// narrowing saturating conversions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slope {
    pub coef: Vec<i64>,
    pub mono: bool,
}

impl Slope {
    fn zero(rank: usize) -> Slope {
        Slope {
            coef: vec![0; rank],
            mono: false,
        }
    }

    /// The same value at every position of the tile.
    pub fn is_zero(&self) -> bool {
        self.coef.iter().all(|c| *c == 0)
    }
}

/// What [`Slopes::counter`] knows of a counter over a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    /// A non-decreasing function of the flat (row-major) position plus a
    /// constant with slope 1: a window of positions reads a window of
    /// counters of the same length.
    pub flat: bool,
    /// The same at every position.
    pub uniform: bool,
    /// `flat`, and that affine form itself (`c + flat`, no mask, shift or
    /// narrowing on the way).
    pub exact: bool,
    /// Over a tile of two axes, where the counter is an affine form with
    /// slope 1 along the rows and a positive constant slope down the
    /// columns, or a non-decreasing function of one (`u32(..)`): that slope
    /// (`(r0 + iota(0)) * N + c0 + iota(1)`, the counter of a block of a
    /// larger matrix, has `N`). Each row's counters are then a window of
    /// the row's length, the windows `N` apart.
    pub row_stride: Option<u32>,
    /// The same down the columns: over a tile of two axes, where the
    /// counter has slope 1 down the columns and a positive constant slope
    /// along the rows (`(c0 + iota(1)) * N + r0 + iota(0)`: a transposed
    /// block, as a backward pass reads a mask), that slope. Each column's
    /// counters are then a window of the column's length, `N` apart.
    pub col_stride: Option<u32>,
}

impl Counter {
    /// A non-decreasing function of the flat position, or uniform: the
    /// counters of a window of flat positions lie between its first and
    /// last element's.
    pub fn contiguous(self) -> bool {
        self.flat || self.uniform
    }
}

/// The slopes of integer nodes over tiles of one rank, memoised (a node's
/// slope depends only on the rank, since shapes align on their last axes).
pub struct Slopes<'k> {
    k: &'k Kernel,
    rank: usize,
    memo: HashMap<ExprId, Option<Slope>>,
}

impl<'k> Slopes<'k> {
    /// The analysis over tiles of `rank` axes.
    pub fn new(k: &'k Kernel, rank: usize) -> Slopes<'k> {
        Slopes {
            k,
            rank,
            memo: HashMap::new(),
        }
    }

    /// What is known of the counter `id` over `tile` (of the rank this
    /// analysis was made for); a tile of one element is both flat and
    /// uniform.
    pub fn counter(&mut self, id: ExprId, tile: &[Dim]) -> Counter {
        assert_eq!(tile.len(), self.rank, "a tile of the analysis's rank");
        let none = Counter {
            flat: false,
            uniform: false,
            exact: false,
            row_stride: None,
            col_stride: None,
        };
        let Some(s) = self.of(id) else {
            return none;
        };
        let mut stride = Some(1i64);
        let (mut flat, mut uniform) = (true, true);
        for a in (0..tile.len()).rev() {
            if tile[a] != Dim::Const(1) {
                flat &= stride == Some(s.coef[a]);
                uniform &= s.coef[a] == 0;
            }
            stride = match (stride, tile[a]) {
                (Some(st), Dim::Const(e)) => i64::try_from(e).ok().and_then(|e| st.checked_mul(e)),
                _ => None,
            };
        }
        let row_stride = match (&s.coef[..], tile) {
            ([down, 1], [_, Dim::Const(len)]) if *len > 1 => {
                u32::try_from(*down).ok().filter(|d| *d > 0)
            }
            _ => None,
        };
        let col_stride = match (&s.coef[..], tile) {
            ([1, across], [Dim::Const(len), _]) if *len > 1 => {
                u32::try_from(*across).ok().filter(|a| *a > 0)
            }
            _ => None,
        };
        Counter {
            flat,
            uniform,
            exact: flat && !s.mono,
            row_stride,
            col_stride,
        }
    }

    /// The slope of the integer node `id`, when it is an affine form of the
    /// tile's positions (or a non-decreasing function of one) with known
    /// coefficients; `None` otherwise (a load, a local, a float, a product
    /// of two varying values, a reduction, ...).
    pub fn of(&mut self, id: ExprId) -> Option<Slope> {
        if let Some(s) = self.memo.get(&id) {
            return s.clone();
        }
        let s = self.compute(id);
        self.memo.insert(id, s.clone());
        s
    }

    /// Whether `id` is the same at every position of the tile.
    fn zero_at(&mut self, id: ExprId) -> bool {
        self.of(id).is_some_and(|s| s.is_zero())
    }

    fn compute(&mut self, id: ExprId) -> Option<Slope> {
        let k = self.k;
        let rank = self.rank;
        let e = &k.exprs[id];
        let int = |s: Scalar| matches!(s, Scalar::I32 | Scalar::U32);
        let constant = |x: ExprId| match k.exprs[x].kind {
            ExprKind::Const(Value::I32(c)) => Some(i64::from(c)),
            ExprKind::Const(Value::U32(c)) => Some(i64::from(c)),
            _ => None,
        };
        let r = e.shape.len();
        if r > rank {
            return None;
        }
        if e.shape.is_empty() {
            return Some(Slope::zero(rank));
        }
        match &e.kind {
            ExprKind::Const(_)
            | ExprKind::Param(_)
            | ExprKind::DimValue(_)
            | ExprKind::BlockId(_)
            | ExprKind::GridSize(_) => Some(Slope::zero(rank)),
            ExprKind::Iota(a) => {
                let mut s = Slope::zero(rank);
                if e.shape[*a as usize] != Dim::Const(1) {
                    s.coef[rank - r + *a as usize] = 1;
                }
                Some(s)
            }
            ExprKind::Bitcast(a) if int(e.ty) && int(k.exprs[*a].ty) => self.of(*a),
            // A saturating conversion is non-decreasing.
            ExprKind::Cast(a) if int(e.ty) && int(k.exprs[*a].ty) => {
                let changes = k.exprs[*a].ty != e.ty;
                self.of(*a).map(|s| Slope {
                    mono: s.mono || changes,
                    ..s
                })
            }
            ExprKind::Unary(UnOp::Neg, a) => {
                self.of(*a)
                    .filter(|s| !s.mono || s.is_zero())
                    .map(|s| Slope {
                        coef: s.coef.iter().map(|c| -c).collect(),
                        mono: false,
                    })
            }
            ExprKind::Binary(op, a, b) if int(e.ty) => {
                let (sa, sb) = (self.of(*a)?, self.of(*b)?);
                match op {
                    _ if sa.is_zero() && sb.is_zero() => Some(Slope::zero(rank)),
                    BinOp::Add | BinOp::Sub => {
                        let sign = if *op == BinOp::Add { 1 } else { -1 };
                        if !sa.mono && !sb.mono {
                            let coef = sa.coef.iter().zip(&sb.coef);
                            let coef: Option<Vec<i64>> = coef
                                .map(|(x, y)| y.checked_mul(sign).and_then(|y| x.checked_add(y)))
                                .collect();
                            coef.map(|coef| Slope { coef, mono: false })
                        } else if sb.is_zero() {
                            Some(sa)
                        } else if sa.is_zero() && *op == BinOp::Add {
                            Some(sb)
                        } else {
                            None
                        }
                    }
                    BinOp::Mul => {
                        let (s, c) = match (sa.is_zero(), sb.is_zero()) {
                            (false, true) => (sa, constant(*b)?),
                            (true, false) => (sb, constant(*a)?),
                            _ => return None,
                        };
                        if s.mono && c < 0 {
                            return None;
                        }
                        let coef: Option<Vec<i64>> =
                            s.coef.iter().map(|x| x.checked_mul(c)).collect();
                        coef.map(|coef| Slope { coef, mono: s.mono })
                    }
                    BinOp::BitAnd | BinOp::BitOr | BinOp::Shr if sb.is_zero() => {
                        let c = u32::try_from(constant(*b)?).ok()?;
                        let monotone = match op {
                            // Clearing low bits, setting low bits, shifting right.
                            BinOp::BitAnd => c == 0 || c.wrapping_neg().is_power_of_two(),
                            BinOp::BitOr => c.wrapping_add(1).is_power_of_two() || c == u32::MAX,
                            _ => c < 32,
                        };
                        monotone.then_some(Slope {
                            coef: sa.coef,
                            mono: true,
                        })
                    }
                    BinOp::Div
                    | BinOp::Rem
                    | BinOp::BitAnd
                    | BinOp::BitOr
                    | BinOp::BitXor
                    | BinOp::Shl
                    | BinOp::Shr
                    | BinOp::Eq
                    | BinOp::Ne
                    | BinOp::Lt
                    | BinOp::Le
                    | BinOp::Gt
                    | BinOp::Ge
                    | BinOp::And
                    | BinOp::Or => None,
                }
            }
            ExprKind::Select(c, a, b) => {
                let all = [*c, *a, *b].iter().all(|x| self.zero_at(*x));
                all.then(|| Slope::zero(rank))
            }
            ExprKind::Builtin(_, xs) => {
                let all = xs.iter().all(|x| self.zero_at(*x));
                all.then(|| Slope::zero(rank))
            }
            // Values the analysis does not follow: a tile local, a load, a
            // float or 64-bit operation, a reduction, a matrix product, a
            // transpose (whose positions move).
            ExprKind::Local(_)
            | ExprKind::Load { .. }
            | ExprKind::Unary(..)
            | ExprKind::Binary(..)
            | ExprKind::Cast(_)
            | ExprKind::Bitcast(_)
            | ExprKind::Reduce { .. }
            | ExprKind::Dot { .. }
            | ExprKind::Transpose(_) => None,
        }
    }
}

/// The node `id` as an affine form of the block id, `coef · ctx.block +
/// offset`, where it is one: constants (`konst`, the caller's idea of a
/// constant node), `ctx.block`, `let`s (`lets`, a local's value) and sums,
/// differences and products by a constant of those. The checker infers the
/// grid from it (`sema/grid.rs`) and the CPU backend sees blocks that write
/// disjoint rows (`phobos-cpu`'s `parallel.rs`).
pub fn block_affine(
    k: &Kernel,
    id: ExprId,
    konst: &dyn Fn(ExprId) -> Option<i64>,
    lets: &dyn Fn(super::LocalId) -> Option<ExprId>,
) -> Option<([i64; 3], i64)> {
    if let Some(v) = konst(id) {
        return Some(([0; 3], v));
    }
    match &k.exprs[id].kind {
        ExprKind::BlockId(a) => {
            let mut coef = [0; 3];
            coef[*a as usize] = 1;
            Some((coef, 0))
        }
        ExprKind::Local(l) => block_affine(k, lets(*l)?, konst, lets),
        ExprKind::Binary(op, a, b) => {
            let (ca, oa) = block_affine(k, *a, konst, lets)?;
            let (cb, ob) = block_affine(k, *b, konst, lets)?;
            let add = |x: [i64; 3], y: [i64; 3], s: i64| -> Option<[i64; 3]> {
                Some([
                    x[0].checked_add(s.checked_mul(y[0])?)?,
                    x[1].checked_add(s.checked_mul(y[1])?)?,
                    x[2].checked_add(s.checked_mul(y[2])?)?,
                ])
            };
            let scale = |x: [i64; 3], s: i64| -> Option<[i64; 3]> {
                Some([
                    x[0].checked_mul(s)?,
                    x[1].checked_mul(s)?,
                    x[2].checked_mul(s)?,
                ])
            };
            match op {
                BinOp::Add => Some((add(ca, cb, 1)?, oa.checked_add(ob)?)),
                BinOp::Sub => Some((add(ca, cb, -1)?, oa.checked_sub(ob)?)),
                BinOp::Mul if ca == [0; 3] => Some((scale(cb, oa)?, ob.checked_mul(oa)?)),
                BinOp::Mul if cb == [0; 3] => Some((scale(ca, ob)?, oa.checked_mul(ob)?)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// How the integer node `id` moves from one iteration of a `for` loop to
/// the next: `Some(d)` where its value at iteration `j + 1` is its value at
/// `j` plus `d` (in 32-bit wrapping arithmetic, as every backend computes
/// integers), `None` where that is not known. `var` is the loop's variable;
/// `lets` the value of a scalar `let` its body binds (a local it reads that
/// the body assigns otherwise is unknown); `varies` whether a place is
/// written inside the loop (its variable included): a node that reads none
/// of those is the same at every iteration, `Some(0)`. `consts` are
/// [`constant_values`]. Sums, differences, products by a constant and
/// bitcasts between i32 and u32 of such forms are such forms.
pub fn loop_slope(
    k: &Kernel,
    id: ExprId,
    var: super::LocalId,
    lets: &dyn Fn(super::LocalId) -> Option<ExprId>,
    varies: &dyn Fn(Place) -> bool,
    consts: &IdVec<ExprId, Option<Value>>,
) -> Option<i64> {
    if !reads(k, id).into_iter().any(varies) {
        return Some(0);
    }
    let int = |v: Value| match v {
        Value::I32(x) => Some(i64::from(x)),
        Value::U32(x) => Some(i64::from(x)),
        _ => None,
    };
    let slope = |x: ExprId| loop_slope(k, x, var, lets, varies, consts);
    let wrap = |d: i64| i64::from(d as u32);
    match &k.exprs[id].kind {
        ExprKind::Local(l) if *l == var => Some(1),
        ExprKind::Local(l) => slope(lets(*l)?),
        ExprKind::Binary(op, a, b) => {
            let (sa, sb) = (slope(*a)?, slope(*b)?);
            match op {
                BinOp::Add => Some(wrap(sa.wrapping_add(sb))),
                BinOp::Sub => Some(wrap(sa.wrapping_sub(sb))),
                BinOp::Mul if sa == 0 && sb == 0 => Some(0),
                BinOp::Mul if sa == 0 => Some(wrap(sb.wrapping_mul(int(consts[*a]?)?))),
                BinOp::Mul if sb == 0 => Some(wrap(sa.wrapping_mul(int(consts[*b]?)?))),
                _ => None,
            }
        }
        ExprKind::Bitcast(a)
            if matches!(k.exprs[*a].ty, Scalar::I32 | Scalar::U32)
                && matches!(k.exprs[id].ty, Scalar::I32 | Scalar::U32) =>
        {
            slope(*a)
        }
        _ => None,
    }
}

/// Value numbering: for each node, the first node with the same kind, type
/// and shape whose operands have the same numbers. Two nodes with one
/// number compute the same value at the same position of tiles of one
/// shape, as long as the places they read are not written in between
/// (`iota` is the position in the tile a node is evaluated over, so the
/// tiles must match). Operands precede the nodes that use them in the
/// arena, so one pass in order suffices.
pub fn value_numbers(k: &Kernel) -> IdVec<ExprId, ExprId> {
    let mut first: HashMap<String, ExprId> = HashMap::new();
    let mut out: IdVec<ExprId, ExprId> = IdVec::with_capacity(k.exprs.len());
    for (id, e) in k.exprs.iter_enumerated() {
        let kind = e.kind.map_operands(|x| if x < id { out[x] } else { x });
        // A constant's bits, not its `Debug` (which prints every NaN alike).
        let bits = match &kind {
            ExprKind::Const(v) => v.bits(),
            _ => 0,
        };
        let key = format!("{kind:?}|{bits:x}|{:?}|{:?}", e.ty, e.shape);
        out.push(*first.entry(key).or_insert(id));
    }
    out
}

/// The value of every node of `kernel` whose leaves are all constants (none
/// for the others), computed with `interp::ops`, the interpreter's own
/// operations, so its bits are the reference's by construction. Tandem
/// draws, reductions and whatever reads the launch or memory are never
/// constant here (a constant seed's key is [`seed_of`]'s). In arena order:
/// operands precede their users, so one pass suffices.
pub fn constant_values(kernel: &Kernel) -> IdVec<ExprId, Option<Value>> {
    let mut out: IdVec<ExprId, Option<Value>> = IdVec::with_capacity(kernel.exprs.len());
    for e in &kernel.exprs {
        let c = |id: ExprId| out[id];
        let v = match &e.kind {
            ExprKind::Const(v) => Some(*v),
            ExprKind::Unary(op, a) => c(*a).map(|a| ops::unary(*op, a)),
            ExprKind::Binary(op, a, b) => match (c(*a), c(*b)) {
                (Some(a), Some(b)) => Some(ops::binary(*op, a, b)),
                _ => None,
            },
            ExprKind::Cast(a) => c(*a).map(|a| ops::cast(a, e.ty)),
            ExprKind::Bitcast(a) => c(*a).map(|a| ops::bitcast(a, e.ty)),
            ExprKind::Select(s, a, b) => match (c(*s), c(*a), c(*b)) {
                (Some(s), Some(a), Some(b)) => Some(ops::select(s, a, b)),
                _ => None,
            },
            ExprKind::Builtin(f, xs) if !f.is_tandem() => {
                let args: Option<Vec<Value>> = xs.iter().map(|x| c(*x)).collect();
                args.map(|args| ops::builtin(*f, &args))
            }
            // Values of the launch or of memory, Tandem draws, reductions.
            ExprKind::Builtin(..)
            | ExprKind::Param(_)
            | ExprKind::DimValue(_)
            | ExprKind::BlockId(_)
            | ExprKind::GridSize(_)
            | ExprKind::Iota(_)
            | ExprKind::Local(_)
            | ExprKind::Load { .. }
            | ExprKind::Reduce { .. }
            | ExprKind::Dot { .. }
            | ExprKind::Transpose(_) => None,
        };
        out.push(v);
    }
    out
}

/// How a Tandem seed is made from a scalar parameter: the parameter itself
/// (u32), or an i32 parameter's bits (`bitcast<u32>(x)`) or conversion
/// (`u32(x)`, with [`ops::cast`]'s meaning).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SeedOf {
    Param,
    Bitcast,
    Cast,
}

impl SeedOf {
    /// The seed a launch's parameter value makes, with the interpreter's
    /// meaning; `None` for a value of another type than the kernel's.
    pub fn seed(self, v: Value) -> Option<u32> {
        match (self, v) {
            (SeedOf::Param, Value::U32(x)) => Some(x),
            (SeedOf::Bitcast, Value::I32(x)) => Some(x as u32),
            (SeedOf::Cast, Value::I32(_)) => match ops::cast(v, Scalar::U32) {
                Value::U32(x) => Some(x),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Where the seed of a Tandem key comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Seed {
    /// A constant: its key is a constant, `ops::tandem_key(seed)`.
    Const(u32),
    /// Made from the scalar parameter `Kernel::params[param]` as `of` says:
    /// one value for a whole launch, so its key can be derived once, before
    /// any element (the GPU's host-derived keys, `FieldKind::TandemKey`).
    Param { param: usize, of: SeedOf },
    /// Any other node (a tile, a computed scalar): its key is derived where
    /// the node is.
    Node(ExprId),
}

/// The seed node `seed` of a key node, classified. Two seed nodes with
/// one answer other than [`Seed::Node`] have one value everywhere in a
/// launch, so their keys are the same.
pub fn seed_of(k: &Kernel, seed: ExprId) -> Seed {
    let e = &k.exprs[seed];
    let param = |id: ExprId, ty: Scalar| match k.exprs[id].kind {
        ExprKind::Param(p) if k.exprs[id].ty == ty && k.exprs[id].shape.is_empty() => Some(p),
        _ => None,
    };
    let from = |id: ExprId, ty: Scalar, of: SeedOf| match param(id, ty) {
        Some(param) => Seed::Param { param, of },
        None => Seed::Node(seed),
    };
    match e.kind {
        ExprKind::Const(Value::U32(v)) => Seed::Const(v),
        _ if !e.shape.is_empty() => Seed::Node(seed),
        ExprKind::Param(_) => from(seed, Scalar::U32, SeedOf::Param),
        ExprKind::Bitcast(a) => from(a, Scalar::I32, SeedOf::Bitcast),
        ExprKind::Cast(a) => from(a, Scalar::I32, SeedOf::Cast),
        _ => Seed::Node(seed),
    }
}

/// One key argument of a Tandem word node (`_tandem_word(k0, k1, k2, k3,
/// i)`), classified: word `q` of the key of a classified seed, or any
/// other node. Word nodes whose four arguments have one answer other than
/// [`KeyOf::Node`] draw from one stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyOf {
    Word { q: u8, seed: Seed },
    Node(ExprId),
}

/// The key argument `id` of a word node, classified ([`KeyOf`]).
pub fn key_of(k: &Kernel, id: ExprId) -> KeyOf {
    match &k.exprs[id].kind {
        ExprKind::Builtin(Builtin::TandemKey(q), xs) => KeyOf::Word {
            q: *q,
            seed: seed_of(k, xs[0]),
        },
        _ => KeyOf::Node(id),
    }
}

/// The parameter seeds ([`Seed::Param`]) of the kernel's key nodes, each
/// once, in the order of its first key node: the keys a launch derives
/// once.
pub fn param_seeds(k: &Kernel) -> Vec<(usize, SeedOf)> {
    let mut out = Vec::new();
    for e in &k.exprs {
        if let ExprKind::Builtin(Builtin::TandemKey(_), xs) = &e.kind
            && let Seed::Param { param, of } = seed_of(k, xs[0])
            && !out.contains(&(param, of))
        {
            out.push((param, of));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::Program;

    /// The kernel of one store `Y[r :+ 4, 0 :+ 8] = f32(counter)` and
    /// the counter's node (the cast's operand).
    fn counter_kernel(counter: &str) -> (Kernel, ExprId) {
        let text = format!(
            "kernel k(X: tensor<u32>[M, 8], Y: tensor<f32>[M, 8]) {{\n  \
             let b = ctx.block.x * 4\n  let r = u32(b)\n  let x = X[b :+ 4, :]\n  \
             Y[b :+ 4, 0 :+ 8] = f32({counter})\n}}"
        );
        let (prog, diags) = Program::parse("analysis.ph", &text);
        assert!(diags.is_empty(), "{diags:?}");
        let k = prog.kernel("k", &[]).expect("checks");
        let Some(Stmt::Store { value, .. }) = k.body.last() else {
            panic!("ends in a store")
        };
        let ExprKind::Cast(c) = k.exprs[*value].kind else {
            panic!("a conversion")
        };
        (k, c)
    }

    /// `loop_slope` of the column start of the store in a loop over `j`
    /// whose body binds `let c = j * 64` first.
    fn slope_of(start: &str) -> Option<i64> {
        let text = format!(
            "kernel k(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256]) {{\n  \
             let b = ctx.block.x * 4\n  for j in 0 .. 4 {{\n    let c = j * 64\n    \
             Y[b :+ 4, {start} :+ 64] = X[b :+ 4, 0 :+ 64]\n  }}\n}}"
        );
        let (prog, diags) = Program::parse("slope.ph", &text);
        assert!(diags.is_empty(), "{diags:?}");
        let k = prog.kernel("k", &[]).expect("checks");
        let var = k
            .body
            .iter()
            .find_map(|s| match s {
                Stmt::For { local, .. } => Some(*local),
                _ => None,
            })
            .expect("a loop");
        let lets: Vec<(crate::ir::LocalId, ExprId)> = k
            .body
            .iter()
            .skip_while(|s| !matches!(s, Stmt::For { .. }))
            .filter_map(|s| match s {
                Stmt::Let { local, value } => Some((*local, *value)),
                _ => None,
            })
            .collect();
        let written: Vec<Place> = lets.iter().map(|(l, _)| Place::Local(*l)).collect();
        let Some(Stmt::Store { index, .. }) =
            k.body.iter().find(|s| matches!(s, Stmt::Store { .. }))
        else {
            panic!("a store")
        };
        let Index::Range { start: Some(s), .. } = index[1] else {
            panic!("a start")
        };
        let consts = constant_values(&k);
        loop_slope(
            &k,
            s,
            var,
            &|l| lets.iter().find(|(x, _)| *x == l).map(|(_, v)| *v),
            &|p| p == Place::Local(var) || written.contains(&p),
            &consts,
        )
    }

    #[test]
    fn slopes_across_loop_iterations() {
        assert_eq!(slope_of("c"), Some(64));
        assert_eq!(slope_of("c + b * 2 + 3"), Some(64));
        assert_eq!(slope_of("2 * c - j"), Some(127));
        // Backward: modulo 2^32, as 32-bit integers wrap.
        assert_eq!(slope_of("(3 - j) * 64"), Some((1 << 32) - 64));
        // The same at every iteration.
        assert_eq!(slope_of("b"), Some(0));
        assert_eq!(slope_of("c - j * 64"), Some(0));
        // Not a constant step.
        assert_eq!(slope_of("j * j"), None);
        assert_eq!(slope_of("c / 2"), None);
    }

    fn counter(text: &str) -> (Counter, Option<Slope>) {
        let (k, c) = counter_kernel(text);
        let tile = [Dim::Const(4), Dim::Const(8)];
        let mut s = Slopes::new(&k, 2);
        (s.counter(c, &tile), s.of(c))
    }

    #[test]
    fn value_numbers_join_what_is_written_twice() {
        // `X[b :+ 4, :] - m` is written twice and is one value; `X + 1.0`
        // and `X + -1.0`, and the constants 0.0 and -0.0, are not.
        let text = "kernel k(X: tensor<f32>[M, 8], Y: tensor<f32>[M, 8]) {\n  \
                    let b = ctx.block.x * 4\n  let m = max(X[b :+ 4, :], axis = 1)\n  \
                    Y[b :+ 4, :] = (X[b :+ 4, :] - m) * (X[b :+ 4, :] - m) + 0.0 * -0.0\n}";
        let (prog, diags) = Program::parse("numbers.ph", text);
        assert!(diags.is_empty(), "{diags:?}");
        let k = prog.kernel("k", &[]).expect("checks");
        let n = value_numbers(&k);
        let Some(Stmt::Store { value, .. }) = k.body.last() else {
            panic!("ends in a store")
        };
        let ExprKind::Binary(_, prod, consts) = k.exprs[*value].kind else {
            panic!("a sum")
        };
        let ExprKind::Binary(_, a, b) = k.exprs[prod].kind else {
            panic!("a product")
        };
        assert_ne!(a, b, "two nodes, written twice");
        assert_eq!(n[a], n[b], "one value");
        let ExprKind::Binary(_, zero, neg_zero) = k.exprs[consts].kind else {
            panic!("a product of constants")
        };
        assert_ne!(n[zero], n[neg_zero], "0.0 and -0.0 differ in bits");
        // Every node's number is a node of the same kind and shape.
        for (id, e) in k.exprs.iter_enumerated() {
            assert!(n[id] <= id);
            assert_eq!(k.exprs[n[id]].shape, e.shape);
            assert_eq!(k.exprs[n[id]].ty, e.ty);
        }
    }

    #[test]
    fn counters_along_a_tile() {
        let flat = |t: &str| counter(t).0;
        // Row-major: slope 1 along the flat position, itself.
        let c = flat("bitcast<u32>((b + iota(0)) * 8 + iota(1))");
        assert!(c.flat && c.exact && !c.uniform, "{c:?}");
        // A mask, or a saturating conversion, keeps it non-decreasing,
        // no longer the form itself.
        let c = flat("bitcast<u32>((b + iota(0)) * 8 + iota(1)) & 4294967294");
        assert!(c.flat && !c.exact, "{c:?}");
        let c = flat("bitcast<u32>((b + iota(0)) * 8 + iota(1)) | 1");
        assert!(c.flat && !c.exact, "{c:?}");
        let c = flat("u32((b + iota(0)) * 8 + iota(1))");
        assert!(c.flat && !c.exact, "{c:?}");
        assert_eq!(c.row_stride, Some(8), "converted: {c:?}");
        // Rows of a larger matrix: each row a window of counters, rows
        // 100 apart; row-major is that with a stride of the row's length.
        let c = flat("bitcast<u32>((b + iota(0)) * 100 + 7 + iota(1))");
        assert!(!c.flat && c.row_stride == Some(100), "{c:?}");
        assert_eq!(
            flat("bitcast<u32>((b + iota(0)) * 8 + iota(1))").row_stride,
            Some(8)
        );
        assert_eq!(flat("bitcast<u32>(iota(1) * 2)").row_stride, None);
        assert_eq!(flat("bitcast<u32>(iota(1) - iota(0))").row_stride, None);
        // Transposed: each column a window of counters, columns 100 apart.
        let c = flat("bitcast<u32>((b + iota(1)) * 100 + 7 + iota(0))");
        assert!(
            !c.flat && c.row_stride.is_none() && c.col_stride == Some(100),
            "{c:?}"
        );
        assert_eq!(
            flat("u32((b + iota(1)) * 100 + iota(0))").col_stride,
            Some(100)
        );
        assert_eq!(flat("bitcast<u32>(iota(0) * 2 + iota(1))").col_stride, None);
        assert_eq!(flat("bitcast<u32>(iota(0) - iota(1))").col_stride, None);
        // Column-major, a stride of 2, data: not flat.
        assert!(!flat("bitcast<u32>(iota(0) + iota(1) * 4)").flat);
        assert!(!flat("bitcast<u32>(iota(1) * 2)").contiguous());
        assert!(!flat("x + bitcast<u32>(iota(1))").contiguous());
        // A mask that is not monotone, a product of two varying values.
        assert!(!flat("bitcast<u32>(iota(1)) & 5").contiguous());
        assert!(!flat("bitcast<u32>(iota(1) * iota(1))").contiguous());
        // The same everywhere.
        let c = flat("r * 3 + 1");
        assert!(c.uniform && c.contiguous() && !c.flat, "{c:?}");
        // The coefficients themselves.
        let (_, s) = counter("bitcast<u32>(iota(0) * 16 - iota(1) * 2 + b)");
        assert_eq!(
            s,
            Some(Slope {
                coef: vec![16, -2],
                mono: false
            })
        );
        let (_, s) = counter("bitcast<u32>(iota(1) + b) >> 5");
        assert_eq!(
            s,
            Some(Slope {
                coef: vec![0, 1],
                mono: true
            })
        );
    }

    #[test]
    fn reads_writes_and_tiles() {
        let text = "kernel k(X: tensor<f32>[N, 8], I: tensor<i32>[4], Y: tensor<f32>[N, 8]) {\n  \
                    var t: tile<f32>[4, 8] = X[0 :+ 4, :]\n  \
                    for j in 0 .. 2 {\n    t = t + 1.0\n  }\n  \
                    Y[I[0] :+ 4, 2] = t[:, 0] * Y[0 :+ 4, 3]\n}";
        let (prog, diags) = Program::parse("access.ph", text);
        assert!(diags.is_empty(), "{diags:?}");
        let k = prog.kernel("k", &[]).expect("checks");
        let (x, i, y) = (Place::Param(0), Place::Param(1), Place::Param(2));
        let t = k.locals.iter_enumerated().find(|(_, l)| l.name == "t");
        let t = Place::Local(t.expect("the local t").0);
        let store = k.body.last().expect("a store");
        let a = access(&k, store);
        // The slice's start reads I; the value reads t and Y itself.
        for p in [i, t, y] {
            assert!(a.reads.contains(&p), "{a:?}");
        }
        assert!(!a.reads.contains(&x), "{a:?}");
        assert_eq!(a.writes, vec![y]);
        let Stmt::Store { value, .. } = store else {
            panic!("a store")
        };
        assert!(reads_place(&k, *value, y) && !reads_place(&k, *value, i));
        assert_eq!(stmt_tile(&k, store), Some(vec![Dim::Const(4)]));
        assert_eq!(
            stmt_tile(&k, &k.body[0]),
            Some(vec![Dim::Const(4), Dim::Const(8)])
        );
        let loop_at = k.body.iter().position(|s| matches!(s, Stmt::For { .. }));
        let for_stmt = &k.body[loop_at.expect("a loop")];
        assert_eq!(stmt_tile(&k, for_stmt), None);
        assert!(matches!(access(&k, for_stmt).writes[..], [Place::Local(_)]));
        assert_eq!(access(&k, &k.body[0]).reads, vec![x]);
    }

    /// Every kind of seed, and the key arguments of word nodes, classified
    /// once for every backend.
    #[test]
    fn seeds_and_keys() {
        let text = "kernel k(Y: tensor<u32>[8], a: u32, b: i32, c: u32) {\n  \
                    Y[0 :+ 8] = tandem_u32(a, iota(0)) + tandem_u32(bitcast<u32>(b), iota(0)) \
                    + tandem_u32(u32(b), iota(0)) + tandem_u32(7, iota(0)) \
                    + tandem_u32(c + 1, iota(0)) + tandem_u32(a, iota(0) + 8)\n}";
        let (prog, diags) = Program::parse("seeds.ph", text);
        assert!(diags.is_empty(), "{diags:?}");
        let k = prog.kernel("k", &[]).expect("checks");
        let mut seeds = Vec::new();
        let mut words = Vec::new();
        for e in &k.exprs {
            if let ExprKind::Builtin(Builtin::TandemKey(0), xs) = &e.kind {
                seeds.push(seed_of(&k, xs[0]));
            }
            if let ExprKind::Builtin(Builtin::TandemWord, xs) = &e.kind {
                words.push(std::array::from_fn::<_, 4, _>(|q| key_of(&k, xs[q])));
            }
        }
        let param = |param, of| Seed::Param { param, of };
        assert!(seeds.contains(&param(1, SeedOf::Param)), "{seeds:?}");
        assert!(seeds.contains(&param(2, SeedOf::Bitcast)), "{seeds:?}");
        assert!(seeds.contains(&param(2, SeedOf::Cast)), "{seeds:?}");
        assert!(seeds.contains(&Seed::Const(7)), "{seeds:?}");
        assert!(
            seeds.iter().any(|s| matches!(s, Seed::Node(_))),
            "{seeds:?}"
        );
        assert_eq!(
            param_seeds(&k),
            vec![(1, SeedOf::Param), (2, SeedOf::Bitcast), (2, SeedOf::Cast)]
        );
        // The two draws of `a` read one key, whatever their counters.
        let of_a = |w: &&[KeyOf; 4]| {
            w[0] == KeyOf::Word {
                q: 0,
                seed: param(1, SeedOf::Param),
            }
        };
        assert_eq!(words.iter().filter(of_a).count(), 2, "{words:?}");
        assert_eq!(SeedOf::Cast.seed(Value::I32(-5)), Some(-5i32 as u32));
        assert_eq!(SeedOf::Bitcast.seed(Value::I32(-1)), Some(u32::MAX));
        assert_eq!(SeedOf::Param.seed(Value::I32(3)), None);
    }
}
