//! Statements in order, barriers between conflicting ones, and the tile
//! loop each statement runs across the workgroup.

use super::{H, Lower, index_exprs, push_place};
use crate::LowerError;
use naga::{BinaryOperator, Block, Expression, LocalVariable, Span, Statement};
use phobos_core::ir::{ExprId, ExprKind, Index, Kernel, Place, Stmt};
use phobos_core::types::{Dim, Scalar};
use std::collections::HashMap;

impl<'k> Lower<'k> {
    pub(super) fn body(&mut self) -> Result<(), LowerError> {
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

    pub(super) fn place_name(&self, p: Place) -> String {
        match p {
            Place::Param(i) => self.k.params[i].name.clone(),
            Place::Local(l) => self.k.locals[l].name.clone(),
        }
    }

    /// Every place the expression DAG under `root` reads.
    pub(super) fn reads(&self, root: ExprId) -> Vec<Place> {
        reads(self.k, root)
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

    pub(super) fn stmt(&mut self, s: &Stmt) -> Result<(), LowerError> {
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

    pub(super) fn store(
        &mut self,
        place: Place,
        index: &[Index],
        value: ExprId,
    ) -> Result<(), LowerError> {
        if index.iter().any(|i| {
            matches!(
                i,
                Index::Range {
                    len: Dim::Const(0),
                    ..
                }
            )
        }) {
            // An empty tile writes nothing (and its positions would divide
            // by a constant 0, which naga refuses).
            return Ok(());
        }
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
        if self.reads(value).contains(&place) {
            return self.staged_store(place, &index, value, &lens, &pre);
        }
        self.tile_loop(&lens, |lw, _flat, pos| {
            let mut cache = pre.clone();
            let (inside, flat) = lw.locate(place, &index, pos, &mut cache)?;
            let accept = lw.nested(|lw| {
                let v = lw.node(value, pos, &mut cache)?;
                let v = lw.stored(place, v);
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

    /// A store whose value reads its own destination: the interpreter
    /// computes the whole value before writing, so the value goes to the
    /// staging tile first (element `flat` of the tile at `flat`), then, after
    /// a barrier that keeps every invocation's reads of the destination
    /// before any write to it, into the destination. Invocation `i` stages
    /// and copies the same elements (`i, i + n, ...`), so the staging tile
    /// itself needs no barrier, and statements may share it.
    fn staged_store(
        &mut self,
        place: Place,
        index: &[Index],
        value: ExprId,
        lens: &[H],
        pre: &HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        let elem = self.place_elem(place);
        let tile = *self
            .staging
            .get(&elem)
            .expect("bindings::staging made a tile for every staged store");
        let staged_ptr = |lw: &mut Self, flat: H| {
            let base = lw.expr(Expression::GlobalVariable(tile));
            lw.expr(Expression::Access { base, index: flat })
        };
        self.tile_loop(lens, |lw, flat, pos| {
            let mut cache = pre.clone();
            let (inside, _) = lw.locate(place, index, pos, &mut cache)?;
            let accept = lw.nested(|lw| {
                let v = lw.node(value, pos, &mut cache)?;
                let v = lw.stored(place, v);
                let ptr = staged_ptr(lw, flat);
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
        })?;
        let barrier = match place {
            Place::Param(_) => naga::Barrier::STORAGE,
            Place::Local(_) => naga::Barrier::WORK_GROUP,
        };
        self.cur.push(Statement::ControlBarrier(barrier));
        self.tile_loop(lens, |lw, flat, pos| {
            let mut cache = pre.clone();
            let (inside, dest) = lw.locate(place, index, pos, &mut cache)?;
            let accept = lw.nested(|lw| {
                let from = staged_ptr(lw, flat);
                let v = lw.expr(Expression::Load { pointer: from });
                let ptr = lw.element_ptr(place, Some(dest));
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

    /// The value a store to `place` writes: a NaN stored to an f32 tensor
    /// is the canonical quiet NaN (ops.rs).
    pub(super) fn stored(&mut self, place: Place, v: H) -> H {
        if matches!(place, Place::Param(_)) && self.place_elem(place) == Scalar::F32 {
            let bits = self.canonical_bits(v);
            self.bitcast(bits, naga::ScalarKind::Float)
        } else {
            v
        }
    }

    /// A loop over a tile of extents `ext`, flattened row-major: invocation
    /// `i` takes flat elements `i, i + n, ...` for `n` the workgroup size.
    /// `body` gets the flat index and the position (u32 per axis).
    pub(super) fn tile_loop(
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
            let step = lw.u32c(lw.workgroup_size);
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
}

/// The places a statement reads and writes, for barriers.
#[derive(Default)]
struct Access {
    reads: Vec<Place>,
    writes: Vec<Place>,
}

/// Every place the expression DAG under `root` reads.
pub(crate) fn reads(k: &Kernel, root: ExprId) -> Vec<Place> {
    let mut out = Vec::new();
    let mut seen = vec![false; k.exprs.len()];
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id], true) {
            continue;
        }
        match &k.exprs[id].kind {
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
