//! Stores vectorized along their last axis, four 32-bit lanes at a time.
//!
//! A row of a store (the last axis, the others fixed) runs in three parts:
//! scalar elements up to where every varying load is inside its tensor, a
//! vector loop while four lanes fit, and scalar elements after. Lanes compute
//! exactly what the scalar code computes (the same IEEE operations, lane by
//! lane), so vectorizing never changes bits. A statement with anything the
//! vector path does not cover (integer division, per-lane shift counts,
//! 64-bit or bool memory, symbolic last extents) stays scalar.

use std::collections::HashMap;

use crate::codegen::{Gen, StoreCtx, key};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value, types};
use phobos_core::ir::{BinOp, UnOp};
use phobos_core::ir::{Builtin, ExprId, ExprKind, Index, Place};
use phobos_core::types::{Dim, Scalar};

const W: i64 = 4;
const VMEM: MemFlagsData = MemFlagsData::new().with_notrap();

fn vty(s: Scalar) -> Type {
    match s {
        Scalar::F32 => types::F32X4,
        _ => types::I32X4,
    }
}

fn is32(s: Scalar) -> bool {
    matches!(s, Scalar::I32 | Scalar::U32 | Scalar::F32)
}

impl Gen<'_, '_> {
    /// Whether a node's value differs between lanes: its last extent lines
    /// up with the row and is not 1. `None` when that is unknown.
    fn varies(&self, id: ExprId) -> Option<bool> {
        match self.k.exprs[id].shape.last() {
            None | Some(Dim::Const(1)) => Some(false),
            Some(Dim::Const(_)) => Some(true),
            Some(Dim::Sym(_)) => None,
        }
    }

    pub(crate) fn vectorizable(&self, st: &StoreCtx) -> bool {
        is32(st.elem)
            && matches!(st.index.last(), Some(Index::Range { .. }))
            && self.varies(st.value) == Some(true)
            && self.vec_ok(st.value, &mut HashMap::new())
    }

    fn vec_ok(&self, id: ExprId, memo: &mut HashMap<ExprId, bool>) -> bool {
        if let Some(v) = memo.get(&id) {
            return *v;
        }
        let e = &self.k.exprs[id];
        let ok = match self.varies(id) {
            None => false,
            // A uniform node is computed as a scalar and splatted.
            Some(false) => is32(e.ty) || e.ty == Scalar::Bool,
            Some(true) => {
                let ty_ok = is32(e.ty) || e.ty == Scalar::Bool;
                let kids_ok = |this: &Self, ids: &[ExprId], memo: &mut HashMap<ExprId, bool>| {
                    ids.iter().all(|k| this.vec_ok(*k, memo))
                };
                ty_ok
                    && match &e.kind {
                        ExprKind::Iota(_) => true,
                        ExprKind::Local(l) => is32(self.k.locals[*l].elem),
                        ExprKind::Load { place, index } => {
                            is32(self.k.place_elem(*place))
                                && matches!(index.last(), Some(Index::Range { .. }))
                        }
                        ExprKind::Unary(_, a) => kids_ok(self, &[*a], memo),
                        ExprKind::Binary(op, a, b) => {
                            let t = self.k.exprs[*a].ty;
                            let op_ok = match op {
                                BinOp::Div => t.is_float(),
                                BinOp::Rem => false,
                                BinOp::Shl | BinOp::Shr => self.varies(*b) == Some(false),
                                _ => true,
                            };
                            op_ok
                                && (is32(t) || t == Scalar::Bool)
                                && kids_ok(self, &[*a, *b], memo)
                        }
                        ExprKind::Cast(a) => {
                            let from = self.k.exprs[*a].ty;
                            matches!(
                                (from, e.ty),
                                (Scalar::I32 | Scalar::U32, Scalar::I32 | Scalar::U32)
                                    | (Scalar::I32, Scalar::F32)
                                    | (Scalar::F32, Scalar::I32)
                            ) && kids_ok(self, &[*a], memo)
                        }
                        ExprKind::Bitcast(a) => {
                            is32(self.k.exprs[*a].ty) && kids_ok(self, &[*a], memo)
                        }
                        ExprKind::Select(c, a, b) => kids_ok(self, &[*c, *a, *b], memo),
                        ExprKind::Builtin(f, xs) => {
                            !f.is_tandem()
                                && !matches!(f, Builtin::RoundF16 | Builtin::RoundBF16)
                                && (*f != Builtin::Abs || e.ty != Scalar::U32)
                                && kids_ok(self, xs, memo)
                        }
                        // Uniform leaves are splats (`varies` is false for
                        // them, above); a reduction is computed per element.
                        ExprKind::Const(_)
                        | ExprKind::Param(_)
                        | ExprKind::DimValue(_)
                        | ExprKind::BlockId(_)
                        | ExprKind::GridSize(_)
                        | ExprKind::Reduce { .. }
                        | ExprKind::Dot { .. }
                        | ExprKind::Transpose(_) => false,
                    }
            }
        };
        memo.insert(id, ok);
        ok
    }

    /// One row of a vectorizable store: positions `outer` on the other axes,
    /// `lo .. hi` on the last.
    pub(crate) fn row(&mut self, st: &StoreCtx, outer: &[Value], lo: Value, hi: Value) {
        // The part of the row where every varying load is inside its tensor.
        let mut vlo = lo;
        let mut vhi = hi;
        let mut probe: Vec<Value> = outer.to_vec();
        probe.push(lo);
        let mut loads = Vec::new();
        self.varying_loads(st.value, &mut loads, &mut HashMap::new());
        let mut cache = st.pre.clone();
        for id in loads {
            let ExprKind::Load { place, index } = self.k.exprs[id].kind.clone() else {
                unreachable!("collected loads")
            };
            let shape = self.k.exprs[id].shape.clone();
            let q = self.aligned(&shape, &probe);
            let info = &self.places[&key(place)];
            let ext = info.ext.clone();
            let mut ok = self.b.ins().iconst(types::I8, 1);
            let mut qi = q.iter();
            let last = index.len() - 1;
            for (n, (ix, e)) in index.iter().zip(&ext).enumerate() {
                let (start, p) = match ix {
                    Index::Range { start, .. } => (*start, qi.next().copied()),
                    Index::Single(s) => (Some(*s), None),
                };
                let s = match start {
                    Some(s) => self.index_value(s, &mut cache),
                    None => self.iconst(0),
                };
                if n == last {
                    // Lanes i .. i + 4 read s + i .. s + i + 4: inside for
                    // i in -s .. ext - s.
                    let neg = self.b.ins().ineg(s);
                    vlo = self.b.ins().smax(vlo, neg);
                    let room = self.b.ins().isub(*e, s);
                    vhi = self.b.ins().smin(vhi, room);
                } else {
                    let c = match p {
                        Some(p) => self.b.ins().iadd(s, p),
                        None => s,
                    };
                    let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, c, *e);
                    ok = self.b.ins().band(ok, inside);
                }
            }
            // A load outside on another axis reads 0 on the whole row: the
            // scalar path handles it.
            vhi = self.b.ins().select(ok, vhi, vlo);
        }
        // a = clamp(vlo, lo, hi), b = clamp(vhi, a, hi), e = a + 4 * floor((b - a) / 4).
        let a = self.b.ins().smax(vlo, lo);
        let a = self.b.ins().smin(a, hi);
        let b = self.b.ins().smax(vhi, a);
        let b = self.b.ins().smin(b, hi);
        let span = self.b.ins().isub(b, a);
        let whole = self.b.ins().band_imm_s(span, !(W - 1));
        let e = self.b.ins().iadd(a, whole);
        let mut scalar = |g: &mut Self, pos: &[Value]| {
            let mut full = outer.to_vec();
            full.push(pos[0]);
            g.store_elem(st, &full);
        };
        self.loops(&[lo], &[a], &mut scalar);
        self.vector_loop(st, outer, a, e);
        self.loops(&[e], &[hi], &mut scalar);
    }

    fn varying_loads(&self, id: ExprId, out: &mut Vec<ExprId>, seen: &mut HashMap<ExprId, ()>) {
        if seen.insert(id, ()).is_some() || self.varies(id) != Some(true) {
            return;
        }
        match &self.k.exprs[id].kind {
            // A load is collected whole; its index is not varying.
            ExprKind::Load { .. } => out.push(id),
            kind => {
                for x in kind.operands() {
                    self.varying_loads(x, out, seen);
                }
            }
        }
    }

    fn vector_loop(&mut self, st: &StoreCtx, outer: &[Value], from: Value, to: Value) {
        // Loop-invariant vectors, made once before the loop: the splats of
        // the statement's scalars, and the lane offsets 0, 1, 2, 3 of iota.
        let mut invariant = HashMap::new();
        let mut hoisted: Vec<(ExprId, Value)> = st.pre.iter().map(|(k, v)| (*k, *v)).collect();
        hoisted.sort_by_key(|(k, _)| *k);
        for (id, s) in hoisted {
            let t = self.k.exprs[id].ty;
            if is32(t) {
                invariant.insert(id, self.b.ins().splat(vty(t), s));
            } else if t == Scalar::Bool {
                let w = self.b.ins().uextend(types::I32, s);
                let m = self.b.ins().ineg(w);
                invariant.insert(id, self.b.ins().splat(types::I32X4, m));
            }
        }
        let zero = self.b.ins().iconst(types::I32, 0);
        let mut lanes = self.b.ins().splat(types::I32X4, zero);
        for lane in 1..W as u8 {
            let x = self.b.ins().iconst(types::I32, lane as i64);
            lanes = self.b.ins().insertlane(lanes, x, lane);
        }
        self.lane_offsets = Some(lanes);
        let var = self.b.declare_var(types::I64);
        self.b.def_var(var, from);
        let header = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let i = self.b.use_var(var);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, i, to);
        self.b.ins().brif(more, body, &[], exit, &[]);
        self.b.switch_to_block(body);
        let mut pos = outer.to_vec();
        pos.push(i);
        let mut scalars = st.pre.clone();
        let mut vectors = invariant;
        let v = self.vemit(st.value, &pos, &mut scalars, &mut vectors);
        let v = if st.canon { self.vcanonical(v) } else { v };
        let addr = self.store_address(st, &pos);
        self.b.ins().store(VMEM, v, addr, 0);
        let next = self.b.ins().iadd_imm_s(i, W);
        self.b.def_var(var, next);
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(exit);
    }

    /// The four lanes of `id` at positions `pos` .. `pos + 3` (last axis).
    fn vemit(
        &mut self,
        id: ExprId,
        pos: &[Value],
        scalars: &mut HashMap<ExprId, Value>,
        vectors: &mut HashMap<ExprId, Value>,
    ) -> Value {
        if let Some(v) = vectors.get(&id) {
            return *v;
        }
        let e = self.k.exprs[id].clone();
        let v = if self.varies(id) != Some(true) {
            let s = self.emit(id, pos, scalars);
            if e.ty == Scalar::Bool {
                let w = self.b.ins().uextend(types::I32, s);
                let m = self.b.ins().ineg(w);
                self.b.ins().splat(types::I32X4, m)
            } else {
                self.b.ins().splat(vty(e.ty), s)
            }
        } else {
            match &e.kind {
                ExprKind::Iota(a) if *a as usize == pos.len() - 1 => {
                    let i = self.b.ins().ireduce(types::I32, pos[pos.len() - 1]);
                    let first = self.b.ins().splat(types::I32X4, i);
                    let offsets = self.lane_offsets.expect("set before the vector loop");
                    self.b.ins().iadd(first, offsets)
                }
                ExprKind::Iota(_) => {
                    let s = self.emit(id, pos, scalars);
                    self.b.ins().splat(types::I32X4, s)
                }
                ExprKind::Local(l) => {
                    let q = self.aligned(&e.shape, pos);
                    let info = &self.places[&key(Place::Local(*l))];
                    let (base, strides) = (info.base, info.strides.clone());
                    let addr = self.address(base, &strides, &q, e.ty);
                    self.b.ins().load(vty(e.ty), VMEM, addr, 0)
                }
                ExprKind::Load { place, index } => {
                    let q = self.aligned(&e.shape, pos);
                    let info = &self.places[&key(*place)];
                    let (base, strides) = (info.base, info.strides.clone());
                    let mut coords = Vec::new();
                    let mut qi = q.iter();
                    for ix in index {
                        let (start, p) = match ix {
                            Index::Range { start, .. } => (*start, qi.next().copied()),
                            Index::Single(s) => (Some(*s), None),
                        };
                        let s = start.map(|s| self.index_value(s, scalars));
                        coords.push(match (s, p) {
                            (Some(s), Some(p)) => self.b.ins().iadd(s, p),
                            (Some(s), None) => s,
                            (None, Some(p)) => p,
                            (None, None) => unreachable!("an index has a start or a position"),
                        });
                    }
                    let addr = self.address(base, &strides, &coords, e.ty);
                    self.b.ins().load(vty(e.ty), VMEM, addr, 0)
                }
                ExprKind::Unary(op, a) => {
                    let x = self.vemit(*a, pos, scalars, vectors);
                    match (op, e.ty) {
                        (UnOp::Neg, Scalar::F32) => self.b.ins().fneg(x),
                        (UnOp::Neg, _) => self.b.ins().ineg(x),
                        (UnOp::Not | UnOp::BitNot, _) => self.b.ins().bnot(x),
                    }
                }
                ExprKind::Binary(op, a, b) => {
                    let t = self.k.exprs[*a].ty;
                    let x = self.vemit(*a, pos, scalars, vectors);
                    if matches!(op, BinOp::Shl | BinOp::Shr) {
                        let n = self.emit(*b, pos, scalars);
                        let n = self.b.ins().band_imm_s(n, 31);
                        match (op, t) {
                            (BinOp::Shl, _) => self.b.ins().ishl(x, n),
                            (_, Scalar::I32) => self.b.ins().sshr(x, n),
                            _ => self.b.ins().ushr(x, n),
                        }
                    } else {
                        let y = self.vemit(*b, pos, scalars, vectors);
                        self.vbinary(*op, t, x, y)
                    }
                }
                ExprKind::Cast(a) => {
                    let from = self.k.exprs[*a].ty;
                    let x = self.vemit(*a, pos, scalars, vectors);
                    match (from, e.ty) {
                        (Scalar::I32, Scalar::F32) => self.b.ins().fcvt_from_sint(types::F32X4, x),
                        (Scalar::F32, Scalar::I32) => {
                            self.b.ins().fcvt_to_sint_sat(types::I32X4, x)
                        }
                        _ => x,
                    }
                }
                ExprKind::Bitcast(a) => {
                    let x = self.vemit(*a, pos, scalars, vectors);
                    let x = if self.k.exprs[*a].ty == Scalar::F32 && e.ty != Scalar::F32 {
                        self.vcanonical(x)
                    } else {
                        x
                    };
                    self.vcast_bits(x, vty(e.ty))
                }
                ExprKind::Select(c, a, b) => {
                    let c = self.vemit(*c, pos, scalars, vectors);
                    let x = self.vemit(*a, pos, scalars, vectors);
                    let y = self.vemit(*b, pos, scalars, vectors);
                    self.vselect(c, x, y)
                }
                ExprKind::Builtin(f, xs) => {
                    let vals: Vec<Value> = xs
                        .iter()
                        .map(|x| self.vemit(*x, pos, scalars, vectors))
                        .collect();
                    match (f, &vals[..]) {
                        (Builtin::Sqrt, [x]) => self.b.ins().sqrt(*x),
                        (Builtin::Native(_), [_, exact]) => *exact,
                        (Builtin::Abs, [x]) if e.ty == Scalar::F32 => self.b.ins().fabs(*x),
                        (Builtin::Abs, [x]) => self.b.ins().iabs(*x),
                        (Builtin::Min, [x, y]) => {
                            let c = self.vbinary(BinOp::Lt, e.ty, *y, *x);
                            self.vselect(c, *y, *x)
                        }
                        (Builtin::Max, [x, y]) => {
                            let c = self.vbinary(BinOp::Gt, e.ty, *y, *x);
                            self.vselect(c, *y, *x)
                        }
                        _ => unreachable!("builtin arity is checked"),
                    }
                }
                _ => unreachable!("vec_ok admits only the kinds above"),
            }
        };
        vectors.insert(id, v);
        v
    }

    /// Four f32 lanes with every NaN made the canonical quiet NaN
    /// (`interp/ops.rs`): an unordered self-comparison and a bitselect.
    fn vcanonical(&mut self, x: Value) -> Value {
        let bits = self.b.ins().iconst(types::I32, 0x7FC0_0000);
        let nan = self.b.ins().splat(types::I32X4, bits);
        let nan = self.vcast_bits(nan, types::F32X4);
        let is_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        self.vselect(is_nan, nan, x)
    }

    fn vcast_bits(&mut self, x: Value, to: Type) -> Value {
        if self.b.func.dfg.value_type(x) == to {
            x
        } else {
            self.b.ins().bitcast(to, MemFlagsData::new(), x)
        }
    }

    /// Lane-wise select on a mask (all ones or zero per lane).
    fn vselect(&mut self, mask: Value, x: Value, y: Value) -> Value {
        let t = self.b.func.dfg.value_type(x);
        let m = self.vcast_bits(mask, t);
        self.b.ins().bitselect(m, x, y)
    }

    fn vbinary(&mut self, op: BinOp, t: Scalar, x: Value, y: Value) -> Value {
        use BinOp::*;
        if t == Scalar::F32 {
            return match op {
                Add => self.b.ins().fadd(x, y),
                Sub => self.b.ins().fsub(x, y),
                Mul => self.b.ins().fmul(x, y),
                Div => self.b.ins().fdiv(x, y),
                Eq => self.b.ins().fcmp(FloatCC::Equal, x, y),
                Ne => self.b.ins().fcmp(FloatCC::NotEqual, x, y),
                Lt => self.b.ins().fcmp(FloatCC::LessThan, x, y),
                Le => self.b.ins().fcmp(FloatCC::LessThanOrEqual, x, y),
                Gt => self.b.ins().fcmp(FloatCC::GreaterThan, x, y),
                Ge => self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, x, y),
                op => unreachable!("{op:?} on f32 lanes"),
            };
        }
        let signed = t == Scalar::I32;
        let cc = |s: IntCC, u: IntCC| if signed { s } else { u };
        match op {
            Add => self.b.ins().iadd(x, y),
            Sub => self.b.ins().isub(x, y),
            Mul => self.b.ins().imul(x, y),
            BitAnd | And => self.b.ins().band(x, y),
            BitOr | Or => self.b.ins().bor(x, y),
            BitXor => self.b.ins().bxor(x, y),
            // Bools are masks here: equal masks are equal bools.
            Eq => self.b.ins().icmp(IntCC::Equal, x, y),
            Ne => self.b.ins().icmp(IntCC::NotEqual, x, y),
            Lt => self
                .b
                .ins()
                .icmp(cc(IntCC::SignedLessThan, IntCC::UnsignedLessThan), x, y),
            Le => self.b.ins().icmp(
                cc(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual),
                x,
                y,
            ),
            Gt => self.b.ins().icmp(
                cc(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan),
                x,
                y,
            ),
            Ge => self.b.ins().icmp(
                cc(
                    IntCC::SignedGreaterThanOrEqual,
                    IntCC::UnsignedGreaterThanOrEqual,
                ),
                x,
                y,
            ),
            op => unreachable!("{op:?} is not vectorized"),
        }
    }
}
