//! Places, masked loads and the value of an IR node at a tile position.

use super::{H, LocalHome, Lower, kind, nscalar};
use crate::LowerError;
use naga::{BinaryOperator, Expression, ScalarKind};
use phobos_core::ir::{Builtin, ExprId, ExprKind, Index, ParamKind, Place};
use phobos_core::types::{Dim, Scalar, Value};
use std::collections::HashMap;

impl<'k> Lower<'k> {
    pub(super) fn place_shape(&self, p: Place) -> Vec<Dim> {
        match p {
            Place::Param(i) => match &self.k.params[i].kind {
                ParamKind::Tensor { shape, .. } => shape.clone(),
                ParamKind::Scalar(_) => Vec::new(),
            },
            Place::Local(l) => self.k.locals[l].shape.clone(),
        }
    }

    pub(super) fn place_elem(&self, p: Place) -> Scalar {
        match p {
            Place::Param(i) => match &self.k.params[i].kind {
                ParamKind::Tensor { elem, .. } => *elem,
                ParamKind::Scalar(s) => *s,
            },
            Place::Local(l) => self.k.locals[l].elem,
        }
    }

    /// A pointer to element `flat` of a tensor or workgroup tile, or to a
    /// private scalar local; not of a split tensor (`split.rs` reads and
    /// writes those).
    pub(super) fn element_ptr(&mut self, p: Place, flat: Option<H>) -> H {
        let base = match p {
            Place::Param(i) => {
                if self.plan.vec4[i] {
                    // `t[i >> 2][i & 3]` in an array of vec4.
                    let index = flat.expect("a tile element has a flat index");
                    let v = self.quad_ptr(p, index);
                    let three = self.u32c(3);
                    let lane = self.binary(BinaryOperator::And, index, three);
                    return self.access(v, lane);
                }
                let g = self.tensors[i].expect("stores and loads name tensors");
                self.expr(Expression::GlobalVariable(g))
            }
            Place::Local(l) => match self.locals[l] {
                LocalHome::Workgroup(g) => self.expr(Expression::GlobalVariable(g)),
                LocalHome::Private(v) => return self.expr(Expression::LocalVariable(v)),
            },
        };
        let index = flat.expect("a tile element has a flat index");
        self.access(base, index)
    }

    /// Whether `p` is a bool tile in workgroup memory, held as u32 0/1: a
    /// workgroup `array<bool>` may be one byte per element, and neighbouring
    /// invocations writing bytes of one word race on some devices (NVIDIA).
    pub(super) fn word_bool(&self, p: Place) -> bool {
        matches!(p, Place::Local(l)
            if self.k.locals[l].elem == Scalar::Bool
                && matches!(self.locals[l], LocalHome::Workgroup(_)))
    }

    /// A bool as the u32 0 or 1 that workgroup memory holds.
    pub(super) fn bool_to_word(&mut self, b: H) -> H {
        let (zero, one) = (self.u32c(0), self.u32c(1));
        self.select(b, one, zero)
    }

    /// The bool a u32 0 or 1 of workgroup memory holds.
    pub(super) fn word_to_bool(&mut self, w: H) -> H {
        let zero = self.u32c(0);
        self.binary(BinaryOperator::NotEqual, w, zero)
    }

    /// Loads the element of `p` at `ptr` (from [`Self::element_ptr`]).
    pub(super) fn load_element(&mut self, p: Place, ptr: H) -> H {
        let v = self.var_load(ptr);
        if self.word_bool(p) {
            self.word_to_bool(v)
        } else {
            v
        }
    }

    /// Stores `v` to the element of `p` at `ptr` (from [`Self::element_ptr`]).
    pub(super) fn store_element(&mut self, p: Place, ptr: H, v: H) {
        let value = if self.word_bool(p) {
            self.bool_to_word(v)
        } else {
            v
        };
        self.var_store(ptr, value);
    }

    /// A pointer to the vec4 that holds element `flat` (`flat` a multiple
    /// of 4 for a whole group) of a tensor bound as `array<vec4<T>>`.
    pub(super) fn quad_ptr(&mut self, p: Place, flat: H) -> H {
        let Place::Param(i) = p else {
            unreachable!("only tensors are bound as vec4 arrays")
        };
        debug_assert!(self.plan.vec4[i] && self.splits[i].is_none());
        let g = self.tensors[i].expect("stores and loads name tensors");
        let base = self.expr(Expression::GlobalVariable(g));
        let two = self.u32c(2);
        let index = self.binary(BinaryOperator::ShiftRight, flat, two);
        self.access(base, index)
    }

    pub(super) fn is_private(&self, p: Place) -> bool {
        matches!(p, Place::Local(l) if matches!(self.locals[l], LocalHome::Private(_)))
    }

    /// Whether the element of a slice at tile position `pos` lies inside
    /// `place`, and its flat index there. Coordinates are u32: an i32 start
    /// plus a position wraps to at least 2^31 when the true coordinate is
    /// negative or past 2^31, which is never below an extent (the runtime
    /// refuses tensors of more than 2^31 elements); a u32 start that
    /// overflows is caught by `c < start`.
    pub(super) fn locate(
        &mut self,
        place: Place,
        index: &[Index],
        pos: &[H],
        cache: &mut HashMap<ExprId, H>,
    ) -> Result<(H, H), LowerError> {
        let shape = self.place_shape(place);
        let mut inside = self.lit(Value::Bool(true));
        let mut flat = self.u32c(0);
        let mut p = pos.iter();
        for (ix, d) in index.iter().zip(&shape) {
            let ext = self.extent(*d);
            let (start, ok_wrap) = match ix {
                Index::Range { start: None, .. } => (None, None),
                Index::Range { start: Some(s), .. } | Index::Single(s) => {
                    let v = self.node(*s, &[], cache)?;
                    match self.k.exprs[*s].ty {
                        Scalar::I32 => (Some(self.bitcast(v, ScalarKind::Uint)), None),
                        _ => (Some(v), Some(v)),
                    }
                }
            };
            let c = match (ix, start) {
                (Index::Range { .. }, Some(s)) => {
                    let q = *p.next().expect("one position per range axis");
                    self.binary(BinaryOperator::Add, s, q)
                }
                (Index::Range { .. }, None) => *p.next().expect("one position per range axis"),
                (Index::Single(_), Some(s)) => s,
                (Index::Single(_), None) => unreachable!("a single index has a value"),
            };
            let mut ok = self.binary(BinaryOperator::Less, c, ext);
            if let (Index::Range { .. }, Some(s)) = (ix, ok_wrap) {
                let no_wrap = self.binary(BinaryOperator::GreaterEqual, c, s);
                ok = self.binary(BinaryOperator::LogicalAnd, ok, no_wrap);
            }
            inside = self.binary(BinaryOperator::LogicalAnd, inside, ok);
            let scaled = self.binary(BinaryOperator::Multiply, flat, ext);
            flat = self.binary(BinaryOperator::Add, scaled, c);
        }
        Ok((inside, flat))
    }

    /// Computes every scalar node under `root` before the statement's loop.
    pub(super) fn hoist(
        &mut self,
        root: ExprId,
        cache: &mut HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        let mut seen = phobos_core::ir::IdVec::from_elem(false, self.k.exprs.len());
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id], true) {
                continue;
            }
            let e = &self.k.exprs[id];
            if e.shape.is_empty() {
                self.node(id, &[], cache)?;
                continue;
            }
            stack.extend(e.kind.operands());
        }
        self.share_divisors(root, cache)
    }

    /// The position within a node of `shape` read at tile position `pos`:
    /// trailing axes line up and extent-1 axes read 0 (broadcasting).
    pub(super) fn aligned(&mut self, shape: &[Dim], pos: &[H]) -> Vec<H> {
        let off = pos.len() - shape.len();
        let mut out = Vec::new();
        for (j, d) in shape.iter().enumerate() {
            out.push(match d {
                Dim::Const(1) => self.u32c(0),
                Dim::Const(_) => pos[off + j],
                Dim::Sym(s) => {
                    let one = self.u32c(1);
                    let is_one = self.binary(BinaryOperator::Equal, self.dims[*s], one);
                    let zero = self.u32c(0);
                    self.select(is_one, zero, pos[off + j])
                }
            });
        }
        out
    }

    /// The value of node `id` at tile position `pos`.
    pub(super) fn node(
        &mut self,
        id: ExprId,
        pos: &[H],
        cache: &mut HashMap<ExprId, H>,
    ) -> Result<H, LowerError> {
        if let Some(h) = cache.get(&id) {
            return Ok(*h);
        }
        if let Some(h) = self.row_load(id) {
            cache.insert(id, h);
            return Ok(h);
        }
        let e = &self.k.exprs[id];
        let (ty, shape) = (e.ty, e.shape.clone());
        nscalar(ty)?;
        if let Some(v) = self.consts[id] {
            // Computed at compile time, so that no WGSL constant expression
            // can fail at shader creation (`fold.rs`).
            let h = self.lit(v);
            cache.insert(id, h);
            return Ok(h);
        }
        let h = match &e.kind {
            ExprKind::Const(v) => self.lit(*v),
            ExprKind::Param(i) => self.scalars[*i].expect("a scalar parameter"),
            ExprKind::DimValue(s) => self.bitcast(self.dims[*s], ScalarKind::Sint),
            ExprKind::BlockId(a) => self.block_id[*a as usize],
            ExprKind::GridSize(a) => self.bitcast(self.grid[*a as usize], ScalarKind::Sint),
            ExprKind::Iota(a) => {
                let q = self.aligned(&shape, pos);
                self.bitcast(q[*a as usize], ScalarKind::Sint)
            }
            ExprKind::Local(l) => {
                let place = Place::Local(*l);
                if self.is_private(place) {
                    let ptr = self.element_ptr(place, None);
                    self.var_load(ptr)
                } else {
                    let q = self.aligned(&shape, pos);
                    let mut flat = self.u32c(0);
                    for (c, d) in q.iter().zip(&self.k.locals[*l].shape.clone()) {
                        let ext = self.extent(*d);
                        let scaled = self.binary(BinaryOperator::Multiply, flat, ext);
                        flat = self.binary(BinaryOperator::Add, scaled, *c);
                    }
                    let ptr = self.element_ptr(place, Some(flat));
                    self.load_element(place, ptr)
                }
            }
            ExprKind::Load { place, index } => {
                let bound_quad = matches!(place, Place::Param(i) if self.plan.vec4[*i]);
                if self.lane.is_some() && bound_quad && super::stmt::quad_load(self.k, id) {
                    self.quad_load(id, *place, index, &shape, cache)?
                } else {
                    let q = self.aligned(&shape, pos);
                    self.load(*place, index, &q, cache)?
                }
            }
            ExprKind::Unary(op, a) => {
                let x = self.node(*a, pos, cache)?;
                self.unary(*op, ty, x)
            }
            ExprKind::Binary(op, a, b) => {
                let operand = self.k.exprs[*a].ty;
                let x = self.node(*a, pos, cache)?;
                let y = self.node(*b, pos, cache)?;
                self.binop(*op, operand, x, y)
            }
            ExprKind::Cast(a) => {
                let from = self.k.exprs[*a].ty;
                let x = self.node(*a, pos, cache)?;
                self.cast(from, ty, x)
            }
            ExprKind::Bitcast(a) => {
                let from = self.k.exprs[*a].ty;
                let x = self.node(*a, pos, cache)?;
                if from == ty {
                    x
                } else if from == Scalar::F32 {
                    // A float's bits are observable: NaN is canonical.
                    let bits = self.canonical_bits(x);
                    if ty == Scalar::U32 {
                        bits
                    } else {
                        self.bitcast(bits, kind(ty))
                    }
                } else {
                    self.bitcast(x, kind(ty))
                }
            }
            ExprKind::Select(c, a, b) => {
                let c = self.node(*c, pos, cache)?;
                let x = self.node(*a, pos, cache)?;
                let y = self.node(*b, pos, cache)?;
                self.select(c, x, y)
            }
            ExprKind::Builtin(f, xs) => {
                // A native function lowers the one operand it uses, which
                // `builtin` receives alone.
                let used = match f {
                    Builtin::Native(_) => &xs[self.native_operand(ty)..][..1],
                    _ => &xs[..],
                };
                let mut vals = Vec::new();
                for x in used {
                    vals.push(self.node(*x, pos, cache)?);
                }
                if f.is_tandem() {
                    self.tandem_builtin(id, *f, &vals)?
                } else {
                    self.builtin(*f, ty, &vals)
                }
            }
            ExprKind::Reduce { op, arg, axis } => match self.coop.get(&id) {
                Some(c) => self.coop_value(id, *c, pos),
                None => self.reduce(id, *op, *arg, *axis as usize, pos, cache)?,
            },
            ExprKind::Dot { a, b, acc } => match self.coop.get(&id) {
                Some(c) => self.coop_value(id, *c, pos),
                None => self.dot(id, (*a, *b, *acc), pos, cache)?,
            },
            ExprKind::Transpose(x) => self.transpose(id, *x, pos, cache)?,
        };
        self.row_keep(id, h);
        cache.insert(id, h);
        Ok(h)
    }

    /// This lane's element of a load made once per group of 4 with one
    /// 16-byte load (`stmt::quad_load` holds: the group's 4 elements are
    /// consecutive, start at a multiple of 4 and are all inside or all
    /// outside, so the group reads 4 zeros when outside).
    fn quad_load(
        &mut self,
        id: ExprId,
        place: Place,
        index: &[Index],
        shape: &[Dim],
        cache: &mut HashMap<ExprId, H>,
    ) -> Result<H, LowerError> {
        let lane = self.lane.as_ref().expect("in a group");
        let (l, known) = (lane.lane, lane.loads.get(&id).copied());
        let v4 = match known {
            Some(v4) => v4,
            None => {
                let pos0 = lane.pos0.clone();
                let q = self.aligned(shape, &pos0);
                let (inside, flat) = self.locate(place, index, &q, cache)?;
                let elem = self.place_elem(place);
                let ty = super::bindings::vec4_type(&mut self.m, elem);
                let var = self.f.local_variables.append(
                    naga::LocalVariable {
                        name: None,
                        ty,
                        init: None,
                    },
                    naga::Span::UNDEFINED,
                );
                let tmp = self.expr(Expression::LocalVariable(var));
                let zero = self.lit(elem.zero());
                let zeros = self.expr(Expression::Splat {
                    size: naga::VectorSize::Quad,
                    value: zero,
                });
                self.var_store(tmp, zeros);
                let accept = self.nested(|lw| {
                    let v = lw.load_quad(place, flat);
                    lw.var_store(tmp, v);
                    Ok(())
                })?;
                self.if_then(inside, accept);
                let v4 = self.var_load(tmp);
                self.lane.as_mut().expect("in a group").loads.insert(id, v4);
                v4
            }
        };
        Ok(self.expr(Expression::AccessIndex { base: v4, index: l }))
    }

    /// A masked load: inside the place it reads the element, outside it
    /// yields 0 without touching memory (an `if`, not the driver's
    /// robustness, which SPIR-V passthrough does not have).
    pub(super) fn load(
        &mut self,
        place: Place,
        index: &[Index],
        q: &[H],
        cache: &mut HashMap<ExprId, H>,
    ) -> Result<H, LowerError> {
        let elem = self.place_elem(place).value_type();
        if self.is_private(place) {
            let ptr = self.element_ptr(place, None);
            return Ok(self.var_load(ptr));
        }
        let (inside, flat) = self.locate(place, index, q, cache)?;
        let tmp = self.temp(elem);
        let zero = self.lit(elem.zero());
        self.var_store(tmp, zero);
        let accept = self.nested(|lw| {
            let v = lw.load_at(place, flat);
            lw.var_store(tmp, v);
            Ok(())
        })?;
        self.if_then(inside, accept);
        Ok(self.var_load(tmp))
    }
}
