//! Tandem fills on the GPU (stdlib/tandem/SPEC.md, sections 3, 7 and 12):
//! naga compute modules, built directly, that write the Tandem stream of a
//! key, or an element map of it, into a storage buffer.
//!
//! One invocation steps one chunk: it seeds the state from the key, `K` and
//! its 64-bit chunk index, runs the 8 warm-up steps, then `K` steps, each
//! giving one 16-byte block. Invocation `g` of a dispatch is chunk
//! `first_chunk + g`, lane `g % 8` of its group, so block `j` of its chunk
//! is relative stream block `(g / 8) * 8K + 8j + g % 8`: the eight
//! invocations of a group write each step's output together.
//!
//! Workgroup memory, where a map's stores or reads need it: bools stage
//! each step's blocks so that the group's eight lanes store whole 128-byte
//! lines (`ints::store_bools`); `normal_f64` copies the ziggurat's layer
//! edges once per workgroup (of [`ZIGGURAT_WORKGROUP_SIZE`] invocations)
//! so that the fast path's random layer reads stay in the SM
//! (`ziggurat::load_edges`). Their barriers are in uniform control flow:
//! a workgroup with no chunk returns as a whole, every other invocation
//! runs the same `K` steps, and only stores are masked.
//!
//! Random access: the dispatch starts at a group boundary, and a block is
//! stored at binding block `rel - skip` only when
//! `skip <= rel < skip + n_blocks`, so a dispatch writes exactly the output
//! of stream blocks `8K * first_group + skip ..` (`n_blocks` of them) from
//! the start of its binding; a cut inside a block is the caller's.
//!
//! Element maps ([`FillMap`]): element `i` reads draws of stream block
//! `i / per_block` only, so one stream block gives [`FillMap::out_words`]
//! output words (4 for most maps, 32 for bools, 8 for `below_i64_u32`, 2
//! for choice). Stages, one module each:
//! - `stream.rs`: the step, seeding, key derivation, continuation sequences;
//! - `ints.rs`: bools, Lemire's bounded integers and their retries, choice;
//! - `floats.rs`: uniform f16/f32/f64 in integer operations, and the f32
//!   exponential and Box-Muller normal (SPEC.md section 6 polynomials, no
//!   division, and `crate::exact`'s correctly rounded `sqrt`);
//! - `float64.rs`: `neg_ln_u64` and `exp_neg_f64` (SPEC.md 6.1-6.3) on
//!   device f64 values (`SHADER_F64`): `exponential_f64`, and the f64 maps
//!   store a block's two values with one 16-byte store into an
//!   `array<vec2<f64>>` output (the bytes of an `array<f64>`);
//! - `f64div.rs`: their correctly rounded f64 divisions from `+ - *`;
//! - `ziggurat.rs`: `normal_f64` (SPEC.md 7.8), the fast path and the slow
//!   path of a miss;
//! - `shuffle.rs`: blocks exchanged in subgroups of 32 before their
//!   stores, so that a warp's stores are contiguous;
//! - `stage.rs`: stores staged through workgroup memory so that they
//!   coalesce (`bool`'s 128 and `below_i64_u32`'s 32 output bytes a block);
//! - `misslist.rs`: `normal_f64`'s misses kept per invocation and listed
//!   once per workgroup (one atomic on the piece's counter per workgroup);
//! - `builder.rs`: the naga function builder they share.
//!
//! Bounded fills and `normal_f64` have a second kernel ([`misses_module`]):
//! the fill kernel appends each rejected element's position (relative to
//! the binding; for `normal_f64` also its draw, [`FillMap::list_words`]) to
//! a list, counted by `counters[piece]`, and the misses kernel gives each
//! listed element its value from the continuation of `sub.split(i)`, `sub`
//! being `key.sub(PURPOSE_BELOW)` (`key.sub(PURPOSE_NORMAL64)`) derived by
//! the host. When the list is full (more than `cap` misses in the piece)
//! the fill kernel retries in place, so the result never depends on the
//! capacity.
//!
//! Bindings: the uniform [`FillParams`] (0), the output `array<vec4<u32>>`
//! (`array<vec2<u32>>` for choice) (1); for bounded fills the counters
//! `array<atomic<u32>>` (2) and the list `array<u32>` (3); for choice the
//! alias table `array<vec4<u32>>` of `(threshold lo, threshold hi, alias, 0)`
//! (2); for `normal_f64` and `exponential_f64` the output is an
//! `array<vec2<f64>>`, and `normal_f64` reads the ziggurat table
//! `array<f64>` (4).

pub(crate) mod builder;
mod f64div;
mod float64;
mod floats;
mod ints;
mod misslist;
mod shuffle;
mod stage;
mod stream;
mod ziggurat;

pub use ziggurat::{LIST_WORDS as NORMAL_LIST_WORDS, TABLE_LEN as ZIGGURAT_TABLE_LEN};

use crate::{ENTRY_POINT, GpuOptions, LowerError, Precision};
use builder::{Fb, H, Tys};
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{
    AddressSpace, ArraySize, EntryPoint, Expression, GlobalVariable, Handle, Module,
    ResourceBinding, Scalar as NScalar, ShaderStage, Span, Statement, StorageAccess, StructMember,
    Type, TypeInner, VectorSize,
};
use phobos_tandem::core::DEFAULT_K;

/// Invocations per workgroup of the misses kernels and of most fill
/// kernels (see [`FillMap::workgroup_size`]).
pub const FILL_WORKGROUP_SIZE: u32 = 64;
/// Invocations per workgroup of the fill kernels of the maps that store
/// each step's block as it comes (the raw stream, f32, `below_u32`) for
/// chunks of at least 8 blocks. Measured on the H200 (bench/RESULTS.md,
/// 2026-12-01, 2^28 elements, K = 32): u32 and f32 fills at 89% of the
/// zero-fill ceiling with 32 invocations against 82% with 64 or 128, and
/// `below_u32` 86-87% against 81-82%; with K = 4 the u32 fill drops from
/// 88.5% to 77% at 32, so short chunks keep [`FILL_WORKGROUP_SIZE`].
pub const STEP_WORKGROUP_SIZE: u32 = 32;
/// Invocations per workgroup of the `normal_f64` fill kernel: each
/// workgroup first copies the ziggurat's 16 KiB of edges into workgroup
/// memory, so a larger group amortises the copy over more output (and
/// lets more of an SM's invocations share its workgroup memory).
pub const ZIGGURAT_WORKGROUP_SIZE: u32 = 256;

/// Binding of the output array.
pub const FILL_OUTPUT_BINDING: u32 = 1;
/// Binding of the miss counters (bounded fills) or the alias table (choice).
pub const FILL_AUX_BINDING: u32 = 2;
/// Binding of the miss list (bounded fills and `normal_f64`).
pub const FILL_LIST_BINDING: u32 = 3;
/// Binding of the ziggurat table (`normal_f64`).
pub const FILL_ZIGGURAT_BINDING: u32 = 4;

/// How a block of stream becomes output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FillMap {
    /// The stream's bytes: the `u8`, `u16`, `u32` and `u64` fills.
    Raw,
    /// `f16_bits`: binary16 uniforms in [0, 1) from each 16-bit draw.
    F16,
    /// `f32` uniforms in [0, 1) from each word.
    F32,
    /// `f64` uniforms in [0, 1) from each 64-bit draw.
    F64,
    /// `bool`: one byte (0 or 1) per bit.
    Bool,
    /// `below_u32(n)` and `below_i32(low, n)`: `low + v` in 32 bits.
    Below32,
    /// `below_i64_u32(low, n)`: 32-bit draws, `low + v` in 64 bits.
    Below32To64,
    /// `below_u64(n)` and `below_i64(low, n)`: 64-bit draws and values.
    Below64,
    /// `choice(table)`: u32 indices through the uploaded alias table.
    Choice,
    /// `normal_f32`: Box-Muller pairs in exact f32.
    NormalF32,
    /// `exponential_f32`: `-ln((w + 1) 2^-32)` in exact f32.
    ExponentialF32,
    /// `exponential_f64`: `-ln((x + 1) 2^-64)` in f64 (`SHADER_F64`).
    ExponentialF64,
    /// `normal_f64`: the 1024-layer ziggurat in f64 (`SHADER_F64`), misses
    /// resolved by the misses kernel.
    NormalF64,
}

impl FillMap {
    pub const ALL: [FillMap; 13] = [
        FillMap::Raw,
        FillMap::F16,
        FillMap::F32,
        FillMap::F64,
        FillMap::Bool,
        FillMap::Below32,
        FillMap::Below32To64,
        FillMap::Below64,
        FillMap::Choice,
        FillMap::NormalF32,
        FillMap::ExponentialF32,
        FillMap::ExponentialF64,
        FillMap::NormalF64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FillMap::Raw => "raw",
            FillMap::F16 => "f16",
            FillMap::F32 => "f32",
            FillMap::F64 => "f64",
            FillMap::Bool => "bool",
            FillMap::Below32 => "below32",
            FillMap::Below32To64 => "below32to64",
            FillMap::Below64 => "below64",
            FillMap::Choice => "choice",
            FillMap::NormalF32 => "normal_f32",
            FillMap::ExponentialF32 => "exponential_f32",
            FillMap::ExponentialF64 => "exponential_f64",
            FillMap::NormalF64 => "normal_f64",
        }
    }

    /// Output u32 words per 16-byte stream block.
    pub fn out_words(self) -> u32 {
        match self {
            FillMap::Bool => 32,
            FillMap::Below32To64 => 8,
            FillMap::Choice => 2,
            _ => 4,
        }
    }

    /// Whether the map has rejections resolved by [`misses_module`].
    pub fn has_misses(self) -> bool {
        self.is_bounded() || self == FillMap::NormalF64
    }

    /// Whether the map is a bounded integer fill (Lemire's retries).
    fn is_bounded(self) -> bool {
        matches!(
            self,
            FillMap::Below32 | FillMap::Below32To64 | FillMap::Below64
        )
    }

    /// u32 words per miss-list entry: the position (bounded fills), or the
    /// position and the 64-bit draw (`normal_f64`).
    pub fn list_words(self) -> u32 {
        match self {
            FillMap::NormalF64 => ziggurat::LIST_WORDS,
            _ => 1,
        }
    }

    /// Whether the map reads the ziggurat table (binding
    /// [`FILL_ZIGGURAT_BINDING`], [`ZIGGURAT_TABLE_LEN`] f64 values).
    pub fn has_ziggurat(self) -> bool {
        self == FillMap::NormalF64
    }

    /// Whether the map reads the alias table.
    pub fn has_table(self) -> bool {
        self == FillMap::Choice
    }

    /// Whether the map's bits need exact mode's SPIR-V (float operations
    /// that a driver could contract or reassociate).
    pub fn needs_exact(self) -> bool {
        self.needs_f32_fns() || self.needs_f64()
    }

    /// Whether the map computes in f64 (the device needs `SHADER_F64`);
    /// its output binding is then an `array<vec2<f64>>` (a block's two
    /// values).
    pub fn needs_f64(self) -> bool {
        matches!(self, FillMap::ExponentialF64 | FillMap::NormalF64)
    }

    /// Whether the map calls the exact f32 functions of `floats.rs`.
    fn needs_f32_fns(self) -> bool {
        matches!(self, FillMap::NormalF32 | FillMap::ExponentialF32)
    }

    /// Words per element store of the output array (4 or 2).
    fn vec_words(self) -> u32 {
        self.out_words().min(4)
    }

    /// Invocations per workgroup of the map's `kernel`. For measurement,
    /// `PHOBOS_FILL_WORKGROUP_SIZE` (a multiple of 32 up to 256) sets it for
    /// every fill kernel but `normal_f64`'s; the bits are the same.
    pub fn workgroup_size(self, kernel: Kernel, k: u32) -> u32 {
        let forced = std::env::var("PHOBOS_FILL_WORKGROUP_SIZE")
            .ok()
            .and_then(|v| v.parse::<u32>().ok())
            .filter(|n| n % 32 == 0 && (32..=256).contains(n));
        match (self, kernel, forced) {
            (FillMap::NormalF64, Kernel::Fill, _) => ZIGGURAT_WORKGROUP_SIZE,
            (_, Kernel::Fill, Some(n)) => n,
            _ => self.default_workgroup_size(kernel, k),
        }
    }

    fn default_workgroup_size(self, kernel: Kernel, k: u32) -> u32 {
        match (self, kernel) {
            (FillMap::NormalF64, Kernel::Fill) => ZIGGURAT_WORKGROUP_SIZE,
            (FillMap::Raw | FillMap::F32 | FillMap::Below32, Kernel::Fill) if k >= 8 => {
                STEP_WORKGROUP_SIZE
            }
            _ => FILL_WORKGROUP_SIZE,
        }
    }
}

/// The uniform block of one fill dispatch, as [`FillParams::WORDS`]
/// little-endian u32 words in the order of [`P`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FillParams {
    /// The key's words.
    pub key: [u32; 4],
    /// The chunk length `K` (a power of two, 1..=4096).
    pub k: u32,
    /// The dispatch's first chunk, a multiple of 8 (a group's first).
    pub first_chunk: u64,
    /// Chunks this dispatch steps (a multiple of 8); invocations past it
    /// do nothing.
    pub n_chunks: u32,
    /// Blocks of the dispatch's first group not written (below `8K`).
    pub skip: u32,
    /// Blocks written, from binding index 0.
    pub n_blocks: u32,
    /// Which miss counter this dispatch uses (bounded fills).
    pub piece: u32,
    /// Entries of the miss list (bounded fills).
    pub cap: u32,
    /// `key.sub(PURPOSE_BELOW)`'s words (bounded fills).
    pub sub: [u32; 4],
    /// `n` of a bounded fill, or the number of columns of a choice.
    pub n: u64,
    /// `2^32 mod n` (32-bit draws) or `2^64 mod n` (64-bit draws).
    pub threshold: u64,
    /// The offset `low` as two's-complement bits (0 for unsigned fills).
    pub low: u64,
    /// Element index of the binding's first element.
    pub elem_base: u64,
}

/// Word positions in the uniform block.
pub(crate) struct P;
impl P {
    const KEY0: u32 = 0;
    const K: u32 = 4;
    const CHUNK_LO: u32 = 5;
    const CHUNK_HI: u32 = 6;
    const N_CHUNKS: u32 = 7;
    const SKIP: u32 = 8;
    const N_BLOCKS: u32 = 9;
    const PIECE: u32 = 10;
    const CAP: u32 = 11;
    const SUB0: u32 = 12;
    const N_LO: u32 = 16;
    const N_HI: u32 = 17;
    const THR_LO: u32 = 18;
    const THR_HI: u32 = 19;
    const LOW_LO: u32 = 20;
    const LOW_HI: u32 = 21;
    const BASE_LO: u32 = 22;
    const BASE_HI: u32 = 23;
}

impl FillParams {
    /// Words of the uniform block.
    pub const WORDS: usize = 24;
    /// Bytes of the uniform block.
    pub const SIZE: usize = 4 * Self::WORDS;

    pub fn words(&self) -> [u32; Self::WORDS] {
        let lh = |v: u64| [v as u32, (v >> 32) as u32];
        let mut w = [0u32; Self::WORDS];
        w[..4].copy_from_slice(&self.key);
        w[P::K as usize] = self.k;
        w[P::CHUNK_LO as usize..=P::CHUNK_HI as usize].copy_from_slice(&lh(self.first_chunk));
        w[P::N_CHUNKS as usize] = self.n_chunks;
        w[P::SKIP as usize] = self.skip;
        w[P::N_BLOCKS as usize] = self.n_blocks;
        w[P::PIECE as usize] = self.piece;
        w[P::CAP as usize] = self.cap;
        w[P::SUB0 as usize..P::SUB0 as usize + 4].copy_from_slice(&self.sub);
        w[P::N_LO as usize..=P::N_HI as usize].copy_from_slice(&lh(self.n));
        w[P::THR_LO as usize..=P::THR_HI as usize].copy_from_slice(&lh(self.threshold));
        w[P::LOW_LO as usize..=P::LOW_HI as usize].copy_from_slice(&lh(self.low));
        w[P::BASE_LO as usize..=P::BASE_HI as usize].copy_from_slice(&lh(self.elem_base));
        w
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.words().iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Workgroups of `map`'s fill kernel to dispatch: `[x, y, 1]` with x
    /// at most `max_per_dim`, numbered linearly by the shader (x fastest).
    pub fn workgroups(&self, map: FillMap, max_per_dim: u32) -> [u32; 3] {
        let groups = self
            .n_chunks
            .div_ceil(map.workgroup_size(Kernel::Fill, self.k));
        crate::dispatch_size([groups, 1, 1], max_per_dim)
    }

    /// Workgroups of `map`'s misses kernel: one invocation per list entry.
    pub fn miss_workgroups(&self, map: FillMap, max_per_dim: u32) -> [u32; 3] {
        let groups = self
            .cap
            .div_ceil(map.workgroup_size(Kernel::Misses, self.k));
        crate::dispatch_size([groups, 1, 1], max_per_dim)
    }
}

/// The module's globals.
pub(crate) struct Globals {
    params: Handle<GlobalVariable>,
    out: Handle<GlobalVariable>,
    /// The counters or the alias table.
    aux: Option<Handle<GlobalVariable>>,
    list: Option<Handle<GlobalVariable>>,
    /// The ziggurat table.
    zig: Option<Handle<GlobalVariable>>,
}

impl Globals {
    /// Word `index` of the uniform block.
    fn param(&self, b: &mut Fb, index: u32) -> H {
        let pv = b.expr(Expression::GlobalVariable(self.params));
        let ptr = b.expr(Expression::AccessIndex { base: pv, index });
        b.load(ptr)
    }

    /// The stream index `elem_base + pos` of binding element `pos`.
    fn element(&self, b: &mut Fb, pos: H) -> (H, H) {
        let base = (self.param(b, P::BASE_LO), self.param(b, P::BASE_HI));
        let zero = b.c(0);
        b.add64(base, (pos, zero))
    }
}

fn ty(m: &mut Module, inner: TypeInner) -> Handle<Type> {
    m.types.insert(Type { name: None, inner }, Span::UNDEFINED)
}

/// `vec2<f64>`: a block's two f64 outputs, or a ziggurat layer's edges.
fn f64_pair_ty(m: &mut Module) -> Handle<Type> {
    ty(
        m,
        TypeInner::Vector {
            size: VectorSize::Bi,
            scalar: NScalar::F64,
        },
    )
}

/// A workgroup-memory array of `len` values of type `base` (`stride`
/// bytes each).
fn workgroup_array(
    m: &mut Module,
    name: &str,
    base: Handle<Type>,
    len: u32,
    stride: u32,
) -> Handle<GlobalVariable> {
    let size = std::num::NonZeroU32::new(len).expect("a non-empty array");
    let ty = ty(
        m,
        TypeInner::Array {
            base,
            size: ArraySize::Constant(size),
            stride,
        },
    );
    m.global_variables.append(
        GlobalVariable {
            name: Some(name.into()),
            space: AddressSpace::WorkGroup,
            binding: None,
            ty,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    )
}

fn storage(
    m: &mut Module,
    name: &str,
    binding: u32,
    ty: Handle<Type>,
    access: StorageAccess,
) -> Handle<GlobalVariable> {
    m.global_variables.append(
        GlobalVariable {
            name: Some(name.into()),
            space: AddressSpace::Storage { access },
            binding: Some(ResourceBinding { group: 0, binding }),
            ty,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    )
}

/// The types and globals of `map`'s modules (with the f64 type when `wide`).
fn skeleton(map: FillMap, wide: bool, int64: bool) -> (Module, Tys, Globals, Handle<Type>) {
    let mut m = Module::default();
    let u32_ty = ty(&mut m, TypeInner::Scalar(NScalar::U32));
    let f64_ty = wide.then(|| ty(&mut m, TypeInner::Scalar(NScalar::F64)));
    let vec = |m: &mut Module, size| {
        ty(
            m,
            TypeInner::Vector {
                size,
                scalar: NScalar::U32,
            },
        )
    };
    let vec2 = vec(&mut m, VectorSize::Bi);
    let vec3 = vec(&mut m, VectorSize::Tri);
    let vec4 = vec(&mut m, VectorSize::Quad);
    let boolean = ty(&mut m, TypeInner::Scalar(NScalar::BOOL));
    let members = (0..FillParams::WORDS as u32)
        .map(|i| StructMember {
            name: Some(format!("w{i}")),
            ty: u32_ty,
            binding: None,
            offset: 4 * i,
        })
        .collect();
    let params_ty = m.types.insert(
        Type {
            name: Some("TandemParams".into()),
            inner: TypeInner::Struct {
                members,
                span: FillParams::SIZE as u32,
            },
        },
        Span::UNDEFINED,
    );
    let params = m.global_variables.append(
        GlobalVariable {
            name: Some("params".into()),
            space: AddressSpace::Uniform,
            binding: Some(ResourceBinding {
                group: 0,
                binding: crate::UNIFORM_BINDING,
            }),
            ty: params_ty,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    );
    let array = |m: &mut Module, base, stride| {
        ty(
            m,
            TypeInner::Array {
                base,
                size: ArraySize::Dynamic,
                stride,
            },
        )
    };
    let rw = StorageAccess::LOAD | StorageAccess::STORE;
    let (out_elem, out_stride) = if map.needs_f64() {
        (f64_pair_ty(&mut m), 16)
    } else if map.vec_words() == 2 {
        (vec2, 8)
    } else {
        (vec4, 16)
    };
    let out_ty = array(&mut m, out_elem, out_stride);
    let out = storage(&mut m, "out", FILL_OUTPUT_BINDING, out_ty, rw);
    let (aux, list) = if map.has_misses() {
        let atomic = ty(&mut m, TypeInner::Atomic(NScalar::U32));
        let counters_ty = array(&mut m, atomic, 4);
        let counters = storage(&mut m, "counters", FILL_AUX_BINDING, counters_ty, rw);
        let list_ty = array(&mut m, u32_ty, 4);
        let list = storage(&mut m, "list", FILL_LIST_BINDING, list_ty, rw);
        (Some(counters), Some(list))
    } else if map.has_table() {
        let table_ty = array(&mut m, vec4, 16);
        let table = storage(
            &mut m,
            "table",
            FILL_AUX_BINDING,
            table_ty,
            StorageAccess::LOAD,
        );
        (Some(table), None)
    } else {
        (None, None)
    };
    let zig = map.has_ziggurat().then(|| {
        let f64_ty = ty(&mut m, TypeInner::Scalar(NScalar::F64));
        let table_ty = array(&mut m, f64_ty, 8);
        storage(
            &mut m,
            "ziggurat",
            FILL_ZIGGURAT_BINDING,
            table_ty,
            StorageAccess::LOAD,
        )
    });
    let tys = Tys {
        u32: u32_ty,
        vec2,
        vec4,
        boolean,
        int64,
        f64: f64_ty,
    };
    let g = Globals {
        params,
        out,
        aux,
        list,
        zig,
    };
    (m, tys, g, vec3)
}

/// Where an invocation is in its dispatch.
struct Invocation {
    /// Its linear index over the 2-D grid.
    g: H,
    /// Its index in its workgroup.
    local: H,
    /// The `g` of its workgroup's first invocation (the same for the whole
    /// workgroup: a condition on it is uniform).
    first: H,
}

/// The entry point's builder for workgroups of `size`, with the
/// invocation's place computed.
fn entry(tys: Tys, vec3: Handle<Type>, branch_fallback: bool, size: u32) -> (Fb, Invocation) {
    let mut b = Fb::new(tys, branch_fallback);
    b.f.name = Some(ENTRY_POINT.into());
    b.f.arguments = crate::lower::entry_arguments(tys.u32, vec3);
    // g = (workgroup_id.x + workgroup_id.y * num_workgroups.x) * size + local.
    let li = b.expr(Expression::FunctionArgument(0));
    let wid = b.expr(Expression::FunctionArgument(1));
    let nwg = b.expr(Expression::FunctionArgument(2));
    let [wx, wy] = [0, 1].map(|index| b.expr(Expression::AccessIndex { base: wid, index }));
    let nx = b.expr(Expression::AccessIndex {
        base: nwg,
        index: 0,
    });
    let row = b.mul(wy, nx);
    let wg = b.add(wx, row);
    let size = b.c(size);
    let first = b.mul(wg, size);
    let g = b.add(first, li);
    let at = Invocation {
        g,
        local: li,
        first,
    };
    (b, at)
}

fn finish(mut m: Module, b: Fb, size: u32) -> Module {
    let function = b.finish();
    m.entry_points.push(EntryPoint {
        name: ENTRY_POINT.into(),
        stage: ShaderStage::Compute,
        early_depth_test: None,
        workgroup_size: [size, 1, 1],
        workgroup_size_overrides: None,
        function,
        mesh_info: None,
        task_payload: None,
        incoming_ray_payload: None,
    });
    m
}

/// Stores `words` (a multiple of the output's vector width) at output
/// vectors `first ..`.
fn store_words(b: &mut Fb, g: &Globals, map: FillMap, first: H, words: &[H]) {
    let width = map.vec_words() as usize;
    let ty = if width == 2 { b.tys.vec2 } else { b.tys.vec4 };
    for (e, chunk) in words.chunks(width).enumerate() {
        let index = if e == 0 {
            first
        } else {
            b.add_c(first, e as u32)
        };
        let ov = b.expr(Expression::GlobalVariable(g.out));
        let ptr = b.expr(Expression::Access { base: ov, index });
        let v = b.expr(Expression::Compose {
            ty,
            components: chunk.to_vec(),
        });
        b.store(ptr, v);
    }
}

/// Adds the retry function of a bounded map: `(i_lo, i_hi) -> vec2<u32>`.
fn retry_fn(m: &mut Module, tys: Tys, g: &Globals, map: FillMap) -> Handle<naga::Function> {
    let f = Fb::function(tys, true, "retry", 2, tys.vec2, |b, a| {
        ints::retry(b, g, map, (a[0], a[1]))
    });
    m.functions.append(f, Span::UNDEFINED)
}

/// The fill module for `map` (unvalidated; see [`fill_compiled`]).
/// `options`' `branch_fallback` and `wide_div` shape exact division (the
/// precision is the caller's to apply; the workgroup size is
/// [`FillMap::workgroup_size`]).
///
/// Bools and `normal_f64` use workgroup memory behind workgroup barriers,
/// so every invocation of a workgroup reaches every barrier: a workgroup
/// returns early only as a whole (when it has no chunk of the dispatch),
/// and otherwise only the stores are masked.
pub fn fill_module(map: FillMap, k: u32, options: &GpuOptions) -> Module {
    let branch_fallback = options.branch_fallback;
    let size = map.workgroup_size(Kernel::Fill, k);
    let wide = (options.wide_div && map.needs_exact()) || map.needs_f64();
    let (mut m, tys, g, vec3) = skeleton(map, wide, options.int64);
    let floats = map
        .needs_f32_fns()
        .then(|| floats::float_fns(&mut m, tys, options));
    let neg_ln64 = map
        .needs_f64()
        .then(|| neg_ln64_fn(&mut m, tys, options.knobs.ablate_log));
    let f64_pair = map.needs_f64().then(|| f64_pair_ty(&mut m));
    let zig = map.has_ziggurat().then(|| ziggurat::FillParts {
        slow: slow_fn(&mut m, tys, &g, neg_ln64.expect("neg_ln_u64")),
        f64_ty: ty(&mut m, TypeInner::Scalar(NScalar::F64)),
        pair_ty: f64_pair_ty(&mut m),
        edges: ziggurat::edges_global(&mut m),
    });
    let bool_stage = (map == FillMap::Bool)
        .then(|| stage::declare(&mut m, tys, "bool_stage", size, ints::BOOL_SLOTS));
    let wide = (map == FillMap::Below32To64)
        .then(|| stage::declare(&mut m, tys, "pair_stage", size, stage::PAIR_SLOTS));
    let retry = map.is_bounded().then(|| retry_fn(&mut m, tys, &g, map));
    let fns = MapFns {
        floats,
        neg_ln64,
        f64_pair,
        retry,
    };
    let wg_misses = map.has_ziggurat().then(|| misslist::declare(&mut m));
    let (mut b, at) = entry(tys, vec3, branch_fallback, size);
    let key = [0, 1, 2, 3].map(|q| g.param(&mut b, P::KEY0 + q));
    let k = g.param(&mut b, P::K);
    let chunk_lo = g.param(&mut b, P::CHUNK_LO);
    let chunk_hi = g.param(&mut b, P::CHUNK_HI);
    let n_chunks = g.param(&mut b, P::N_CHUNKS);
    let skip = g.param(&mut b, P::SKIP);
    let n_blocks = g.param(&mut b, P::N_BLOCKS);
    // A workgroup with no chunk of the dispatch (past its end, or an extra
    // one of a 2-D grid) returns as a whole: uniform, before any barrier.
    let idle = b.ge(at.first, n_chunks);
    b.if_(idle, |b| b.cur.push(Statement::Return { value: None }));
    let misses = wg_misses.map(|wg| misslist::MissList::new(&mut b, &mut m, wg, at.local));
    if let Some(z) = &zig {
        ziggurat::load_edges(&mut b, &g, z, at.local, size);
    }
    let gi = at.g;
    let live = b.lt(gi, n_chunks);
    // Subgroups whose lanes are 32 live chunks in order exchange their
    // blocks before storing them (`shuffle.rs`); the others go on below.
    let shuffled = shuffle::applies(map, options).then(|| shuffle::vote(&mut b, gi, live, k));
    if bool_stage.is_none() && wide.is_none() && misses.is_none() {
        // No barrier follows: an invocation past the chunks leaves now.
        let past = b.not(live);
        b.if_(past, |b| b.cur.push(Statement::Return { value: None }));
    }

    // The chunk index first_chunk + g in 64 bits, and the seed.
    let zero = b.c(0);
    let (c_lo, c_hi) = b.add64((chunk_lo, chunk_hi), (gi, zero));
    let s1 = b.xor(key[1], k);
    let s2 = b.xor(key[2], c_lo);
    let s3 = b.xor(key[3], c_hi);
    let vars = b.seeded([key[0], s1, s2, s3]);
    let k8 = b.shl_c(k, 3);
    if let Some(ok) = shuffled {
        b.if_(ok, |b| {
            let at = shuffle::Place {
                g: gi,
                k8,
                skip,
                n_blocks,
            };
            shuffle::fill_loop(b, vars, k, at, |b, o, idx| {
                store_block(b, &g, map, &fns, o, idx)
            });
            b.cur.push(Statement::Return { value: None });
        });
    }

    // Block j of the chunk is relative block (g / 8) * 8K + 8j + g % 8.
    let g8 = b.shr_c(gi, 3);
    let gbase = b.mul(g8, k8);
    let lane = b.and_c(gi, 7);
    let j = b.var_init("j", zero);
    // Every invocation of a workgroup steps the same K times, so the loop
    // (and a barrier in it) is in uniform control flow.
    b.loop_(|b| {
        let jv = b.load(j);
        let done = b.ge(jv, k);
        b.if_(done, |b| b.brk());
        let next = b.add_c(jv, 1);
        b.store(j, next);
        let t = b.add_c(jv, stream::WARM_UP_STEPS + 1);
        let o = b.step(vars, t, true).expect("an output step");
        let j8 = b.shl_c(jv, 3);
        // The group's first block of this step.
        let step_base = b.add(gbase, j8);
        // Where a staged step goes (bools and below_i64_u32).
        let staged = |b: &mut Fb| stage::Step {
            local: at.local,
            parity: b.and_c(jv, 1),
            step_base,
            skip,
            n_blocks,
            live,
            size,
        };
        if let Some(stage) = bool_stage {
            let step = staged(b);
            ints::store_bools(b, &g, stage, o, step);
            return;
        }
        let rel = b.add(step_base, lane);
        let idx = b.sub(rel, skip);
        // skip <= rel and rel - skip < n_blocks.
        let after = b.ge(rel, skip);
        let before = b.lt(idx, n_blocks);
        let inside = b.land(after, before);
        // (Invocations past the chunks reach here only to join barriers.)
        let inside = b.land(inside, live);
        if let Some(stage) = wide {
            let step = staged(b);
            let retry = fns.retry.expect("a retry function");
            stage::store_pairs(b, &g, map, stage, step, inside, |b| {
                ints::below_words(b, &g, map, o, idx, retry)
            });
            return;
        }
        b.if_(inside, |b| {
            if let (Some(z), Some(misses)) = (&zig, misses) {
                normal64_block(b, &g, o, idx, z, misses);
                return;
            }
            store_block(b, &g, map, &fns, o, idx);
        });
    });
    if let (Some(z), Some(misses)) = (&zig, misses) {
        misses.flush(&mut b, &g, at.local, z.slow);
    }
    finish(m, b, size)
}

/// The functions and types a map's block store calls.
struct MapFns {
    floats: Option<floats::FloatFns>,
    neg_ln64: Option<Handle<naga::Function>>,
    f64_pair: Option<Handle<Type>>,
    retry: Option<Handle<naga::Function>>,
}

/// Computes `map`'s output of stream block `o` and stores it as output
/// block `idx`: every map but those whose stores are staged (bools,
/// `below_i64_u32`) or listed (`normal_f64`).
fn store_block(b: &mut Fb, g: &Globals, map: FillMap, fns: &MapFns, o: [H; 4], idx: H) {
    if let Some(neg_ln) = fns.neg_ln64 {
        // Two f64 values per block, stored together at out[idx].
        let v = [(o[0], o[1]), (o[2], o[3])].map(|w| b.call(neg_ln, vec![w.0, w.1]));
        store_f64_pair(b, g, fns.f64_pair.expect("vec2<f64>"), idx, v);
        return;
    }
    let words = match map {
        FillMap::Raw => o.to_vec(),
        FillMap::F32 => o.iter().map(|&w| b.f32_bits(w)).collect(),
        FillMap::F16 => o.iter().map(|&w| b.f16_pair_bits(w)).collect(),
        FillMap::F64 => {
            let (l0, h0) = b.f64_bits(o[0], o[1]);
            let (l1, h1) = b.f64_bits(o[2], o[3]);
            vec![l0, h0, l1, h1]
        }
        FillMap::Below32 | FillMap::Below32To64 | FillMap::Below64 => {
            ints::below_words(b, g, map, o, idx, fns.retry.expect("a retry function"))
        }
        FillMap::Choice => ints::choice_words(b, g, o),
        FillMap::NormalF32 => b.normal_words(o, fns.floats.expect("float functions")),
        FillMap::ExponentialF32 => b.exponential_words(o, fns.floats.expect("float functions")),
        FillMap::Bool | FillMap::ExponentialF64 | FillMap::NormalF64 => {
            unreachable!("stored by the caller")
        }
    };
    let per = map.out_words() / map.vec_words();
    let first = if per == 1 {
        idx
    } else {
        let per = b.c(per);
        b.mul(idx, per)
    };
    store_words(b, g, map, first, &words);
}

/// Adds `neg_ln_u64(lo, hi) -> f64` to `m` (under `Knobs::ablate_log`,
/// the hardware's f32 logarithm of the high word, widened: wrong bits).
fn neg_ln64_fn(m: &mut Module, tys: Tys, ablate: bool) -> Handle<naga::Function> {
    let f64_ty = ty(m, TypeInner::Scalar(NScalar::F64));
    let f = Fb::function(tys, true, "neg_ln_u64", 2, f64_ty, |b, a| {
        if ablate {
            let l = b.neg_ln_native(a[1]);
            return b.f32_bits_to_f64(l);
        }
        b.neg_ln_u64((a[0], a[1]))
    });
    m.functions.append(f, Span::UNDEFINED)
}

/// Adds the ziggurat's slow path `(x lo, x hi, i lo, i hi) -> f64` to `m`.
fn slow_fn(
    m: &mut Module,
    tys: Tys,
    g: &Globals,
    neg_ln: Handle<naga::Function>,
) -> Handle<naga::Function> {
    let f64_ty = ty(m, TypeInner::Scalar(NScalar::F64));
    let f = Fb::function(tys, true, "ziggurat_slow", 4, f64_ty, |b, a| {
        ziggurat::slow(b, g, f64_ty, neg_ln, (a[0], a[1]), (a[2], a[3]))
    });
    m.functions.append(f, Span::UNDEFINED)
}

/// The miss counter of the dispatch's piece (a pointer).
fn counter(b: &mut Fb, g: &Globals) -> H {
    let piece = g.param(b, P::PIECE);
    let counters = b.expr(Expression::GlobalVariable(g.aux.expect("counters")));
    b.expr(Expression::Access {
        base: counters,
        index: piece,
    })
}

/// Word `index` of the miss list (a pointer).
fn list_word(b: &mut Fb, g: &Globals, index: H) -> H {
    let list = b.expr(Expression::GlobalVariable(g.list.expect("a list")));
    b.expr(Expression::Access { base: list, index })
}

/// Output f64 `index` (a pointer): component `index % 2` of the output's
/// `vec2<f64>` `index / 2`.
fn out_f64(b: &mut Fb, g: &Globals, index: H) -> H {
    let pair = b.shr_c(index, 1);
    let within = b.and_c(index, 1);
    let ov = b.expr(Expression::GlobalVariable(g.out));
    let p = b.expr(Expression::Access {
        base: ov,
        index: pair,
    });
    b.expr(Expression::Access {
        base: p,
        index: within,
    })
}

/// Stores the f64 values `pair` of output block `idx` with one 16-byte
/// store (`ty` is `vec2<f64>`).
fn store_f64_pair(b: &mut Fb, g: &Globals, ty: Handle<Type>, idx: H, pair: [H; 2]) {
    let v = b.expr(Expression::Compose {
        ty,
        components: pair.to_vec(),
    });
    let ov = b.expr(Expression::GlobalVariable(g.out));
    let p = b.expr(Expression::Access {
        base: ov,
        index: idx,
    });
    b.store(p, v);
}

/// The two `normal_f64` elements of one stream block (output block
/// `idx`): the fast path, stored together; a miss is kept for the
/// workgroup's list (`misses`), or when the invocation's buffer is full
/// listed as `(position, draw)` at once or, when the list is full,
/// resolved in place before the store.
fn normal64_block(
    b: &mut Fb,
    g: &Globals,
    o: [H; 4],
    idx: H,
    z: &ziggurat::FillParts,
    misses: misslist::MissList,
) {
    let first = b.shl_c(idx, 1);
    let values = [0u32, 1].map(|e| {
        let x = (o[2 * e as usize], o[2 * e as usize + 1]);
        let (hit, value) = ziggurat::fast(b, z.edges, x);
        let var = b.var_of("z", z.f64_ty);
        b.store(var, value);
        let pos = b.add_c(first, e);
        let miss = b.not(hit);
        b.if_(miss, |b| {
            misses.keep(b, [pos, x.0, x.1], |b| {
                let c = counter(b, g);
                let one = b.c(1);
                let slot = b.atomic_add(c, one);
                let cap = g.param(b, P::CAP);
                let listed = b.lt(slot, cap);
                b.if_else(
                    listed,
                    |b| {
                        let words = b.c(ziggurat::LIST_WORDS);
                        let at = b.mul(slot, words);
                        for (k, w) in [pos, x.0, x.1].into_iter().enumerate() {
                            let index = b.add_c(at, k as u32);
                            let p = list_word(b, g, index);
                            b.store(p, w);
                        }
                    },
                    |b| {
                        let i = g.element(b, pos);
                        let r = b.call(z.slow, vec![x.0, x.1, i.0, i.1]);
                        b.store(var, r);
                    },
                );
            });
        });
        b.load(var)
    });
    store_f64_pair(b, g, z.pair_ty, idx, values);
}

/// The misses kernel of `map`: invocation `e` resolves entry `e` of the
/// piece's miss list (if the fill kernel wrote that many) and stores the
/// element's value at its position.
pub fn misses_module(map: FillMap) -> Module {
    assert!(map.has_misses(), "{map:?} has no misses kernel");
    if map.has_ziggurat() {
        return normal64_misses_module(map);
    }
    let (mut m, tys, g, vec3) = skeleton(map, false, false);
    let retry = retry_fn(&mut m, tys, &g, map);
    let size = map.workgroup_size(Kernel::Misses, DEFAULT_K);
    let (mut b, at) = entry(tys, vec3, true, size);
    let e = at.g;
    let piece = g.param(&mut b, P::PIECE);
    let cap = g.param(&mut b, P::CAP);
    let counters = b.expr(Expression::GlobalVariable(g.aux.expect("counters")));
    let counter = b.expr(Expression::Access {
        base: counters,
        index: piece,
    });
    let count = b.load(counter);
    let listed = b.lt(e, count);
    let in_list = b.lt(e, cap);
    let work = b.land(listed, in_list);
    let idle = b.not(work);
    b.if_(idle, |b| b.cur.push(Statement::Return { value: None }));
    let list = b.expr(Expression::GlobalVariable(g.list.expect("a list")));
    let entry_ptr = b.expr(Expression::Access {
        base: list,
        index: e,
    });
    let pos = b.load(entry_ptr);
    let i = g.element(&mut b, pos);
    let r = b.call(retry, vec![i.0, i.1]);
    let v: Vec<H> = (0..2)
        .map(|index| b.expr(Expression::AccessIndex { base: r, index }))
        .collect();
    let words = ints::offset(&mut b, &g, map, &v);
    // Element pos is words (pos * len ..) of the output, in vec4s.
    let per_vec = 4 / words.len() as u32;
    let vec_index = b.shr_c(pos, per_vec.trailing_zeros());
    let within = b.and_c(pos, per_vec - 1);
    let first_word = b.shl_c(within, (words.len() as u32).trailing_zeros());
    for (k, w) in words.into_iter().enumerate() {
        let ov = b.expr(Expression::GlobalVariable(g.out));
        let vp = b.expr(Expression::Access {
            base: ov,
            index: vec_index,
        });
        let word = b.add_c(first_word, k as u32);
        let wp = b.expr(Expression::Access {
            base: vp,
            index: word,
        });
        b.store(wp, w);
    }
    finish(m, b, size)
}

/// The misses kernel of `normal_f64`.
fn normal64_misses_module(map: FillMap) -> Module {
    let (mut m, tys, g, vec3) = skeleton(map, true, false);
    let neg_ln = neg_ln64_fn(&mut m, tys, false);
    let slow = slow_fn(&mut m, tys, &g, neg_ln);
    let size = map.workgroup_size(Kernel::Misses, DEFAULT_K);
    let (mut b, at) = entry(tys, vec3, true, size);
    let e = at.g;
    let cap = g.param(&mut b, P::CAP);
    let c = counter(&mut b, &g);
    let count = b.load(c);
    let listed = b.lt(e, count);
    let in_list = b.lt(e, cap);
    let work = b.land(listed, in_list);
    let idle = b.not(work);
    b.if_(idle, |b| b.cur.push(Statement::Return { value: None }));
    let words = b.c(ziggurat::LIST_WORDS);
    let at = b.mul(e, words);
    let [pos, lo, hi] = [0, 1, 2].map(|k| {
        let index = b.add_c(at, k);
        let p = list_word(&mut b, &g, index);
        b.load(p)
    });
    let i = g.element(&mut b, pos);
    let r = b.call(slow, vec![lo, hi, i.0, i.1]);
    let p = out_f64(&mut b, &g, pos);
    b.store(p, r);
    finish(m, b, size)
}

fn validated(module: Module, what: &str) -> Result<(Module, ModuleInfo), LowerError> {
    // FLOAT64 admits `div_wide`'s f64 values, which never leave `exact_div`,
    // and SHADER_INT64 the 64-bit products of `GpuOptions::int64`.
    // SUBGROUP admits `shuffle.rs`'s vote and exchanges.
    let caps = Capabilities::FLOAT64 | Capabilities::SHADER_INT64 | Capabilities::SUBGROUP;
    let info = Validator::new(ValidationFlags::all(), caps)
        .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
        .subgroup_operations(
            naga::valid::SubgroupOperationSet::BASIC
                | naga::valid::SubgroupOperationSet::VOTE
                | naga::valid::SubgroupOperationSet::BALLOT
                | naga::valid::SubgroupOperationSet::SHUFFLE,
        )
        .validate(&module)
        .map_err(|e| {
            LowerError::Internal(format!(
                "naga rejected the Tandem {what} module: {}",
                e.emit_to_string("")
            ))
        })?;
    Ok((module, info))
}

/// The fill module for `map` with default options (no f64), validated by
/// naga.
pub fn fill_compiled(map: FillMap, k: u32) -> Result<(Module, ModuleInfo), LowerError> {
    validated(
        fill_module(map, k, &GpuOptions::default()),
        &format!("{} fill", map.name()),
    )
}

/// The misses module for a bounded `map`, validated by naga.
pub fn misses_compiled(map: FillMap) -> Result<(Module, ModuleInfo), LowerError> {
    validated(misses_module(map), &format!("{} misses", map.name()))
}

/// Which of a map's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    Fill,
    Misses,
}

/// A kernel of `map` as SPIR-V words, post-processed for exact mode when
/// `options.precision` is exact (`NoContraction` on every float operation
/// and the float controls). `options.branch_fallback` and `wide_div` shape
/// exact division; the workgroup size is [`FillMap::workgroup_size`] for
/// a stream of chunks of `k` blocks.
///
/// As [`crate::spirv`], but workgroup memory is not zeroed: naga's
/// polyfill has invocation 0 store zeros over the whole array (16 KiB for
/// the ziggurat's edges) behind one more barrier, and these kernels read
/// only what their workgroup wrote first.
pub fn kernel_spirv(
    map: FillMap,
    kernel: Kernel,
    k: u32,
    options: &GpuOptions,
) -> Result<Vec<u32>, LowerError> {
    let (module, info) = match kernel {
        Kernel::Fill => validated(
            fill_module(map, k, options),
            &format!("{} fill", map.name()),
        )?,
        Kernel::Misses => misses_compiled(map)?,
    };
    let spv_options = naga::back::spv::Options {
        lang_version: (1, 3),
        flags: naga::back::spv::WriterFlags::empty(),
        zero_initialize_workgroup_memory: naga::back::spv::ZeroInitializeWorkgroupMemoryMode::None,
        ..Default::default()
    };
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: ShaderStage::Compute,
        entry_point: ENTRY_POINT.to_string(),
    };
    let words = naga::back::spv::write_vec(&module, &info, &spv_options, Some(&pipeline))
        .map_err(|e| LowerError::Internal(format!("writing the Tandem kernel's SPIR-V: {e}")))?;
    Ok(match options.precision {
        Precision::Exact => crate::spirv_exact(&words),
        Precision::Fast => words,
    })
}

/// The fill module for `map` as SPIR-V words with default options at
/// `precision` (see [`kernel_spirv`]).
pub fn fill_spirv(map: FillMap, precision: Precision) -> Result<Vec<u32>, LowerError> {
    let options = GpuOptions {
        precision,
        ..GpuOptions::default()
    };
    kernel_spirv(map, Kernel::Fill, DEFAULT_K, &options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_map_validates_and_writes() {
        for map in FillMap::ALL {
            let (module, info) = fill_compiled(map, DEFAULT_K).unwrap();
            assert!(crate::wgsl(&module, &info).contains("out["));
            assert!(!fill_spirv(map, Precision::Exact).unwrap().is_empty());
            if map.has_misses() {
                let (module, info) = misses_compiled(map).unwrap();
                let text = crate::wgsl(&module, &info);
                let helper = if map.has_ziggurat() {
                    "ziggurat_slow("
                } else {
                    "retry("
                };
                assert!(text.contains(helper), "{map:?}");
            }
        }
    }

    /// Exact mode's SPIR-V of the f64 maps: every `OpFAdd`, `OpFSub` and
    /// `OpFMul` (f64 ones included) carries `NoContraction`, and the only
    /// extended instructions are integer bit searches (no `fma`, `log`,
    /// `exp` or `sqrt` built-ins).
    #[test]
    fn f64_maps_forbid_contraction() {
        const DECORATE: u32 = 71;
        const NO_CONTRACTION: u32 = 42;
        const EXT_INST: u32 = 12;
        const TYPE_FLOAT: u32 = 22;
        // With and without 64-bit integers: `neg_ln_u64`'s reduction
        // differs (`float64.rs`), its float operations must not.
        for (map, int64) in [FillMap::ExponentialF64, FillMap::NormalF64]
            .into_iter()
            .flat_map(|map| [(map, false), (map, true)])
        {
            for kernel in [Kernel::Fill, Kernel::Misses] {
                if kernel == Kernel::Misses && !map.has_misses() {
                    continue;
                }
                let options = GpuOptions {
                    precision: Precision::Exact,
                    int64,
                    ..GpuOptions::default()
                };
                let words = kernel_spirv(map, kernel, DEFAULT_K, &options).unwrap();
                let (mut ops, mut decorated) = (Vec::new(), std::collections::HashSet::new());
                let mut f64_type = false;
                let mut i = 5;
                while i < words.len() {
                    let (count, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
                    match op {
                        129 | 131 | 133 => ops.push(words[i + 2]),
                        DECORATE if words[i + 2] == NO_CONTRACTION => {
                            decorated.insert(words[i + 1]);
                        }
                        // GLSL.std.450's FindILsb, FindSMsb, FindUMsb
                        // (`countLeadingZeros`) and FClamp (naga clamps a
                        // float into the integer range before converting:
                        // exact, and a no-op for `exp_neg_f64`'s `k`).
                        EXT_INST => assert!(
                            matches!(words[i + 4], 43 | 73..=75),
                            "{map:?} {kernel:?} calls extended instruction {}",
                            words[i + 4]
                        ),
                        TYPE_FLOAT if words[i + 2] == 64 => f64_type = true,
                        _ => {}
                    }
                    i += count;
                }
                assert!(f64_type && ops.len() > 50, "{map:?} {kernel:?}");
                assert!(
                    ops.iter().all(|id| decorated.contains(id)),
                    "{map:?} {kernel:?}: a float operation lacks NoContraction"
                );
            }
        }
    }

    /// The maps with workgroup barriers: before the first barrier, an
    /// invocation returns only under a condition that naga finds uniform
    /// (a whole workgroup), and the bool barrier is in the step loop. The
    /// fill tests cannot catch a missing or skipped barrier: lavapipe runs
    /// a group's eight lanes in order, and they exchange only among
    /// themselves.
    #[test]
    fn barriers_follow_only_uniform_returns() {
        fn any(block: &naga::Block, f: &dyn Fn(&Statement) -> bool) -> bool {
            block.iter().any(|s| {
                f(s) || match s {
                    Statement::If { accept, reject, .. } => any(accept, f) || any(reject, f),
                    Statement::Loop {
                        body, continuing, ..
                    } => any(body, f) || any(continuing, f),
                    Statement::Block(b) => any(b, f),
                    _ => false,
                }
            })
        }
        let barrier = |s: &Statement| matches!(s, Statement::ControlBarrier(_));
        let ret = |s: &Statement| matches!(s, Statement::Return { .. });
        for map in [FillMap::Bool, FillMap::NormalF64] {
            let (module, info) = fill_compiled(map, DEFAULT_K).unwrap();
            let body = &module.entry_points[0].function.body;
            let fi = info.get_entry_point(0);
            let first = body
                .iter()
                .position(|s| any(&naga::Block::from_vec(vec![s.clone()]), &barrier))
                .unwrap_or_else(|| panic!("{map:?} has no barrier"));
            let mut returns = 0;
            for s in &body[..first] {
                if let Statement::If {
                    condition,
                    accept,
                    reject,
                } = s
                    && (any(accept, &ret) || any(reject, &ret))
                {
                    assert!(
                        fi[*condition].uniformity.non_uniform_result.is_none(),
                        "{map:?} returns under a non-uniform condition before a barrier"
                    );
                    returns += 1;
                } else {
                    assert!(
                        !any(&naga::Block::from_vec(vec![s.clone()]), &ret),
                        "{map:?}"
                    );
                }
            }
            assert_eq!(returns, 1, "{map:?}: the idle workgroup's return");
            let in_loop = matches!(&body[first], Statement::Loop { .. });
            assert_eq!(in_loop, map == FillMap::Bool, "{map:?}");
        }
    }

    #[test]
    fn params_words() {
        let p = FillParams {
            key: [1, 2, 3, 4],
            k: 32,
            first_chunk: 0x1_0000_0008,
            n_chunks: 16,
            skip: 3,
            n_blocks: 500,
            n: 0x5_0000_0006,
            ..Default::default()
        };
        let w = p.words();
        assert_eq!(w[..12], [1, 2, 3, 4, 32, 8, 1, 16, 3, 500, 0, 0]);
        assert_eq!(w[16..18], [6, 5]);
        assert_eq!(p.bytes().len(), FillParams::SIZE);
        assert_eq!(p.workgroups(FillMap::Raw, 65535), [1, 1, 1]);
    }
}
