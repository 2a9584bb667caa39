//! The subgroup-layout probe: a module a runtime dispatches once per
//! device to learn whether its subgroups are laid out as reductions want
//! them (`GpuOptions::subgroup_width` lanes, in invocation order), so that
//! kernels can be built without the check every reduction kernel
//! otherwise makes at its top (`GpuOptions::subgroup_layout_known`).
//!
//! The conditions are those of the kernels' check, written once in
//! `crate::subgroup` and built here through the Tandem modules' function
//! builder. The probe writes, for each invocation, 1 where they fail and 0
//! where they hold, into the `array<u32>` at binding 0 of group 0.

use crate::subgroup;
use crate::tandem::builder::{Fb, Tys};
use naga::{
    AddressSpace, Binding, BuiltIn, EntryPoint, Expression, FunctionArgument, GlobalVariable,
    Module, ResourceBinding, Scalar, ShaderStage, Span, StorageAccess, Type, TypeInner, VectorSize,
};

/// The probe at `workgroup_size` invocations for subgroups of `lanes` (a
/// power of two) lanes; its entry point is [`crate::ENTRY_POINT`].
pub fn subgroup_probe(workgroup_size: u32, lanes: u32) -> Module {
    let mut m = Module::default();
    let mut ty = |inner| m.types.insert(Type { name: None, inner }, Span::UNDEFINED);
    let u32_ty = ty(TypeInner::Scalar(Scalar::U32));
    let tys = Tys {
        u32: u32_ty,
        vec2: ty(TypeInner::Vector {
            size: VectorSize::Bi,
            scalar: Scalar::U32,
        }),
        vec4: ty(TypeInner::Vector {
            size: VectorSize::Quad,
            scalar: Scalar::U32,
        }),
        boolean: ty(TypeInner::Scalar(Scalar::BOOL)),
        int64: false,
        f64: None,
    };
    let array = ty(TypeInner::Array {
        base: u32_ty,
        size: naga::ArraySize::Dynamic,
        stride: 4,
    });
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
    let mut b = Fb::new(tys, false);
    b.f.name = Some(crate::ENTRY_POINT.into());
    b.f.arguments.push(FunctionArgument {
        name: Some("local_index".into()),
        ty: u32_ty,
        binding: Some(Binding::BuiltIn(BuiltIn::LocalInvocationIndex)),
    });
    let index = b.expr(Expression::FunctionArgument(0));
    let ok = subgroup::in_order(&mut b, index, lanes);
    let (zero, one) = (b.c(0), b.c(1));
    let value = b.select(ok, zero, one);
    let g = b.expr(Expression::GlobalVariable(out));
    let pointer = b.expr(Expression::Access { base: g, index });
    b.store(pointer, value);
    m.entry_points.push(EntryPoint {
        name: crate::ENTRY_POINT.into(),
        stage: ShaderStage::Compute,
        early_depth_test: None,
        workgroup_size: [workgroup_size, 1, 1],
        workgroup_size_overrides: None,
        function: b.finish(),
        mesh_info: None,
        task_payload: None,
        incoming_ray_payload: None,
    });
    m
}
