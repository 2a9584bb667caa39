//! The tile IR to one naga compute entry point, in the shape of the
//! Cranelift backend (`phobos-cpu/src/codegen.rs`): statements in order, each
//! a loop over its tile, here strided across the workgroup's invocations.
//!
//! naga rules these files keep (naga 30): every expression that is not a
//! literal, constant, argument or variable is covered by a `Statement::Emit`
//! in the block that uses it (`expr` emits each one where it is appended);
//! an expression emitted inside a block is out of scope after it, so values
//! shared by every element (dims, scalar parameters, scalar nodes) are
//! computed in the body's outermost block (inside the `if` that skips
//! surplus workgroups) before any loop; struct offsets and array strides
//! are set by hand.

mod accumulate;
pub(crate) mod bindings;
mod builder;
mod cast;
mod coop_reduce;
mod coop_warp;
mod dot;
mod dot_ahead;
mod dot_carried;
mod dot_coop;
mod dot_direct;
mod dot_regs;
mod dot_tiles;
mod exact;
mod expr;
mod fold;
mod half_io;
mod ops;
mod reduce;
mod row_cache;
mod split;
mod stmt;
pub(crate) use dot_ahead::CHUNK;
pub(crate) use dot_coop::COOP_CHUNK;
pub(crate) use stmt::reads_own_element;
pub(crate) mod tandem_draw;

pub(crate) use row_cache::WORDS as ROW_CACHE_WORDS;
pub(crate) use tandem_draw::staged::ROW_WORDS_MAX;
pub(crate) use tandem_draw::{largest_stepped_tile, stepped_tasks};

use crate::{ENTRY_POINT, GpuOptions, LowerError, MAX_WORKGROUP_SIZE};
use naga::{
    AddressSpace, BinaryOperator, Binding, Block, BuiltIn, EntryPoint, Expression, Function,
    FunctionArgument, GlobalVariable, Handle, Module, Scalar as NScalar, ScalarKind, ShaderStage,
    Span, Statement, Type, TypeInner, VectorSize,
};
use phobos_core::ir::{ExprId, ExprKind, IdVec, Index, Kernel, LocalId, ParamKind, Place, Stmt};
use phobos_core::types::{Dim, Scalar, Value};
use std::collections::HashMap;

type H = Handle<Expression>;

/// Where a `let`/`var` lives.
#[derive(Clone, Copy)]
enum LocalHome {
    /// A tile of constant extent shared by the workgroup.
    Workgroup(Handle<GlobalVariable>),
    /// A scalar: every invocation computes and keeps its own copy, so no
    /// barrier is needed around it.
    Private(Handle<naga::LocalVariable>),
}

struct Lower<'k> {
    k: &'k Kernel,
    /// What the emitter follows: the plan's decisions (stores, loops,
    /// folds) and the options it was made for.
    plan: &'k crate::plan::Plan,
    options: GpuOptions,
    m: Module,
    f: Function,
    /// The block statements are appended to now.
    cur: Vec<Statement>,
    types: HashMap<Scalar, Handle<Type>>,
    u32_ty: Handle<Type>,
    tensors: Vec<Option<Handle<GlobalVariable>>>,
    /// The piece bindings of split tensors (by parameter index; empty for
    /// one binding) and their splits (`split.rs`).
    pieces: Vec<Vec<Handle<GlobalVariable>>>,
    splits: Vec<Option<crate::Split>>,
    locals: IdVec<LocalId, LocalHome>,
    /// Values loaded once at the top of the function.
    block_id: [H; 3],
    dims: Vec<H>,
    grid: [H; 3],
    scalars: Vec<Option<H>>,
    /// The invocations that run one block: the stride of every loop over
    /// a block's elements or chunk tasks ([`packing`]).
    block_invocations: u32,
    /// The invocation's index among its block's `block_invocations`.
    local: H,
    exact: exact::ExactFns,
    /// The workgroup tile of each element type that stores reading their own
    /// destination compute their value into first (`stmt.rs`).
    staging: HashMap<Scalar, Handle<GlobalVariable>>,
    /// The workgroup arrays that reductions computed by the whole workgroup
    /// share for their levels (`coop_reduce.rs`), and the slots the levels
    /// above subgroups alternate between (`coop_warp.rs`, `true`): values
    /// by element type, and `argmax`'s and `argmin`'s indices (`true`).
    tree_buffers: HashMap<(Scalar, bool, bool), Handle<GlobalVariable>>,
    /// The function-local flag of the half of those slots used next.
    warp_half: Option<H>,
    /// Reductions and products of the current statement computed ahead of
    /// it (`coop_reduce.rs`, `dot_ahead.rs`).
    coop: HashMap<ExprId, coop_reduce::Computed>,
    /// The workgroup arrays that products computed ahead stage their
    /// operands' K chunks in, and the subgroups' slots of the stores from
    /// their tiles, by name and length (`dot_ahead.rs`, `dot_tiles.rs`).
    dot_buffers: HashMap<(&'static str, u32), Handle<GlobalVariable>>,
    /// The entry point's `SubgroupId`, once a product on cooperative
    /// matrices asked for it (`dot_coop.rs`).
    subgroup_id: Option<H>,
    /// The accumulators of a product that the open loop carries
    /// (`dot_carried.rs`), between its `for` and its end.
    carried: Option<dot_carried::Carried>,
    /// Whether this block's subgroups are laid out as `subgroup_width`
    /// needs (`Lower::subgroup_check`), uniform over the workgroup; `None`
    /// where reductions use no subgroup operations.
    subgroup_ok: Option<H>,
    /// Set while a group of 4 elements is computed lane by lane.
    lane: Option<Lane>,
    /// Derived keys and staged words of Tandem draws (`tandem_draw/`).
    tandem: tandem_draw::DrawState,
    /// The value of each node whose leaves are all constants (`fold.rs`).
    consts: IdVec<ExprId, Option<Value>>,
    /// Values of a row kept in registers across statements
    /// (`row_cache.rs`).
    rows: Option<row_cache::RowCache>,
}

/// The lane of a group of 4 consecutive elements being computed, and the
/// 16-byte loads made for the group (one per load node, shared by lanes).
struct Lane {
    lane: u32,
    /// The tile position of lane 0.
    pos0: Vec<H>,
    loads: HashMap<ExprId, H>,
}

/// The workgroup memory a kernel may use where no device says otherwise
/// (`GpuOptions::workgroup_memory`'s default, `phobosc build`): WebGPU's
/// default `maxComputeWorkgroupStorageSize`, which lavapipe also reports
/// (NVIDIA's Vulkan driver reports 48 KiB).
pub const WORKGROUP_MEMORY_LIMIT: u64 = 16 * 1024;

fn unsupported(what: impl Into<String>) -> LowerError {
    LowerError::Unsupported(what.into())
}

pub(crate) fn nscalar(s: Scalar) -> Result<NScalar, LowerError> {
    Ok(match s {
        Scalar::Bool => NScalar::BOOL,
        Scalar::I32 => NScalar::I32,
        Scalar::U32 => NScalar::U32,
        Scalar::F32 => NScalar::F32,
        // No value is 16-bit: their tensors hold u32 words (`half_io.rs`).
        Scalar::F16 | Scalar::BF16 => NScalar::U32,
        Scalar::I64 | Scalar::U64 | Scalar::F64 => {
            return Err(unsupported(format!(
                "{s} values (64-bit types need device features; only bool, i32, u32 and f32 are lowered)"
            )));
        }
    })
}

/// `kernel` with every extent the lowering needs constant made constant
/// from a launch's `dims`: the extents of `let`/`var` tiles (workgroup
/// memory) and the tiles of stores whose value reads their own destination
/// (staged in workgroup memory first), and every extent of a kernel with a
/// reduction or a product over a dim-dependent extent, or with any product
/// (its tensors' shapes and its grid too), so that the workgroup computes the reduction (`coop_reduce.rs`) or
/// stages the product (`dot_ahead.rs`) and rows move 16 bytes at a time.
/// The result is one pipeline per value of those dims, so a kernel that has
/// none of them is returned as it is. An
/// extent of 0 stays 0: the tile is empty, so reading it reads outside it
/// (0, as the interpreter's). Its workgroup array still has one element
/// (`bindings::locals`: they cannot be empty), which nothing reads or
/// writes, and tile loops divide by a constant extent of 0 as by 1
/// (`Lower::tile_loop_range`), a loop that runs no times either way.
/// Where the extents are made constant, so are the dims' values.
///
/// It also records which dims that end a 32-bit tensor's rows are a
/// multiple of 4 at this launch ([`Kernel::dim_align`]), so that such a
/// tensor moves 16 bytes at a time (`stmt::quad_slice`) though its length
/// is a dim: at most two pipelines per dim, not one per value.
pub fn specialize<'k>(kernel: &'k Kernel, dims: &[u64]) -> std::borrow::Cow<'k, Kernel> {
    let mut k = specialize_extents(kernel, dims);
    let align = row_alignment(&k, dims);
    if align.iter().any(|&a| a > 1) && k.dim_align != align {
        k.to_mut().dim_align = align;
    }
    k
}

/// For each dim: 4 where it is the last axis of a tensor of 32-bit
/// elements that some load or store slices by a constant multiple of 4
/// along it, and its value at this launch is a multiple of 4 (a row's
/// groups of 4 then lie wholly inside or outside it), else 1.
fn row_alignment(k: &Kernel, dims: &[u64]) -> Vec<u64> {
    let quads = |index: &[Index]| matches!(index.last(), Some(Index::Range { len: Dim::Const(n), .. }) if n.is_multiple_of(4));
    let mut sliced = vec![false; k.params.len()];
    for e in &k.exprs {
        if let ExprKind::Load {
            place: Place::Param(p),
            index,
        } = &e.kind
        {
            sliced[*p] |= quads(index);
        }
    }
    for s in &k.body {
        if let Stmt::Store {
            place: Place::Param(p),
            index,
            ..
        } = s
        {
            sliced[*p] |= quads(index);
        }
    }
    let mut align = vec![1; k.dims.len()];
    for (p, param) in k.params.iter().enumerate() {
        if let ParamKind::Tensor { shape, elem, .. } = &param.kind
            && sliced[p]
            && matches!(elem, Scalar::I32 | Scalar::U32 | Scalar::F32)
            && let Some(Dim::Sym(s)) = shape.last()
            && dims.get(*s).is_some_and(|v| v.is_multiple_of(4))
        {
            align[*s] = 4;
        }
    }
    align
}

fn specialize_extents<'k>(kernel: &'k Kernel, dims: &[u64]) -> std::borrow::Cow<'k, Kernel> {
    let symbolic = |shape: &[Dim]| shape.iter().any(|d| matches!(d, Dim::Sym(_)));
    let staged = |s: &Stmt| match s {
        Stmt::Store {
            place,
            index,
            value,
        } => {
            index.iter().any(|i| {
                matches!(
                    i,
                    Index::Range {
                        len: Dim::Sym(_),
                        ..
                    }
                )
            }) && phobos_core::ir::analysis::reads_place(kernel, *value, *place)
        }
        _ => false,
    };
    let locals = kernel.locals.iter().any(|l| symbolic(&l.shape));
    // A reduction over a dim-dependent extent is computed by the whole
    // workgroup only over a constant one (`coop_reduce.rs`): such a kernel
    // is made constant everywhere, tensors' shapes included, so that its
    // rows are also read and written 16 bytes at a time (`stmt::quad_slice`).
    // A product over such an extent (attention's head dimension `D`) is
    // staged and kept in registers only over a constant one
    // (`dot_ahead.rs`, `dot_regs.rs`): the same.
    let reduces = kernel.exprs.iter().any(|e| {
        e.kind
            .contracted()
            .iter()
            .any(|x| symbolic(&kernel.exprs[*x].shape))
    });
    // A product of constant extents over a dim-dependent K (Triton's loop
    // over K, whose slices start at the loop's variable) too, so that the
    // plan can prove its blocks' slices inside (`plan::dots`).
    let reduces = reduces
        || kernel
            .exprs
            .iter()
            .any(|e| matches!(e.kind, ExprKind::Dot { .. }));
    // A loop of reductions over dim-dependent bounds (a user's chunked
    // loop over `N / 256` chunks) too, so that the plan can write it out
    // (`plan::unroll`).
    let reduces = reduces
        || kernel.body.iter().any(|s| match s {
            Stmt::For { start, end, .. } => {
                [*start, *end].iter().any(|&b| {
                    kernel
                        .reachable(b)
                        .iter()
                        .any(|&n| matches!(kernel.exprs[n].kind, ExprKind::DimValue(_)))
                }) && kernel
                    .exprs
                    .iter()
                    .any(|e| matches!(e.kind, ExprKind::Reduce { .. }))
            }
            Stmt::Let { .. } | Stmt::Var { .. } | Stmt::Store { .. } | Stmt::EndFor => false,
        });
    if !locals && !reduces && !kernel.body.iter().any(staged) {
        return std::borrow::Cow::Borrowed(kernel);
    }
    let mut k = kernel.clone();
    if reduces {
        let fix = |d: &mut Dim| {
            if let Dim::Sym(s) = *d {
                *d = Dim::Const(dims[s]);
            }
        };
        let fix_index = |index: &mut [Index]| {
            for i in index {
                if let Index::Range { len, .. } = i {
                    fix(len);
                }
            }
        };
        for e in &mut k.exprs {
            e.shape.iter_mut().for_each(fix);
            if let ExprKind::Load { index, .. } = &mut e.kind {
                fix_index(index);
            }
            // A dim's value, as the interpreter gives it (its extent as an
            // i32), so that analyses see counters such as
            // `(r + iota(0)) * N + iota(1)` run along an R-row tile.
            if let ExprKind::DimValue(s) = e.kind {
                e.kind = ExprKind::Const(Value::I32(dims[s] as i32));
            }
        }
        for p in &mut k.params {
            if let ParamKind::Tensor { shape, .. } = &mut p.kind {
                shape.iter_mut().for_each(fix);
            }
        }
        // The grid too, so that the plan knows every block's slices
        // (`plan::dots`).
        for g in &mut k.grid {
            if let Some(v) = g.eval(dims) {
                *g = phobos_core::ir::GridExpr::Const(v);
            }
        }
        for s in &mut k.body {
            if let Stmt::Store { index, .. } = s {
                fix_index(index);
            }
        }
    }
    for l in &mut k.locals {
        for d in &mut l.shape {
            if let Dim::Sym(s) = *d {
                *d = Dim::Const(dims[s]);
            }
        }
    }
    for (n, s) in kernel.body.iter().enumerate() {
        if !staged(s) {
            continue;
        }
        if let Stmt::Store { index, .. } = &mut k.body[n] {
            for i in index {
                if let Index::Range { len, .. } = i
                    && let Dim::Sym(s) = *len
                {
                    *len = Dim::Const(dims[s]);
                }
            }
        }
    }
    std::borrow::Cow::Owned(k)
}

/// Lowers a checked kernel to a naga module with one compute entry point.
/// The entry point's arguments, shared by kernels and the Tandem fills:
/// the invocation's index in its workgroup, the workgroup's id and the
/// dispatch's size (from which the linear block number is made).
pub(crate) fn entry_arguments(u32_ty: Handle<Type>, vec3: Handle<Type>) -> Vec<FunctionArgument> {
    let arg = |name: &str, ty, builtin| FunctionArgument {
        name: Some(name.into()),
        ty,
        binding: Some(Binding::BuiltIn(builtin)),
    };
    vec![
        arg("local_index", u32_ty, BuiltIn::LocalInvocationIndex),
        arg("workgroup_id", vec3, BuiltIn::WorkGroupId),
        arg("num_workgroups", vec3, BuiltIn::NumWorkGroups),
    ]
}

pub fn lower(kernel: &Kernel, options: &GpuOptions) -> Result<Module, LowerError> {
    lower_split(kernel, options, &[])
}

/// [`lower`] with the tensors `splits` names (by parameter index) bound in
/// pieces (see [`crate::Split`]).
pub fn lower_split(
    kernel: &Kernel,
    options: &GpuOptions,
    splits: &[Option<crate::Split>],
) -> Result<Module, LowerError> {
    lower_noted(kernel, options, splits).map(|l| l.module)
}

/// A lowered module and what a runtime needs beside it.
pub(crate) struct Lowered {
    pub module: Module,
    /// How the lowering took each statement's Tandem draws (stepped,
    /// staged or direct, and why), for the provenance.
    pub notes: Vec<String>,
    /// Blocks each workgroup runs ([`packing`]).
    pub blocks_per_workgroup: u32,
    /// The plan the module follows.
    pub plan: crate::plan::Plan,
}

/// [`lower_split`], with the notes and the blocks a workgroup runs.
pub(crate) fn lower_noted(
    kernel: &Kernel,
    options: &GpuOptions,
    splits: &[Option<crate::Split>],
) -> Result<Lowered, LowerError> {
    if !(1..=MAX_WORKGROUP_SIZE).contains(&options.workgroup_size) {
        return Err(unsupported(format!(
            "a workgroup size of {} (it must be in 1..={MAX_WORKGROUP_SIZE})",
            options.workgroup_size
        )));
    }
    let mut plan = crate::plan::plan(kernel, options)?;
    let lowered = match lower_packed(&plan, options, splits)? {
        Some(l) => l,
        // Blocks that share a workgroup would share its memory and its
        // barriers: one block a workgroup, its extra invocations idle.
        None => {
            plan.with_packing(options, 1)?;
            lower_packed(&plan, options, splits)?.expect("one block a workgroup always lowers")
        }
    };
    Ok(Lowered {
        module: lowered.module,
        notes: lowered.notes,
        blocks_per_workgroup: lowered.blocks_per_workgroup,
        plan,
    })
}

/// What one emission gives ([`Lowered`] but for the plan it followed).
struct Emitted {
    module: Module,
    notes: Vec<String>,
    blocks_per_workgroup: u32,
}

/// The lowering with `packed` blocks a workgroup, or `None` where they
/// would share workgroup memory or a barrier.
fn lower_packed(
    planned: &crate::plan::Plan,
    options: &GpuOptions,
    splits: &[Option<crate::Split>],
) -> Result<Option<Emitted>, LowerError> {
    let kernel = &planned.kernel;
    let packed = planned.packed;
    let mut m = Module::default();
    let mut types = HashMap::new();
    for s in [Scalar::Bool, Scalar::I32, Scalar::U32, Scalar::F32] {
        let ty = m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Scalar(nscalar(s)?),
            },
            Span::UNDEFINED,
        );
        types.insert(s, ty);
    }
    let u32_ty = types[&Scalar::U32];
    let vec3 = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Vector {
                size: VectorSize::Tri,
                scalar: NScalar::U32,
            },
        },
        Span::UNDEFINED,
    );

    let layout = crate::layout::layout_split(kernel, splits)?;
    let uniforms = bindings::uniforms(&layout, kernel, &mut m, &types);
    let (tensors, pieces) = bindings::tensors(
        &layout,
        kernel,
        &mut m,
        &types,
        &planned.vec4,
        &planned.native_halves,
    );

    let mut f = Function {
        name: Some(ENTRY_POINT.into()),
        arguments: entry_arguments(u32_ty, vec3),
        ..Default::default()
    };

    let locals = bindings::locals(kernel, &mut m, &mut f, &types)?;

    // Placeholders until the top of the body loads the real values.
    let placeholder = f
        .expressions
        .append(Expression::FunctionArgument(0), Span::UNDEFINED);
    let mut lw = Lower {
        k: kernel,
        plan: planned,
        options: *options,
        m,
        f,
        cur: Vec::new(),
        types,
        u32_ty,
        tensors,
        pieces,
        splits: (0..kernel.params.len())
            .map(|i| splits.get(i).copied().flatten())
            .collect(),
        locals,
        block_id: [placeholder; 3],
        dims: Vec::new(),
        grid: [placeholder; 3],
        scalars: vec![None; kernel.params.len()],
        block_invocations: options.workgroup_size / packed,
        local: placeholder,
        exact: Default::default(),
        staging: HashMap::new(),
        tree_buffers: HashMap::new(),
        warp_half: None,
        coop: HashMap::new(),
        dot_buffers: HashMap::new(),
        subgroup_id: None,
        carried: None,
        subgroup_ok: None,
        lane: None,
        tandem: Default::default(),
        consts: fold::constants(kernel),
        rows: None,
    };
    for &(elem, count) in &planned.upfront.staging {
        let g = bindings::staging_tile(&mut lw.m, &lw.types, elem, count);
        lw.staging.insert(elem, g);
    }
    tandem_draw::draw_buffers(&mut lw);
    let pv = lw.expr(Expression::GlobalVariable(uniforms.var));
    let member = |lw: &mut Lower<'_>, index: u32| {
        let p = lw.expr(Expression::AccessIndex { base: pv, index });
        lw.var_load(p)
    };
    for (i, mi) in uniforms.scalar_member.iter().enumerate() {
        if let Some(mi) = mi {
            let v = member(&mut lw, *mi);
            lw.scalars[i] = Some(
                if kernel.params[i].kind == ParamKind::Scalar(Scalar::Bool) {
                    let zero = lw.lit(Value::U32(0));
                    lw.binary(BinaryOperator::NotEqual, v, zero)
                } else {
                    v
                },
            );
        }
    }
    for s in 0..kernel.dims.len() {
        let v = member(&mut lw, uniforms.dim_base + s as u32);
        lw.dims.push(v);
    }
    for a in 0..3 {
        lw.grid[a] = member(&mut lw, uniforms.grid_base + a as u32);
    }
    for (seed, word, mi) in &uniforms.keys {
        let v = member(&mut lw, *mi);
        lw.tandem.host_key(*seed, *word, v);
    }
    check_extents(kernel)?;
    lw.blocks()?;
    if packed > 1
        && (has_barrier(&lw.cur)
            || lw
                .m
                .global_variables
                .iter()
                .any(|(_, g)| g.space == AddressSpace::WorkGroup))
    {
        return Ok(None);
    }

    let mut f = std::mem::take(&mut lw.f);
    f.body = Block::from_vec(std::mem::take(&mut lw.cur));
    let mut notes = std::mem::take(&mut lw.tandem.notes);
    if packed > 1 {
        notes.push(format!(
            "{packed} blocks a workgroup of {} invocations, {} each",
            options.workgroup_size, lw.block_invocations
        ));
    }
    let mut m = lw.m;
    m.entry_points.push(EntryPoint {
        name: ENTRY_POINT.into(),
        stage: ShaderStage::Compute,
        early_depth_test: None,
        workgroup_size: [options.workgroup_size, 1, 1],
        workgroup_size_overrides: None,
        function: f,
        mesh_info: None,
        task_payload: None,
        incoming_ray_payload: None,
    });
    Ok(Some(Emitted {
        module: m,
        notes,
        blocks_per_workgroup: packed,
    }))
}

/// Tile positions and flat indices are u32: refuse a constant extent or a
/// statement tile of constant extents that does not fit.
fn check_extents(k: &Kernel) -> Result<(), LowerError> {
    let fits = |shape: &[Dim]| {
        shape
            .iter()
            .try_fold(1u64, |n, d| match d {
                Dim::Const(v) => n.checked_mul(*v).filter(|n| *n <= u32::MAX as u64),
                Dim::Sym(_) => Some(n),
            })
            .is_some()
    };
    let mut shapes: Vec<&[Dim]> = k.exprs.iter().map(|e| e.shape.as_slice()).collect();
    shapes.extend(k.locals.iter().map(|l| l.shape.as_slice()));
    for p in &k.params {
        if let ParamKind::Tensor { shape, .. } = &p.kind {
            shapes.push(shape);
        }
    }
    let mut tiles = Vec::new();
    for s in &k.body {
        if let Stmt::Store { index, .. } = s {
            tiles.push(
                index
                    .iter()
                    .filter_map(|i| match i {
                        Index::Range { len, .. } => Some(*len),
                        Index::Single(_) => None,
                    })
                    .collect::<Vec<Dim>>(),
            );
        }
    }
    for shape in shapes.into_iter().chain(tiles.iter().map(|t| t.as_slice())) {
        if !fits(shape) {
            return Err(unsupported(format!(
                "a tile of {} elements (positions are 32-bit on the GPU)",
                k.shape_text(shape)
            )));
        }
    }
    Ok(())
}

fn kind(s: Scalar) -> ScalarKind {
    match s {
        Scalar::Bool => ScalarKind::Bool,
        Scalar::I32 | Scalar::I64 => ScalarKind::Sint,
        Scalar::U32 | Scalar::U64 | Scalar::F16 | Scalar::BF16 => ScalarKind::Uint,
        Scalar::F32 | Scalar::F64 => ScalarKind::Float,
    }
}

fn index_exprs(index: &[Index]) -> Vec<ExprId> {
    index.iter().filter_map(Index::expr).collect()
}

/// How many blocks one workgroup of `workgroup_size` invocations runs.
///
/// A kernel whose statements step Tandem chunks (`tandem_draw/stepped.rs`)
/// has a natural number of invocations a block: one per chunk task of its
/// largest stepped tile, a power of two from 32 (one NVIDIA warp) to
/// [`crate::PORTABLE_WORKGROUP_SIZE`]. A workgroup size that is a larger multiple of it
/// runs that many blocks side by side, one after the other in block order,
/// each on its own invocations, so that small blocks (32 invocations for
/// 4,096 elements) still fill the device: a GPU keeps only so many
/// workgroups resident at once (32 a multiprocessor on the H200). Blocks
/// can share a workgroup only where nothing is shared between its
/// invocations: a kernel whose lowering needs workgroup memory or a barrier
/// is lowered again with one block a workgroup. Every other kernel runs
/// one block a workgroup. Which block runs where never changes a bit.
pub(crate) fn packing(kernel: &Kernel, workgroup_size: u32) -> u32 {
    let Some(n) = largest_stepped_tile(kernel) else {
        return 1;
    };
    let per_block = stepped_block_invocations(n);
    if workgroup_size > per_block && workgroup_size.is_multiple_of(per_block) {
        workgroup_size / per_block
    } else {
        1
    }
}

/// The invocations a block of a kernel whose largest stepped tile has `n`
/// positions wants: one per chunk task, as a power of two in
/// `32..=PORTABLE_WORKGROUP_SIZE`.
pub(crate) fn stepped_block_invocations(n: u64) -> u32 {
    let tasks = stepped_tasks(n) - 8;
    tasks
        .next_power_of_two()
        .clamp(32, u64::from(crate::PORTABLE_WORKGROUP_SIZE)) as u32
}

/// Whether a block of statements (or one nested in it) waits at a barrier.
fn has_barrier(block: &[Statement]) -> bool {
    block.iter().any(|s| match s {
        Statement::ControlBarrier(_) | Statement::MemoryBarrier(_) => true,
        Statement::Block(b) => has_barrier(b),
        Statement::If { accept, reject, .. } => has_barrier(accept) || has_barrier(reject),
        Statement::Loop {
            body, continuing, ..
        } => has_barrier(body) || has_barrier(continuing),
        Statement::Switch { cases, .. } => cases.iter().any(|c| has_barrier(&c.body)),
        _ => false,
    })
}

/// Adds a place once; `Place` is not `Hash`, and a kernel has few places.
fn push_place(v: &mut Vec<Place>, p: Place) {
    if !v.contains(&p) {
        v.push(p);
    }
}

impl Lower<'_> {
    /// The body, run by the workgroups that stand for a block. The runtime
    /// dispatches [`crate::dispatch_size`] workgroups, which may be more than
    /// the grid's blocks and laid out otherwise: workgroup `(x, y, 0)` of a
    /// dispatch of `(nx, ny, 1)` is block number `x + nx * y`,
    /// skipped when that is not below `grid_x * grid_y * grid_z`, and else
    /// decomposed with x fastest. The condition is uniform per workgroup
    /// (workgroup id, workgroup count and uniforms only), so the barriers
    /// inside are allowed.
    fn blocks(&mut self) -> Result<(), LowerError> {
        use BinaryOperator as B;
        let wg = self.expr(Expression::FunctionArgument(1));
        let nwg = self.expr(Expression::FunctionArgument(2));
        let mut c = [wg; 2];
        for (a, c) in c.iter_mut().enumerate() {
            *c = self.expr(Expression::AccessIndex {
                base: wg,
                index: a as u32,
            });
        }
        let nx = self.expr(Expression::AccessIndex {
            base: nwg,
            index: 0,
        });
        let rows = self.binary(B::Multiply, c[1], nx);
        let mut lin = self.binary(B::Add, c[0], rows);
        self.local = self.expr(Expression::FunctionArgument(0));
        if self.plan.packed > 1 {
            // Workgroup `w` runs blocks `w * packed + j`, block `j` on
            // invocations `j * block_invocations ..`.
            let li = self.local;
            let shift = self.u32c(self.block_invocations.trailing_zeros());
            let sub = self.binary(B::ShiftRight, li, shift);
            let mask = self.u32c(self.block_invocations - 1);
            self.local = self.binary(B::And, li, mask);
            let packed = self.u32c(self.plan.packed);
            let first = self.binary(B::Multiply, lin, packed);
            lin = self.binary(B::Add, first, sub);
        }
        let [gx, gy, gz] = self.grid;
        let gxy = self.binary(B::Multiply, gx, gy);
        let total = self.binary(B::Multiply, gxy, gz);
        let inside = self.binary(B::Less, lin, total);
        let accept = self.nested(|lw| {
            let x = lw.binary(B::Modulo, lin, gx);
            let rest = lw.binary(B::Divide, lin, gx);
            let y = lw.binary(B::Modulo, rest, gy);
            let z = lw.binary(B::Divide, rest, gy);
            for (a, v) in [x, y, z].into_iter().enumerate() {
                lw.block_id[a] = lw.bitcast(v, ScalarKind::Sint);
            }
            lw.body()
        })?;
        self.if_then(inside, accept);
        Ok(())
    }
}
