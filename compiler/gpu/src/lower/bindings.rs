//! The resources of the entry point: the uniform struct of scalar
//! parameters, dims and grid (binding 0), one storage buffer per tensor
//! (bindings 1..), and the homes of `let`/`var` locals.

use super::{LocalHome, nscalar, unsupported};
use crate::LowerError;
use naga::{
    AddressSpace, ArraySize, Function, GlobalVariable, Handle, LocalVariable, Module,
    ResourceBinding, Span, StorageAccess, StructMember, Type, TypeInner,
};
use phobos_core::ir::{Kernel, ParamKind};
use phobos_core::types::{Dim, Scalar};
use std::collections::HashMap;
use std::num::NonZeroU32;

/// The uniform struct's variable and where its members are.
pub(super) struct Uniforms {
    pub var: Handle<GlobalVariable>,
    /// The member of each scalar parameter (by parameter index).
    pub scalar_member: Vec<Option<u32>>,
    pub dim_base: u32,
    pub grid_base: u32,
}

pub(super) fn uniforms(
    kernel: &Kernel,
    m: &mut Module,
    types: &HashMap<Scalar, Handle<Type>>,
) -> Result<Uniforms, LowerError> {
    let u32_ty = types[&Scalar::U32];
    // The uniform struct: scalar parameters (bool as u32: uniform buffers
    // cannot hold bool), then dims, then the grid; all 4 bytes wide.
    let mut members = Vec::new();
    let mut scalar_member = vec![None; kernel.params.len()];
    for (i, p) in kernel.params.iter().enumerate() {
        if let ParamKind::Scalar(s) = p.kind {
            nscalar(s)?;
            let ty = if s == Scalar::Bool { u32_ty } else { types[&s] };
            scalar_member[i] = Some(members.len() as u32);
            members.push((p.name.clone(), ty));
        }
    }
    let dim_base = members.len() as u32;
    for d in &kernel.dims {
        members.push((format!("dim_{d}"), u32_ty));
    }
    let grid_base = members.len() as u32;
    for a in ["x", "y", "z"] {
        members.push((format!("grid_{a}"), u32_ty));
    }
    let n = members.len() as u32;
    let params_ty = m.types.insert(
        Type {
            name: Some("Params".into()),
            inner: TypeInner::Struct {
                members: members
                    .into_iter()
                    .enumerate()
                    .map(|(i, (name, ty))| StructMember {
                        name: Some(name),
                        ty,
                        binding: None,
                        offset: 4 * i as u32,
                    })
                    .collect(),
                // Uniform buffers want a size that is a multiple of 16.
                span: (4 * n).div_ceil(16) * 16,
            },
        },
        Span::UNDEFINED,
    );
    let params_var = m.global_variables.append(
        GlobalVariable {
            name: Some("params".into()),
            space: AddressSpace::Uniform,
            binding: Some(ResourceBinding {
                group: 0,
                binding: 0,
            }),
            ty: params_ty,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    );
    Ok(Uniforms {
        var: params_var,
        scalar_member,
        dim_base,
        grid_base,
    })
}

/// One storage buffer per tensor parameter, in parameter order.
pub(super) fn tensors(
    kernel: &Kernel,
    m: &mut Module,
    types: &HashMap<Scalar, Handle<Type>>,
) -> Result<Vec<Option<Handle<GlobalVariable>>>, LowerError> {
    let mut tensors = vec![None; kernel.params.len()];
    let mut binding = 1;
    for (i, p) in kernel.params.iter().enumerate() {
        if let ParamKind::Tensor { elem, written, .. } = p.kind {
            if elem == Scalar::Bool {
                return Err(unsupported(format!(
                    "bool tensor `{}` (one byte per element; WGSL storage has no 8-bit type)",
                    p.name
                )));
            }
            nscalar(elem)?;
            let base = types[&elem];
            let arr = m.types.insert(
                Type {
                    name: None,
                    inner: TypeInner::Array {
                        base,
                        size: ArraySize::Dynamic,
                        stride: elem.size() as u32,
                    },
                },
                Span::UNDEFINED,
            );
            let access = if written {
                StorageAccess::LOAD | StorageAccess::STORE
            } else {
                StorageAccess::LOAD
            };
            tensors[i] = Some(m.global_variables.append(
                GlobalVariable {
                    name: Some(p.name.clone()),
                    space: AddressSpace::Storage { access },
                    binding: Some(ResourceBinding { group: 0, binding }),
                    ty: arr,
                    init: None,
                    memory_decorations: Default::default(),
                },
                Span::UNDEFINED,
            ));
            binding += 1;
        }
    }
    Ok(tensors)
}

/// Scalars private, constant tiles in workgroup memory.
pub(super) fn locals(
    kernel: &Kernel,
    m: &mut Module,
    f: &mut Function,
    types: &HashMap<Scalar, Handle<Type>>,
) -> Result<Vec<LocalHome>, LowerError> {
    let mut locals = Vec::new();
    for (l, local) in kernel.locals.iter().enumerate() {
        nscalar(local.elem)?;
        let ty = types[&local.elem];
        if local.shape.is_empty() {
            let v = f.local_variables.append(
                LocalVariable {
                    name: Some(local.name.clone()),
                    ty,
                    init: None,
                },
                Span::UNDEFINED,
            );
            locals.push(LocalHome::Private(v));
            continue;
        }
        let mut count: u64 = 1;
        for d in &local.shape {
            match d {
                Dim::Const(v) => count = count.saturating_mul(*v),
                Dim::Sym(s) => {
                    return Err(unsupported(format!(
                        "`{}` {}: a let/var tile whose extent depends on dim {} (workgroup memory needs a constant size)",
                        local.name,
                        kernel.shape_text(&local.shape),
                        kernel.dims[*s]
                    )));
                }
            }
        }
        let size = u32::try_from(count)
            .ok()
            .and_then(NonZeroU32::new)
            .ok_or_else(|| {
                unsupported(format!(
                    "`{}`: a tile of {count} elements in workgroup memory",
                    local.name
                ))
            })?;
        let arr = m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Array {
                    base: ty,
                    size: ArraySize::Constant(size),
                    stride: local.elem.size() as u32,
                },
            },
            Span::UNDEFINED,
        );
        let g = m.global_variables.append(
            GlobalVariable {
                name: Some(format!("{}_{l}", local.name)),
                space: AddressSpace::WorkGroup,
                binding: None,
                ty: arr,
                init: None,
                memory_decorations: Default::default(),
            },
            Span::UNDEFINED,
        );
        locals.push(LocalHome::Workgroup(g));
    }
    Ok(locals)
}
