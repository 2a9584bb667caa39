//! The tile IR to one naga compute entry point, in the shape of the
//! Cranelift backend (`phobos-cpu/src/codegen.rs`): statements in order, each
//! a loop over its tile, here strided across the workgroup's invocations.
//!
//! naga rules this file keeps (naga 30): every expression that is not a
//! literal, constant, argument or variable is covered by a `Statement::Emit`
//! in the block that uses it (`expr` emits each one where it is appended);
//! an expression emitted inside a block is out of scope after it, so values
//! shared by every element (dims, scalar parameters, scalar nodes) are
//! computed in the function's top-level block before any loop; struct
//! offsets and array strides are set by hand.

use crate::{ENTRY_POINT, LowerError, WORKGROUP_SIZE};
use naga::{
    AddressSpace, ArraySize, BinaryOperator, Binding, Block, BuiltIn, EntryPoint, Expression,
    Function, FunctionArgument, GlobalVariable, Handle, Literal, LocalVariable, MathFunction,
    Module, Range, ResourceBinding, Scalar as NScalar, ScalarKind, ShaderStage, Span, Statement,
    StorageAccess, StructMember, Type, TypeInner, UnaryOperator, VectorSize,
};
use phobos_core::ir::{Builtin, ExprId, ExprKind, Index, Kernel, ParamKind, Place, Stmt};
use phobos_core::syntax::ast::{BinOp, UnOp};
use phobos_core::types::{Dim, Scalar, Value};
use std::collections::HashMap;
use std::num::NonZeroU32;

type H = Handle<Expression>;

/// Where a `let`/`var` lives.
#[derive(Clone, Copy)]
enum LocalHome {
    /// A tile of constant extent shared by the workgroup.
    Workgroup(Handle<GlobalVariable>),
    /// A scalar: every invocation computes and keeps its own copy, so no
    /// barrier is needed around it.
    Private(Handle<naga::LocalVariable>),
}

struct Lower<'k> {
    k: &'k Kernel,
    m: Module,
    f: Function,
    /// The block statements are appended to now.
    cur: Vec<Statement>,
    types: HashMap<Scalar, Handle<Type>>,
    u32_ty: Handle<Type>,
    tensors: Vec<Option<Handle<GlobalVariable>>>,
    locals: Vec<LocalHome>,
    /// Values loaded once at the top of the function.
    block_id: [H; 3],
    dims: Vec<H>,
    grid: [H; 3],
    scalars: Vec<Option<H>>,
}

fn unsupported(what: impl Into<String>) -> LowerError {
    LowerError::Unsupported(what.into())
}

fn nscalar(s: Scalar) -> Result<NScalar, LowerError> {
    Ok(match s {
        Scalar::Bool => NScalar::BOOL,
        Scalar::I32 => NScalar::I32,
        Scalar::U32 => NScalar::U32,
        Scalar::F32 => NScalar::F32,
        Scalar::I64 | Scalar::U64 | Scalar::F64 => {
            return Err(unsupported(format!(
                "{s} values (64-bit types need device features; only bool, i32, u32 and f32 are lowered)"
            )));
        }
    })
}

/// Lowers a checked kernel to a naga module with one compute entry point.
pub fn lower(kernel: &Kernel) -> Result<Module, LowerError> {
    let mut m = Module::default();
    let mut types = HashMap::new();
    for s in [Scalar::Bool, Scalar::I32, Scalar::U32, Scalar::F32] {
        let ty = m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Scalar(nscalar(s)?),
            },
            Span::UNDEFINED,
        );
        types.insert(s, ty);
    }
    let u32_ty = types[&Scalar::U32];
    let vec3 = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Vector {
                size: VectorSize::Tri,
                scalar: NScalar::U32,
            },
        },
        Span::UNDEFINED,
    );

    // The uniform struct: scalar parameters (bool as u32: uniform buffers
    // cannot hold bool), then dims, then the grid; all 4 bytes wide.
    let mut members = Vec::new();
    let mut scalar_member = vec![None; kernel.params.len()];
    for (i, p) in kernel.params.iter().enumerate() {
        if let ParamKind::Scalar(s) = p.kind {
            nscalar(s)?;
            let ty = if s == Scalar::Bool { u32_ty } else { types[&s] };
            scalar_member[i] = Some(members.len() as u32);
            members.push((p.name.clone(), ty));
        }
    }
    let dim_base = members.len() as u32;
    for d in &kernel.dims {
        members.push((format!("dim_{d}"), u32_ty));
    }
    let grid_base = members.len() as u32;
    for a in ["x", "y", "z"] {
        members.push((format!("grid_{a}"), u32_ty));
    }
    let n = members.len() as u32;
    let params_ty = m.types.insert(
        Type {
            name: Some("Params".into()),
            inner: TypeInner::Struct {
                members: members
                    .into_iter()
                    .enumerate()
                    .map(|(i, (name, ty))| StructMember {
                        name: Some(name),
                        ty,
                        binding: None,
                        offset: 4 * i as u32,
                    })
                    .collect(),
                // Uniform buffers want a size that is a multiple of 16.
                span: (4 * n).div_ceil(16) * 16,
            },
        },
        Span::UNDEFINED,
    );
    let params_var = m.global_variables.append(
        GlobalVariable {
            name: Some("params".into()),
            space: AddressSpace::Uniform,
            binding: Some(ResourceBinding {
                group: 0,
                binding: 0,
            }),
            ty: params_ty,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    );

    let mut tensors = vec![None; kernel.params.len()];
    let mut binding = 1;
    for (i, p) in kernel.params.iter().enumerate() {
        if let ParamKind::Tensor { elem, written, .. } = p.kind {
            if elem == Scalar::Bool {
                return Err(unsupported(format!(
                    "bool tensor `{}` (one byte per element; WGSL storage has no 8-bit type)",
                    p.name
                )));
            }
            nscalar(elem)?;
            let base = types[&elem];
            let arr = m.types.insert(
                Type {
                    name: None,
                    inner: TypeInner::Array {
                        base,
                        size: ArraySize::Dynamic,
                        stride: elem.size() as u32,
                    },
                },
                Span::UNDEFINED,
            );
            let access = if written {
                StorageAccess::LOAD | StorageAccess::STORE
            } else {
                StorageAccess::LOAD
            };
            tensors[i] = Some(m.global_variables.append(
                GlobalVariable {
                    name: Some(p.name.clone()),
                    space: AddressSpace::Storage { access },
                    binding: Some(ResourceBinding { group: 0, binding }),
                    ty: arr,
                    init: None,
                    memory_decorations: Default::default(),
                },
                Span::UNDEFINED,
            ));
            binding += 1;
        }
    }

    let mut f = Function {
        name: Some(ENTRY_POINT.into()),
        arguments: vec![
            FunctionArgument {
                name: Some("local_index".into()),
                ty: u32_ty,
                binding: Some(Binding::BuiltIn(BuiltIn::LocalInvocationIndex)),
            },
            FunctionArgument {
                name: Some("block".into()),
                ty: vec3,
                binding: Some(Binding::BuiltIn(BuiltIn::WorkGroupId)),
            },
        ],
        ..Default::default()
    };

    // Locals: scalars private, constant tiles in workgroup memory.
    let mut locals = Vec::new();
    for (l, local) in kernel.locals.iter().enumerate() {
        nscalar(local.elem)?;
        let ty = types[&local.elem];
        if local.shape.is_empty() {
            let v = f.local_variables.append(
                LocalVariable {
                    name: Some(local.name.clone()),
                    ty,
                    init: None,
                },
                Span::UNDEFINED,
            );
            locals.push(LocalHome::Private(v));
            continue;
        }
        let mut count: u64 = 1;
        for d in &local.shape {
            match d {
                Dim::Const(v) => count = count.saturating_mul(*v),
                Dim::Sym(s) => {
                    return Err(unsupported(format!(
                        "`{}` {}: a let/var tile whose extent depends on dim {} (workgroup memory needs a constant size)",
                        local.name,
                        kernel.shape_text(&local.shape),
                        kernel.dims[*s]
                    )));
                }
            }
        }
        let size = u32::try_from(count)
            .ok()
            .and_then(NonZeroU32::new)
            .ok_or_else(|| {
                unsupported(format!(
                    "`{}`: a tile of {count} elements in workgroup memory",
                    local.name
                ))
            })?;
        let arr = m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Array {
                    base: ty,
                    size: ArraySize::Constant(size),
                    stride: local.elem.size() as u32,
                },
            },
            Span::UNDEFINED,
        );
        let g = m.global_variables.append(
            GlobalVariable {
                name: Some(format!("{}_{l}", local.name)),
                space: AddressSpace::WorkGroup,
                binding: None,
                ty: arr,
                init: None,
                memory_decorations: Default::default(),
            },
            Span::UNDEFINED,
        );
        locals.push(LocalHome::Workgroup(g));
    }

    // Placeholders until the top of the body loads the real values.
    let placeholder = f
        .expressions
        .append(Expression::FunctionArgument(0), Span::UNDEFINED);
    let mut lw = Lower {
        k: kernel,
        m,
        f,
        cur: Vec::new(),
        types,
        u32_ty,
        tensors,
        locals,
        block_id: [placeholder; 3],
        dims: Vec::new(),
        grid: [placeholder; 3],
        scalars: vec![None; kernel.params.len()],
    };
    let pv = lw.expr(Expression::GlobalVariable(params_var));
    let member = |lw: &mut Lower<'_>, index: u32| {
        let p = lw.expr(Expression::AccessIndex { base: pv, index });
        lw.expr(Expression::Load { pointer: p })
    };
    for (i, mi) in scalar_member.iter().enumerate() {
        if let Some(mi) = mi {
            let v = member(&mut lw, *mi);
            lw.scalars[i] = Some(
                if kernel.params[i].kind == ParamKind::Scalar(Scalar::Bool) {
                    let zero = lw.lit(Value::U32(0));
                    lw.binary(BinaryOperator::NotEqual, v, zero)
                } else {
                    v
                },
            );
        }
    }
    for s in 0..kernel.dims.len() {
        let v = member(&mut lw, dim_base + s as u32);
        lw.dims.push(v);
    }
    for a in 0..3 {
        lw.grid[a] = member(&mut lw, grid_base + a as u32);
    }
    let wg = lw.expr(Expression::FunctionArgument(1));
    for a in 0..3 {
        let c = lw.expr(Expression::AccessIndex {
            base: wg,
            index: a as u32,
        });
        lw.block_id[a] = lw.bitcast(c, ScalarKind::Sint);
    }

    check_extents(kernel)?;
    lw.body()?;

    let mut f = std::mem::take(&mut lw.f);
    f.body = Block::from_vec(std::mem::take(&mut lw.cur));
    let mut m = lw.m;
    m.entry_points.push(EntryPoint {
        name: ENTRY_POINT.into(),
        stage: ShaderStage::Compute,
        early_depth_test: None,
        workgroup_size: [WORKGROUP_SIZE, 1, 1],
        workgroup_size_overrides: None,
        function: f,
        mesh_info: None,
        task_payload: None,
        incoming_ray_payload: None,
    });
    Ok(m)
}

/// The places a statement reads and writes, for barriers.
#[derive(Default)]
struct Access {
    reads: Vec<Place>,
    writes: Vec<Place>,
}

impl<'k> Lower<'k> {
    /// Appends an expression, emitting it in the current block unless naga
    /// treats it as always available.
    fn expr(&mut self, e: Expression) -> H {
        let pre = e.needs_pre_emit();
        let h = self.f.expressions.append(e, Span::UNDEFINED);
        if !pre {
            self.cur.push(Statement::Emit(Range::new_from_bounds(h, h)));
        }
        h
    }

    fn lit(&mut self, v: Value) -> H {
        let l = match v {
            Value::Bool(b) => Literal::Bool(b),
            Value::I32(x) => Literal::I32(x),
            Value::U32(x) => Literal::U32(x),
            // naga rejects non-finite float literals: build them from bits.
            Value::F32(x) if !x.is_finite() => {
                let bits = self.lit(Value::U32(x.to_bits()));
                return self.bitcast(bits, ScalarKind::Float);
            }
            Value::F32(x) => Literal::F32(x),
            other => unreachable!("64-bit value {other} is rejected before lowering"),
        };
        self.expr(Expression::Literal(l))
    }

    fn binary(&mut self, op: BinaryOperator, left: H, right: H) -> H {
        self.expr(Expression::Binary { op, left, right })
    }

    fn select(&mut self, condition: H, accept: H, reject: H) -> H {
        self.expr(Expression::Select {
            condition,
            accept,
            reject,
        })
    }

    fn bitcast(&mut self, expr: H, kind: ScalarKind) -> H {
        self.expr(Expression::As {
            expr,
            kind,
            convert: None,
        })
    }

    fn convert(&mut self, expr: H, kind: ScalarKind) -> H {
        let width = if kind == ScalarKind::Bool { 1 } else { 4 };
        self.expr(Expression::As {
            expr,
            kind,
            convert: Some(width),
        })
    }

    fn u32c(&mut self, v: u32) -> H {
        self.lit(Value::U32(v))
    }

    /// Runs `build` with a fresh current block and returns that block.
    fn nested(
        &mut self,
        build: impl FnOnce(&mut Self) -> Result<(), LowerError>,
    ) -> Result<Block, LowerError> {
        let outer = std::mem::take(&mut self.cur);
        let r = build(self);
        let inner = std::mem::replace(&mut self.cur, outer);
        r?;
        Ok(Block::from_vec(inner))
    }

    /// A fresh function-local variable of `ty`.
    fn temp(&mut self, ty: Scalar) -> H {
        let v = self.f.local_variables.append(
            LocalVariable {
                name: None,
                ty: self.types[&ty],
                init: None,
            },
            Span::UNDEFINED,
        );
        self.expr(Expression::LocalVariable(v))
    }

    fn extent(&mut self, d: Dim) -> H {
        match d {
            // `check_extents` has refused constants beyond u32.
            Dim::Const(v) => self.u32c(v as u32),
            Dim::Sym(s) => self.dims[s],
        }
    }

    fn place_shape(&self, p: Place) -> Vec<Dim> {
        match p {
            Place::Param(i) => match &self.k.params[i].kind {
                ParamKind::Tensor { shape, .. } => shape.clone(),
                ParamKind::Scalar(_) => Vec::new(),
            },
            Place::Local(l) => self.k.locals[l].shape.clone(),
        }
    }

    fn place_elem(&self, p: Place) -> Scalar {
        match p {
            Place::Param(i) => match &self.k.params[i].kind {
                ParamKind::Tensor { elem, .. } => *elem,
                ParamKind::Scalar(s) => *s,
            },
            Place::Local(l) => self.k.locals[l].elem,
        }
    }

    /// A pointer to element `flat` of a tensor or workgroup tile, or to a
    /// private scalar local.
    fn element_ptr(&mut self, p: Place, flat: Option<H>) -> H {
        let base = match p {
            Place::Param(i) => {
                let g = self.tensors[i].expect("stores and loads name tensors");
                self.expr(Expression::GlobalVariable(g))
            }
            Place::Local(l) => match self.locals[l] {
                LocalHome::Workgroup(g) => self.expr(Expression::GlobalVariable(g)),
                LocalHome::Private(v) => return self.expr(Expression::LocalVariable(v)),
            },
        };
        let index = flat.expect("a tile element has a flat index");
        self.expr(Expression::Access { base, index })
    }

    fn is_private(&self, p: Place) -> bool {
        matches!(p, Place::Local(l) if matches!(self.locals[l], LocalHome::Private(_)))
    }

    fn body(&mut self) -> Result<(), LowerError> {
        // Barriers: a statement waits for the earlier ones (since the last
        // barrier) whose places it conflicts with; private scalars never
        // conflict, since each invocation has its own.
        let mut pending = Access::default();
        for s in &self.k.body {
            let acc = self.access(s);
            let mut barrier = naga::Barrier::empty();
            let conflicts = pending
                .writes
                .iter()
                .filter(|p| acc.reads.contains(p) || acc.writes.contains(p))
                .chain(pending.reads.iter().filter(|p| acc.writes.contains(p)));
            for p in conflicts {
                barrier |= match p {
                    Place::Param(_) => naga::Barrier::STORAGE,
                    Place::Local(_) => naga::Barrier::WORK_GROUP,
                };
            }
            if !barrier.is_empty() {
                self.cur.push(Statement::ControlBarrier(barrier));
                pending = Access::default();
            }
            if let Stmt::Store { place, value, .. } = s
                && !self.is_private(*place)
                && self.reads(*value).contains(place)
            {
                return Err(unsupported(format!(
                    "a store to `{}` whose value reads `{}` itself (needs a staging tile)",
                    self.place_name(*place),
                    self.place_name(*place)
                )));
            }
            self.stmt(s)?;
            for p in acc.reads.into_iter().filter(|p| !self.is_private(*p)) {
                push_place(&mut pending.reads, p);
            }
            for p in acc.writes.into_iter().filter(|p| !self.is_private(*p)) {
                push_place(&mut pending.writes, p);
            }
        }
        Ok(())
    }

    fn place_name(&self, p: Place) -> String {
        match p {
            Place::Param(i) => self.k.params[i].name.clone(),
            Place::Local(l) => self.k.locals[l].name.clone(),
        }
    }

    /// Every place the expression DAG under `root` reads.
    fn reads(&self, root: ExprId) -> Vec<Place> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.k.exprs.len()];
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id], true) {
                continue;
            }
            match &self.k.exprs[id].kind {
                ExprKind::Local(l) => {
                    push_place(&mut out, Place::Local(*l));
                }
                ExprKind::Load { place, index } => {
                    push_place(&mut out, *place);
                    stack.extend(index_exprs(index));
                }
                ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::Bitcast(a) => stack.push(*a),
                ExprKind::Binary(_, a, b) => stack.extend([*a, *b]),
                ExprKind::Select(c, a, b) => stack.extend([*c, *a, *b]),
                ExprKind::Builtin(_, xs) => stack.extend(xs),
                _ => {}
            }
        }
        out
    }

    fn access(&self, s: &Stmt) -> Access {
        let mut a = Access::default();
        match s {
            Stmt::Let { local, value } | Stmt::Var { local, value } => {
                a.reads = self.reads(*value);
                a.writes.push(Place::Local(*local));
            }
            Stmt::Store {
                place,
                index,
                value,
            } => {
                a.reads = self.reads(*value);
                for i in index_exprs(index) {
                    for p in self.reads(i) {
                        push_place(&mut a.reads, p);
                    }
                }
                a.writes.push(*place);
            }
        }
        a
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), LowerError> {
        match s {
            Stmt::Let { local, value } | Stmt::Var { local, value } => {
                let place = Place::Local(*local);
                let mut pre = HashMap::new();
                self.hoist(*value, &mut pre)?;
                if self.is_private(place) {
                    let v = self.node(*value, &[], &mut pre)?;
                    let ptr = self.element_ptr(place, None);
                    self.cur.push(Statement::Store {
                        pointer: ptr,
                        value: v,
                    });
                    return Ok(());
                }
                let shape = self.k.locals[*local].shape.clone();
                let ext: Vec<H> = shape.iter().map(|d| self.extent(*d)).collect();
                self.tile_loop(&ext, |lw, flat, pos| {
                    let mut cache = pre.clone();
                    let v = lw.node(*value, pos, &mut cache)?;
                    let ptr = lw.element_ptr(place, Some(flat));
                    lw.cur.push(Statement::Store {
                        pointer: ptr,
                        value: v,
                    });
                    Ok(())
                })
            }
            Stmt::Store {
                place,
                index,
                value,
            } => self.store(*place, index, *value),
        }
    }

    fn store(&mut self, place: Place, index: &[Index], value: ExprId) -> Result<(), LowerError> {
        let mut pre = HashMap::new();
        self.hoist(value, &mut pre)?;
        for i in index_exprs(index) {
            self.node(i, &[], &mut pre)?;
        }
        if self.is_private(place) {
            // A private scalar: every invocation writes its own copy.
            let v = self.node(value, &[], &mut pre)?;
            let ptr = self.element_ptr(place, None);
            self.cur.push(Statement::Store {
                pointer: ptr,
                value: v,
            });
            return Ok(());
        }
        let lens: Vec<H> = index
            .iter()
            .filter_map(|ix| match ix {
                Index::Range { len, .. } => Some(*len),
                Index::Single(_) => None,
            })
            .collect::<Vec<Dim>>()
            .into_iter()
            .map(|d| self.extent(d))
            .collect();
        let index = index.to_vec();
        self.tile_loop(&lens, |lw, _flat, pos| {
            let mut cache = pre.clone();
            let (inside, flat) = lw.locate(place, &index, pos, &mut cache)?;
            let accept = lw.nested(|lw| {
                let v = lw.node(value, pos, &mut cache)?;
                let ptr = lw.element_ptr(place, Some(flat));
                lw.cur.push(Statement::Store {
                    pointer: ptr,
                    value: v,
                });
                Ok(())
            })?;
            lw.cur.push(Statement::If {
                condition: inside,
                accept,
                reject: Block::new(),
            });
            Ok(())
        })
    }

    /// A loop over a tile of extents `ext`, flattened row-major: invocation
    /// `i` takes flat elements `i, i + 64, ...`. `body` gets the flat index
    /// and the position (u32 per axis).
    fn tile_loop(
        &mut self,
        ext: &[H],
        body: impl FnOnce(&mut Self, H, &[H]) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        let mut n = self.u32c(1);
        for e in ext {
            n = self.binary(BinaryOperator::Multiply, n, *e);
        }
        let counter = self.f.local_variables.append(
            LocalVariable {
                name: Some("i".into()),
                ty: self.u32_ty,
                init: None,
            },
            Span::UNDEFINED,
        );
        let cp = self.expr(Expression::LocalVariable(counter));
        let li = self.expr(Expression::FunctionArgument(0));
        self.cur.push(Statement::Store {
            pointer: cp,
            value: li,
        });
        let ext = ext.to_vec();
        let loop_body = self.nested(|lw| {
            let flat = lw.expr(Expression::Load { pointer: cp });
            let done = lw.binary(BinaryOperator::GreaterEqual, flat, n);
            lw.cur.push(Statement::If {
                condition: done,
                accept: Block::from_vec(vec![Statement::Break]),
                reject: Block::new(),
            });
            let mut pos = vec![flat; ext.len()];
            let mut rest = flat;
            for k in (0..ext.len()).rev() {
                if k == 0 {
                    pos[k] = rest;
                } else {
                    pos[k] = lw.binary(BinaryOperator::Modulo, rest, ext[k]);
                    rest = lw.binary(BinaryOperator::Divide, rest, ext[k]);
                }
            }
            body(lw, flat, &pos)
        })?;
        let continuing = self.nested(|lw| {
            let cur = lw.expr(Expression::Load { pointer: cp });
            let step = lw.u32c(WORKGROUP_SIZE);
            let next = lw.binary(BinaryOperator::Add, cur, step);
            lw.cur.push(Statement::Store {
                pointer: cp,
                value: next,
            });
            Ok(())
        })?;
        self.cur.push(Statement::Loop {
            body: loop_body,
            continuing,
            break_if: None,
        });
        Ok(())
    }

    /// Whether the element of a slice at tile position `pos` lies inside
    /// `place`, and its flat index there. Coordinates are u32: an i32 start
    /// plus a position wraps to at least 2^31 when the true coordinate is
    /// negative or past 2^31, which is never below an extent (bindings are
    /// far smaller); a u32 start that overflows is caught by `c < start`.
    fn locate(
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
    fn hoist(&mut self, root: ExprId, cache: &mut HashMap<ExprId, H>) -> Result<(), LowerError> {
        let mut seen = vec![false; self.k.exprs.len()];
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
            match &e.kind {
                ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::Bitcast(a) => stack.push(*a),
                ExprKind::Binary(_, a, b) => stack.extend([*a, *b]),
                ExprKind::Select(c, a, b) => stack.extend([*c, *a, *b]),
                ExprKind::Builtin(_, xs) => stack.extend(xs),
                ExprKind::Load { index, .. } => stack.extend(index_exprs(index)),
                _ => {}
            }
        }
        Ok(())
    }

    /// The position within a node of `shape` read at tile position `pos`:
    /// trailing axes line up and extent-1 axes read 0 (broadcasting).
    fn aligned(&mut self, shape: &[Dim], pos: &[H]) -> Vec<H> {
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
    fn node(
        &mut self,
        id: ExprId,
        pos: &[H],
        cache: &mut HashMap<ExprId, H>,
    ) -> Result<H, LowerError> {
        if let Some(h) = cache.get(&id) {
            return Ok(*h);
        }
        let e = &self.k.exprs[id];
        let (ty, shape) = (e.ty, e.shape.clone());
        nscalar(ty)?;
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
                    self.expr(Expression::Load { pointer: ptr })
                } else {
                    let q = self.aligned(&shape, pos);
                    let mut flat = self.u32c(0);
                    for (c, d) in q.iter().zip(&self.k.locals[*l].shape.clone()) {
                        let ext = self.extent(*d);
                        let scaled = self.binary(BinaryOperator::Multiply, flat, ext);
                        flat = self.binary(BinaryOperator::Add, scaled, *c);
                    }
                    let ptr = self.element_ptr(place, Some(flat));
                    self.expr(Expression::Load { pointer: ptr })
                }
            }
            ExprKind::Load { place, index } => {
                let q = self.aligned(&shape, pos);
                self.load(*place, index, &q, cache)?
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
                let mut vals = Vec::new();
                for x in xs {
                    vals.push(self.node(*x, pos, cache)?);
                }
                self.builtin(*f, ty, &vals)
            }
        };
        cache.insert(id, h);
        Ok(h)
    }

    /// A masked load: inside the place it reads the element, outside it
    /// yields 0 without touching memory (an `if`, not the driver's
    /// robustness, which SPIR-V passthrough does not have).
    fn load(
        &mut self,
        place: Place,
        index: &[Index],
        q: &[H],
        cache: &mut HashMap<ExprId, H>,
    ) -> Result<H, LowerError> {
        let elem = self.place_elem(place);
        if self.is_private(place) {
            let ptr = self.element_ptr(place, None);
            return Ok(self.expr(Expression::Load { pointer: ptr }));
        }
        let (inside, flat) = self.locate(place, index, q, cache)?;
        let tmp = self.temp(elem);
        let zero = self.lit(elem.zero());
        self.cur.push(Statement::Store {
            pointer: tmp,
            value: zero,
        });
        let accept = self.nested(|lw| {
            let ptr = lw.element_ptr(place, Some(flat));
            let v = lw.expr(Expression::Load { pointer: ptr });
            lw.cur.push(Statement::Store {
                pointer: tmp,
                value: v,
            });
            Ok(())
        })?;
        self.cur.push(Statement::If {
            condition: inside,
            accept,
            reject: Block::new(),
        });
        Ok(self.expr(Expression::Load { pointer: tmp }))
    }

    fn unary(&mut self, op: UnOp, ty: Scalar, x: H) -> H {
        match (op, ty) {
            // WGSL has no unary minus on u32; 0 - x wraps the same way.
            (UnOp::Neg, Scalar::U32) => {
                let zero = self.u32c(0);
                self.binary(BinaryOperator::Subtract, zero, x)
            }
            (UnOp::Neg, _) => self.expr(Expression::Unary {
                op: UnaryOperator::Negate,
                expr: x,
            }),
            (UnOp::Not, Scalar::Bool) => self.expr(Expression::Unary {
                op: UnaryOperator::LogicalNot,
                expr: x,
            }),
            (UnOp::Not | UnOp::BitNot, _) => self.expr(Expression::Unary {
                op: UnaryOperator::BitwiseNot,
                expr: x,
            }),
        }
    }

    fn binop(&mut self, op: BinOp, ty: Scalar, x: H, y: H) -> H {
        use BinaryOperator as B;
        let simple = |op| -> Option<B> {
            Some(match op {
                BinOp::Add => B::Add,
                BinOp::Sub => B::Subtract,
                BinOp::Mul => B::Multiply,
                BinOp::Eq => B::Equal,
                BinOp::Ne => B::NotEqual,
                BinOp::Lt => B::Less,
                BinOp::Le => B::LessEqual,
                BinOp::Gt => B::Greater,
                BinOp::Ge => B::GreaterEqual,
                _ => return None,
            })
        };
        if ty == Scalar::Bool {
            let b = match op {
                BinOp::And | BinOp::BitAnd => B::LogicalAnd,
                BinOp::Or | BinOp::BitOr => B::LogicalOr,
                BinOp::BitXor | BinOp::Ne => B::NotEqual,
                BinOp::Eq => B::Equal,
                op => unreachable!("the checker rejects {op:?} on bools"),
            };
            return self.binary(b, x, y);
        }
        if op == BinOp::Ne && ty == Scalar::F32 {
            return self.float_ne(x, y);
        }
        if let Some(b) = simple(op) {
            return self.binary(b, x, y);
        }
        match op {
            BinOp::Div if ty == Scalar::F32 => self.binary(B::Divide, x, y),
            BinOp::Div | BinOp::Rem => {
                // ops.rs: x / 0 == x, x % 0 == 0, MIN / -1 == MIN, MIN % -1 == 0.
                // Spelled out so no backend's division by 0 or overflow is reached.
                let zero = self.lit(ty.zero());
                let mut bad = self.binary(B::Equal, y, zero);
                if ty == Scalar::I32 {
                    let min = self.lit(Value::I32(i32::MIN));
                    let m1 = self.lit(Value::I32(-1));
                    let is_min = self.binary(B::Equal, x, min);
                    let is_m1 = self.binary(B::Equal, y, m1);
                    let ovf = self.binary(B::LogicalAnd, is_min, is_m1);
                    bad = self.binary(B::LogicalOr, bad, ovf);
                }
                let one = self.lit(if ty == Scalar::I32 {
                    Value::I32(1)
                } else {
                    Value::U32(1)
                });
                let safe = self.select(bad, one, y);
                if op == BinOp::Div {
                    let q = self.binary(B::Divide, x, safe);
                    // Both bad cases return x (MIN / -1 == MIN == x).
                    self.select(bad, x, q)
                } else {
                    let r = self.binary(B::Modulo, x, safe);
                    self.select(bad, zero, r)
                }
            }
            BinOp::Shl | BinOp::Shr => {
                // Shift counts modulo 32, masked here rather than trusting
                // WGSL's masking to survive into SPIR-V (where it is undefined).
                let count = if ty == Scalar::I32 {
                    self.bitcast(y, ScalarKind::Uint)
                } else {
                    y
                };
                let mask = self.u32c(31);
                let count = self.binary(B::And, count, mask);
                let b = if op == BinOp::Shl {
                    B::ShiftLeft
                } else {
                    B::ShiftRight
                };
                self.binary(b, x, count)
            }
            BinOp::BitAnd => self.binary(B::And, x, y),
            BinOp::BitOr => self.binary(B::InclusiveOr, x, y),
            BinOp::BitXor => self.binary(B::ExclusiveOr, x, y),
            op => unreachable!("the checker rejects {op:?} on {ty}"),
        }
    }

    /// A value conversion with ops.rs's meaning.
    fn cast(&mut self, from: Scalar, to: Scalar, x: H) -> H {
        use BinaryOperator as B;
        if from == to {
            return x;
        }
        if from == Scalar::Bool {
            let (one, zero) = match to {
                Scalar::F32 => (Value::F32(1.0), Value::F32(0.0)),
                Scalar::I32 => (Value::I32(1), Value::I32(0)),
                _ => (Value::U32(1), Value::U32(0)),
            };
            let (one, zero) = (self.lit(one), self.lit(zero));
            return self.select(x, one, zero);
        }
        if to == Scalar::Bool {
            // `x != 0`: a NaN is true, as in ops.rs.
            let zero = self.lit(from.zero());
            if from == Scalar::F32 {
                return self.float_ne(x, zero);
            }
            return self.binary(B::NotEqual, x, zero);
        }
        match (from, to) {
            (Scalar::F32, Scalar::I32 | Scalar::U32) => {
                // Truncating and saturating, NaN to 0. WGSL leaves NaN
                // undefined and SPIR-V out-of-range conversions too, so only
                // in-range values reach the conversion. NaN is found from
                // the bits, which no fast-math assumption can fold away.
                let bits = self.bitcast(x, ScalarKind::Uint);
                let abs_mask = self.u32c(0x7fff_ffff);
                let mag = self.binary(B::And, bits, abs_mask);
                let inf = self.u32c(0x7f80_0000);
                let nan = self.binary(B::Greater, mag, inf);
                let (lo, hi, minv, maxv) = if to == Scalar::I32 {
                    (
                        -2147483648.0f32,
                        2147483648.0f32,
                        Value::I32(i32::MIN),
                        Value::I32(i32::MAX),
                    )
                } else {
                    (-1.0, 4294967296.0, Value::U32(0), Value::U32(u32::MAX))
                };
                let lo_c = self.lit(Value::F32(lo));
                let hi_c = self.lit(Value::F32(hi));
                let below = self.binary(B::LessEqual, x, lo_c);
                let above = self.binary(B::GreaterEqual, x, hi_c);
                let out = self.binary(B::LogicalOr, below, above);
                let out = self.binary(B::LogicalOr, out, nan);
                let fzero = self.lit(Value::F32(0.0));
                let safe = self.select(out, fzero, x);
                let v = self.convert(safe, kind(to));
                let minv = self.lit(minv);
                let maxv = self.lit(maxv);
                let zero = self.lit(to.zero());
                let v = self.select(below, minv, v);
                let v = self.select(above, maxv, v);
                self.select(nan, zero, v)
            }
            // Integer to f32 rounds to nearest even (Vulkan: correctly rounded).
            (_, Scalar::F32) => self.convert(x, ScalarKind::Float),
            // i32 <-> u32: two's complement, the same bits.
            _ => self.bitcast(x, kind(to)),
        }
    }

    /// IEEE `x != y`, true when either is NaN. naga writes WGSL's `!=` on
    /// floats as SPIR-V `OpFOrdNotEqual`, which is false for NaN (lavapipe
    /// gave false where ops.rs gives true), so it is spelled `!(x == y)`.
    fn float_ne(&mut self, x: H, y: H) -> H {
        let eq = self.binary(BinaryOperator::Equal, x, y);
        self.expr(Expression::Unary {
            op: UnaryOperator::LogicalNot,
            expr: eq,
        })
    }

    fn builtin(&mut self, f: Builtin, ty: Scalar, args: &[H]) -> H {
        use BinaryOperator as B;
        match f {
            Builtin::Sqrt => self.math(MathFunction::Sqrt, args[0]),
            Builtin::Abs if ty == Scalar::F32 => self.math(MathFunction::Abs, args[0]),
            Builtin::Abs => {
                // Wrapping: abs(MIN) == MIN, as 0 - x gives.
                let zero = self.lit(ty.zero());
                let neg = self.binary(B::Less, args[0], zero);
                let negated = self.binary(B::Subtract, zero, args[0]);
                self.select(neg, negated, args[0])
            }
            // ops.rs: min(a, b) = b < a ? b : a; max(a, b) = b > a ? b : a.
            Builtin::Min => {
                let c = self.binary(B::Less, args[1], args[0]);
                self.select(c, args[1], args[0])
            }
            Builtin::Max => {
                let c = self.binary(B::Greater, args[1], args[0]);
                self.select(c, args[1], args[0])
            }
        }
    }

    fn math(&mut self, fun: MathFunction, arg: H) -> H {
        self.expr(Expression::Math {
            fun,
            arg,
            arg1: None,
            arg2: None,
            arg3: None,
        })
    }
}

/// Tile positions and flat indices are u32: refuse a constant extent or a
/// statement tile of constant extents that does not fit.
fn check_extents(k: &Kernel) -> Result<(), LowerError> {
    let fits = |shape: &[Dim]| {
        shape
            .iter()
            .try_fold(1u64, |n, d| match d {
                Dim::Const(v) => n.checked_mul(*v).filter(|n| *n <= u32::MAX as u64),
                Dim::Sym(_) => Some(n),
            })
            .is_some()
    };
    let mut shapes: Vec<&[Dim]> = k.exprs.iter().map(|e| e.shape.as_slice()).collect();
    shapes.extend(k.locals.iter().map(|l| l.shape.as_slice()));
    for p in &k.params {
        if let ParamKind::Tensor { shape, .. } = &p.kind {
            shapes.push(shape);
        }
    }
    let mut tiles = Vec::new();
    for s in &k.body {
        if let Stmt::Store { index, .. } = s {
            tiles.push(
                index
                    .iter()
                    .filter_map(|i| match i {
                        Index::Range { len, .. } => Some(*len),
                        Index::Single(_) => None,
                    })
                    .collect::<Vec<Dim>>(),
            );
        }
    }
    for shape in shapes.into_iter().chain(tiles.iter().map(|t| t.as_slice())) {
        if !fits(shape) {
            return Err(unsupported(format!(
                "a tile of {} elements (positions are 32-bit on the GPU)",
                k.shape_text(shape)
            )));
        }
    }
    Ok(())
}

fn kind(s: Scalar) -> ScalarKind {
    match s {
        Scalar::Bool => ScalarKind::Bool,
        Scalar::I32 | Scalar::I64 => ScalarKind::Sint,
        Scalar::U32 | Scalar::U64 => ScalarKind::Uint,
        Scalar::F32 | Scalar::F64 => ScalarKind::Float,
    }
}

fn index_exprs(index: &[Index]) -> Vec<ExprId> {
    index
        .iter()
        .filter_map(|i| match i {
            Index::Range { start: Some(s), .. } | Index::Single(s) => Some(*s),
            Index::Range { start: None, .. } => None,
        })
        .collect()
}

/// Adds a place once; `Place` is not `Hash`, and a kernel has few places.
fn push_place(v: &mut Vec<Place>, p: Place) {
    if !v.contains(&p) {
        v.push(p);
    }
}
