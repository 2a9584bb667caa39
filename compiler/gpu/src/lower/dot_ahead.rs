//! `dot` computed by the whole workgroup ahead of the statement that reads
//! it, as reductions are (`coop_reduce.rs`): the product of a constant
//! `[M, N]` shape goes to a workgroup array (or straight into the `let` or
//! `var` tile it initialises), and the statement reads its elements there.
//!
//! K is taken in chunks of [`CHUNK`]. For each chunk the workgroup first
//! writes the chunk's `[M, CHUNK]` elements of `a` and `[CHUNK, N]` of `b`
//! to workgroup arrays, each operand element computed once (a load of a
//! 16-bit tensor decoded once, not once for every row or column that uses
//! it), then after a barrier each invocation adds the chunk's products to
//! its own elements of the result: invocation `i` of `n` takes flat
//! elements `i, i + n, ...`, and for each the products in order of `k`,
//! `s = s + a * b`, the multiply and the add rounded on their own. The
//! element starts from the accumulator argument (or 0) and sees the same
//! operations in the same order as `dot.rs`'s loop over the whole of K, so
//! the bits are the interpreter's; only where the operands come from
//! changes.
//!
//! A product keeps `dot.rs`'s loop per element (also under
//! `PHOBOS_DOT_AHEAD=0`, `Knobs::dot_ahead`) where its shape is not two
//! constant extents, its operands draw Tandem words (their counters would
//! be stepped per element), or its arrays do not fit in
//! `GpuOptions::workgroup_memory` beside the kernel's others.

use super::{H, LocalHome, Lower, coop_reduce::Computed};
use crate::LowerError;
use naga::{BinaryOperator as B, GlobalVariable, Handle, Statement};
use phobos_core::ir::{BinOp, ExprId, ExprKind, Index, LocalId, Place};
use phobos_core::types::{Scalar, Value};
use std::collections::HashMap;

/// The K elements staged at a time.
pub(crate) const CHUNK: u32 = 16;

/// A product computed ahead: its node and operands, the result's extents,
/// and what the plan decided (`plan::dots`): whether cooperative matrices
/// compute it (`dot_coop.rs`), the block of tiles a subgroup keeps, and
/// the operands loaded straight from their tensors (`dot_direct.rs`).
#[derive(Clone, Copy, Debug)]
pub(super) struct DotPlan {
    pub id: ExprId,
    a: ExprId,
    b: ExprId,
    pub(super) acc: Option<ExprId>,
    pub m: u32,
    pub n: u32,
    pub coop: bool,
    pub block: Option<[u32; 2]>,
    pub direct: [Option<crate::plan::Direct>; 2],
    pub always_inside: bool,
}

impl DotPlan {
    /// Both operands load straight, with no test (`Product::always_direct`).
    pub fn always_direct(&self) -> bool {
        crate::plan::dots::always_direct(&self.direct, self.always_inside)
    }

    /// The K elements staged at a time.
    fn chunk(&self) -> u32 {
        if self.coop {
            super::dot_coop::COOP_CHUNK
        } else {
            CHUNK
        }
    }

    /// Bytes of a staged operand element (f16 for cooperative matrices).
    fn staged_bytes(&self) -> u64 {
        if self.coop { 2 } else { 4 }
    }
}

impl Lower<'_> {
    /// The plan for product `id` (`plan::dots`), or `None` where it keeps
    /// the loop per element.
    pub(super) fn dot_plan(&self, id: ExprId) -> Option<DotPlan> {
        let p = self.plan.products.iter().find(|p| p.expr == id)?;
        let ExprKind::Dot { a, b, acc } = self.k.exprs[id].kind else {
            return None;
        };
        Some(DotPlan {
            id,
            a,
            b,
            acc,
            m: p.m,
            n: p.n,
            coop: p.coop(),
            block: p.block,
            direct: p.direct,
            always_inside: p.always_inside,
        })
    }

    /// `acc = dot(a, b, acc)` over the whole of a workgroup tile `acc`
    /// (Triton's loop over K), where only the accumulator reads `acc`, at
    /// each element's own position: computed in place, as [`Self::dot_let`]
    /// does, each element read as its start before the invocation that
    /// owns it writes it. No staging tile, no result array, no copy.
    pub(super) fn dot_store(
        &mut self,
        place: Place,
        index: &[Index],
        value: ExprId,
        pre: &HashMap<ExprId, H>,
    ) -> Result<bool, LowerError> {
        let Place::Local(local) = place else {
            return Ok(false);
        };
        if !matches!(self.k.exprs[value].kind, ExprKind::Dot { .. })
            || !self.reads_own_element(place, index, value)
        {
            return Ok(false);
        }
        self.dot_let(local, value, pre)
    }

    /// `let local = value` (or a `var`) where `value` is a product planned
    /// ahead of the local's shape: computed straight into the local's
    /// workgroup tile. `false` (nothing emitted) otherwise.
    pub(super) fn dot_let(
        &mut self,
        local: LocalId,
        value: ExprId,
        pre: &HashMap<ExprId, H>,
    ) -> Result<bool, LowerError> {
        let LocalHome::Workgroup(g) = self.locals[local] else {
            return Ok(false);
        };
        let l = &self.k.locals[local];
        let e = &self.k.exprs[value];
        if l.shape != e.shape || l.elem != Scalar::F32 || self.dot_plan(value).is_none() {
            return Ok(false);
        }
        let ExprKind::Dot { a, b, acc } = e.kind else {
            return Ok(false);
        };
        for x in [Some(a), Some(b), acc].into_iter().flatten() {
            self.compute_ahead(x, pre)?;
        }
        self.dot_one(value, pre, Some(g))
    }

    /// Computes product `id` ahead into `into` (else a new array) where it
    /// qualifies and its arrays fit; whether it did.
    pub(super) fn dot_one(
        &mut self,
        id: ExprId,
        pre: &HashMap<ExprId, H>,
        into: Option<Handle<GlobalVariable>>,
    ) -> Result<bool, LowerError> {
        let Some(plan) = self.dot_plan(id) else {
            return Ok(false);
        };
        let (m, n, kc) = (plan.m, plan.n, plan.chunk());
        let extra = match into {
            Some(_) => 0,
            None => 4 * u64::from(m * n),
        };
        if !self.dot_staging_fits(&plan, extra) {
            return Ok(false);
        }
        let result = match into {
            Some(g) => g,
            None => self
                .workgroup_array("dot_result", Scalar::F32, m * n)
                .expect("checked to fit"),
        };
        let staged = self.dot_staging(&plan);
        self.dot_ahead(&plan, pre, result, staged)?;
        let how = match plan.coop {
            true => self.coop_note(&plan),
            false => {
                let regs = match self.register_tile(&plan) {
                    Some(t) => format!(", {} x {} elements an invocation in registers", t.tm, t.tn),
                    None => String::new(),
                };
                match self.why_not_coop(&plan) {
                    Some(why) if self.options.precision == crate::Precision::Fast => format!(
                        "each element's products added in order{regs} (not on tensor cores: {why})"
                    ),
                    _ => format!("each element's products added in order{regs}"),
                }
            }
        };
        let k = self.k.shape_text(&self.k.exprs[plan.a].shape[1..]);
        let k = k.trim_matches(|c| c == '[' || c == ']');
        self.tandem.notes.push(format!(
            "statement {}: `dot` of [{m}, {k}] by [{k}, {n}] by the workgroup: K in chunks of {kc} \
             staged in workgroup memory, {how}",
            self.tandem.stmt + 1
        ));
        if into.is_none() {
            self.coop.insert(id, Computed { result });
        }
        Ok(true)
    }

    /// The arrays that stage a chunk of product `plan`'s operands (shared
    /// by the products of a module), by name and length.
    fn staging_keys(plan: &DotPlan) -> [(&'static str, u32); 2] {
        let (m, n, kc) = (plan.m, plan.n, plan.chunk());
        let names = match plan.coop {
            true => ["dot_a16", "dot_b16"],
            false => ["dot_a", "dot_b"],
        };
        [(names[0], m * kc), (names[1], kc * n)]
    }

    /// Whether product `plan`'s staging arrays (none where its operands
    /// always load straight) and `extra` bytes more fit beside the module's
    /// other workgroup memory.
    pub(super) fn dot_staging_fits(&self, plan: &DotPlan, extra: u64) -> bool {
        let mut need = extra;
        if plan.always_direct() {
            return self.workgroup_used() + need <= self.options.workgroup_memory;
        }
        for key in Self::staged_keys(plan) {
            if !self.dot_buffers.contains_key(&key) {
                need += plan.staged_bytes() * u64::from(key.1);
            }
        }
        self.workgroup_used() + need <= self.options.workgroup_memory
    }

    /// Product `plan`'s staging arrays, declared on first use (after
    /// [`Self::dot_staging_fits`]); `None` where its operands always load
    /// straight.
    pub(super) fn dot_staging(&mut self, plan: &DotPlan) -> Option<[Handle<GlobalVariable>; 2]> {
        if plan.always_direct() {
            return None;
        }
        let arrays: Vec<_> = Self::staged_keys(plan)
            .into_iter()
            .map(|key| match self.dot_buffers.get(&key) {
                Some(g) => *g,
                None => {
                    let g = match plan.coop {
                        true => self.workgroup_f16(key.0, key.1),
                        false => self
                            .workgroup_array(key.0, Scalar::F32, key.1)
                            .expect("checked to fit"),
                    };
                    self.dot_buffers.insert(key, g);
                    g
                }
            })
            .collect();
        // Where only one operand is staged (the other always loads
        // straight), its array stands in for the other's, which no step
        // reads.
        Some(match arrays[..] {
            [a, b] => [a, b],
            [x] => [x, x],
            _ => unreachable!("an operand at least is staged"),
        })
    }

    /// The staging arrays product `plan` declares: both operands', or only
    /// the one not loaded straight where the plan proved the other always
    /// inside its tensor.
    fn staged_keys(plan: &DotPlan) -> Vec<(&'static str, u32)> {
        Self::staging_keys(plan)
            .into_iter()
            .zip(plan.direct)
            .filter(|(_, d)| !(plan.always_inside && d.is_some()))
            .map(|(key, _)| key)
            .collect()
    }

    fn dot_ahead(
        &mut self,
        plan: &DotPlan,
        pre: &HashMap<ExprId, H>,
        result: Handle<GlobalVariable>,
        staged: Option<[Handle<GlobalVariable>; 2]>,
    ) -> Result<(), LowerError> {
        let chunk = plan.chunk();
        let (mc, nc, kc) = (self.u32c(plan.m), self.u32c(plan.n), self.u32c(chunk));
        let len = self.extent(self.k.exprs[plan.a].shape[1]);
        let init = |lw: &mut Self, pos: &[H]| match plan.acc {
            Some(c) => lw.node(c, pos, &mut pre.clone()),
            None => Ok(lw.lit(Value::F32(0.0))),
        };
        // Each element starts from the accumulator (or 0): in this
        // invocation's registers, or in the result array.
        let tile = match plan.coop {
            true => None,
            false => self.register_tile(plan),
        };
        let regs = match &tile {
            Some(t) => Some(self.register_init(plan, t, init)?),
            None => {
                self.tile_loop(&[mc, nc], |lw, flat, pos| {
                    let v = init(lw, pos)?;
                    let ptr = lw.array_ptr(result, flat);
                    lw.var_store(ptr, v);
                    Ok(())
                })?;
                None
            }
        };
        let barrier = Statement::ControlBarrier(naga::Barrier::WORK_GROUP);
        let coop = match plan.coop {
            true => {
                // The result's tiles start from what the invocations wrote.
                self.cur.push(barrier.clone());
                let tiles = self.coop_begin(plan, Some(result));
                self.coop_loop(plan, pre, &tiles, staged, len, false)?;
                Some(tiles)
            }
            false => None,
        };
        if coop.is_none() {
            let [sa, sb] = staged.expect("only cooperative products load straight");
            let last = self.u32c(chunk - 1);
            let padded = self.binary(B::Add, len, last);
            let chunks = self.binary(B::Divide, padded, kc);
            self.count_loop(chunks, |lw, c| {
                let k0 = lw.binary(B::Multiply, c, kc);
                // The previous chunk's products (or a previous statement)
                // are done with the staging arrays.
                lw.cur.push(barrier.clone());
                lw.stage_chunk(plan, pre, [sa, sb], [true, true], k0, len)?;
                lw.cur.push(barrier.clone());
                let rest = lw.binary(B::Subtract, len, k0);
                let kn = lw.min_u32(rest, kc);
                match &regs {
                    Some(r) => lw.register_chunk(plan, r, [sa, sb], kn),
                    None => lw.element_chunk(plan, result, [sa, sb], kn),
                }
            })?;
        }
        if let Some(r) = &regs {
            self.register_store(plan, r, result);
        }
        if let Some(tiles) = &coop {
            self.coop_end(plan, tiles, result);
        }
        // The statement reads every element of the result.
        self.cur.push(barrier);
        Ok(())
    }

    /// The chunk of K from `k0`: `a`'s `[M, chunk]` elements and `b`'s
    /// `[chunk, N]`, each computed once into the staging arrays (rounded
    /// to f16 for cooperative matrices, whose K past the end is 0).
    pub(super) fn stage_chunk(
        &mut self,
        plan: &DotPlan,
        pre: &HashMap<ExprId, H>,
        [sa, sb]: [Handle<GlobalVariable>; 2],
        which: [bool; 2],
        k0: H,
        len: H,
    ) -> Result<(), LowerError> {
        let (mc, nc, kc) = (
            self.u32c(plan.m),
            self.u32c(plan.n),
            self.u32c(plan.chunk()),
        );
        let operands = [(sa, plan.a, [mc, kc], 1), (sb, plan.b, [kc, nc], 0)];
        for (_, (array, operand, ext, k_axis)) in which
            .into_iter()
            .zip(operands)
            .filter(|(staged, _)| *staged)
        {
            self.tile_loop(&ext, |lw, flat, pos| {
                let mut at = pos.to_vec();
                at[k_axis] = lw.binary(B::Add, k0, pos[k_axis]);
                let inside = lw.binary(B::Less, at[k_axis], len);
                if plan.coop {
                    let zero = lw.f16_zero();
                    let ptr = lw.array_ptr(array, flat);
                    lw.var_store(ptr, zero);
                }
                let accept = lw.nested(|lw| {
                    let mut v = lw.node(operand, &at, &mut pre.clone())?;
                    if plan.coop {
                        v = lw.expr(naga::Expression::As {
                            expr: v,
                            kind: naga::ScalarKind::Float,
                            convert: Some(2),
                        });
                    }
                    let ptr = lw.array_ptr(array, flat);
                    lw.var_store(ptr, v);
                    Ok(())
                })?;
                lw.if_then(inside, accept);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// One chunk's `kn` products added to each of this invocation's
    /// elements of `result` (flat elements `i, i + n, ...`), in order.
    fn element_chunk(
        &mut self,
        plan: &DotPlan,
        result: Handle<GlobalVariable>,
        [sa, sb]: [Handle<GlobalVariable>; 2],
        kn: H,
    ) -> Result<(), LowerError> {
        let (mc, nc, kc) = (self.u32c(plan.m), self.u32c(plan.n), self.u32c(CHUNK));
        self.tile_loop(&[mc, nc], |lw, flat, pos| {
            let sum = lw.temp(Scalar::F32);
            let ptr = lw.array_ptr(result, flat);
            let start = lw.var_load(ptr);
            lw.var_store(sum, start);
            let row_base = lw.binary(B::Multiply, pos[0], kc);
            lw.count_loop(kn, |lw, kk| {
                let ia = lw.binary(B::Add, row_base, kk);
                let x = lw.staged(sa, ia);
                let kn_row = lw.binary(B::Multiply, kk, nc);
                let ib = lw.binary(B::Add, kn_row, pos[1]);
                let y = lw.staged(sb, ib);
                lw.add_product(sum, x, y);
                Ok(())
            })?;
            let s = lw.var_load(sum);
            let ptr = lw.array_ptr(result, flat);
            lw.var_store(ptr, s);
            Ok(())
        })
    }

    /// Element `index` of a staging array.
    pub(super) fn staged(&mut self, array: Handle<GlobalVariable>, index: H) -> H {
        let ptr = self.array_ptr(array, index);
        self.var_load(ptr)
    }

    /// `sum = sum + x * y`, the multiply and the add rounded on their own.
    pub(super) fn add_product(&mut self, sum: H, x: H, y: H) {
        let p = self.binop(BinOp::Mul, Scalar::F32, x, y);
        let s = self.var_load(sum);
        let s = self.binop(BinOp::Add, Scalar::F32, s, p);
        self.var_store(sum, s);
    }
}
