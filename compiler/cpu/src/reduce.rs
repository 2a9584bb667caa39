//! Reductions (`ir/reduce.rs`) in Cranelift: a loop over the reduced axis
//! inside the element that needs the value. `sum` keeps the pairwise tree
//! as a stack of partial sums in a stack slot (the sequential form the IR
//! doc gives); `max`, `min`, `argmax` and `argmin` do not depend on grouping, so they
//! fold left to right. Every combine is `ops.rs`'s, as in the interpreter.

use std::collections::HashMap;

use crate::codegen::{Gen, TRUSTED};
use crate::ops;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, StackSlotData, StackSlotKind, Value, types};
use phobos_core::interp::ops::reduce_empty;
use phobos_core::ir::BinOp;
use phobos_core::ir::{ExprId, ReduceOp};
use phobos_core::types::Scalar;

/// Partial sums a stack can hold: one per bit of an i64 length.
const STACK: u32 = 64;

impl Gen<'_, '_> {
    /// The reduction `id` at tile position `pos`.
    pub(crate) fn reduce(
        &mut self,
        id: ExprId,
        op: ReduceOp,
        arg: ExprId,
        axis: usize,
        pos: &[Value],
        cache: &HashMap<ExprId, Value>,
    ) -> Value {
        let at = pos.len() - self.k.exprs[id].shape.len() + axis;
        let elem = self.k.exprs[arg].ty;
        let len = self.extent(self.k.exprs[arg].shape[axis]);
        // Scalars computed before the loop stay valid inside it; values of
        // this element's position may differ along the reduced axis.
        let outer = self.scalars(cache);
        let mut element = |g: &mut Self, k: Value| {
            let mut p = pos.to_vec();
            p[at] = k;
            let mut inner = outer.clone();
            g.emit(arg, &p, &mut inner)
        };
        if op == ReduceOp::Sum {
            self.tree_sum(elem, len, &mut element)
        } else {
            self.fold(op, elem, len, &mut element)
        }
    }

    /// `max`, `min`, `argmax`, `argmin`: the first element taken, then each later one
    /// taken when `ops::reduce_combine` would keep the right item.
    fn fold(
        &mut self,
        op: ReduceOp,
        elem: Scalar,
        len: Value,
        element: &mut dyn FnMut(&mut Self, Value) -> Value,
    ) -> Value {
        let init = ops::constant(self.b, reduce_empty(op.value_op(), elem));
        let acc = self.b.declare_var(ops::ty(elem));
        self.b.def_var(acc, init);
        let best = self.b.declare_var(types::I32);
        let minus_one = self.b.ins().iconst(types::I32, -1);
        self.b.def_var(best, minus_one);
        let zero = self.iconst(0);
        self.loops(&[zero], &[len], &mut |g, k| {
            let x = element(g, k[0]);
            let a = g.b.use_var(acc);
            let beats = if op.value_op() == ReduceOp::Min {
                BinOp::Lt
            } else {
                BinOp::Gt
            };
            let a_ok = ops::binary(g.b, BinOp::Eq, elem, a, a);
            let x_nan = ops::binary(g.b, BinOp::Ne, elem, x, x);
            let better = ops::binary(g.b, beats, elem, x, a);
            let better = g.b.ins().bor(x_nan, better);
            let take = g.b.ins().band(a_ok, better);
            let first = g.b.ins().icmp_imm_s(IntCC::Equal, k[0], 0);
            let take = g.b.ins().bor(take, first);
            let next = g.b.ins().select(take, x, a);
            g.b.def_var(acc, next);
            let b = g.b.use_var(best);
            let i = g.b.ins().ireduce(types::I32, k[0]);
            let next = g.b.ins().select(take, i, b);
            g.b.def_var(best, next);
        });
        if op.is_index() {
            self.b.use_var(best)
        } else {
            self.b.use_var(acc)
        }
    }

    /// `sum` in the pairwise tree: after element `k`, the top two partial
    /// sums are added once per trailing zero bit of `k + 1`; at the end the
    /// stack is folded from its top down.
    fn tree_sum(
        &mut self,
        elem: Scalar,
        len: Value,
        element: &mut dyn FnMut(&mut Self, Value) -> Value,
    ) -> Value {
        let size = elem.size() as u32;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            STACK * size,
            3,
        ));
        let stack = self.b.ins().stack_addr(types::I64, slot, 0);
        let depth = self.b.declare_var(types::I64);
        let zero = self.iconst(0);
        self.b.def_var(depth, zero);
        let ty = ops::ty(elem);
        self.loops(&[zero], &[len], &mut |g, k| {
            let x = element(g, k[0]);
            let v = g.b.declare_var(ty);
            g.b.def_var(v, x);
            let count = g.b.declare_var(types::I64);
            let k1 = g.b.ins().iadd_imm_s(k[0], 1);
            g.b.def_var(count, k1);
            // while count is even: v = stack[--depth] + v; count >>= 1
            let header = g.b.create_block();
            let body = g.b.create_block();
            let exit = g.b.create_block();
            g.b.ins().jump(header, &[]);
            g.b.switch_to_block(header);
            let c = g.b.use_var(count);
            let low = g.b.ins().band_imm_u(c, 1);
            g.b.ins().brif(low, exit, &[], body, &[]);
            g.b.switch_to_block(body);
            let d = g.b.use_var(depth);
            let d = g.b.ins().iadd_imm_s(d, -1);
            g.b.def_var(depth, d);
            let addr = g.slot_addr(stack, d, size);
            let left = g.b.ins().load(ty, TRUSTED, addr, 0);
            let right = g.b.use_var(v);
            let sum = ops::binary(g.b, BinOp::Add, elem, left, right);
            g.b.def_var(v, sum);
            let c = g.b.use_var(count);
            let c = g.b.ins().ushr_imm_u(c, 1);
            g.b.def_var(count, c);
            g.b.ins().jump(header, &[]);
            g.b.switch_to_block(exit);
            let d = g.b.use_var(depth);
            let addr = g.slot_addr(stack, d, size);
            let top = g.b.use_var(v);
            g.b.ins().store(TRUSTED, top, addr, 0);
            let d = g.b.ins().iadd_imm_s(d, 1);
            g.b.def_var(depth, d);
        });
        // acc = stack[depth - 1]; for j in (0 .. depth - 1).rev(): acc = stack[j] + acc
        let acc = self.b.declare_var(ty);
        let empty = ops::constant(self.b, reduce_empty(ReduceOp::Sum, elem));
        self.b.def_var(acc, empty);
        let d = self.b.use_var(depth);
        let nonempty = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, d, 0);
        let first = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(nonempty, first, &[], done, &[]);
        self.b.switch_to_block(first);
        let top = self.b.ins().iadd_imm_s(d, -1);
        let addr = self.slot_addr(stack, top, size);
        let v = self.b.ins().load(ty, TRUSTED, addr, 0);
        self.b.def_var(acc, v);
        let j = self.b.declare_var(types::I64);
        self.b.def_var(j, top);
        let header = self.b.create_block();
        let body = self.b.create_block();
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let jv = self.b.use_var(j);
        let more = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, jv, 0);
        self.b.ins().brif(more, body, &[], done, &[]);
        self.b.switch_to_block(body);
        let jv = self.b.use_var(j);
        let jv = self.b.ins().iadd_imm_s(jv, -1);
        self.b.def_var(j, jv);
        let addr = self.slot_addr(stack, jv, size);
        let left = self.b.ins().load(ty, TRUSTED, addr, 0);
        let right = self.b.use_var(acc);
        let sum = ops::binary(self.b, BinOp::Add, elem, left, right);
        self.b.def_var(acc, sum);
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(done);
        self.b.use_var(acc)
    }

    fn slot_addr(&mut self, stack: Value, index: Value, size: u32) -> Value {
        let off = self.b.ins().imul_imm_s(index, size as i64);
        self.b.ins().iadd(stack, off)
    }
}
