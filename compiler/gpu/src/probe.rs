//! The subgroup-layout probe: a module a runtime dispatches once per
//! device to learn whether its subgroups are laid out as reductions want
//! them (`GpuOptions::subgroup_width` lanes, in invocation order), so that
//! kernels can be built without the check every reduction kernel
//! otherwise makes at its top (`GpuOptions::subgroup_layout_known`).
//!
//! The conditions are those of the kernels' check
//! (`Lower::subgroup_in_order`, which builds them through the emitter's
//! helpers; here they are raw naga, so a change to one is a change to
//! both): the lane is the invocation index modulo the width, the subgroup
//! is that wide, and every lane of it has the same index divided by the
//! width. The probe writes, for each invocation, 1 where they fail and 0
//! where they hold, into the `array<u32>` at binding 0 of group 0.

use naga::{
    AddressSpace, Binding, BuiltIn, CollectiveOperation, EntryPoint, Expression, Function,
    FunctionArgument, GatherMode, GlobalVariable, Literal, Module, ResourceBinding, Scalar,
    ShaderStage, Span, Statement, StorageAccess, SubgroupOperation, Type, TypeInner,
};

/// The probe at `workgroup_size` invocations for subgroups of `lanes` (a
/// power of two) lanes; its entry point is [`crate::ENTRY_POINT`].
pub fn subgroup_probe(workgroup_size: u32, lanes: u32) -> Module {
    let mut m = Module::default();
    let u32_ty = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Scalar(Scalar::U32),
        },
        Span::UNDEFINED,
    );
    let bool_ty = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Scalar(Scalar::BOOL),
        },
        Span::UNDEFINED,
    );
    let array = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Array {
                base: u32_ty,
                size: naga::ArraySize::Dynamic,
                stride: 4,
            },
        },
        Span::UNDEFINED,
    );
    let out = m.global_variables.append(
        GlobalVariable {
            name: Some("bad".into()),
            space: AddressSpace::Storage {
                access: StorageAccess::LOAD | StorageAccess::STORE,
            },
            binding: Some(ResourceBinding {
                group: 0,
                binding: 0,
            }),
            ty: array,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    );
    let arg = |name: &str, builtin| FunctionArgument {
        name: Some(name.into()),
        ty: u32_ty,
        binding: Some(Binding::BuiltIn(builtin)),
    };
    let mut f = Function {
        name: Some(crate::ENTRY_POINT.into()),
        arguments: vec![
            arg("local_index", BuiltIn::LocalInvocationIndex),
            arg("subgroup_size", BuiltIn::SubgroupSize),
            arg("subgroup_lane", BuiltIn::SubgroupInvocationId),
        ],
        ..Default::default()
    };
    let mut body = Vec::new();
    let e = &mut f.expressions;
    let index = e.append(Expression::FunctionArgument(0), Span::UNDEFINED);
    let size = e.append(Expression::FunctionArgument(1), Span::UNDEFINED);
    let lane = e.append(Expression::FunctionArgument(2), Span::UNDEFINED);
    let lit = |e: &mut naga::Arena<Expression>, v: u32| {
        e.append(Expression::Literal(Literal::U32(v)), Span::UNDEFINED)
    };
    let low = lit(e, lanes - 1);
    let shift = lit(e, lanes.trailing_zeros());
    let width = lit(e, lanes);
    let (zero, one) = (lit(e, 0), lit(e, 1));
    let g = e.append(Expression::GlobalVariable(out), Span::UNDEFINED);
    let binary = |e: &mut naga::Arena<Expression>, op, left, right| {
        e.append(Expression::Binary { op, left, right }, Span::UNDEFINED)
    };
    use naga::BinaryOperator as B;
    let first = e.len();
    let own = binary(e, B::And, index, low);
    let same_lane = binary(e, B::Equal, lane, own);
    let row = binary(e, B::ShiftRight, index, shift);
    body.push(Statement::Emit(e.range_from(first)));
    let leader = e.append(
        Expression::SubgroupOperationResult { ty: u32_ty },
        Span::UNDEFINED,
    );
    body.push(Statement::SubgroupGather {
        mode: GatherMode::BroadcastFirst,
        argument: row,
        result: leader,
    });
    let first = e.len();
    let same_row = binary(e, B::Equal, row, leader);
    let wide = binary(e, B::Equal, size, width);
    let ok = binary(e, B::LogicalAnd, same_lane, same_row);
    let ok = binary(e, B::LogicalAnd, ok, wide);
    body.push(Statement::Emit(e.range_from(first)));
    let all = e.append(
        Expression::SubgroupOperationResult { ty: bool_ty },
        Span::UNDEFINED,
    );
    body.push(Statement::SubgroupCollectiveOperation {
        op: SubgroupOperation::All,
        collective_op: CollectiveOperation::Reduce,
        argument: ok,
        result: all,
    });
    let first = e.len();
    let value = e.append(
        Expression::Select {
            condition: all,
            accept: zero,
            reject: one,
        },
        Span::UNDEFINED,
    );
    let pointer = e.append(Expression::Access { base: g, index }, Span::UNDEFINED);
    body.push(Statement::Emit(e.range_from(first)));
    body.push(Statement::Store { pointer, value });
    f.body = naga::Block::from_vec(body);
    m.entry_points.push(EntryPoint {
        name: crate::ENTRY_POINT.into(),
        stage: ShaderStage::Compute,
        early_depth_test: None,
        workgroup_size: [workgroup_size, 1, 1],
        workgroup_size_overrides: None,
        function: f,
        mesh_info: None,
        task_payload: None,
        incoming_ray_payload: None,
    });
    m
}
