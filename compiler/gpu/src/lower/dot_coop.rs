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
    BinaryOperator as B, Binding, BuiltIn, CooperativeData, CooperativeRole, CooperativeSize,
    Expression, FunctionArgument, GlobalVariable, Handle, Literal, Statement, Type, TypeInner,
};
use std::num::NonZeroU32;

/// One 16 x 16 tile of the result a subgroup keeps: whether it exists
/// (the last subgroups may have one fewer), its first row and column, its
/// first element's index, and its accumulator.
pub(super) struct CoopTile {
    inside: H,
    row0: H,
    col0: H,
    at: H,
    acc: H,
}

/// A subgroup's tiles of a product.
pub(super) struct CoopTiles {
    tiles: Vec<CoopTile>,
}

/// The K elements staged at a time for cooperative matrices.
pub(super) const COOP_CHUNK: u32 = 32;
/// The side of a cooperative tile.
const TILE: u32 = 16;

impl Lower<'_> {
    /// Whether product `plan` takes cooperative matrices here.
    pub(super) fn coop_dot_ok(&self, plan: &DotPlan) -> bool {
        self.why_not_coop(plan).is_none()
    }

    /// Why product `plan` does not take cooperative matrices, for the
    /// provenance (`None` where it does).
    pub(super) fn why_not_coop(&self, plan: &DotPlan) -> Option<&'static str> {
        if self.options.precision != crate::Precision::Fast {
            return Some("exact mode");
        }
        if !self.options.cooperative {
            return Some("no cooperative matrices on this device");
        }
        if !plan.m.is_multiple_of(TILE) || !plan.n.is_multiple_of(TILE) {
            return Some("extents not multiples of 16");
        }
        let width = self.options.subgroup_width;
        if width < 2 || !self.block_invocations.is_multiple_of(width) {
            return Some("subgroups of varying width");
        }
        (self.plan.packed != 1).then_some("several blocks a workgroup")
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
    fn subgroup_id(&mut self) -> H {
        if let Some(id) = self.subgroup_id {
            return id;
        }
        let index = self.f.arguments.len() as u32;
        self.f.arguments.push(FunctionArgument {
            name: Some("subgroup_id".into()),
            ty: self.u32_ty,
            binding: Some(Binding::BuiltIn(BuiltIn::SubgroupId)),
        });
        let id = self
            .f
            .expressions
            .append(Expression::FunctionArgument(index), naga::Span::UNDEFINED);
        self.subgroup_id = Some(id);
        id
    }

    /// This subgroup's tiles of the result, loaded into accumulators
    /// (after the barrier that follows the result's first values).
    pub(super) fn coop_begin(
        &mut self,
        plan: &DotPlan,
        result: Handle<GlobalVariable>,
    ) -> CoopTiles {
        let sg = self.subgroup_id();
        let subgroups = self.block_invocations / self.options.subgroup_width;
        let across = plan.n / TILE;
        let count = (plan.m / TILE) * across;
        let mine = count.div_ceil(subgroups);
        let c_ty = self.coop_type(naga::Scalar::F32, CooperativeRole::C);
        let count_c = self.u32c(count);
        let across_c = self.u32c(across);
        let n = self.u32c(plan.n);
        let tile = self.u32c(TILE);
        let mut tiles = Vec::new();
        for i in 0..mine {
            let off = self.u32c(i * subgroups);
            let t = self.binary(B::Add, sg, off);
            let inside = self.binary(B::Less, t, count_c);
            let ti = self.binary(B::Divide, t, across_c);
            let tj = self.binary(B::Modulo, t, across_c);
            let row0 = self.binary(B::Multiply, ti, tile);
            let col0 = self.binary(B::Multiply, tj, tile);
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
            let load = self.nested(|lw| {
                let ptr = lw.array_ptr(result, at);
                let v = lw.coop_load(CooperativeRole::C, ptr, n);
                lw.var_store(acc, v);
                Ok(())
            });
            let load = load.expect("no operand is computed here");
            self.if_then(inside, load);
            tiles.push(CoopTile {
                inside,
                row0,
                col0,
                at,
                acc,
            });
        }
        CoopTiles { tiles }
    }

    /// One staged chunk's products added to this subgroup's tiles.
    pub(super) fn coop_chunk(
        &mut self,
        plan: &DotPlan,
        tiles: &CoopTiles,
        [sa, sb]: [Handle<GlobalVariable>; 2],
    ) {
        let n = self.u32c(plan.n);
        let kc = self.u32c(COOP_CHUNK);
        for t in &tiles.tiles {
            let body = self.nested(|lw| {
                let a_row = lw.binary(B::Multiply, t.row0, kc);
                let mut acc = lw.var_load(t.acc);
                for step in 0..COOP_CHUNK / TILE {
                    let k = lw.u32c(step * TILE);
                    let a_at = lw.binary(B::Add, a_row, k);
                    let a_ptr = lw.array_ptr(sa, a_at);
                    let a = lw.coop_load(CooperativeRole::A, a_ptr, kc);
                    let k_row = lw.u32c(step * TILE * plan.n);
                    let b_at = lw.binary(B::Add, k_row, t.col0);
                    let b_ptr = lw.array_ptr(sb, b_at);
                    let b = lw.coop_load(CooperativeRole::B, b_ptr, n);
                    acc = lw.expr(Expression::CooperativeMultiplyAdd { a, b, c: acc });
                }
                lw.var_store(t.acc, acc);
                Ok(())
            });
            let body = body.expect("no operand is computed here");
            self.if_then(t.inside, body);
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
            let store = self.nested(|lw| {
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
                Ok(())
            });
            let store = store.expect("no operand is computed here");
            self.if_then(t.inside, store);
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

    /// A 16 x 16 tile of `role` from row-major memory at `pointer`, rows
    /// `stride` elements apart.
    fn coop_load(&mut self, role: CooperativeRole, pointer: H, stride: H) -> H {
        self.expr(Expression::CooperativeLoad {
            columns: CooperativeSize::Sixteen,
            rows: CooperativeSize::Sixteen,
            role,
            data: CooperativeData {
                pointer,
                stride,
                row_major: true,
            },
        })
    }
}
