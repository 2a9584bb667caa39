//! The resources of the entry point: the uniform struct of scalar
//! parameters, dims and grid (binding 0), one storage buffer per tensor
//! (bindings 1..), and the homes of `let`/`var` locals.

use super::{LocalHome, nscalar, unsupported};
use crate::LowerError;
use crate::layout::{FieldKind, Layout, UNIFORM_BINDING};
use naga::{
    AddressSpace, ArraySize, Function, GlobalVariable, Handle, LocalVariable, Module,
    ResourceBinding, Span, StorageAccess, StructMember, Type, TypeInner,
};
use phobos_core::ir::analysis;
use phobos_core::ir::{IdVec, Kernel, LocalId, ParamKind, Place, Stmt};
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
    /// The members of host-derived Tandem keys: (seed, word, member).
    pub keys: Vec<((usize, crate::layout::SeedOf), u8, u32)>,
}

pub(super) fn uniforms(
    layout: &Layout,
    kernel: &Kernel,
    m: &mut Module,
    types: &HashMap<Scalar, Handle<Type>>,
) -> Uniforms {
    let u32_ty = types[&Scalar::U32];
    let mut scalar_member = vec![None; kernel.params.len()];
    let (mut dim_base, mut grid_base) = (None, None);
    let mut keys = Vec::new();
    let mut members = Vec::new();
    for (i, field) in layout.uniform_fields.iter().enumerate() {
        let i = i as u32;
        let ty = match field.kind {
            // Uniform buffers cannot hold bool: a u32 0 or 1.
            FieldKind::Scalar {
                elem: Scalar::Bool,
                param_index,
            } => {
                scalar_member[param_index] = Some(i);
                u32_ty
            }
            FieldKind::Scalar { elem, param_index } => {
                scalar_member[param_index] = Some(i);
                types[&elem]
            }
            FieldKind::Dim { .. } => {
                dim_base.get_or_insert(i);
                u32_ty
            }
            FieldKind::Grid { .. } => {
                grid_base.get_or_insert(i);
                u32_ty
            }
            FieldKind::TandemKey {
                param_index,
                word,
                seed,
            } => {
                keys.push(((param_index, seed), word, i));
                u32_ty
            }
        };
        members.push(StructMember {
            name: Some(field.name.clone()),
            ty,
            binding: None,
            offset: field.offset,
        });
    }
    let params_ty = m.types.insert(
        Type {
            name: Some("Params".into()),
            inner: TypeInner::Struct {
                members,
                span: layout.uniform_size as u32,
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
                binding: UNIFORM_BINDING,
            }),
            ty: params_ty,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    );
    let grid_base = grid_base.expect("the layout has the grid");
    Uniforms {
        var: params_var,
        scalar_member,
        dim_base: dim_base.unwrap_or(grid_base),
        grid_base,
        keys,
    }
}

/// One storage buffer per tensor parameter, as the layout says: an array of
/// its elements, or of `vec4`s of them for the tensors marked in `quad`
/// (accessed in aligned groups of 4 somewhere; their element count is a
/// multiple of 4, see `plan::stores::vec4_tensors`). A split tensor has one such
/// array per piece, at consecutive bindings: the second vector holds them
/// (the first, its piece 0).
pub(super) type Tensors = (
    Vec<Option<Handle<GlobalVariable>>>,
    Vec<Vec<Handle<GlobalVariable>>>,
);

pub(super) fn tensors(
    layout: &Layout,
    kernel: &Kernel,
    m: &mut Module,
    types: &HashMap<Scalar, Handle<Type>>,
    quad: &[bool],
    native_halves: &[bool],
) -> Tensors {
    let mut tensors = vec![None; kernel.params.len()];
    let mut pieces = vec![Vec::new(); kernel.params.len()];
    for t in &layout.tensors {
        let (base, stride) = if native_halves.get(t.param_index) == Some(&true) {
            // Read by cooperative loads as it is (`plan::dots`).
            debug_assert!(t.read_only && t.elem == Scalar::F16);
            let f16 = m.types.insert(
                Type {
                    name: None,
                    inner: TypeInner::Scalar(naga::Scalar::F16),
                },
                Span::UNDEFINED,
            );
            (f16, 2)
        } else if t.elem.is_half() {
            // Two elements a u32 word, atomic where written (`half_io.rs`).
            let word = types[&Scalar::U32];
            let ty = if t.read_only {
                word
            } else {
                m.types.insert(
                    Type {
                        name: None,
                        inner: TypeInner::Atomic(naga::Scalar::U32),
                    },
                    Span::UNDEFINED,
                )
            };
            (ty, 4)
        } else if quad[t.param_index] {
            (vec4_type(m, t.elem), 4 * t.elem.size() as u32)
        } else {
            (types[&t.elem], t.elem.size() as u32)
        };
        let arr = m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Array {
                    base,
                    size: ArraySize::Dynamic,
                    stride,
                },
            },
            Span::UNDEFINED,
        );
        let access = if t.read_only {
            StorageAccess::LOAD
        } else {
            StorageAccess::LOAD | StorageAccess::STORE
        };
        let mut global = |name: String, binding: u32| {
            m.global_variables.append(
                GlobalVariable {
                    name: Some(name),
                    space: AddressSpace::Storage { access },
                    binding: Some(ResourceBinding { group: 0, binding }),
                    ty: arr,
                    init: None,
                    memory_decorations: Default::default(),
                },
                Span::UNDEFINED,
            )
        };
        match t.split {
            None => tensors[t.param_index] = Some(global(t.name.clone(), t.binding)),
            Some(split) => {
                for k in 0..split.pieces {
                    let g = global(format!("{}_piece{k}", t.name), t.binding + k);
                    pieces[t.param_index].push(g);
                }
                tensors[t.param_index] = Some(pieces[t.param_index][0]);
            }
        }
    }
    (tensors, pieces)
}

/// `vec4<elem>` (elem a 32-bit type).
pub(super) fn vec4_type(m: &mut Module, elem: Scalar) -> Handle<Type> {
    m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Vector {
                size: naga::VectorSize::Quad,
                scalar: nscalar(elem).expect("a 32-bit element type"),
            },
        },
        Span::UNDEFINED,
    )
}

/// Scalars private, constant tiles in workgroup memory.
pub(super) fn locals(
    kernel: &Kernel,
    m: &mut Module,
    f: &mut Function,
    types: &HashMap<Scalar, Handle<Type>>,
) -> Result<IdVec<LocalId, LocalHome>, LowerError> {
    let mut locals = IdVec::new();
    for (l, local) in kernel.locals.iter_enumerated() {
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
        // An empty tile (a dim bound to 0, `specialize`) gets one element,
        // which nothing reads or writes: workgroup arrays cannot be empty,
        // and every read of the tile is outside its extent of 0.
        let size = u32::try_from(count.max(1))
            .ok()
            .and_then(NonZeroU32::new)
            .ok_or_else(|| {
                unsupported(format!(
                    "`{}`: a tile of {count} elements in workgroup memory",
                    local.name
                ))
            })?;
        // A bool tile holds u32 0/1: a workgroup `array<bool>` may be one
        // byte per element, and neighbouring invocations writing bytes of
        // one word race on some devices (NVIDIA); `Lower::store_element`
        // and `Lower::load_element` convert.
        let (base, stride) = if local.elem == Scalar::Bool {
            (types[&Scalar::U32], 4)
        } else {
            (ty, local.elem.size() as u32)
        };
        let g = workgroup_var(m, format!("{}_{l}", local.name), (base, stride), size);
        locals.push(LocalHome::Workgroup(g));
    }
    Ok(locals)
}

/// The staging tiles of stores whose value reads their own destination: one
/// workgroup array per element type, as long as the largest such store's
/// tile. The value is computed into it in full before any element of the
/// destination is written (the interpreter's meaning), so its tile must have
/// a constant extent and fit in workgroup memory with the kernel's
/// `let`/`var` tiles (`GpuOptions::workgroup_memory`); otherwise the kernel is
/// refused with the sizes.
pub(crate) fn staging(
    k: &Kernel,
    options: &crate::GpuOptions,
) -> Result<Vec<(Scalar, u32)>, LowerError> {
    let mut shared: u64 = 0;
    for local in &k.locals {
        if !local.shape.is_empty() {
            shared += tile_elements(&local.shape).unwrap_or(0) * 4;
        }
    }
    let mut need: Vec<(Scalar, u64)> = Vec::new();
    for s in &k.body {
        let Stmt::Store {
            place,
            index,
            value,
        } = s
        else {
            continue;
        };
        if private(k, *place)
            || !analysis::reads_place(k, *value, *place)
            || super::stmt::reads_own_element(k, (*place, index, *value), &|_| false)
        {
            continue;
        }
        let name = match *place {
            Place::Param(i) => &k.params[i].name,
            Place::Local(l) => &k.locals[l].name,
        };
        let tile = analysis::slice_tile(index);
        let Some(count) = tile_elements(&tile) else {
            let dims: Vec<String> = tile
                .iter()
                .filter_map(|d| match d {
                    Dim::Sym(s) => Some(format!("--dim {}=<extent>", k.dims[*s])),
                    Dim::Const(_) => None,
                })
                .collect();
            return Err(unsupported(format!(
                "a store to `{name}` whose value reads `{name}` itself, over a tile {} whose extent depends on a dim: its value is staged in workgroup memory first, which needs a constant size, so the kernel is built for given extents (a launch does this itself; `phobosc build {}`; in Rust, lower `phobos_gpu::specialize(kernel, dims)`)",
                k.shape_text(&tile),
                dims.join(" ")
            )));
        };
        // A 16-bit tensor's value is staged as f32, rounded when stored.
        let elem = match *place {
            Place::Param(i) => match &k.params[i].kind {
                ParamKind::Tensor { elem, .. } => *elem,
                ParamKind::Scalar(s) => *s,
            },
            Place::Local(l) => k.locals[l].elem,
        }
        .value_type();
        match need.iter_mut().find(|(e, _)| *e == elem) {
            Some((_, n)) => *n = (*n).max(count),
            None => need.push((elem, count)),
        }
        let staged: u64 = need.iter().map(|(_, n)| n * 4).sum();
        let limit = options.workgroup_memory;
        if shared + staged > limit {
            return Err(unsupported(format!(
                "a store to `{name}` whose value reads `{name}` itself, over a tile {} of {count} elements: staging it in workgroup memory needs {staged} bytes besides the {shared} bytes of let/var tiles, over the {limit}-byte limit",
                k.shape_text(&tile)
            )));
        }
    }
    Ok(need
        .into_iter()
        .map(|(elem, count)| (elem, count as u32))
        .collect())
}

/// Whether `place` is a scalar local, which each invocation keeps in its
/// own registers (`locals`); every other local is a workgroup tile.
pub(crate) fn private(k: &Kernel, place: Place) -> bool {
    matches!(place, Place::Local(l) if k.locals[l].shape.is_empty())
}

/// The workgroup array of `count` elements that stages stores of `elem`
/// (u32 0/1 for bool).
pub(super) fn staging_tile(
    m: &mut Module,
    types: &HashMap<Scalar, Handle<Type>>,
    elem: Scalar,
    count: u32,
) -> Handle<GlobalVariable> {
    // A bool tile holds u32 0/1, as `locals` does (`stmt.rs` converts).
    let (base, stride) = if elem == Scalar::Bool {
        (types[&Scalar::U32], 4)
    } else {
        (types[&elem], elem.size() as u32)
    };
    let count = NonZeroU32::new(count.max(1)).expect("positive");
    workgroup_var(m, format!("staging_{elem}"), (base, stride), count)
}

/// A workgroup array named `name` of `count` elements of type `base`,
/// `stride` bytes apart: every workgroup variable the lowering makes.
pub(super) fn workgroup_var(
    m: &mut Module,
    name: String,
    (base, stride): (Handle<Type>, u32),
    count: NonZeroU32,
) -> Handle<GlobalVariable> {
    let ty = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Array {
                base,
                size: ArraySize::Constant(count),
                stride,
            },
        },
        Span::UNDEFINED,
    );
    m.global_variables.append(
        GlobalVariable {
            name: Some(name),
            space: AddressSpace::WorkGroup,
            binding: None,
            ty,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    )
}

/// The elements of a tile of constant extent; `None` when one depends on a dim.
fn tile_elements(shape: &[Dim]) -> Option<u64> {
    shape.iter().try_fold(1u64, |n, d| match d {
        Dim::Const(v) => Some(n.saturating_mul(*v)),
        Dim::Sym(_) => None,
    })
}
