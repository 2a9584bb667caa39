//! The K loop of a product on cooperative matrices (`dot_coop.rs`), with
//! the operands the plan loads straight from their f16 tensors
//! (`plan::dots::Direct`).
//!
//! Before the loop, one test uniform over the workgroup: K is a positive
//! multiple of 16, and each direct operand's slice lies inside its tensor
//! (its first and last elements are inside, the test of every masked
//! load, `Lower::locate`) with its rows 16 bytes aligned. Where it holds,
//! the direct operands' fragments are loaded from the tensor: with both
//! direct, K runs in steps of 16 with no staging and no barrier; with one,
//! the other is staged by chunks as before. Where it fails (a ragged last
//! block, a slice past the end), every operand is staged. The f16 values
//! multiplied are the same either way.

use super::dot_ahead::DotPlan;
use super::dot_coop::{COOP_CHUNK, CoopTiles, Frag};
use super::{H, Lower};
use crate::LowerError;
use naga::{BinaryOperator as B, GlobalVariable, Handle, Statement};
use phobos_core::ir::{ExprId, ExprKind, Index};
use std::collections::HashMap;

/// The side of a cooperative tile.
const TILE: u32 = crate::plan::dots::TILE;
/// f16 elements in 16 bytes.
const ALIGN: u32 = 8;

/// The workgroup's test that the direct operands may be loaded straight,
/// and their fragments' sources (`None` for a staged operand).
type DirectFrags = (H, [Option<Frag>; 2]);

impl Lower<'_> {
    /// The products of K into this subgroup's tiles: `len` elements of K,
    /// the chunks staged in `staged` (A's, B's) where an operand is not
    /// loaded straight; where `settle`, a path that staged ends at a
    /// barrier, so that nothing reads the staging arrays after it.
    pub(super) fn coop_loop(
        &mut self,
        plan: &DotPlan,
        pre: &HashMap<ExprId, H>,
        tiles: &CoopTiles,
        staged: Option<[Handle<GlobalVariable>; 2]>,
        len: H,
        settle: bool,
    ) -> Result<(), LowerError> {
        let Some(staged) = staged else {
            // The plan knows every block loads straight (`always_direct`).
            let [Some(a), Some(b)] = self
                .direct_frags(plan, pre, len)?
                .map_or([None, None], |d| d.1)
            else {
                unreachable!("a product that always loads straight has two direct operands")
            };
            return self.direct_steps(tiles, [a, b], len);
        };
        let barrier = Statement::ControlBarrier(naga::Barrier::WORK_GROUP);
        let settle = |lw: &mut Self| {
            if settle {
                lw.cur.push(barrier.clone());
            }
        };
        let all_staged = [
            Frag::Staged {
                array: staged[0],
                stride: COOP_CHUNK,
            },
            Frag::Staged {
                array: staged[1],
                stride: plan.n,
            },
        ];
        let Some((ok, direct)) = self.direct_frags(plan, pre, len)? else {
            self.coop_chunks(plan, pre, tiles, all_staged, staged, len)?;
            settle(self);
            return Ok(());
        };
        let fast = self.nested(|lw| match direct {
            [Some(a), Some(b)] => lw.direct_steps(tiles, [a, b], len),
            _ => {
                let frags = [0, 1].map(|i| direct[i].unwrap_or(all_staged[i]));
                lw.coop_chunks(plan, pre, tiles, frags, staged, len)?;
                settle(lw);
                Ok(())
            }
        })?;
        // Where the plan proved the direct operands inside, there is no
        // test (`ok` is true) and no staged path.
        if plan.always_inside
            || (self.options.knobs.ablate_fallback && direct.iter().all(Option::is_some))
        {
            self.cur.push(Statement::Block(fast));
            return Ok(());
        }
        let slow = self.nested(|lw| {
            lw.coop_chunks(plan, pre, tiles, all_staged, staged, len)?;
            settle(lw);
            Ok(())
        })?;
        self.cur.push(Statement::If {
            condition: ok,
            accept: fast,
            reject: slow,
        });
        Ok(())
    }

    /// K in steps of 16 with both operands' fragments loaded straight from
    /// their tensors: no staging, no barrier.
    fn direct_steps(
        &mut self,
        tiles: &CoopTiles,
        frags: [Frag; 2],
        len: H,
    ) -> Result<(), LowerError> {
        let sixteen = self.u32c(TILE);
        let steps = self.binary(B::Divide, len, sixteen);
        self.count_loop(steps, |lw, c| {
            let k = lw.binary(B::Multiply, c, sixteen);
            lw.coop_step(tiles, frags, [k, k]);
            Ok(())
        })
    }

    /// K by chunks of [`COOP_CHUNK`]: the operands whose fragments come
    /// from `staged` arrays are staged, and after a barrier each step of 16
    /// inside K is added to the tiles.
    fn coop_chunks(
        &mut self,
        plan: &DotPlan,
        pre: &HashMap<ExprId, H>,
        tiles: &CoopTiles,
        frags: [Frag; 2],
        staged: [Handle<GlobalVariable>; 2],
        len: H,
    ) -> Result<(), LowerError> {
        let is_staged = frags.map(|f| matches!(f, Frag::Staged { .. }));
        let kc = self.u32c(COOP_CHUNK);
        let last = self.u32c(COOP_CHUNK - 1);
        let padded = self.binary(B::Add, len, last);
        let chunks = self.binary(B::Divide, padded, kc);
        let barrier = Statement::ControlBarrier(naga::Barrier::WORK_GROUP);
        self.count_loop(chunks, |lw, c| {
            let k0 = lw.binary(B::Multiply, c, kc);
            // The previous chunk's products (or a previous statement) are
            // done with the staging arrays.
            lw.cur.push(barrier.clone());
            lw.stage_chunk(plan, pre, staged, is_staged, k0, len)?;
            lw.cur.push(barrier.clone());
            for step in 0..COOP_CHUNK / TILE {
                let local = lw.u32c(step * TILE);
                let global = lw.binary(B::Add, k0, local);
                let k = is_staged.map(|s| if s { local } else { global });
                if is_staged == [true, true] {
                    // Staged K past the end is 0.
                    lw.coop_step(tiles, frags, k);
                } else {
                    // A direct operand has no K past the end (a multiple
                    // of 16) to read.
                    let inside = lw.binary(B::Less, global, len);
                    let body = lw.nested(|lw| {
                        lw.coop_step(tiles, frags, k);
                        Ok(())
                    })?;
                    lw.if_then(inside, body);
                }
            }
            Ok(())
        })
    }

    /// The fragments' sources of the operands the plan loads straight, and
    /// the workgroup's test that they may be (`None` where the plan loads
    /// none).
    fn direct_frags(
        &mut self,
        plan: &DotPlan,
        pre: &HashMap<ExprId, H>,
        len: H,
    ) -> Result<Option<DirectFrags>, LowerError> {
        if plan.direct == [None, None] {
            return Ok(None);
        }
        let zero = self.u32c(0);
        let one = self.u32c(1);
        let sixteen = self.u32c(TILE);
        let align = self.u32c(ALIGN);
        let rem = self.binary(B::Modulo, len, sixteen);
        let whole = self.binary(B::Equal, rem, zero);
        let some = self.binary(B::Greater, len, zero);
        let mut ok = self.binary(B::LogicalAnd, whole, some);
        let mut out = [None, None];
        for (slot, d) in plan.direct.iter().enumerate() {
            let Some(d) = d else { continue };
            let ExprKind::Load { place, ref index } = self.k.exprs[d.load].kind else {
                unreachable!("the plan's direct operands are loads")
            };
            let ranges: Vec<(usize, phobos_core::types::Dim)> = index
                .iter()
                .enumerate()
                .filter_map(|(axis, ix)| match ix {
                    Index::Range { len, .. } => Some((axis, *len)),
                    Index::Single(_) => None,
                })
                .collect();
            let mut cache = pre.clone();
            let (first_in, base) = self.locate(place, index, &[zero, zero], &mut cache)?;
            let ends: Vec<H> = ranges
                .iter()
                .filter(|_| !plan.always_inside)
                .map(|(_, l)| {
                    let e = self.extent(*l);
                    self.binary(B::Subtract, e, one)
                })
                .collect();
            // The rows of the slice: the extents after its first axis.
            let shape = self.place_shape(place);
            let mut stride = one;
            for dim in &shape[ranges[0].0 + 1..] {
                let e = self.extent(*dim);
                stride = self.binary(B::Multiply, stride, e);
            }
            // Where the plan proved every block inside, no test is emitted.
            if !plan.always_inside {
                let (last_in, _) = self.locate(place, index, &ends, &mut cache)?;
                let base_rem = self.binary(B::Modulo, base, align);
                let stride_rem = self.binary(B::Modulo, stride, align);
                let aligned = self.binary(B::InclusiveOr, base_rem, stride_rem);
                let aligned = self.binary(B::Equal, aligned, zero);
                for c in [first_in, last_in, aligned] {
                    ok = self.binary(B::LogicalAnd, ok, c);
                }
            }
            let phobos_core::ir::Place::Param(i) = place else {
                unreachable!("the plan's direct operands read tensors")
            };
            out[slot] = Some(Frag::Direct {
                tensor: self.tensors[i].expect("stores and loads name tensors"),
                base,
                stride,
                row_major: !d.transposed,
            });
        }
        Ok(Some((ok, out)))
    }
}
