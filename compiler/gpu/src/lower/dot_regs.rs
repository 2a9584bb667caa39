//! Register tiles for products computed ahead (`dot_ahead.rs`): where the
//! block's invocations divide the result evenly, invocation `(ri, ci)` of a
//! `(M / TM) x (N / TN)` grid keeps the `TM x TN` elements at rows
//! `ri + i M / TM` and columns `ci + j N / TN` in registers for the whole
//! of K, and each step of a staged chunk loads `TM` values of `a` and `TN`
//! of `b` for `TM TN` products, instead of two loads a product. Each
//! element still starts from the accumulator and adds its products in
//! order of `k`, each rounded, so the bits do not change; the elements go
//! to the result array once, after the last chunk.

use super::{H, Lower, dot_ahead::DotPlan};
use crate::LowerError;
use naga::{BinaryOperator as B, GlobalVariable, Handle};
use phobos_core::types::Scalar;

/// The most elements an invocation keeps.
const MOST: u32 = 16;

/// The shape of each invocation's tile.
pub(super) struct RegisterTile {
    pub tm: u32,
    pub tn: u32,
}

/// This invocation's tile: its rows, its columns, and a variable for each
/// element (row-major).
pub(super) struct Registers {
    rows: Vec<H>,
    cols: Vec<H>,
    acc: Vec<H>,
}

impl Lower<'_> {
    /// The register tile of product `plan` with this block's invocations,
    /// or `None` where they do not divide it into tiles of 2 to [`MOST`]
    /// elements.
    pub(super) fn register_tile(&self, plan: &DotPlan) -> Option<RegisterTile> {
        let (m, n, w) = (plan.m, plan.n, self.block_invocations);
        let elems = m.checked_mul(n)?;
        if !elems.is_multiple_of(w) {
            return None;
        }
        let per = elems / w;
        if !(2..=MOST).contains(&per) || !per.is_power_of_two() {
            return None;
        }
        let mut tn = per.min(4);
        while !n.is_multiple_of(tn) {
            tn /= 2;
        }
        let tm = per / tn;
        m.is_multiple_of(tm).then_some(RegisterTile { tm, tn })
    }

    /// The tile's variables, each set to `init` at its element.
    pub(super) fn register_init(
        &mut self,
        plan: &DotPlan,
        t: &RegisterTile,
        mut init: impl FnMut(&mut Self, &[H]) -> Result<H, LowerError>,
    ) -> Result<Registers, LowerError> {
        let across = plan.n / t.tn;
        let across_c = self.u32c(across);
        let ci = self.binary(B::Modulo, self.local, across_c);
        let ri = self.binary(B::Divide, self.local, across_c);
        let at = |lw: &mut Self, base: H, step: u32, count: u32| -> Vec<H> {
            (0..count)
                .map(|i| {
                    let off = lw.u32c(i * step);
                    lw.binary(B::Add, base, off)
                })
                .collect()
        };
        let rows = at(self, ri, plan.m / t.tm, t.tm);
        let cols = at(self, ci, across, t.tn);
        let mut acc = Vec::new();
        for &r in &rows {
            for &c in &cols {
                let v = self.temp(Scalar::F32);
                let x = init(self, &[r, c])?;
                self.var_store(v, x);
                acc.push(v);
            }
        }
        Ok(Registers { rows, cols, acc })
    }

    /// One chunk's `kn` products added to the tile's elements, in order.
    pub(super) fn register_chunk(
        &mut self,
        plan: &DotPlan,
        r: &Registers,
        [sa, sb]: [Handle<GlobalVariable>; 2],
        kn: H,
    ) -> Result<(), LowerError> {
        let kc = self.u32c(super::dot_ahead::CHUNK);
        let nc = self.u32c(plan.n);
        let row_bases: Vec<H> = r
            .rows
            .iter()
            .map(|&row| self.binary(B::Multiply, row, kc))
            .collect();
        self.count_loop(kn, |lw, kk| {
            let a: Vec<H> = row_bases
                .iter()
                .map(|&base| {
                    let i = lw.binary(B::Add, base, kk);
                    lw.staged(sa, i)
                })
                .collect();
            let k_row = lw.binary(B::Multiply, kk, nc);
            let b: Vec<H> = r
                .cols
                .iter()
                .map(|&c| {
                    let i = lw.binary(B::Add, k_row, c);
                    lw.staged(sb, i)
                })
                .collect();
            for (i, &x) in a.iter().enumerate() {
                for (j, &y) in b.iter().enumerate() {
                    lw.add_product(r.acc[i * b.len() + j], x, y);
                }
            }
            Ok(())
        })
    }

    /// The tile's elements into the result array.
    pub(super) fn register_store(
        &mut self,
        plan: &DotPlan,
        r: &Registers,
        result: Handle<GlobalVariable>,
    ) {
        let nc = self.u32c(plan.n);
        for (i, &row) in r.rows.iter().enumerate() {
            let base = self.binary(B::Multiply, row, nc);
            for (j, &col) in r.cols.iter().enumerate() {
                let flat = self.binary(B::Add, base, col);
                let v = self.var_load(r.acc[i * r.cols.len() + j]);
                let ptr = self.array_ptr(result, flat);
                self.var_store(ptr, v);
            }
        }
    }
}
