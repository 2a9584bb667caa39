//! Fast mode's `dot` on tensor cores: a product computed ahead
//! (`dot_ahead.rs`) whose extents are multiples of 16, on a device with
//! cooperative matrices (`GpuOptions::cooperative`), takes each staged K
//! chunk as 16 x 16 f16 tiles and multiplies them with
//! `CooperativeMultiplyAdd` into 16 x 16 f32 tiles of the result.
//!
//! The operands are rounded to f16 when staged (a load of an f16 tensor is
//! exact; an f32 operand such as attention's probabilities loses bits, as
//! in FlashAttention), the products are summed in an order the hardware
//! picks, and K past the end is staged as 0. Exact mode never comes here.
//!
//! Subgroup `s` of the block's `S` (`SubgroupId`; `S` is the invocations
//! over `GpuOptions::subgroup_width`) keeps the result's tiles `s, s + S,
//! ...` in accumulators for the whole of K: loaded from the result array
//! once its elements hold the accumulator argument (or 0), the chunks'
//! products added, and stored back after the last. Each tile's operations run in
//! control flow uniform over its subgroup, which is what Vulkan asks of
//! cooperative matrices; naga's stricter check (uniform over the
//! workgroup) is left out for such modules (`crate::validate`), and the
//! runtime loads them as SPIR-V.

use super::{H, Lower, dot_ahead::DotPlan};
use naga::{
    BinaryOperator as B, BuiltIn, CooperativeData, CooperativeRole, CooperativeSize, Expression,
    GlobalVariable, Handle, Literal, Statement, Type, TypeInner,
};
use std::num::NonZeroU32;

/// One 16 x 16 tile of the result a subgroup keeps: where it may not
/// exist, whether it does (the last subgroups may have one fewer), its
/// first row and column, its first element's index, and its accumulator.
pub(super) struct CoopTile {
    pub inside: Option<H>,
    pub row0: H,
    pub col0: H,
    at: H,
    pub acc: H,
}

/// A subgroup's tiles of a product: a block of `[rows, cols]` tiles, in
/// rows, where the plan gave one (`plan::dots`), else tiles `s, s + S, ...`.
pub(super) struct CoopTiles {
    pub tiles: Vec<CoopTile>,
    block: Option<[u32; 2]>,
}

/// Where a step's fragments of an operand come from.
#[derive(Clone, Copy)]
pub(super) enum Frag {
    /// A staging array of the chunk, rows `stride` elements apart.
    Staged {
        array: Handle<GlobalVariable>,
        stride: u32,
    },
    /// The operand's tensor (`plan::dots::Direct`): element `(i, j)` of the
    /// operand at `base + i * stride + j`, or `base + i + j * stride` where
    /// not `row_major`.
    Direct {
        tensor: Handle<GlobalVariable>,
        base: H,
        stride: H,
        row_major: bool,
    },
}

/// The K elements staged at a time for cooperative matrices.
pub(crate) const COOP_CHUNK: u32 = 32;
/// The side of a cooperative tile.
const TILE: u32 = crate::plan::dots::TILE;

impl Lower<'_> {
    /// Why product `plan` does not take cooperative matrices, for the
    /// provenance (`None` where it does): the plan's reason.
    pub(super) fn why_not_coop(&self, plan: &DotPlan) -> Option<&'static str> {
        self.plan
            .products
            .iter()
            .find(|p| p.expr == plan.id)
            .and_then(|p| p.not_coop)
    }

    /// How product `plan` is computed on cooperative matrices, for the
    /// notes `--explain` prints.
    pub(super) fn coop_note(&self, plan: &DotPlan) -> String {
        let mut s = "operands rounded to f16 and multiplied by cooperative matrices (tensor \
                     cores), 16 x 16 tiles by subgroups"
            .to_string();
        if let Some([r, c]) = plan.block {
            s += &format!(", a block of {r} x {c} tiles a subgroup");
        }
        let direct: Vec<String> = plan
            .direct
            .iter()
            .flatten()
            .map(|d| format!("`{}`", self.k.params[d.param].name))
            .collect();
        if !direct.is_empty() && plan.always_inside {
            s += &format!(
                "; {} loaded straight from the tensor (every block's slice lies inside it with \
                 rows 16-byte aligned: no staging)",
                direct.join(" and ")
            );
        } else if !direct.is_empty() {
            s += &format!(
                "; {} loaded straight from the tensor where the block's slice lies inside it \
                 with rows 16-byte aligned (else staged)",
                direct.join(" and ")
            );
        }
        s
    }

    /// A new workgroup array of `count` f16 values.
    pub(super) fn workgroup_f16(&mut self, name: &str, count: u32) -> Handle<GlobalVariable> {
        let f16 = self.f16_type();
        let count = NonZeroU32::new(count.max(1)).expect("positive");
        super::bindings::workgroup_var(&mut self.m, name.into(), (f16, 2), count)
    }

    fn f16_type(&mut self) -> Handle<Type> {
        self.m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Scalar(naga::Scalar::F16),
            },
            naga::Span::UNDEFINED,
        )
    }

    /// The f16 constant 0.
    pub(super) fn f16_zero(&mut self) -> H {
        self.expr(Expression::Literal(Literal::F16(half::f16::ZERO)))
    }

    /// This invocation's subgroup in its workgroup, as an entry-point
    /// argument added on first use.
    pub(super) fn subgroup_id(&mut self) -> H {
        if let Some(id) = self.subgroup_id {
            return id;
        }
        let id = self.builtin_argument(BuiltIn::SubgroupId, "subgroup_id");
        self.subgroup_id = Some(id);
        id
    }

    /// This subgroup's tiles of the result, their accumulators loaded from
    /// `result` (after the barrier that follows the result's first values),
    /// or 0 where there is none (`dot_tiles.rs`).
    pub(super) fn coop_begin(
        &mut self,
        plan: &DotPlan,
        result: Option<Handle<GlobalVariable>>,
    ) -> CoopTiles {
        let sg = self.subgroup_id();
        let subgroups = self.block_invocations / self.options.subgroup_width;
        let across = plan.n / TILE;
        let count = (plan.m / TILE) * across;
        let n = self.u32c(plan.n);
        let tile = self.u32c(TILE);
        // Each tile's first row and column, and whether it exists.
        let mut corners: Vec<(Option<H>, H, H)> = Vec::new();
        match plan.block {
            Some([rows, cols]) => {
                // Subgroup `s` keeps the block at `(s / w, s % w)` of the
                // `w` blocks a row.
                let wide = self.u32c(across / cols);
                let bi = self.binary(B::Divide, sg, wide);
                let bj = self.binary(B::Modulo, sg, wide);
                let rows_c = self.u32c(rows * TILE);
                let cols_c = self.u32c(cols * TILE);
                let r0 = self.binary(B::Multiply, bi, rows_c);
                let c0 = self.binary(B::Multiply, bj, cols_c);
                for r in 0..rows {
                    for c in 0..cols {
                        let dr = self.u32c(r * TILE);
                        let dc = self.u32c(c * TILE);
                        let row0 = self.binary(B::Add, r0, dr);
                        let col0 = self.binary(B::Add, c0, dc);
                        corners.push((None, row0, col0));
                    }
                }
            }
            None => {
                let count_c = self.u32c(count);
                let across_c = self.u32c(across);
                for i in 0..count.div_ceil(subgroups) {
                    let off = self.u32c(i * subgroups);
                    let t = self.binary(B::Add, sg, off);
                    let inside = self.binary(B::Less, t, count_c);
                    let ti = self.binary(B::Divide, t, across_c);
                    let tj = self.binary(B::Modulo, t, across_c);
                    let row0 = self.binary(B::Multiply, ti, tile);
                    let col0 = self.binary(B::Multiply, tj, tile);
                    corners.push((Some(inside), row0, col0));
                }
            }
        }
        let c_ty = self.coop_type(naga::Scalar::F32, CooperativeRole::C);
        let mut tiles = Vec::new();
        for (i, (inside, row0, col0)) in corners.into_iter().enumerate() {
            let c_row = self.binary(B::Multiply, row0, n);
            let at = self.binary(B::Add, c_row, col0);
            let var = self.f.local_variables.append(
                naga::LocalVariable {
                    name: Some(format!("tile_acc{i}")),
                    ty: c_ty,
                    init: None,
                },
                naga::Span::UNDEFINED,
            );
            let acc = self.expr(Expression::LocalVariable(var));
            self.where_inside(inside, |lw| {
                let v = match result {
                    Some(result) => {
                        let ptr = lw.array_ptr(result, at);
                        lw.coop_load(CooperativeRole::C, ptr, n, true)
                    }
                    None => lw.expr(Expression::ZeroValue(c_ty)),
                };
                lw.var_store(acc, v);
            });
            tiles.push(CoopTile {
                inside,
                row0,
                col0,
                at,
                acc,
            });
        }
        CoopTiles {
            tiles,
            block: plan.block,
        }
    }

    /// `build` where `inside` holds (always where it is `None`).
    fn where_inside(&mut self, inside: Option<H>, build: impl FnOnce(&mut Self)) {
        match inside {
            None => build(self),
            Some(c) => {
                let body = self.nested(|lw| {
                    build(lw);
                    Ok(())
                });
                let body = body.expect("no operand is computed here");
                self.if_then(c, body);
            }
        }
    }

    /// One step of 16 along K added to this subgroup's tiles: the A
    /// fragment at `(row0, ka)` of `a`, the B fragment at `(kb, col0)` of
    /// `b`, each loaded once for every tile of its row or column of the
    /// subgroup's block.
    pub(super) fn coop_step(&mut self, tiles: &CoopTiles, [a, b]: [Frag; 2], [ka, kb]: [H; 2]) {
        match tiles.block {
            Some([rows, cols]) => {
                let (rows, cols) = (rows as usize, cols as usize);
                let fa: Vec<H> = (0..rows)
                    .map(|r| self.fragment(a, CooperativeRole::A, tiles.tiles[r * cols].row0, ka))
                    .collect();
                let fb: Vec<H> = (0..cols)
                    .map(|c| self.fragment(b, CooperativeRole::B, kb, tiles.tiles[c].col0))
                    .collect();
                for (i, t) in tiles.tiles.iter().enumerate() {
                    self.multiply_add(t.acc, fa[i / cols], fb[i % cols]);
                }
            }
            None => {
                for t in &tiles.tiles {
                    self.where_inside(t.inside, |lw| {
                        let fa = lw.fragment(a, CooperativeRole::A, t.row0, ka);
                        let fb = lw.fragment(b, CooperativeRole::B, kb, t.col0);
                        lw.multiply_add(t.acc, fa, fb);
                    });
                }
            }
        }
    }

    /// `acc = a * b + acc`.
    fn multiply_add(&mut self, acc: H, a: H, b: H) {
        let c = self.var_load(acc);
        let v = self.expr(Expression::CooperativeMultiplyAdd { a, b, c });
        self.var_store(acc, v);
    }

    /// The 16 x 16 fragment of `role` whose first element is the
    /// operand's `(i, j)`.
    fn fragment(&mut self, from: Frag, role: CooperativeRole, i: H, j: H) -> H {
        match from {
            Frag::Staged { array, stride } => {
                let s = self.u32c(stride);
                let row = self.binary(B::Multiply, i, s);
                let at = self.binary(B::Add, row, j);
                let ptr = self.array_ptr(array, at);
                self.coop_load(role, ptr, s, true)
            }
            Frag::Direct {
                tensor,
                base,
                stride,
                row_major,
            } => {
                let (major, minor) = if row_major { (i, j) } else { (j, i) };
                let row = self.binary(B::Multiply, major, stride);
                let at = self.binary(B::Add, row, minor);
                let at = self.binary(B::Add, base, at);
                let ptr = self.array_ptr(tensor, at);
                self.coop_load(role, ptr, stride, row_major)
            }
        }
    }

    /// This subgroup's tiles stored into the result.
    pub(super) fn coop_end(
        &mut self,
        plan: &DotPlan,
        tiles: &CoopTiles,
        result: Handle<GlobalVariable>,
    ) {
        let n = self.u32c(plan.n);
        for t in &tiles.tiles {
            self.where_inside(t.inside, |lw| {
                let acc = lw.var_load(t.acc);
                let ptr = lw.array_ptr(result, t.at);
                lw.cur.push(Statement::CooperativeStore {
                    target: acc,
                    data: CooperativeData {
                        pointer: ptr,
                        stride: n,
                        row_major: true,
                    },
                });
            });
        }
    }

    fn coop_type(&mut self, scalar: naga::Scalar, role: CooperativeRole) -> Handle<Type> {
        self.m.types.insert(
            Type {
                name: None,
                inner: TypeInner::CooperativeMatrix {
                    columns: CooperativeSize::Sixteen,
                    rows: CooperativeSize::Sixteen,
                    scalar,
                    role,
                },
            },
            naga::Span::UNDEFINED,
        )
    }

    /// A 16 x 16 tile of `role` from memory at `pointer`, rows (columns
    /// where not `row_major`) `stride` elements apart.
    fn coop_load(&mut self, role: CooperativeRole, pointer: H, stride: H, row_major: bool) -> H {
        self.expr(Expression::CooperativeLoad {
            columns: CooperativeSize::Sixteen,
            rows: CooperativeSize::Sixteen,
            role,
            data: CooperativeData {
                pointer,
                stride,
                row_major,
            },
        })
    }
}
