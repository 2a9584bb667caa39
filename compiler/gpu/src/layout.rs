//! What a runtime needs to bind a lowered kernel: the uniform buffer's
//! fields and the storage buffers, all in bind group 0. The lowering builds
//! its uniform struct and storage bindings from this same description, so
//! the two cannot disagree.

use crate::LowerError;
use phobos_core::ir::{Kernel, ParamKind};
use phobos_core::types::{Scalar, Value};
use serde::{Serialize, Serializer};

/// The binding of the uniform buffer.
pub const UNIFORM_BINDING: u32 = 0;

/// The bind group 0 of a kernel.
///
/// The uniform buffer (binding [`UNIFORM_BINDING`]) holds, 4 bytes each
/// and in this order: every scalar parameter in parameter order (an i32, u32
/// or f32 as its little-endian bits, a bool as the u32 0 or 1: uniform
/// buffers cannot hold bool), then every dim in `Kernel::dims` order (u32),
/// then the grid's x, y and z (u32, the kernel's grid in blocks, not the
/// dispatch size), then the four words of the Tandem key of each seed that
/// the host derives ([`FieldKind::TandemKey`]). Its size is rounded up to a multiple of 16; the padding
/// is unused. Tensors are storage buffers of their elements, packed, at
/// bindings 1, 2, ... in parameter order; a tensor with a [`Split`] takes
/// `pieces` consecutive bindings (piece `k` at `binding + k`, the elements
/// `k * piece_len ..` of its buffer), and the tensors after it move up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// Bytes of the uniform buffer (a multiple of 16).
    pub uniform_size: u64,
    pub uniform_fields: Vec<UniformField>,
    pub tensors: Vec<TensorBinding>,
}

/// One 4-byte field of the uniform buffer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UniformField {
    /// The member's name in the shader (`dim_N`, `grid_x`, or the parameter's).
    pub name: String,
    /// Byte offset in the uniform buffer.
    pub offset: u32,
    #[serde(flatten)]
    pub kind: FieldKind,
}

/// What a uniform field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FieldKind {
    /// The scalar parameter `Kernel::params[param_index]`, of type `elem`
    /// (a bool is stored as the u32 0 or 1).
    Scalar {
        param_index: usize,
        #[serde(serialize_with = "scalar_name")]
        elem: Scalar,
    },
    /// The extent bound to dim `Kernel::dims[dim_index]`, as u32.
    Dim { dim_index: usize },
    /// The grid's extent along `axis` (0 = x, 1 = y, 2 = z), as u32.
    Grid { axis: u8 },
    /// Word `word` of the Tandem key `Key::from_seed(s)` (stdlib/tandem
    /// SPEC.md section 2.2; `phobos_core::interp::ops::tandem_key`) of the
    /// u32 seed `s` made from the scalar parameter
    /// `Kernel::params[param_index]` as `seed` says. A launch derives the key
    /// once on the host instead of every invocation deriving it: twelve
    /// rounds of the key schedule per invocation cost as much as a third of
    /// a chunk's steps.
    TandemKey {
        param_index: usize,
        word: u8,
        #[serde(serialize_with = "seed_of_name")]
        seed: SeedOf,
    },
}

/// How a Tandem seed is made from a scalar parameter: the core's one
/// classification of seeds (`ir::analysis::seed_of`), serialised by name
/// (`param`, `bitcast`, `cast`).
pub use phobos_core::ir::analysis::SeedOf;

fn seed_of_name<S: Serializer>(seed: &SeedOf, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match seed {
        SeedOf::Param => "param",
        SeedOf::Bitcast => "bitcast",
        SeedOf::Cast => "cast",
    })
}

impl Layout {
    /// The uniform block of a launch, as the lowering laid it out: scalar
    /// parameters (a bool as the u32 0 or 1), dims, the grid and the
    /// host-derived Tandem keys, four bytes each, little-endian.
    /// `scalars[i]` is the value of parameter `i` (`None` for a tensor);
    /// `dims` and `grid` are what `phobos_core::launch::bind` bound. A field
    /// whose value is missing or of a type the layout has no field for
    /// (a 64-bit scalar, which `layout` refuses) is an error naming it.
    pub fn uniform_block(
        &self,
        scalars: &[Option<Value>],
        dims: &[u64],
        grid: [u64; 3],
    ) -> Result<Vec<u8>, LowerError> {
        let mut bytes = vec![0u8; self.uniform_size.max(16) as usize];
        let missing = |f: &UniformField| {
            LowerError::Internal(format!("no 32-bit value for uniform field `{}`", f.name))
        };
        for f in &self.uniform_fields {
            let word: u32 = match f.kind {
                FieldKind::Scalar { param_index, .. } => {
                    match scalars.get(param_index).copied().flatten() {
                        Some(Value::Bool(b)) => b as u32,
                        Some(Value::I32(x)) => x as u32,
                        Some(Value::U32(x)) => x,
                        Some(Value::F32(x)) => x.to_bits(),
                        _ => return Err(missing(f)),
                    }
                }
                FieldKind::Dim { dim_index } => {
                    *dims.get(dim_index).ok_or_else(|| missing(f))? as u32
                }
                FieldKind::Grid { axis } => grid[axis as usize % 3] as u32,
                FieldKind::TandemKey {
                    param_index,
                    word,
                    seed,
                } => {
                    let seed = scalars
                        .get(param_index)
                        .copied()
                        .flatten()
                        .and_then(|v| seed.seed(v))
                        .ok_or_else(|| missing(f))?;
                    phobos_core::interp::ops::tandem_key(seed)[word as usize % 4]
                }
            };
            let at = f.offset as usize;
            let slot = bytes.get_mut(at..at + 4).ok_or_else(|| missing(f))?;
            slot.copy_from_slice(&word.to_le_bytes());
        }
        Ok(bytes)
    }
}

/// One tensor's storage buffer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TensorBinding {
    /// The tensor parameter `Kernel::params[param_index]`.
    pub param_index: usize,
    pub name: String,
    pub binding: u32,
    /// `true` when the kernel never stores to it (a `read` storage binding).
    pub read_only: bool,
    #[serde(serialize_with = "scalar_name")]
    pub elem: Scalar,
    /// How it is cut into several bindings, when it is larger than one
    /// binding may be; `None` (and absent from the JSON): one binding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
}

/// A tensor bound as `pieces` consecutive storage bindings of `piece_len`
/// elements each (the last one may be shorter), because it is larger than
/// the device's `max_storage_buffer_binding_size`. The kernel finds element
/// `i` at `i & (piece_len - 1)` of piece `i >> log2(piece_len)`; a runtime
/// binds piece `k` as the range of bytes from `k * piece_len * elem_size`
/// of the tensor's one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Split {
    pub pieces: u32,
    /// A power of two, at least 4, so a tensor read in aligned groups of 4
    /// (`vec4`) splits between groups.
    pub piece_len: u32,
}

impl Split {
    /// How to bind a tensor of `elements` elements of `elem_size` bytes when
    /// one binding holds at most `max_binding` bytes and binding offsets are
    /// multiples of `offset_alignment` (a power of two): `None` when it fits
    /// one binding, else pieces of the largest power-of-two length that
    /// fits, raised where needed to 4 elements and to `offset_alignment`
    /// bytes (so a `max_binding` below those is taken as them).
    pub fn plan(
        elements: u64,
        elem_size: u64,
        max_binding: u64,
        offset_alignment: u64,
    ) -> Option<Split> {
        if elements * elem_size <= max_binding {
            return None;
        }
        let fits = (max_binding / elem_size).max(1);
        let least = offset_alignment
            .div_ceil(elem_size)
            .next_power_of_two()
            .max(4);
        // Flat indices are u32: a piece never needs more than 2^31 elements.
        let piece_len = (1u64 << fits.ilog2()).max(least).min(1 << 31);
        // Raised past the tensor's length, one binding holds it after all.
        if piece_len >= elements {
            return None;
        }
        Some(Split {
            pieces: elements.div_ceil(piece_len) as u32,
            piece_len: piece_len as u32,
        })
    }

    /// The bytes of a whole piece.
    pub fn piece_bytes(&self, elem_size: u64) -> u64 {
        self.piece_len as u64 * elem_size
    }
}

fn scalar_name<S: Serializer>(s: &Scalar, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(&s.to_string())
}

/// The layout of `kernel`'s bindings; refuses the types the lowering
/// refuses (64-bit scalars, bool and 64-bit tensors) with the same errors.
pub fn layout(kernel: &Kernel) -> Result<Layout, LowerError> {
    layout_split(kernel, &[])
}

/// [`layout`] with the tensor parameters `splits[param_index]` says (absent
/// or `None`: one binding) cut into several bindings.
pub fn layout_split(kernel: &Kernel, splits: &[Option<Split>]) -> Result<Layout, LowerError> {
    let mut fields = Vec::new();
    let mut push = |name: String, kind| {
        let offset = 4 * fields.len() as u32;
        fields.push(UniformField { name, offset, kind });
    };
    for (i, p) in kernel.params.iter().enumerate() {
        if let ParamKind::Scalar(s) = p.kind {
            crate::lower::nscalar(s)?;
            push(
                p.name.clone(),
                FieldKind::Scalar {
                    param_index: i,
                    elem: s,
                },
            );
        }
    }
    for (i, d) in kernel.dims.iter().enumerate() {
        push(format!("dim_{d}"), FieldKind::Dim { dim_index: i });
    }
    for (axis, a) in ["x", "y", "z"].into_iter().enumerate() {
        push(format!("grid_{a}"), FieldKind::Grid { axis: axis as u8 });
    }
    for (param_index, seed) in phobos_core::ir::analysis::param_seeds(kernel) {
        for word in 0..4u8 {
            push(
                format!("{}_key{word}", kernel.params[param_index].name),
                FieldKind::TandemKey {
                    param_index,
                    word,
                    seed,
                },
            );
        }
    }
    let uniform_size = (4 * fields.len() as u64).div_ceil(16) * 16;

    let mut tensors = Vec::new();
    let mut binding = UNIFORM_BINDING + 1;
    for (i, p) in kernel.params.iter().enumerate() {
        if let ParamKind::Tensor { elem, written, .. } = p.kind {
            if elem == Scalar::Bool {
                return Err(LowerError::Unsupported(format!(
                    "bool tensor `{}` (one byte per element; WGSL storage has no 8-bit type)",
                    p.name
                )));
            }
            crate::lower::nscalar(elem)?;
            let split = splits.get(i).copied().flatten();
            if elem.is_half() && split.is_some() {
                return Err(LowerError::Unsupported(format!(
                    "{elem} tensor `{}` larger than the device's largest storage binding (16-bit tensors are not split across bindings yet)",
                    p.name
                )));
            }
            tensors.push(TensorBinding {
                param_index: i,
                name: p.name.clone(),
                binding,
                read_only: !written,
                elem,
                split,
            });
            binding += split.map_or(1, |s| s.pieces);
        }
    }
    Ok(Layout {
        uniform_size,
        uniform_fields: fields,
        tensors,
    })
}
