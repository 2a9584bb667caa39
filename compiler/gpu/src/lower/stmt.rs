//! Statements in order, barriers between conflicting ones, and the tile
//! loop each statement runs across the workgroup.

use super::{H, Lower, index_exprs, push_place};
use crate::LowerError;
use naga::{BinaryOperator, Block, Expression, LocalVariable, Span, Statement};
use phobos_core::ir::{ExprId, ExprKind, Index, Kernel, Place, Stmt, analysis};
use phobos_core::types::{Dim, Scalar};
use std::collections::HashMap;

impl<'k> Lower<'k> {
    pub(super) fn body(&mut self) -> Result<(), LowerError> {
        // Barriers: a statement waits for the earlier ones (since the last
        // barrier) whose places it conflicts with; private scalars never
        // conflict, since each invocation has its own. A loop waits for
        // what its body conflicts with before it starts, and between
        // iterations as the plan says (`plan::loops`).
        let mut pending = analysis::Access::default();
        self.subgroup_ok = self.subgroup_check();
        let declared = self.workgroup_used();
        if declared != self.plan.upfront.bytes() {
            return Err(LowerError::Internal(format!(
                "kernel `{}` declares {declared} bytes of workgroup memory before its \
                 statements where the plan has {:?}",
                self.k.name, self.plan.upfront
            )));
        }
        self.rows = self.plan_row_cache();
        // The enclosing block, the variable and the plan of each open loop.
        let mut open: Vec<(Vec<Statement>, Place, usize)> = Vec::new();
        // Outside loops: the accumulators a fold by item 0 of each row
        // touched last, with the invocations a row of its reduction.
        let mut owners: HashMap<phobos_core::ir::LocalId, u32> = HashMap::new();
        for (i, s) in self.k.body.iter().enumerate() {
            match s {
                Stmt::For { local, start, end } => {
                    owners.clear();
                    let l = self
                        .plan
                        .loops
                        .iter()
                        .position(|l| l.start == i)
                        .expect("the plan has every loop");
                    let sync =
                        crate::plan::loops::conflicts(&pending, &self.plan.loops[l].body, |p| {
                            self.is_private(p)
                        });
                    self.sync(sync, &mut pending);
                    self.tandem.forget_fills(None);
                    self.carry_begin(i);
                    let mut pre = HashMap::new();
                    let first = self.node(*start, &[], &mut pre)?;
                    let end = self.node(*end, &[], &mut pre)?;
                    let var = Place::Local(*local);
                    let ptr = self.element_ptr(var, None);
                    self.var_store(ptr, first);
                    open.push((std::mem::take(&mut self.cur), var, l));
                    let ptr = self.element_ptr(var, None);
                    let i = self.var_load(ptr);
                    let done = self.binary(BinaryOperator::GreaterEqual, i, end);
                    self.if_then(done, Block::from_vec(vec![Statement::Break]));
                    continue;
                }
                Stmt::EndFor => {
                    owners.clear();
                    let (outer, var, l) = open.pop().expect("the verifier matched loops");
                    let mut back = self.plan.loops[l].back;
                    if self.carries(self.plan.loops[l].start) {
                        // The loop's one tile statement keeps its tile in
                        // the accumulators (`dot_carried.rs`): the loop
                        // touches no tile between iterations.
                        back = crate::plan::loops::Sync::default();
                    }
                    // The compiler's own workgroup arrays touched since the
                    // body's last barrier would race with the next
                    // iteration's use of them.
                    if back.is_none() && self.scratch_after_barrier(&self.cur).0 {
                        back.workgroup = true;
                    }
                    self.sync(back, &mut pending);
                    // Every iteration's accesses that no barrier at the end
                    // of the last one ordered are still pending for the
                    // statements after the loop.
                    let body = &self.plan.loops[l].body;
                    let unordered = |p: &&Place| match p {
                        Place::Local(_) => !back.workgroup,
                        Place::Param(_) => !back.storage,
                    };
                    for &p in body.reads.iter().filter(unordered) {
                        push_place(&mut pending.reads, p);
                    }
                    for &p in body.writes.iter().filter(unordered) {
                        push_place(&mut pending.writes, p);
                    }
                    let body = std::mem::replace(&mut self.cur, outer);
                    let continuing = self.nested(|lw| {
                        // `i < end <= i32::MAX`: the increment cannot wrap.
                        let ptr = lw.element_ptr(var, None);
                        let i = lw.var_load(ptr);
                        let one = lw.lit(phobos_core::types::Value::I32(1));
                        let next = lw.binary(BinaryOperator::Add, i, one);
                        lw.var_store(ptr, next);
                        Ok(())
                    })?;
                    self.push_loop(Block::from_vec(body), continuing);
                    self.tandem.forget_fills(None);
                    self.carry_end(self.plan.loops[l].start);
                    continue;
                }
                Stmt::Let { .. } | Stmt::Var { .. } | Stmt::Store { .. } => {}
            }
            // A fold's assignment was emitted with its reduction's `let`.
            if self.plan.folds.iter().any(|f| f.stmt + 1 == i) {
                self.tandem.stmt += 1;
                continue;
            }
            let fold = self.plan.folds.iter().position(|f| f.stmt == i);
            let mut acc = analysis::access(self.k, s);
            if let Some(f) = fold {
                // The pair's accesses, less the `let` that is never stored.
                let next = analysis::access(self.k, &self.k.body[i + 1]);
                let result = Place::Local(self.plan.folds[f].result);
                for p in next.reads {
                    push_place(&mut acc.reads, p);
                }
                acc.writes = next.writes;
                acc.reads.retain(|p| *p != result);
            }
            // Between two folds of one accumulator outside loops whose
            // reductions have the same owners, with nothing else touching
            // it in between, each element has one owner, which orders
            // itself: no barrier for the accumulator. Where this fold then
            // takes other owners, the barrier goes in before it after all.
            let owner = fold.and_then(|f| owners.get(&self.plan.folds[f].acc).copied());
            let full = crate::plan::loops::conflicts(&pending, &acc, |p| self.is_private(p));
            let sync = match (fold, owner) {
                (Some(f), Some(_)) => {
                    let own = Place::Local(self.plan.folds[f].acc);
                    let mut before = pending.clone();
                    before.reads.retain(|p| *p != own);
                    before.writes.retain(|p| *p != own);
                    crate::plan::loops::conflicts(&before, &acc, |p| self.is_private(p))
                }
                _ => full,
            };
            self.sync(sync, &mut pending);
            let at = self.cur.len();
            let noted = self.tandem.notes.len();
            self.tandem.looped = !open.is_empty();
            self.tandem.resumes = !self.plan.fresh_fills.contains(&i);
            let took = match fold {
                Some(f) => self.accumulate(f)?,
                None => {
                    self.stmt(s)?;
                    None
                }
            };
            if owner.is_some() && took != owner && full.workgroup && !sync.workgroup {
                self.cur
                    .insert(at, Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
                pending.reads.retain(|p| matches!(p, Place::Param(_)));
                pending.writes.retain(|p| matches!(p, Place::Param(_)));
            }
            // The accumulators whose last toucher is a fold by item 0 of
            // each row, outside loops.
            for p in acc.reads.iter().chain(&acc.writes) {
                if let Place::Local(l) = p {
                    owners.remove(l);
                }
            }
            if let (Some(f), Some(per_row), true) = (fold, took, open.is_empty()) {
                owners.insert(self.plan.folds[f].acc, per_row);
            }
            self.coop.clear();
            self.exact.recips.clear();
            let value = s.value().expect("loops are handled above");
            if self.tandem.notes.len() == noted && super::tandem_draw::has_words(self.k, value) {
                self.tandem.note(
                    "direct: a scalar, or a store whose value reads its destination; each draw \
                     steps its own chunk",
                );
            }
            self.tandem.stmt += 1;
            self.tandem.forget_fills(Some(&acc.writes));
            for p in acc.reads.into_iter().filter(|p| !self.is_private(*p)) {
                push_place(&mut pending.reads, p);
            }
            for p in acc.writes.into_iter().filter(|p| !self.is_private(*p)) {
                push_place(&mut pending.writes, p);
            }
        }
        Ok(())
    }

    /// Waits at a barrier of kind `sync` (none where it is empty, or where
    /// the last statement already is such a barrier: a reduction computed
    /// ahead ends at one), and takes the places it orders out of `pending`:
    /// tiles for a workgroup barrier, tensors for a storage one.
    fn sync(&mut self, sync: crate::plan::loops::Sync, pending: &mut analysis::Access) {
        if sync.is_none() {
            return;
        }
        let mut barrier = naga::Barrier::empty();
        barrier.set(naga::Barrier::WORK_GROUP, sync.workgroup);
        barrier.set(naga::Barrier::STORAGE, sync.storage);
        let done = matches!(self.cur.last(),
            Some(Statement::ControlBarrier(b)) if b.contains(barrier));
        if !done {
            self.cur.push(Statement::ControlBarrier(barrier));
        }
        let ordered = |p: &Place| match p {
            Place::Local(_) => sync.workgroup,
            Place::Param(_) => sync.storage,
        };
        pending.reads.retain(|p| !ordered(p));
        pending.writes.retain(|p| !ordered(p));
    }

    /// For a block of statements: whether some path through it touches the
    /// compiler's own workgroup arrays after its last barrier, and whether
    /// every path through it waits at a barrier. Barriers sit only in
    /// workgroup-uniform control flow, so a branch's barrier is the whole
    /// workgroup's on that path. The slots of the levels above subgroups
    /// alternate between halves with a barrier inside each use
    /// (`coop_warp.rs`), so a touch of them needs no barrier after it.
    pub(super) fn scratch_after_barrier(&self, block: &[Statement]) -> (bool, bool) {
        let tiles: Vec<_> = self
            .locals
            .iter()
            .filter_map(|h| match h {
                super::LocalHome::Workgroup(g) => Some(*g),
                _ => None,
            })
            .chain(
                self.tree_buffers
                    .iter()
                    .filter(|((_, _, alternating), _)| *alternating)
                    .map(|(_, g)| *g),
            )
            .collect();
        self.scratch_walk(block, &tiles)
    }

    fn scratch_walk(
        &self,
        block: &[Statement],
        tiles: &[naga::Handle<naga::GlobalVariable>],
    ) -> (bool, bool) {
        for s in block.iter().rev() {
            let (touched, waits) = match s {
                Statement::ControlBarrier(_) => (false, true),
                Statement::If { accept, reject, .. } => {
                    let (ta, wa) = self.scratch_walk(accept, tiles);
                    let (tb, wb) = self.scratch_walk(reject, tiles);
                    (ta || tb, wa && wb)
                }
                Statement::Block(b) => self.scratch_walk(b, tiles),
                other => (self.touches_scratch(other, tiles), false),
            };
            if touched {
                return (true, waits);
            }
            if waits {
                return (false, true);
            }
        }
        (false, false)
    }

    fn touches_scratch(&self, s: &Statement, tiles: &[naga::Handle<naga::GlobalVariable>]) -> bool {
        let scratch = |mut h: naga::Handle<Expression>| loop {
            match self.f.expressions[h] {
                Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => h = base,
                Expression::GlobalVariable(g) => {
                    break self.m.global_variables[g].space == naga::AddressSpace::WorkGroup
                        && !tiles.contains(&g);
                }
                _ => break false,
            }
        };
        let block = |b: &Block| b.iter().any(|s| self.touches_scratch(s, tiles));
        match s {
            Statement::Emit(range) => range.clone().any(|h| match self.f.expressions[h] {
                Expression::Load { pointer } => scratch(pointer),
                Expression::CooperativeLoad { ref data, .. } => scratch(data.pointer),
                _ => false,
            }),
            Statement::Store { pointer, .. }
            | Statement::WorkGroupUniformLoad { pointer, .. }
            | Statement::Atomic { pointer, .. } => scratch(*pointer),
            Statement::CooperativeStore { data, .. } => scratch(data.pointer),
            Statement::Block(b) => block(b),
            Statement::If { accept, reject, .. } => block(accept) || block(reject),
            Statement::Loop {
                body, continuing, ..
            } => block(body) || block(continuing),
            Statement::Switch { cases, .. } => cases.iter().any(|c| block(&c.body)),
            // A called function (exact mode's arithmetic) touches what
            // its expressions name.
            Statement::Call { function, .. } => {
                self.m.functions[*function]
                    .expressions
                    .iter()
                    .any(|(_, e)| match e {
                        Expression::GlobalVariable(g) => {
                            self.m.global_variables[*g].space == naga::AddressSpace::WorkGroup
                        }
                        _ => false,
                    })
            }
            Statement::Break
            | Statement::Continue
            | Statement::Return { .. }
            | Statement::Kill
            | Statement::ControlBarrier(_)
            | Statement::MemoryBarrier(_)
            | Statement::SubgroupBallot { .. }
            | Statement::SubgroupGather { .. }
            | Statement::SubgroupCollectiveOperation { .. } => false,
            // Kinds the lowering never emits: counted as touching memory,
            // since a missed barrier is a race and an extra one only time.
            Statement::ImageStore { .. }
            | Statement::ImageAtomic { .. }
            | Statement::RayQuery { .. }
            | Statement::RayPipelineFunction(_) => true,
        }
    }

    /// Every place the expression DAG under `root` reads
    /// (`ir::analysis::reads`).
    pub(super) fn reads(&self, root: ExprId) -> Vec<Place> {
        analysis::reads(self.k, root)
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
                    self.var_store(ptr, v);
                    return Ok(());
                }
                if self.dot_tiles_let(*local, *value, &pre)?
                    || self.coop_let(*local, *value, &pre)?
                    || self.dot_let(*local, *value, &pre)?
                {
                    return Ok(());
                }
                self.compute_ahead(*value, &pre)?;
                let shape = self.k.locals[*local].shape.clone();
                let ext: Vec<H> = shape.iter().map(|d| self.extent(*d)).collect();
                self.draw_tile_loop(&shape, &ext, 1, *value, &pre, |lw, flat, pos| {
                    let mut cache = pre.clone();
                    let v = lw.node(*value, pos, &mut cache)?;
                    let ptr = lw.element_ptr(place, Some(flat));
                    lw.store_element(place, ptr, v);
                    Ok(())
                })
            }
            Stmt::Store {
                place,
                index,
                value,
            } => self.store(*place, index, *value),
            Stmt::For { .. } | Stmt::EndFor => unreachable!("body() opens and closes loops"),
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
        if !self.is_private(place) {
            if self.carried_store(value, &pre)?
                || self.dot_tiles_store(place, index, value, &pre)?
                || self.dot_store(place, index, value, &pre)?
            {
                return Ok(());
            }
            self.compute_ahead(value, &pre)?;
        }
        if self.is_private(place) {
            // A private scalar: every invocation writes its own copy.
            let v = self.node(value, &[], &mut pre)?;
            let ptr = self.element_ptr(place, None);
            self.var_store(ptr, v);
            return Ok(());
        }
        let tile = analysis::slice_tile(index);
        let lens: Vec<H> = tile.iter().map(|d| self.extent(*d)).collect();
        let index = index.to_vec();
        if self.reads(value).contains(&place) && !self.reads_own_element(place, &index, value) {
            return self.staged_store(place, &index, value, &lens, &pre);
        }
        if let Some(geom) = self.rows.as_ref().map(|c| c.geom.clone())
            && self.row_store_ok(&geom, place, &index, value)
            && self.with_row_words((value, &tile, &lens), &pre, |lw| {
                lw.row_store(place, &index, value, &pre)
            })?
        {
            return Ok(());
        }
        if quad_slice(self.k, place, &index) && !self.stored_elementwise(value) {
            return self.quad_store(place, &index, value, &tile, &lens, &pre);
        }
        self.draw_tile_loop(&tile, &lens, 1, value, &pre, |lw, _flat, pos| {
            let mut cache = pre.clone();
            let (inside, flat) = lw.locate(place, &index, pos, &mut cache)?;
            let accept = lw.nested(|lw| {
                let v = lw.node(value, pos, &mut cache)?;
                let v = lw.stored(place, value, v);
                lw.store_at(place, flat, v);
                Ok(())
            })?;
            lw.if_then(inside, accept);
            Ok(())
        })
    }

    /// A store by groups of 4 consecutive elements of a row (`quad_slice`
    /// holds): invocation `i` of `n` takes groups `i, i + n, ...`, computes
    /// the value of each lane (loads that `quad_load` allows are one
    /// 16-byte load per group) and stores the 4 with one 16-byte store. A
    /// group is inside or outside the destination as a whole (its first
    /// element is at a multiple of 4 in a row whose length is a multiple
    /// of 4), so the first element's test masks it.
    fn quad_store(
        &mut self,
        place: Place,
        index: &[Index],
        value: ExprId,
        tile: &[Dim],
        lens: &[H],
        pre: &HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        let elem = self.place_elem(place);
        let ty = super::bindings::vec4_type(&mut self.m, elem);
        self.draw_tile_loop(tile, lens, 4, value, pre, |lw, _flat, pos| {
            let mut cache = pre.clone();
            let loads = std::mem::take(&mut lw.tandem.preloaded);
            lw.store_group(
                (place, index, value),
                pos,
                &mut cache,
                (ty, loads),
                |_, _| {},
            )
        })
    }

    /// The group of 4 consecutive elements from tile position `pos` (the
    /// first at a multiple of 4 along the last axis, `quad_slice`): each
    /// lane's value computed (`loads`, 16-byte loads made already, shared
    /// by the lanes), then one 16-byte store of `ty` where the group is
    /// inside the destination. `each_lane` runs before each lane's value
    /// with its number, and with `None` after the last.
    pub(super) fn store_group(
        &mut self,
        (place, index, value): (Place, &[Index], ExprId),
        pos: &[H],
        cache: &mut HashMap<ExprId, H>,
        (ty, loads): (naga::Handle<naga::Type>, HashMap<ExprId, H>),
        mut each_lane: impl FnMut(&mut Self, Option<u32>),
    ) -> Result<(), LowerError> {
        let (inside, flat) = self.locate(place, index, pos, cache)?;
        let accept = self.nested(|lw| {
            lw.lane = Some(super::Lane {
                lane: 0,
                pos0: pos.to_vec(),
                loads,
            });
            let last = pos.len() - 1;
            let mut lanes = Vec::new();
            for l in 0..4u32 {
                let mut at = pos.to_vec();
                if l > 0 {
                    let d = lw.u32c(l);
                    at[last] = lw.binary(BinaryOperator::Add, pos[last], d);
                }
                lw.lane.as_mut().expect("in a group").lane = l;
                each_lane(lw, Some(l));
                let mut c = cache.clone();
                let v = lw.node(value, &at, &mut c);
                let v = match v {
                    Ok(v) => v,
                    Err(e) => {
                        lw.lane = None;
                        each_lane(lw, None);
                        return Err(e);
                    }
                };
                lanes.push(lw.stored(place, value, v));
            }
            lw.lane = None;
            each_lane(lw, None);
            let v4 = lw.expr(Expression::Compose {
                ty,
                components: lanes,
            });
            lw.store_quad(place, flat, v4);
            Ok(())
        })?;
        self.if_then(inside, accept);
        Ok(())
    }

    /// Whether the plan keeps the store of `value` element by element
    /// though its slice allows groups of 4 (`plan::stores`: too many exact
    /// divisions an element for a module for WebGPU).
    pub(super) fn stored_elementwise(&self, value: ExprId) -> bool {
        self.plan
            .stores
            .iter()
            .any(|p| !p.groups && self.k.body[p.stmt].value() == Some(value))
    }

    /// Whether a store of `value` to the whole of local tile `place` reads
    /// `place` only at the element it writes (each read a whole-tile
    /// `Local` node of the tile's own shape, none under a reduction still
    /// to be computed per element, none through an index): then each
    /// invocation reads and writes only its own elements, in that order,
    /// and no staging is needed (`m = max(m, max(t, axis = 1))`).
    pub(super) fn reads_own_element(&self, place: Place, index: &[Index], value: ExprId) -> bool {
        reads_own_element(self.k, (place, index, value), &|id| {
            self.coop.contains_key(&id)
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
        let elem = self.place_elem(place).value_type();
        let tile = *self
            .staging
            .get(&elem)
            .expect("bindings::staging made a tile for every staged store");
        let staged_ptr = |lw: &mut Self, flat: H| {
            let base = lw.expr(Expression::GlobalVariable(tile));
            lw.access(base, flat)
        };
        self.tile_loop(lens, |lw, flat, pos| {
            let mut cache = pre.clone();
            let (inside, _) = lw.locate(place, index, pos, &mut cache)?;
            let accept = lw.nested(|lw| {
                let v = lw.node(value, pos, &mut cache)?;
                let v = lw.stored(place, value, v);
                // A bool staging tile holds u32 0/1 (`bindings::staging_tile`).
                let v = if elem == Scalar::Bool {
                    lw.bool_to_word(v)
                } else {
                    v
                };
                let ptr = staged_ptr(lw, flat);
                lw.var_store(ptr, v);
                Ok(())
            })?;
            lw.if_then(inside, accept);
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
                let v = lw.var_load(from);
                let v = if elem == Scalar::Bool {
                    lw.word_to_bool(v)
                } else {
                    v
                };
                lw.store_at(place, dest, v);
                Ok(())
            })?;
            lw.if_then(inside, accept);
            Ok(())
        })
    }

    /// The value a store to `place` writes (`v`, the lowered `value`): a
    /// NaN stored to an f32 tensor is the canonical quiet NaN (ops.rs).
    pub(super) fn stored(&mut self, place: Place, value: ExprId, v: H) -> H {
        if matches!(place, Place::Param(_))
            && self.place_elem(place).value_type() == Scalar::F32
            && !self.nan_canonical(value)
        {
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
        self.tile_loop_by(ext, 1, body)
    }

    /// [`Self::tile_loop`] over groups of `group` consecutive flat elements
    /// (the element count a multiple of `group`, a power of 2): invocation
    /// `i` takes groups `i, i + n, ...`; `body` gets the flat index and
    /// position of each group's first element.
    pub(super) fn tile_loop_by(
        &mut self,
        ext: &[H],
        group: u32,
        body: impl FnOnce(&mut Self, H, &[H]) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        self.tile_loop_range(ext, group, None, body)
    }

    /// [`Self::tile_loop_by`] over the flat positions `range` (from, to:
    /// multiples of `group`) of the tile only, or all of them.
    pub(super) fn tile_loop_range(
        &mut self,
        ext: &[H],
        group: u32,
        range: Option<(H, H)>,
        body: impl FnOnce(&mut Self, H, &[H]) -> Result<(), LowerError>,
    ) -> Result<(), LowerError> {
        let mut n = match range {
            Some((_, to)) => to,
            None => {
                let mut n = self.u32c(1);
                for e in ext {
                    n = self.binary(BinaryOperator::Multiply, n, *e);
                }
                n
            }
        };
        let shift = self.u32c(group.trailing_zeros());
        if group > 1 {
            n = self.binary(BinaryOperator::ShiftRight, n, shift);
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
        let mut li = self.local;
        if let Some((from, _)) = range {
            let from = self.binary(BinaryOperator::ShiftRight, from, shift);
            li = self.binary(BinaryOperator::Add, from, li);
        }
        self.var_store(cp, li);
        // A constant extent of 0 (an empty `let`/`var` tile, `specialize`)
        // makes `n` 0, so the body never runs; naga refuses a division by
        // the constant 0 all the same, so positions divide by 1 there.
        let ext: Vec<H> = ext
            .iter()
            .map(|&e| {
                if self.is_const_zero(e) {
                    self.u32c(1)
                } else {
                    e
                }
            })
            .collect();
        let loop_body = self.nested(|lw| {
            let g = lw.var_load(cp);
            let done = lw.binary(BinaryOperator::GreaterEqual, g, n);
            lw.if_then(done, Block::from_vec(vec![Statement::Break]));
            let flat = if group > 1 {
                let shift = lw.u32c(group.trailing_zeros());
                lw.binary(BinaryOperator::ShiftLeft, g, shift)
            } else {
                g
            };
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
            let cur = lw.var_load(cp);
            let step = lw.u32c(lw.block_invocations);
            let next = lw.binary(BinaryOperator::Add, cur, step);
            lw.var_store(cp, next);
            Ok(())
        })?;
        self.push_loop(loop_body, continuing);
        Ok(())
    }
}

pub(crate) use crate::plan::stores::{quad_load, quad_slice};

/// [`Lower::reads_own_element`] for `kernel`, where `ahead` says which
/// nodes are computed ahead of the statement (none before the body).
pub(crate) fn reads_own_element(
    k: &Kernel,
    (place, index, value): (Place, &[Index], ExprId),
    ahead: &dyn Fn(ExprId) -> bool,
) -> bool {
    let Place::Local(l) = place else {
        return false;
    };
    let shape = &k.locals[l].shape;
    let whole = index.len() == shape.len()
        && index
            .iter()
            .zip(shape)
            .all(|(i, d)| matches!(i, Index::Range { start: None, len } if len == d));
    // Staged Tandem words are computed in passes of their own.
    if !whole || super::tandem_draw::has_words(k, value) {
        return false;
    }
    let mut stack = vec![value];
    let mut seen = phobos_core::ir::IdVec::from_elem(false, k.exprs.len());
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id], true) || ahead(id) {
            continue;
        }
        let e = &k.exprs[id];
        match &e.kind {
            ExprKind::Local(m) if *m == l => {
                if &e.shape != shape {
                    return false;
                }
            }
            ExprKind::Load { place: p, .. } if *p == place => return false,
            // A product's accumulator is read at the element's own
            // position (`acc = dot(a, b, acc)`); its operands are not.
            ExprKind::Dot { a, b, acc } => {
                if [*a, *b]
                    .iter()
                    .any(|x| analysis::reads(k, *x).contains(&place))
                {
                    return false;
                }
                stack.extend(*acc);
            }
            // Positions move inside these: any read there is of
            // other elements.
            ExprKind::Reduce { .. } | ExprKind::Transpose(_)
                if analysis::reads(k, id).contains(&place) =>
            {
                return false;
            }
            kind => stack.extend(kind.operands()),
        }
    }
    true
}
