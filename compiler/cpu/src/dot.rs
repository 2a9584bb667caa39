//! `dot` and `trans` in Cranelift (`ir::ExprKind::{Dot, Transpose}`): the
//! element that needs a product loops over `K` itself, in order, one
//! rounded multiply and one rounded add a step, as the interpreter does.

use std::collections::HashMap;

use crate::codegen::Gen;
use crate::ops;
use cranelift_codegen::ir::immediates::Ieee32;
use cranelift_codegen::ir::{InstBuilder, Value, types};
use phobos_core::ir::{BinOp, ExprId};
use phobos_core::types::Scalar;

impl Gen<'_, '_> {
    /// The values computed so far that do not depend on the position:
    /// valid at any other position of the statement.
    pub(crate) fn scalars(&self, cache: &HashMap<ExprId, Value>) -> HashMap<ExprId, Value> {
        cache
            .iter()
            .filter(|(k, _)| self.k.exprs[**k].shape.is_empty())
            .map(|(k, v)| (*k, *v))
            .collect()
    }

    /// The product `id` at tile position `pos`.
    pub(crate) fn dot(
        &mut self,
        id: ExprId,
        (a, b, acc): (ExprId, ExprId, Option<ExprId>),
        pos: &[Value],
        cache: &HashMap<ExprId, Value>,
    ) -> Value {
        let shape = self.k.exprs[id].shape.clone();
        let q = self.aligned(&shape, pos);
        let n = pos.len();
        let outer = self.scalars(cache);
        let init = match acc {
            Some(c) => self.emit(c, pos, &mut outer.clone()),
            None => self.b.ins().f32const(Ieee32::with_bits(0)),
        };
        let sum = self.b.declare_var(types::F32);
        self.b.def_var(sum, init);
        let len = self.extent(self.k.exprs[a].shape[1]);
        let zero = self.iconst(0);
        self.loops(&[zero], &[len], &mut |g, k| {
            let mut p = pos.to_vec();
            (p[n - 2], p[n - 1]) = (q[0], k[0]);
            let x = g.emit(a, &p, &mut outer.clone());
            (p[n - 2], p[n - 1]) = (k[0], q[1]);
            let y = g.emit(b, &p, &mut outer.clone());
            let m = ops::binary(g.b, BinOp::Mul, Scalar::F32, x, y);
            let c = g.b.use_var(sum);
            let c = ops::binary(g.b, BinOp::Add, Scalar::F32, c, m);
            g.b.def_var(sum, c);
        });
        self.b.use_var(sum)
    }

    /// `trans(x)` at tile position `pos`: `x` at the last two axes swapped.
    pub(crate) fn transpose(
        &mut self,
        id: ExprId,
        x: ExprId,
        pos: &[Value],
        cache: &HashMap<ExprId, Value>,
    ) -> Value {
        let shape = self.k.exprs[id].shape.clone();
        let q = self.aligned(&shape, pos);
        let n = pos.len();
        let mut p = pos.to_vec();
        (p[n - 2], p[n - 1]) = (q[1], q[0]);
        let mut inner = self.scalars(cache);
        self.emit(x, &p, &mut inner)
    }
}
