//! A `let` whose value is a small reduction of constant shape
//! (such as the checker's hidden `_max` of `x - max(x, axis = 1)`), computed
//! by the whole workgroup: the pairwise tree of `phobos_core::ir::reduce`,
//! one level at a time, each level's pairs spread over the invocations
//! and a barrier between levels.
//!
//! Level 1 reads the operand: item `i` is `x[2i] + x[2i + 1]` (an odd last
//! `x` alone), written to a workgroup array `reduce_<type>` laid out as the
//! `let`'s tile with the reduced axis of extent `H = ceil(L / 2)`. Level
//! `s = 1, 2, 4, ..` then adds the item at `(2j + 1) s` into the one at
//! `2j s` for every `j` with both inside: exactly the spec's "adjacent
//! items of the level, an odd last one carried up". Item 0 of each row is
//! the result, copied into the `let`. Every `+` (or combine of `max` and
//! `min`) is the one `reduce.rs` uses, so the bits are the interpreter's:
//! only which invocation computes which node of the tree changes. `argmax`
//! (`argmin`) carries each item's index in a second array (`reduce_index`)
//! and keeps the right item exactly when `max` (`min`) would, which the spec shows is the
//! same index in any grouping.
//!
//! Any other reduction, or one whose array would not fit beside the
//! kernel's other workgroup tiles, keeps `reduce.rs`'s loop per element.

use super::{H, LocalHome, Lower, WORKGROUP_MEMORY_LIMIT};
use crate::LowerError;
use naga::{
    AddressSpace, ArraySize, BinaryOperator, Expression, GlobalVariable, Span, Statement, Type,
    TypeInner,
};
use phobos_core::ir::{ExprId, ExprKind, LocalId, ReduceOp};
use phobos_core::types::{Dim, Scalar};
use std::collections::HashMap;
use std::num::NonZeroU32;

/// The largest array one tree reduction may use.
const TREE_BYTES: u64 = 4096;

impl<'k> Lower<'k> {
    /// Computes `let local = value` (or a `var` of the value's own shape)
    /// as a workgroup tree when it qualifies; `false` (nothing emitted)
    /// when it does not.
    pub(super) fn tree_let(
        &mut self,
        local: LocalId,
        value: ExprId,
        pre: &HashMap<ExprId, H>,
    ) -> Result<bool, LowerError> {
        let ExprKind::Reduce { op, arg, axis } = self.k.exprs[value].kind else {
            return Ok(false);
        };
        let axis = axis as usize;
        let elem = self.k.exprs[arg].ty;
        let out = self.k.locals[local].shape.clone();
        let consts = |s: &[Dim]| -> Option<Vec<u32>> {
            s.iter()
                .map(|d| match d {
                    Dim::Const(v) => u32::try_from(*v).ok(),
                    Dim::Sym(_) => None,
                })
                .collect()
        };
        let (Some(ext_in), Some(ext_out)) = (consts(&self.k.exprs[arg].shape), consts(&out)) else {
            return Ok(false);
        };
        let len = ext_in[axis];
        let ok = matches!(elem, Scalar::I32 | Scalar::U32 | Scalar::F32)
            && matches!(self.locals[local], LocalHome::Workgroup(_))
            && out == self.k.exprs[value].shape
            && len >= 2;
        if !ok {
            return Ok(false);
        }
        let half = len.div_ceil(2);
        let mut ext_h = ext_out.clone();
        ext_h[axis] = half;
        let count: u64 = ext_h.iter().map(|e| u64::from(*e)).product();
        let index = op.is_index();
        let Some(buf) = self.tree_buffer(elem, false, count) else {
            return Ok(false);
        };
        let index_buf = if index {
            match self.tree_buffer(Scalar::I32, true, count) {
                Some(b) => Some(b),
                None => return Ok(false),
            }
        } else {
            None
        };
        // A tree of an earlier statement may still be read from the array.
        self.cur
            .push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
        let inner: u32 = ext_h[axis + 1..].iter().product();
        let ext_h_h: Vec<H> = ext_h.iter().map(|e| self.u32c(*e)).collect();
        // Level 1: pairs of the operand.
        self.tile_loop(&ext_h_h, |lw, flat, pos| {
            let i = pos[axis];
            let one = lw.u32c(1);
            let two = lw.u32c(2);
            let left = lw.binary(BinaryOperator::Multiply, i, two);
            let right = lw.binary(BinaryOperator::Add, left, one);
            let last = lw.u32c(len - 1);
            // `right` is past the end only for an odd last item; read a
            // position inside instead, and keep `left` alone there.
            let inside = lw.binary(BinaryOperator::LessEqual, right, last);
            let safe = lw.select(inside, right, last);
            let mut p = pos.to_vec();
            p[axis] = left;
            let a = lw.node(arg, &p, &mut pre.clone())?;
            p[axis] = safe;
            let b = lw.node(arg, &p, &mut pre.clone())?;
            let (v, index) = lw.tree_step(op, elem, a, b, (left, safe), Some(inside));
            let ptr = lw.tree_ptr(buf, flat);
            lw.cur.push(Statement::Store {
                pointer: ptr,
                value: v,
            });
            if let (Some(ib), Some(index)) = (index_buf, index) {
                let ptr = lw.tree_ptr(ib, flat);
                let index = lw.bitcast(index, naga::ScalarKind::Sint);
                lw.cur.push(Statement::Store {
                    pointer: ptr,
                    value: index,
                });
            }
            Ok(())
        })?;
        // Levels s = 1, 2, 4, ..: items at multiples of s, pairs (2j s, (2j + 1) s).
        let mut s = 1u32;
        while s < half {
            self.cur
                .push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
            let items = half.div_ceil(s);
            let pairs = items / 2;
            let mut ext_p = ext_h.clone();
            ext_p[axis] = pairs;
            let ext_p_h: Vec<H> = ext_p.iter().map(|e| self.u32c(*e)).collect();
            let stride = s;
            self.tile_loop(&ext_p_h, |lw, _, pos| {
                let mut p = pos.to_vec();
                let two_s = lw.u32c(2 * stride);
                p[axis] = lw.binary(BinaryOperator::Multiply, pos[axis], two_s);
                let at = lw.flat_in(&p, &ext_h);
                let step = lw.u32c(stride * inner);
                let partner = lw.binary(BinaryOperator::Add, at, step);
                let pa = lw.tree_ptr(buf, at);
                let pb = lw.tree_ptr(buf, partner);
                let a = lw.expr(Expression::Load { pointer: pa });
                let b = lw.expr(Expression::Load { pointer: pb });
                let indices = match index_buf {
                    Some(ib) => {
                        let ia = lw.tree_ptr(ib, at);
                        let ib = lw.tree_ptr(ib, partner);
                        let va = lw.expr(Expression::Load { pointer: ia });
                        let vb = lw.expr(Expression::Load { pointer: ib });
                        Some((ia, va, vb))
                    }
                    None => None,
                };
                let pair = indices.map_or((a, a), |(_, va, vb)| (va, vb));
                let (v, index) = lw.tree_step(op, elem, a, b, pair, None);
                lw.cur.push(Statement::Store {
                    pointer: pa,
                    value: v,
                });
                if let (Some((ia, _, _)), Some(index)) = (indices, index) {
                    lw.cur.push(Statement::Store {
                        pointer: ia,
                        value: index,
                    });
                }
                Ok(())
            })?;
            s *= 2;
        }
        self.cur
            .push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
        // Item 0 of each row is the reduction.
        let place = phobos_core::ir::Place::Local(local);
        let ext_out_h: Vec<H> = ext_out.iter().map(|e| self.u32c(*e)).collect();
        self.tile_loop(&ext_out_h, |lw, flat, pos| {
            let mut p = pos.to_vec();
            p[axis] = lw.u32c(0);
            let at = lw.flat_in(&p, &ext_h);
            let ptr = lw.tree_ptr(index_buf.unwrap_or(buf), at);
            let v = lw.expr(Expression::Load { pointer: ptr });
            let dest = lw.element_ptr(place, Some(flat));
            lw.store_element(place, dest, v);
            Ok(())
        })?;
        Ok(true)
    }

    /// One combine of the tree: the value, and for `argmax` and `argmin` the index of
    /// the item kept, from the pair of indices given (u32 positions at
    /// level 1, i32 indices after). `inside` false keeps the left item
    /// alone (an odd last item at level 1).
    fn tree_step(
        &mut self,
        op: ReduceOp,
        elem: Scalar,
        a: H,
        b: H,
        (ia, ib): (H, H),
        inside: Option<H>,
    ) -> (H, Option<H>) {
        if !op.is_index() {
            let both = self.combine(op, elem, a, b);
            let v = match inside {
                Some(inside) => self.select(inside, both, a),
                None => both,
            };
            return (v, None);
        }
        let mut take = self.takes_right(op, elem, a, b);
        if let Some(inside) = inside {
            take = self.binary(BinaryOperator::LogicalAnd, take, inside);
        }
        let v = self.select(take, b, a);
        let index = self.select(take, ib, ia);
        (v, Some(index))
    }

    /// The row-major flat index of `pos` in a tile of constant `ext`.
    fn flat_in(&mut self, pos: &[H], ext: &[u32]) -> H {
        let mut flat = self.u32c(0);
        for (p, e) in pos.iter().zip(ext) {
            let e = self.u32c(*e);
            let scaled = self.binary(BinaryOperator::Multiply, flat, e);
            flat = self.binary(BinaryOperator::Add, scaled, *p);
        }
        flat
    }

    fn tree_ptr(&mut self, buf: naga::Handle<GlobalVariable>, index: H) -> H {
        let base = self.expr(Expression::GlobalVariable(buf));
        self.expr(Expression::Access { base, index })
    }

    /// The workgroup array of `elem` that trees use, grown to `count`
    /// elements; `None` when that would pass [`TREE_BYTES`] or, with the
    /// kernel's other workgroup arrays, [`WORKGROUP_MEMORY_LIMIT`].
    fn tree_buffer(
        &mut self,
        elem: Scalar,
        index: bool,
        count: u64,
    ) -> Option<naga::Handle<GlobalVariable>> {
        let bytes = count * 4;
        if bytes > TREE_BYTES {
            return None;
        }
        let existing = self.tree_buffers.get(&(elem, index)).copied();
        let used: u64 = self
            .m
            .global_variables
            .iter()
            .filter(|(h, g)| g.space == AddressSpace::WorkGroup && Some(*h) != existing)
            .map(|(_, g)| u64::from(self.m.types[g.ty].inner.size(self.m.to_ctx())))
            .sum();
        let have = existing.map_or(0, |g| {
            u64::from(
                self.m.types[self.m.global_variables[g].ty]
                    .inner
                    .size(self.m.to_ctx()),
            )
        });
        let want = have.max(bytes);
        if used + want > WORKGROUP_MEMORY_LIMIT {
            return None;
        }
        let ty = self.m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Array {
                    base: self.types[&elem],
                    size: ArraySize::Constant(
                        NonZeroU32::new((want / 4) as u32).expect("positive"),
                    ),
                    stride: 4,
                },
            },
            Span::UNDEFINED,
        );
        Some(match existing {
            Some(g) => {
                self.m.global_variables[g].ty = ty;
                g
            }
            None => {
                let g = self.m.global_variables.append(
                    GlobalVariable {
                        name: Some(if index {
                            "reduce_index".to_string()
                        } else {
                            format!("reduce_{elem}")
                        }),
                        space: AddressSpace::WorkGroup,
                        binding: None,
                        ty,
                        init: None,
                        memory_decorations: Default::default(),
                    },
                    Span::UNDEFINED,
                );
                self.tree_buffers.insert((elem, index), g);
                g
            }
        })
    }
}
