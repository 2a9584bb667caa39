//! Tile IR to one Cranelift function per kernel:
//! `block(frame: *const u64, scratch: *mut u8, bx: i64, by: i64, bz: i64)`
//! runs one block, statement by statement, as the interpreter does.
//!
//! Each statement becomes a loop nest over its tile. Scalar nodes are
//! computed once before the loops; the rest once per element. A store loops
//! only over the part of its slice inside the destination; a load outside
//! its tensor reads the frame's zero slot and yields 0.

use std::collections::HashMap;

use crate::layout::Layout;
use crate::ops;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::FunctionBuilder;
use phobos_core::ir::{Builtin, ExprId, ExprKind, IdVec, Index, Kernel, Place, Stmt};
use phobos_core::types::{Dim, Scalar};

pub(crate) struct PlaceInfo {
    pub(crate) base: Value,
    pub(crate) ext: Vec<Value>,
    pub(crate) strides: Vec<Value>,
}

pub struct Gen<'a, 'b> {
    pub k: &'a Kernel,
    pub lay: &'a Layout,
    pub b: &'a mut FunctionBuilder<'b>,
    pub frame: Value,
    pub scratch: Value,
    pub block: [Value; 3],
    pub(crate) places: HashMap<(bool, usize), PlaceInfo>,
    /// The vector 0, 1, 2, 3, made before each vector loop (simd.rs).
    pub(crate) lane_offsets: Option<Value>,
}

pub(crate) fn key(p: Place) -> (bool, usize) {
    match p {
        Place::Param(i) => (false, i),
        Place::Local(l) => (true, l.index()),
    }
}

/// What every element of one store needs.
pub(crate) struct StoreCtx {
    pub(crate) index: Vec<Index>,
    /// The start of each index, widened to i64.
    pub(crate) starts: Vec<Value>,
    pub(crate) base: Value,
    pub(crate) strides: Vec<Value>,
    pub(crate) elem: Scalar,
    /// Whether the destination is a tensor of floats, whose stores make NaNs
    /// canonical (`interp/ops.rs`).
    pub(crate) canon: bool,
    pub(crate) value: ExprId,
    /// The statement's scalar nodes, computed before its loops.
    pub(crate) pre: HashMap<ExprId, Value>,
}

pub(crate) const TRUSTED: MemFlagsData = MemFlagsData::trusted();

impl<'a, 'b> Gen<'a, 'b> {
    pub fn new(
        k: &'a Kernel,
        lay: &'a Layout,
        b: &'a mut FunctionBuilder<'b>,
        params: [Value; 5],
    ) -> Self {
        let [frame, scratch, bx, by, bz] = params;
        let mut g = Gen {
            k,
            lay,
            b,
            frame,
            scratch,
            block: [bx, by, bz],
            places: HashMap::new(),
            lane_offsets: None,
        };
        for (i, p) in k.params.iter().enumerate() {
            if let phobos_core::ir::ParamKind::Tensor { shape, .. } = &p.kind {
                g.place_info(Place::Param(i), shape.len());
            }
        }
        for (l, local) in k.locals.iter_enumerated() {
            g.place_info(Place::Local(l), local.shape.len());
        }
        g
    }

    pub(crate) fn slot(&mut self, slot: usize) -> Value {
        self.b
            .ins()
            .load(types::I64, TRUSTED, self.frame, (slot * 8) as i32)
    }

    fn place_info(&mut self, p: Place, rank: usize) {
        let at = self.lay.place(p);
        let first = self.slot(at);
        let base = match p {
            Place::Param(_) => first,
            Place::Local(_) => self.b.ins().iadd(self.scratch, first),
        };
        let ext: Vec<Value> = (0..rank).map(|j| self.slot(at + 1 + j)).collect();
        let mut strides = vec![self.b.ins().iconst(types::I64, 1); rank];
        for j in (0..rank.saturating_sub(1)).rev() {
            strides[j] = self.b.ins().imul(strides[j + 1], ext[j + 1]);
        }
        self.places.insert(key(p), PlaceInfo { base, ext, strides });
    }

    pub(crate) fn extent(&mut self, d: Dim) -> Value {
        match d {
            Dim::Const(v) => self.b.ins().iconst(types::I64, v as i64),
            Dim::Sym(s) => self.slot(self.lay.dims + s),
        }
    }

    pub(crate) fn iconst(&mut self, v: i64) -> Value {
        self.b.ins().iconst(types::I64, v)
    }

    /// An index expression widened to i64 as the interpreter widens it.
    pub(crate) fn index_value(&mut self, id: ExprId, cache: &mut HashMap<ExprId, Value>) -> Value {
        let v = self.emit(id, &[], cache);
        match self.k.exprs[id].ty {
            Scalar::I32 => self.b.ins().sextend(types::I64, v),
            Scalar::U32 => self.b.ins().uextend(types::I64, v),
            _ => v,
        }
    }

    /// Emits the body of the block function.
    pub fn body(&mut self) {
        // The header and exit blocks and the variable's address of each
        // open loop.
        let mut open: Vec<(Block, Block, Value)> = Vec::new();
        for (n, s) in self.k.body.iter().enumerate() {
            match s {
                Stmt::For { local, start, end } => {
                    // The bounds, once; the variable lives in its local's slot.
                    let mut pre = HashMap::new();
                    let first = self.emit(*start, &[], &mut pre);
                    let end = self.emit(*end, &[], &mut pre);
                    let var = self.places[&key(Place::Local(*local))].base;
                    self.b.ins().store(TRUSTED, first, var, 0);
                    let header = self.b.create_block();
                    let body = self.b.create_block();
                    let exit = self.b.create_block();
                    self.b.ins().jump(header, &[]);
                    self.b.switch_to_block(header);
                    let i = self.b.ins().load(types::I32, TRUSTED, var, 0);
                    let more = self.b.ins().icmp(IntCC::SignedLessThan, i, end);
                    self.b.ins().brif(more, body, &[], exit, &[]);
                    self.b.switch_to_block(body);
                    open.push((header, exit, var));
                }
                Stmt::EndFor => {
                    let (header, exit, var) = open.pop().expect("the verifier matched loops");
                    // `i < end <= i32::MAX`: the increment cannot wrap.
                    let i = self.b.ins().load(types::I32, TRUSTED, var, 0);
                    let next = self.b.ins().iadd_imm_s(i, 1);
                    self.b.ins().store(TRUSTED, next, var, 0);
                    self.b.ins().jump(header, &[]);
                    self.b.switch_to_block(exit);
                }
                _ => self.stmt(n, s),
            }
        }
    }

    fn stmt(&mut self, n: usize, s: &Stmt) {
        match s {
            Stmt::Let { local, value } | Stmt::Var { local, value } => {
                let mut pre = HashMap::new();
                self.hoist(*value, &mut pre);
                let info = &self.places[&key(Place::Local(*local))];
                let (ext, strides, base) = (info.ext.clone(), info.strides.clone(), info.base);
                let elem = self.k.locals[*local].elem;
                let lo = vec![self.iconst(0); ext.len()];
                self.loops(&lo, &ext, &mut |g, pos| {
                    let mut cache = pre.clone();
                    let v = g.emit(*value, pos, &mut cache);
                    let addr = g.address(base, &strides, pos, elem);
                    g.b.ins().store(TRUSTED, v, addr, 0);
                });
            }
            Stmt::Store {
                place,
                index,
                value,
            } => self.store(n, *place, index, *value),
            Stmt::For { .. } | Stmt::EndFor => unreachable!("body() opens and closes loops"),
        }
    }

    fn store(&mut self, n: usize, place: Place, index: &[Index], value: ExprId) {
        let mut pre = HashMap::new();
        self.hoist(value, &mut pre);
        let info = &self.places[&key(place)];
        let (ext, strides, base) = (info.ext.clone(), info.strides.clone(), info.base);
        let elem = self.k.place_elem(place);
        let zero = self.iconst(0);
        let mut starts = Vec::new();
        let (mut lo, mut hi, mut lens) = (Vec::new(), Vec::new(), Vec::new());
        let mut inside = self.b.ins().iconst(types::I8, 1);
        for (ix, e) in index.iter().zip(&ext) {
            match ix {
                Index::Range { start, len } => {
                    let s = match start {
                        Some(s) => self.index_value(*s, &mut pre),
                        None => zero,
                    };
                    let len = self.extent(*len);
                    // lo = clamp(-s, 0, len), hi = clamp(ext - s, lo, len).
                    let neg = self.b.ins().ineg(s);
                    let l = self.b.ins().smax(neg, zero);
                    let l = self.b.ins().smin(l, len);
                    let room = self.b.ins().isub(*e, s);
                    let h = self.b.ins().smax(room, l);
                    let h = self.b.ins().smin(h, len);
                    starts.push(s);
                    lens.push(len);
                    lo.push(l);
                    hi.push(h);
                }
                Index::Single(s) => {
                    let s = self.index_value(*s, &mut pre);
                    let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, s, *e);
                    inside = self.b.ins().band(inside, ok);
                    starts.push(s);
                }
            }
        }
        let run = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(inside, run, &[], done, &[]);
        self.b.switch_to_block(run);
        let st = StoreCtx {
            index: index.to_vec(),
            starts,
            base,
            strides,
            elem,
            canon: matches!(place, Place::Param(_)) && (elem.is_float() || elem.is_half()),
            value,
            pre,
        };
        let rank = lo.len();
        if let Some(&slot) = self.lay.temps.get(&n) {
            // Evaluate the whole value into a temporary tile, then copy it.
            let off = self.slot(slot);
            let temp = self.b.ins().iadd(self.scratch, off);
            let mut tstrides = vec![self.iconst(1); rank];
            for j in (0..rank.saturating_sub(1)).rev() {
                tstrides[j] = self.b.ins().imul(tstrides[j + 1], lens[j + 1]);
            }
            self.loops(&lo, &hi, &mut |g, pos| {
                let mut cache = st.pre.clone();
                let v = g.emit(st.value, pos, &mut cache);
                let v = g.stored(&st, v);
                let addr = g.address(temp, &tstrides, pos, elem);
                g.b.ins().store(TRUSTED, v, addr, 0);
            });
            self.loops(&lo, &hi, &mut |g, pos| {
                let from = g.address(temp, &tstrides, pos, elem);
                let v = g.b.ins().load(ops::ty(elem), TRUSTED, from, 0);
                let to = g.store_address(&st, pos);
                g.b.ins().store(TRUSTED, v, to, 0);
            });
        } else if rank > 0 && self.vectorizable(&st) {
            let (lo_in, hi_in) = (lo[rank - 1], hi[rank - 1]);
            self.loops(&lo[..rank - 1], &hi[..rank - 1], &mut |g, outer| {
                g.row(&st, outer, lo_in, hi_in);
            });
        } else {
            self.loops(&lo, &hi, &mut |g, pos| g.store_elem(&st, pos));
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// One element of a store: evaluate the value at `pos` and write it.
    pub(crate) fn store_elem(&mut self, st: &StoreCtx, pos: &[Value]) {
        let mut cache = st.pre.clone();
        let v = self.emit(st.value, pos, &mut cache);
        let v = self.stored(st, v);
        let addr = self.store_address(st, pos);
        self.b.ins().store(TRUSTED, v, addr, 0);
    }

    /// What a store writes for the value `v`: NaNs canonical when it goes
    /// to a float tensor, rounded to bits for a 16-bit one.
    pub(crate) fn stored(&mut self, st: &StoreCtx, v: Value) -> Value {
        let v = if st.canon {
            ops::canonical_nan(self.b, st.elem.value_type(), v)
        } else {
            v
        };
        if st.elem.is_half() {
            self.half_store(st.elem, v)
        } else {
            v
        }
    }

    /// The destination address of the element at tile position `pos`.
    pub(crate) fn store_address(&mut self, st: &StoreCtx, pos: &[Value]) -> Value {
        let mut coords = Vec::new();
        let mut p = pos.iter();
        for (ix, s) in st.index.iter().zip(&st.starts) {
            coords.push(match ix {
                Index::Range { .. } => self
                    .b
                    .ins()
                    .iadd(*s, *p.next().expect("one position per range")),
                Index::Single(_) => *s,
            });
        }
        self.address(st.base, &st.strides, &coords, st.elem)
    }

    /// `base + sum(coord * stride) * size`.
    pub(crate) fn address(
        &mut self,
        base: Value,
        strides: &[Value],
        coords: &[Value],
        elem: Scalar,
    ) -> Value {
        let mut flat = self.iconst(0);
        for (c, s) in coords.iter().zip(strides) {
            let t = self.b.ins().imul(*c, *s);
            flat = self.b.ins().iadd(flat, t);
        }
        let bytes = self.b.ins().imul_imm_s(flat, elem.size() as i64);
        self.b.ins().iadd(base, bytes)
    }

    /// Computes every scalar node under `id` into `cache`, before any loop.
    fn hoist(&mut self, root: ExprId, cache: &mut HashMap<ExprId, Value>) {
        // The IR is a DAG whose nodes are shared (an argument used twice by
        // an inlined fn): visit each node once, or nesting is exponential.
        let mut seen = IdVec::<ExprId, _>::from_elem(false, self.k.exprs.len());
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id], true) || cache.contains_key(&id) {
                continue;
            }
            let e = &self.k.exprs[id];
            if e.shape.is_empty() {
                self.emit(id, &[], cache);
                continue;
            }
            stack.extend(e.kind.operands());
        }
    }

    /// A loop nest over `lo[k] .. hi[k]`; `body` gets the positions.
    pub(crate) fn loops(
        &mut self,
        lo: &[Value],
        hi: &[Value],
        body: &mut dyn FnMut(&mut Self, &[Value]),
    ) {
        let mut pos = Vec::new();
        self.loop_level(lo, hi, &mut pos, body);
    }

    pub(crate) fn loop_level(
        &mut self,
        lo: &[Value],
        hi: &[Value],
        pos: &mut Vec<Value>,
        body: &mut dyn FnMut(&mut Self, &[Value]),
    ) {
        let k = pos.len();
        if k == lo.len() {
            body(self, pos);
            return;
        }
        let var = self.b.declare_var(types::I64);
        self.b.def_var(var, lo[k]);
        let header = self.b.create_block();
        let inner = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let i = self.b.use_var(var);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, i, hi[k]);
        self.b.ins().brif(more, inner, &[], exit, &[]);
        self.b.switch_to_block(inner);
        pos.push(i);
        self.loop_level(lo, hi, pos, body);
        pos.pop();
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.def_var(var, next);
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(exit);
    }

    /// The position within a node of `shape` read at tile position `pos`.
    pub(crate) fn aligned(&mut self, shape: &[Dim], pos: &[Value]) -> Vec<Value> {
        let off = pos.len() - shape.len();
        let zero = self.iconst(0);
        shape
            .iter()
            .enumerate()
            .map(|(j, d)| match d {
                Dim::Const(1) => zero,
                Dim::Const(_) => pos[off + j],
                Dim::Sym(s) => {
                    let e = self.slot(self.lay.dims + s);
                    let one = self.b.ins().icmp_imm_s(IntCC::Equal, e, 1);
                    self.b.ins().select(one, zero, pos[off + j])
                }
            })
            .collect()
    }

    pub(crate) fn emit(
        &mut self,
        id: ExprId,
        pos: &[Value],
        cache: &mut HashMap<ExprId, Value>,
    ) -> Value {
        if let Some(v) = cache.get(&id) {
            return *v;
        }
        let e = &self.k.exprs[id];
        let (ty, shape) = (e.ty, e.shape.clone());
        let v = match &e.kind {
            ExprKind::Const(c) => ops::constant(self.b, *c),
            ExprKind::Param(i) => {
                let slot = self.lay.params[*i];
                self.b
                    .ins()
                    .load(ops::ty(ty), TRUSTED, self.frame, (slot * 8) as i32)
            }
            ExprKind::DimValue(s) => {
                let v = self.slot(self.lay.dims + s);
                self.b.ins().ireduce(types::I32, v)
            }
            ExprKind::GridSize(a) => {
                let v = self.slot(self.lay.grid + *a as usize);
                self.b.ins().ireduce(types::I32, v)
            }
            ExprKind::BlockId(a) => self.b.ins().ireduce(types::I32, self.block[*a as usize]),
            ExprKind::Iota(a) => {
                let q = self.aligned(&shape, pos);
                self.b.ins().ireduce(types::I32, q[*a as usize])
            }
            ExprKind::Local(l) => {
                let q = self.aligned(&shape, pos);
                let info = &self.places[&key(Place::Local(*l))];
                let (base, strides) = (info.base, info.strides.clone());
                let addr = self.address(base, &strides, &q, ty);
                self.b.ins().load(ops::ty(ty), TRUSTED, addr, 0)
            }
            ExprKind::Load { place, index } => {
                let q = self.aligned(&shape, pos);
                let elem = self.k.place_elem(*place);
                self.load(*place, index, &q, elem, cache)
            }
            ExprKind::Unary(op, a) => {
                let x = self.emit(*a, pos, cache);
                ops::unary(self.b, *op, ty, x)
            }
            ExprKind::Binary(op, a, b) => {
                let operand = self.k.exprs[*a].ty;
                let x = self.emit(*a, pos, cache);
                let y = self.emit(*b, pos, cache);
                ops::binary(self.b, *op, operand, x, y)
            }
            ExprKind::Cast(a) => {
                let from = self.k.exprs[*a].ty;
                let x = self.emit(*a, pos, cache);
                ops::cast(self.b, from, ty, x)
            }
            ExprKind::Bitcast(a) => {
                let from = self.k.exprs[*a].ty;
                let x = self.emit(*a, pos, cache);
                ops::bitcast(self.b, from, ty, x)
            }
            ExprKind::Select(c, a, b) => {
                let c = self.emit(*c, pos, cache);
                let x = self.emit(*a, pos, cache);
                let y = self.emit(*b, pos, cache);
                self.b.ins().select(c, x, y)
            }
            ExprKind::Builtin(f, xs) => {
                let vals: Vec<Value> = xs.iter().map(|x| self.emit(*x, pos, cache)).collect();
                if f.is_tandem() {
                    self.tandem(id, *f, &vals)
                } else if matches!(f, Builtin::RoundF16 | Builtin::RoundBF16) {
                    self.round_half(*f, vals[0])
                } else {
                    ops::builtin(self.b, *f, ty, &vals)
                }
            }
            ExprKind::Reduce { op, arg, axis } => {
                self.reduce(id, *op, *arg, *axis as usize, pos, cache)
            }
            ExprKind::Dot { a, b, acc } => self.dot(id, (*a, *b, *acc), pos, cache),
            ExprKind::Transpose(x) => self.transpose(id, *x, pos, cache),
        };
        cache.insert(id, v);
        v
    }

    /// A masked load: positions outside the tensor read the zero slot.
    fn load(
        &mut self,
        place: Place,
        index: &[Index],
        q: &[Value],
        elem: Scalar,
        cache: &mut HashMap<ExprId, Value>,
    ) -> Value {
        let info = &self.places[&key(place)];
        let (base, ext, strides) = (info.base, info.ext.clone(), info.strides.clone());
        let mut inside = self.b.ins().iconst(types::I8, 1);
        let mut coords = Vec::new();
        let mut next = q.iter();
        for (ix, e) in index.iter().zip(&ext) {
            let c = match ix {
                Index::Range { start, .. } => {
                    let p = *next.next().expect("one position per range");
                    match start {
                        Some(s) => {
                            let s = self.index_value(*s, cache);
                            self.b.ins().iadd(s, p)
                        }
                        None => p,
                    }
                }
                Index::Single(s) => self.index_value(*s, cache),
            };
            let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, c, *e);
            inside = self.b.ins().band(inside, ok);
            coords.push(c);
        }
        let addr = self.address(base, &strides, &coords, elem);
        let zero_addr = self
            .b
            .ins()
            .iadd_imm_s(self.frame, (self.lay.zero * 8) as i64);
        let safe = self.b.ins().select(inside, addr, zero_addr);
        let v = self.b.ins().load(ops::ty(elem), TRUSTED, safe, 0);
        if elem.is_half() {
            // The zero slot reads as the bits of +0.0.
            return self.half_load(elem, v);
        }
        let zero = ops::constant(self.b, elem.zero());
        self.b.ins().select(inside, v, zero)
    }
}
