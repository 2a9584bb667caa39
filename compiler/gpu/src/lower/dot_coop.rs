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
//! Subgroup `s` of `S` (`SubgroupId`, `NumSubgroups`) takes the result's
//! tiles `s, s + S, ...`: it loads the tile's f32 sums so far, adds the
//! chunk's products, and stores it back. Each tile's operations run in
//! control flow uniform over its subgroup, which is what Vulkan asks of
//! cooperative matrices; naga's stricter check (uniform over the
//! workgroup) is left out for such modules (`crate::validate`), and the
//! runtime loads them as SPIR-V.

use super::{H, Lower, dot_ahead::DotPlan};
use crate::LowerError;
use naga::{
    BinaryOperator as B, Binding, BuiltIn, CooperativeData, CooperativeRole, CooperativeSize,
    Expression, FunctionArgument, GlobalVariable, Handle, Literal, Statement, Type, TypeInner,
};
use phobos_core::types::Scalar;
use std::num::NonZeroU32;

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
        if self.precision != crate::Precision::Fast {
            return Some("exact mode");
        }
        if !self.cooperative {
            return Some("no cooperative matrices on this device");
        }
        if !plan.m.is_multiple_of(TILE) || !plan.n.is_multiple_of(TILE) {
            return Some("extents not multiples of 16");
        }
        (self.packed != 1).then_some("several blocks a workgroup")
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

    /// This invocation's subgroup and the workgroup's number of them, as
    /// entry-point arguments added on first use.
    fn subgroup_ids(&mut self) -> (H, H) {
        if let Some(ids) = self.subgroup_ids {
            return ids;
        }
        let mut arg = |name: &str, builtin| {
            let index = self.f.arguments.len() as u32;
            self.f.arguments.push(FunctionArgument {
                name: Some(name.into()),
                ty: self.u32_ty,
                binding: Some(Binding::BuiltIn(builtin)),
            });
            self.f
                .expressions
                .append(Expression::FunctionArgument(index), naga::Span::UNDEFINED)
        };
        let ids = (
            arg("subgroup_id", BuiltIn::SubgroupId),
            arg("num_subgroups", BuiltIn::NumSubgroups),
        );
        self.subgroup_ids = Some(ids);
        ids
    }

    /// One staged chunk's products added to `result` by cooperative
    /// matrices (module doc).
    pub(super) fn coop_chunk(
        &mut self,
        plan: &DotPlan,
        result: Handle<GlobalVariable>,
        [sa, sb]: [Handle<GlobalVariable>; 2],
    ) -> Result<(), LowerError> {
        let (sg, count) = self.subgroup_ids();
        let across = plan.n / TILE;
        let tiles = self.u32c((plan.m / TILE) * across);
        let counter = self.temp(Scalar::U32);
        self.var_store(counter, sg);
        let body = self.nested(|lw| {
            let t = lw.var_load(counter);
            let done = lw.binary(B::GreaterEqual, t, tiles);
            lw.if_then(done, naga::Block::from_vec(vec![Statement::Break]));
            let across_c = lw.u32c(across);
            let ti = lw.binary(B::Divide, t, across_c);
            let tj = lw.binary(B::Modulo, t, across_c);
            let tile = lw.u32c(TILE);
            let row0 = lw.binary(B::Multiply, ti, tile);
            let col0 = lw.binary(B::Multiply, tj, tile);
            let n = lw.u32c(plan.n);
            let kc = lw.u32c(COOP_CHUNK);
            let c_row = lw.binary(B::Multiply, row0, n);
            let c_at = lw.binary(B::Add, c_row, col0);
            let c_ptr = lw.array_ptr(result, c_at);
            let mut acc = lw.coop_load(CooperativeRole::C, c_ptr, n);
            let a_row = lw.binary(B::Multiply, row0, kc);
            for step in 0..COOP_CHUNK / TILE {
                let k = lw.u32c(step * TILE);
                let a_at = lw.binary(B::Add, a_row, k);
                let a_ptr = lw.array_ptr(sa, a_at);
                let a = lw.coop_load(CooperativeRole::A, a_ptr, kc);
                let k_row = lw.u32c(step * TILE * plan.n);
                let b_at = lw.binary(B::Add, k_row, col0);
                let b_ptr = lw.array_ptr(sb, b_at);
                let b = lw.coop_load(CooperativeRole::B, b_ptr, n);
                acc = lw.expr(Expression::CooperativeMultiplyAdd { a, b, c: acc });
            }
            let c_ptr = lw.array_ptr(result, c_at);
            lw.cur.push(Statement::CooperativeStore {
                target: acc,
                data: CooperativeData {
                    pointer: c_ptr,
                    stride: n,
                    row_major: true,
                },
            });
            Ok(())
        })?;
        let continuing = self.nested(|lw| {
            let t = lw.var_load(counter);
            let next = lw.binary(B::Add, t, count);
            lw.var_store(counter, next);
            Ok(())
        })?;
        self.push_loop(body, continuing);
        Ok(())
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
