//! Reductions (`phobos_core::ir::reduce`) in naga, as the Cranelift backend
//! does them (`phobos-cpu/src/reduce.rs`): the invocation that computes an
//! element loops over the reduced axis itself. `sum` keeps the pairwise
//! tree as a stack of partial sums in a private array (32 entries: an axis
//! has fewer than 2^32 elements); `max`, `min`, `argmax` and `argmin` do not depend
//! on grouping and fold left to right. Every combine is `binop`'s, whose
//! meaning is `interp/ops.rs`'s, so the bits are the interpreter's.
//!
//! Correctness first: each element of a statement's tile that reads a
//! reduction recomputes it, so bind a reduction used across a tile with
//! `let m = max(x, axis = 1)` to compute it once per row.

use super::{H, Lower};
use crate::LowerError;
use naga::{
    ArraySize, BinaryOperator, Block, Expression, LocalVariable, Span, Statement, Type, TypeInner,
};
use phobos_core::interp::ops::reduce_empty;
use phobos_core::ir::BinOp;
use phobos_core::ir::{ExprId, ReduceOp};
use phobos_core::types::{Scalar, Value};
use std::collections::HashMap;
use std::num::NonZeroU32;

/// The partial sums the stack holds: one per bit of a u32 length.
const STACK: u32 = 32;

impl<'k> Lower<'k> {
    /// The reduction `id` at tile position `pos`.
    pub(super) fn reduce(
        &mut self,
        id: ExprId,
        op: ReduceOp,
        arg: ExprId,
        axis: usize,
        pos: &[H],
        cache: &HashMap<ExprId, H>,
    ) -> Result<H, LowerError> {
        let at = pos.len() - self.k.exprs[id].shape.len() + axis;
        let elem = self.k.exprs[arg].ty;
        let len = self.extent(self.k.exprs[arg].shape[axis]);
        // Scalars computed before stay valid inside the loop; this
        // element's other values may differ along the reduced axis.
        let outer = self.position_free(cache);
        // The operand is computed element by element, never in groups of 4.
        let lane = self.lane.take();
        let pos = pos.to_vec();
        let element = move |lw: &mut Self, k: H| -> Result<H, LowerError> {
            let mut p = pos.clone();
            p[at] = k;
            let mut inner = outer.clone();
            lw.node(arg, &p, &mut inner)
        };
        let r = if op == ReduceOp::Sum {
            self.tree_sum(elem, len, element)
        } else {
            self.fold(op, elem, len, element)
        };
        self.lane = lane;
        r
    }

    /// A loop `k in 0 .. len` (u32); `body` gets `k` and builds the body.
    pub(super) fn count_loop(
        &mut self,
        len: H,
        body: impl FnOnce(&mut Self, H) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        let counter = self.temp(Scalar::U32);
        let zero = self.u32c(0);
        self.var_store(counter, zero);
        let loop_body = self.nested(|lw| {
            let k = lw.var_load(counter);
            let done = lw.binary(BinaryOperator::GreaterEqual, k, len);
            lw.if_then(done, Block::from_vec(vec![Statement::Break]));
            body(lw, k)
        })?;
        let continuing = self.nested(|lw| {
            let k = lw.var_load(counter);
            let one = lw.u32c(1);
            let next = lw.binary(BinaryOperator::Add, k, one);
            lw.var_store(counter, next);
            Ok(())
        })?;
        self.push_loop(loop_body, continuing);
        Ok(())
    }

    /// `max`, `min`, `argmax`, `argmin`: the first element taken, then each later
    /// one taken when the left item is not NaN and the right one is NaN or
    /// beats it (`interp::ops::reduce_combine`).
    pub(super) fn fold(
        &mut self,
        op: ReduceOp,
        elem: Scalar,
        len: H,
        element: impl FnOnce(&mut Self, H) -> Result<H, LowerError>,
    ) -> Result<H, LowerError> {
        let acc = self.temp(elem);
        let init = self.lit(reduce_empty(op.value_op(), elem));
        self.var_store(acc, init);
        let best = self.temp(Scalar::I32);
        let minus_one = self.lit(Value::I32(-1));
        self.var_store(best, minus_one);
        self.count_loop(len, |lw, k| {
            let x = element(lw, k)?;
            let a = lw.var_load(acc);
            let take = lw.takes_right(op, elem, a, x);
            let zero = lw.u32c(0);
            let first = lw.binary(BinaryOperator::Equal, k, zero);
            let take = lw.binary(BinaryOperator::LogicalOr, take, first);
            let next = lw.select(take, x, a);
            lw.var_store(acc, next);
            let b = lw.var_load(best);
            let i = lw.bitcast(k, naga::ScalarKind::Sint);
            let next = lw.select(take, i, b);
            lw.var_store(best, next);
            Ok(())
        })?;
        let out = if op.is_index() { best } else { acc };
        Ok(self.var_load(out))
    }

    /// Whether the combine of `max`, `min`, `argmax` and `argmin` keeps the right item
    /// `b` over the left `a`: `a` is not NaN, and `b` is NaN or beats it.
    pub(super) fn takes_right(&mut self, op: ReduceOp, elem: Scalar, a: H, b: H) -> H {
        let beats = if op.value_op() == ReduceOp::Min {
            BinOp::Lt
        } else {
            BinOp::Gt
        };
        let a_ok = self.binop(BinOp::Eq, elem, a, a);
        let b_nan = self.binop(BinOp::Ne, elem, b, b);
        let better = self.binop(beats, elem, b, a);
        let better = self.binary(BinaryOperator::LogicalOr, b_nan, better);
        self.binary(BinaryOperator::LogicalAnd, a_ok, better)
    }

    /// One step of a reduction, `interp::ops::reduce_combine`'s (not
    /// `argmax` or `argmin`, whose items are pairs).
    pub(super) fn combine(&mut self, op: ReduceOp, elem: Scalar, a: H, b: H) -> H {
        match op {
            ReduceOp::Sum => self.binop(BinOp::Add, elem, a, b),
            _ => {
                let take = self.takes_right(op, elem, a, b);
                self.select(take, b, a)
            }
        }
    }

    /// `sum` in the pairwise tree: after element `k`, the top two partial
    /// sums are added once per trailing zero bit of `k + 1`; at the end the
    /// stack is folded from its top down.
    pub(super) fn tree_sum(
        &mut self,
        elem: Scalar,
        len: H,
        element: impl FnOnce(&mut Self, H) -> Result<H, LowerError>,
    ) -> Result<H, LowerError> {
        let ty = self.m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Array {
                    base: self.types[&elem],
                    size: ArraySize::Constant(NonZeroU32::new(STACK).expect("positive")),
                    stride: elem.size() as u32,
                },
            },
            Span::UNDEFINED,
        );
        let var = self.f.local_variables.append(
            LocalVariable {
                name: Some("partial".into()),
                ty,
                init: None,
            },
            Span::UNDEFINED,
        );
        let stack = self.expr(Expression::LocalVariable(var));
        let depth = self.temp(Scalar::U32);
        let zero = self.u32c(0);
        self.var_store(depth, zero);
        let v = self.temp(elem);
        let count = self.temp(Scalar::U32);
        self.count_loop(len, |lw, k| {
            let x = element(lw, k)?;
            lw.var_store(v, x);
            let one = lw.u32c(1);
            let k1 = lw.binary(BinaryOperator::Add, k, one);
            lw.var_store(count, k1);
            // while count is even: v = stack[--depth] + v; count >>= 1
            let merge = lw.nested(|lw| {
                let c = lw.var_load(count);
                let one = lw.u32c(1);
                let low = lw.binary(BinaryOperator::And, c, one);
                let zero = lw.u32c(0);
                let odd = lw.binary(BinaryOperator::NotEqual, low, zero);
                lw.if_then(odd, Block::from_vec(vec![Statement::Break]));
                let d = lw.var_load(depth);
                let d = lw.binary(BinaryOperator::Subtract, d, one);
                lw.var_store(depth, d);
                let slot = lw.access(stack, d);
                let left = lw.var_load(slot);
                let right = lw.var_load(v);
                let sum = lw.binop(BinOp::Add, elem, left, right);
                lw.var_store(v, sum);
                let half = lw.binary(BinaryOperator::ShiftRight, c, one);
                lw.var_store(count, half);
                Ok(())
            })?;
            lw.push_loop(merge, Block::new());
            let d = lw.var_load(depth);
            let slot = lw.access(stack, d);
            let top = lw.var_load(v);
            lw.var_store(slot, top);
            let one = lw.u32c(1);
            let d = lw.binary(BinaryOperator::Add, d, one);
            lw.var_store(depth, d);
            Ok(())
        })?;
        // acc = empty; if depth > 0 { acc = stack[depth - 1]; j = depth - 1;
        // while j > 0 { j -= 1; acc = stack[j] + acc } }
        let acc = self.temp(elem);
        let empty = self.lit(reduce_empty(ReduceOp::Sum, elem));
        self.var_store(acc, empty);
        let j = self.temp(Scalar::U32);
        let d = self.var_load(depth);
        let zero = self.u32c(0);
        let nonempty = self.binary(BinaryOperator::Greater, d, zero);
        let fold = self.nested(|lw| {
            let one = lw.u32c(1);
            let top = lw.binary(BinaryOperator::Subtract, d, one);
            let slot = lw.access(stack, top);
            let t = lw.var_load(slot);
            lw.var_store(acc, t);
            lw.var_store(j, top);
            let body = lw.nested(|lw| {
                let jv = lw.var_load(j);
                let zero = lw.u32c(0);
                let done = lw.binary(BinaryOperator::Equal, jv, zero);
                lw.if_then(done, Block::from_vec(vec![Statement::Break]));
                let one = lw.u32c(1);
                let jv = lw.binary(BinaryOperator::Subtract, jv, one);
                lw.var_store(j, jv);
                let slot = lw.access(stack, jv);
                let left = lw.var_load(slot);
                let right = lw.var_load(acc);
                let sum = lw.binop(BinOp::Add, elem, left, right);
                lw.var_store(acc, sum);
                Ok(())
            })?;
            lw.push_loop(body, Block::new());
            Ok(())
        })?;
        self.if_then(nonempty, fold);
        Ok(self.var_load(acc))
    }
}
