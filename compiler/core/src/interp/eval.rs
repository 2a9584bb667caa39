//! Evaluating one element of an expression at a position of its statement's
//! tile. A node whose extent along an axis is 1 is broadcast: it is read at
//! position 0 of that axis. A reduction at a position evaluates its operand
//! at that position with the reduced axis running over its extent; its
//! value depends only on its position in its own shape, so it is kept for
//! the rest of the statement.

use super::{locate, ops};
use crate::ir::reduce::pairwise;
use crate::ir::{BinOp, ExprId, ExprKind, IdVec, Index, Kernel, LocalId, Place, ReduceOp};
use crate::launch::{Arg, Bound};
use crate::tensor::Tensor;
use crate::types::{Dim, Value};
use std::collections::HashMap;

pub struct Block<'k> {
    pub kernel: &'k Kernel,
    pub bound: &'k Bound,
    pub id: [i64; 3],
    pub locals: IdVec<LocalId, Option<Tensor>>,
    /// Values computed for the current element; `stamp` tells which are fresh.
    memo: IdVec<ExprId, Value>,
    memo_stamp: IdVec<ExprId, u64>,
    stamp: u64,
    /// Reductions computed in the current statement, by node and position
    /// in the node's own shape (which is all their value depends on).
    reduced: HashMap<(ExprId, Vec<usize>), Value>,
}

impl<'k> Block<'k> {
    pub fn new(kernel: &'k Kernel, bound: &'k Bound, id: [i64; 3]) -> Block<'k> {
        Block {
            kernel,
            bound,
            id,
            locals: IdVec::from_elem(None, kernel.locals.len()),
            memo: IdVec::from_elem(Value::Bool(false), kernel.exprs.len()),
            memo_stamp: IdVec::from_elem(0, kernel.exprs.len()),
            stamp: 0,
            reduced: HashMap::new(),
        }
    }

    /// The value of `id` at position `pos` of the statement's tile.
    pub fn eval(&mut self, id: ExprId, pos: &[usize], args: &[Arg]) -> Value {
        self.stamp += 1;
        self.node(id, pos, args)
    }

    /// Starts a statement: reductions computed so far may have read locals
    /// it changes.
    pub fn begin_statement(&mut self) {
        self.reduced.clear();
    }

    /// A scalar integer expression (a slice start), widened to i64.
    pub fn eval_int(&mut self, id: ExprId, args: &[Arg]) -> i64 {
        self.eval(id, &[], args).as_i128() as i64
    }

    pub fn place_extents(&self, place: Place, args: &[Arg]) -> Vec<usize> {
        match place {
            Place::Param(p) => match &args[p] {
                Arg::Tensor(t) => t.shape.clone(),
                Arg::Scalar(_) => Vec::new(),
            },
            Place::Local(l) => self.locals[l]
                .as_ref()
                .map(|t| t.shape.clone())
                .unwrap_or_default(),
        }
    }

    fn node(&mut self, id: ExprId, pos: &[usize], args: &[Arg]) -> Value {
        if self.memo_stamp[id] == self.stamp {
            return self.memo[id];
        }
        let e = &self.kernel.exprs[id];
        let v = match &e.kind {
            ExprKind::Const(v) => *v,
            ExprKind::Param(p) => match &args[*p] {
                Arg::Scalar(v) => *v,
                Arg::Tensor(_) => unreachable!("scalar parameter bound to a tensor"),
            },
            ExprKind::DimValue(s) => Value::I32(self.bound.dims[*s] as i32),
            ExprKind::BlockId(a) => Value::I32(self.id[*a as usize] as i32),
            ExprKind::GridSize(a) => Value::I32(self.bound.grid[*a as usize] as i32),
            ExprKind::Iota(a) => Value::I32(aligned(&e.shape, pos, self)[*a as usize] as i32),
            ExprKind::Local(l) => {
                let q = aligned(&e.shape, pos, self);
                let tile = self.locals[*l].as_ref().expect("locals are set before use");
                let mut flat = 0;
                for (c, ext) in q.iter().zip(&tile.shape) {
                    flat = flat * ext + c;
                }
                tile.get(flat)
            }
            ExprKind::Load { place, index } => {
                let q = aligned(&e.shape, pos, self);
                self.load(*place, index, &q, args)
            }
            ExprKind::Unary(op, a) => ops::unary(*op, self.node(*a, pos, args)),
            ExprKind::Binary(op, a, b) => {
                let x = self.node(*a, pos, args);
                let y = self.node(*b, pos, args);
                ops::binary(*op, x, y)
            }
            ExprKind::Cast(a) => ops::cast(self.node(*a, pos, args), e.ty),
            ExprKind::Bitcast(a) => ops::bitcast(self.node(*a, pos, args), e.ty),
            ExprKind::Select(c, a, b) => {
                let c = self.node(*c, pos, args);
                let a = self.node(*a, pos, args);
                let b = self.node(*b, pos, args);
                ops::select(c, a, b)
            }
            ExprKind::Builtin(f, xs) => {
                let vals: Vec<Value> = xs.iter().map(|x| self.node(*x, pos, args)).collect();
                ops::builtin(*f, &vals)
            }
            ExprKind::Reduce { op, arg, axis } => {
                self.reduce(id, *op, *arg, *axis as usize, pos, args)
            }
            ExprKind::Dot { a, b, acc } => self.dot(id, (*a, *b, *acc), pos, args),
            ExprKind::Transpose(x) => {
                // `x` at the position with the last two axes swapped, under
                // fresh stamps (its nodes differ there).
                let q = aligned(&e.shape, pos, self);
                let n = pos.len();
                let mut p = pos.to_vec();
                (p[n - 2], p[n - 1]) = (q[1], q[0]);
                self.stamp += 1;
                let v = self.node(*x, &p, args);
                self.stamp += 1;
                v
            }
        };
        self.memo[id] = v;
        self.memo_stamp[id] = self.stamp;
        v
    }

    /// A reduction at position `pos` of the statement's tile: its operand
    /// evaluated at `pos` with the reduced axis running over its extent,
    /// combined in the tree of `ir/reduce.rs`.
    fn reduce(
        &mut self,
        id: ExprId,
        op: ReduceOp,
        arg: ExprId,
        axis: usize,
        pos: &[usize],
        args: &[Arg],
    ) -> Value {
        let shape = &self.kernel.exprs[id].shape;
        let key = (id, aligned(shape, pos, self));
        if let Some(v) = self.reduced.get(&key) {
            return *v;
        }
        let at = pos.len() - shape.len() + axis;
        let operand = &self.kernel.exprs[arg];
        let (elem, len) = (operand.ty, self.extent(operand.shape[axis]));
        let mut p = pos.to_vec();
        let mut items = Vec::with_capacity(len);
        for k in 0..len {
            p[at] = k;
            // A fresh stamp per position: the operand's nodes differ there.
            self.stamp += 1;
            items.push((self.node(arg, &p, args), k));
        }
        // And a fresh one for the caller's position, which the operand's
        // evaluations above may have memoized over.
        self.stamp += 1;
        let v = match op {
            ReduceOp::Argmax | ReduceOp::Argmin => pairwise(items, |(a, i), (b, j)| {
                if ops::index_takes_right(op, a, b) {
                    (b, j)
                } else {
                    (a, i)
                }
            })
            .map_or(Value::I32(-1), |(_, i)| Value::I32(i as i32)),
            _ => pairwise(items.into_iter().map(|(v, _)| v).collect(), |a, b| {
                ops::reduce_combine(op, a, b)
            })
            .unwrap_or_else(|| ops::reduce_empty(op, elem)),
        };
        self.reduced.insert(key, v);
        v
    }

    /// The matrix product `id` at position `pos` (`ExprKind::Dot`'s
    /// definition): the accumulator's element, or `+0.0`, plus
    /// `a(i, k) * b(k, j)` for `k` in order, each operation rounded.
    fn dot(
        &mut self,
        id: ExprId,
        (a, b, acc): (ExprId, ExprId, Option<ExprId>),
        pos: &[usize],
        args: &[Arg],
    ) -> Value {
        let shape = &self.kernel.exprs[id].shape;
        let key = (id, aligned(shape, pos, self));
        if let Some(v) = self.reduced.get(&key) {
            return *v;
        }
        let (i, j) = (key.1[0], key.1[1]);
        let len = self.extent(self.kernel.exprs[a].shape[1]);
        let n = pos.len();
        let mut c = match acc {
            Some(c) => {
                self.stamp += 1;
                self.node(c, pos, args)
            }
            None => Value::F32(0.0),
        };
        let mut p = pos.to_vec();
        for k in 0..len {
            (p[n - 2], p[n - 1]) = (i, k);
            self.stamp += 1;
            let x = self.node(a, &p, args);
            (p[n - 2], p[n - 1]) = (k, j);
            self.stamp += 1;
            let y = self.node(b, &p, args);
            c = ops::binary(BinOp::Add, c, ops::binary(BinOp::Mul, x, y));
        }
        self.stamp += 1;
        self.reduced.insert(key, c);
        c
    }

    fn load(&mut self, place: Place, index: &[Index], q: &[usize], args: &[Arg]) -> Value {
        let mut starts = Vec::with_capacity(index.len());
        for ix in index {
            starts.push(match ix {
                Index::Range { start: Some(s), .. } | Index::Single(s) => {
                    self.node(*s, &[], args).as_i128() as i64
                }
                Index::Range { start: None, .. } => 0,
            });
        }
        let src: &Tensor = match place {
            Place::Param(p) => match &args[p] {
                Arg::Tensor(t) => t,
                Arg::Scalar(_) => unreachable!("loads read tensors"),
            },
            Place::Local(l) => self.locals[l].as_ref().expect("locals are set before use"),
        };
        match locate(index, &starts, q, &src.shape) {
            Some(flat) => src.get(flat),
            None => src.elem().zero(),
        }
    }
}

/// The position within a node of `shape` that position `pos` of the
/// statement's tile reads: the last axes line up, and extent-1 axes read 0.
fn aligned(shape: &[Dim], pos: &[usize], b: &Block<'_>) -> Vec<usize> {
    let off = pos.len() - shape.len();
    shape
        .iter()
        .enumerate()
        .map(|(j, d)| if b.extent(*d) == 1 { 0 } else { pos[off + j] })
        .collect()
}
