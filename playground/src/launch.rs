//! Launches from the page: binding a request's dims and scalars to a kernel
//! (tensors are generated as `phobosc run` generates them), running it on
//! the reference interpreter, and planning the same launch for WebGPU with
//! the WGSL `phobosc build` writes.
//!
//! Bounds, checked before anything runs (their numbers, and why, are
//! `phobos_core::bounds::playground`'s): the tensors of one launch hold at
//! most [`MAX_TENSOR_BYTES`] together, and an interpreter run evaluates at
//! most [`MAX_WORK`] expression nodes (the page also stops a run that takes
//! longer).

use crate::{LaunchRequest, Response, SOURCE_NAME, diag};
use phobos_core::Program;
use phobos_core::bind::{BindError, Binder};
use phobos_core::bounds::playground::{MAX_GPU_WORK, MAX_TENSOR_BYTES, MAX_WORK};
use phobos_core::interp;
use phobos_core::ir::{BinOp, ExprId, ExprKind, Index, Kernel, LocalId, ParamKind, Stmt, UnOp};
use phobos_core::launch::{Arg, Bound, bind};
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Dim, Value};
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;

/// A checked kernel with its arguments bound, within the bounds.
pub struct Prepared {
    pub program: Program,
    pub name: String,
    pub kernel: Kernel,
    pub args: Vec<Arg>,
    pub bound: Bound,
}

fn diagnostics_failure(program: &Program, diags: &[phobos_core::Diagnostic]) -> Response {
    Response {
        json: json!({
            "ok": false,
            "error": diags.first().map_or(String::new(), |d| format!("{}: {}", d.code, d.message)),
            "diagnostics": diag::to_json(diags, program),
        }),
        blob: Vec::new(),
    }
}

/// Parses and checks `source`, and picks the kernel: the one named, else
/// the first of the file.
fn kernel(
    source: &str,
    name: Option<&str>,
    config: &BTreeMap<String, i64>,
) -> Result<(Program, String, Kernel), Response> {
    let (program, diags) = Program::parse(SOURCE_NAME, source);
    if !diags.is_empty() {
        return Err(diagnostics_failure(&program, &diags));
    }
    let name = match name {
        Some(n) => n.to_string(),
        None => match program.kernel_names().first() {
            Some(n) => n.to_string(),
            None => return Err(Response::fail("this source defines no kernel")),
        },
    };
    let config: Vec<(String, i64)> = config.iter().map(|(n, v)| (n.clone(), *v)).collect();
    match program.kernel(&name, &config) {
        Ok(k) => Ok((program, name, k)),
        Err(d) => Err(diagnostics_failure(&program, &d)),
    }
}

/// Checks the source, picks the kernel and binds the request's dims and
/// scalars, generating the tensors, through the core's binder
/// (`phobos_core::bind`, as `phobosc run` binds its flags); refuses a launch
/// whose tensors exceed [`MAX_TENSOR_BYTES`]. `Err` is the answer to give
/// instead (diagnostics or a message). `phobosc serve` binds its runs here
/// too.
pub fn prepare(r: &LaunchRequest) -> Result<Prepared, Response> {
    let (program, name, kernel) = kernel(&r.source, r.kernel.as_deref(), &r.config)?;
    let mut b = Binder::new(&kernel);
    for (d, v) in &r.dims {
        b.dim(d, &text(v), "the request").map_err(|e| {
            Response::fail(match e {
                BindError::BadExtent { .. } => format!("dimension `{d}`: {e}"),
                e => e.to_string(),
            })
        })?;
    }
    for (a, v) in &r.args {
        b.scalar(a, &text(v)).map_err(|e| {
            Response::fail(match e {
                BindError::BadScalar { .. } => format!("`{a}`: {e}"),
                BindError::NotScalar { .. } => {
                    format!("{e}, not a scalar: the playground generates its tensors")
                }
                e => e.to_string(),
            })
        })?;
    }
    let (args, _) = b.finish(MAX_TENSOR_BYTES, false).map_err(|e| {
        Response::fail(match e {
            BindError::Unbound { .. } => format!("{e}: give it an extent"),
            BindError::TooLarge { name, shape, .. } => format!(
                "`{name}` with shape {shape:?} would take the launch's tensors past {} MiB, \
                 the playground's bound; use smaller dims",
                MAX_TENSOR_BYTES >> 20
            ),
            e => e.to_string(),
        })
    })?;
    let bound = bind(&kernel, &args).map_err(|e| Response::fail(e.to_string()))?;
    Ok(Prepared {
        program,
        name,
        kernel,
        args,
        bound,
    })
}

/// A dim's or scalar's JSON value as the text the binder parses: a string
/// as it is, anything else as JSON writes it (so `1.5`, `true` or `null`).
fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The expression-node evaluations an interpreter run of a prepared launch
/// takes, at most: every statement's tile, times the kernel's nodes, times
/// the blocks. `u64::MAX` when a loop's bounds cannot be followed.
pub fn work(p: &Prepared) -> u64 {
    work_of(&p.kernel, &p.bound)
}

fn work_of(kernel: &Kernel, bound: &Bound) -> u64 {
    let extent = |d: &Dim| match d {
        Dim::Const(v) => *v,
        Dim::Sym(s) => bound.dims.get(*s).copied().unwrap_or(0),
    };
    let tile = |shape: &mut dyn Iterator<Item = u64>| shape.fold(1u64, |n, e| n.saturating_mul(e));
    let mut elements: u64 = 0;
    // The iterations of the open loops, multiplied, and the range of each
    // open loop's variable (`None`: not known).
    let mut trips: Vec<u64> = vec![1];
    let mut vars: Vec<(LocalId, Option<(i64, i64)>)> = Vec::new();
    for s in &kernel.body {
        let n = match s {
            Stmt::Let { local, .. } | Stmt::Var { local, .. } => {
                tile(&mut kernel.locals[*local].shape.iter().map(extent))
            }
            Stmt::Store { index, .. } => tile(&mut index.iter().map(|i| match i {
                Index::Range { len, .. } => extent(len),
                Index::Single(_) => 1,
            })),
            Stmt::For { local, start, end } => {
                // The most iterations over every value the enclosing loops'
                // variables take; a bound whose range is not known here is
                // counted as unbounded, so refused.
                let range = |id| bound_range(kernel, bound, &vars, id);
                let (count, var) = match (range(*start), range(*end)) {
                    (Some(a), Some(b)) => ((b.1 - a.0).max(0) as u64, Some((a.0, b.1 - 1))),
                    _ => (u64::MAX, None),
                };
                let outer = *trips.last().unwrap_or(&1);
                trips.push(outer.saturating_mul(count.max(1)));
                vars.push((*local, var.filter(|(lo, hi)| lo <= hi)));
                continue;
            }
            Stmt::EndFor => {
                trips.pop();
                vars.pop();
                continue;
            }
        };
        let per_element = s
            .value()
            .map_or(1, |v| reduced_elements(kernel, v, &extent));
        let n = n
            .saturating_mul(per_element)
            .saturating_mul(*trips.last().unwrap_or(&1));
        elements = elements.saturating_add(n);
    }
    let blocks = bound.grid.iter().fold(1u64, |n, g| n.saturating_mul(*g));
    elements
        .saturating_mul(kernel.exprs.len().max(1) as u64)
        .saturating_mul(blocks)
}

/// The least and greatest value a loop bound takes, built from constants,
/// dims and the variables of enclosing loops (`vars`, innermost last) with
/// negation, `+`, `-`, `*` and `/`; `None` when it uses anything else, reads a
/// variable whose range is not known, or could leave the i32 range (where
/// the kernel's arithmetic wraps and an interval says nothing).
fn bound_range(
    kernel: &Kernel,
    bound: &Bound,
    vars: &[(LocalId, Option<(i64, i64)>)],
    id: ExprId,
) -> Option<(i64, i64)> {
    let range = |id| bound_range(kernel, bound, vars, id);
    let corners = |(a, b): ((i64, i64), (i64, i64)), f: fn(i64, i64) -> i64| {
        let c = [f(a.0, b.0), f(a.0, b.1), f(a.1, b.0), f(a.1, b.1)];
        (*c.iter().min().unwrap(), *c.iter().max().unwrap())
    };
    let r = match &kernel.exprs[id].kind {
        ExprKind::Const(v) => {
            let v = v.as_i128() as i64;
            (v, v)
        }
        ExprKind::DimValue(s) => {
            let v = i64::try_from(*bound.dims.get(*s)?).ok()?;
            (v, v)
        }
        ExprKind::Local(l) => vars.iter().rev().find(|(v, _)| v == l)?.1?,
        ExprKind::Unary(UnOp::Neg, a) => {
            let a = range(*a)?;
            (-a.1, -a.0)
        }
        ExprKind::Binary(op, a, b) => {
            let ab = (range(*a)?, range(*b)?);
            match op {
                BinOp::Add => (ab.0.0 + ab.1.0, ab.0.1 + ab.1.1),
                BinOp::Sub => (ab.0.0 - ab.1.1, ab.0.1 - ab.1.0),
                BinOp::Mul => corners(ab, |x, y| x * y),
                // Truncating division is monotone in each operand while the
                // divisor keeps its sign, so the corners bound it.
                BinOp::Div if ab.1.0 > 0 || ab.1.1 < 0 => corners(ab, |x, y| x / y),
                _ => return None,
            }
        }
        _ => return None,
    };
    let i32_range = i64::from(i32::MIN)..=i64::from(i32::MAX);
    (i32_range.contains(&r.0) && i32_range.contains(&r.1)).then_some(r)
}

/// An upper bound on the evaluations one element of a statement's value
/// takes through its reductions: the product of their reduced extents.
fn reduced_elements(kernel: &Kernel, root: ExprId, extent: &dyn Fn(&Dim) -> u64) -> u64 {
    let mut n: u64 = 1;
    for id in kernel.reachable(root) {
        if let ExprKind::Reduce { arg, axis, .. } = &kernel.exprs[id].kind {
            let len = extent(&kernel.exprs[*arg].shape[*axis as usize]);
            n = n.saturating_mul(len.max(1));
        }
    }
    n
}

/// The 32-bit little-endian words of a tensor's data (a bool as one word, 0
/// or 1; a 64-bit element as two words, low first; two 16-bit elements a
/// word, padded with zeros).
pub fn words(t: &Tensor) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.len() * 4);
    match &t.data {
        Data::Bool(v) => v
            .iter()
            .for_each(|&b| out.extend_from_slice(&(b as u32).to_le_bytes())),
        Data::I32(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::U32(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::F32(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::I64(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::U64(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::F64(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        // Two 16-bit elements a word, as the shader binds them; an odd
        // count ends in a padded word.
        Data::F16(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::BF16(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
    }
    out.resize(out.len().next_multiple_of(4), 0);
    out
}

fn dims_json(kernel: &Kernel, bound: &Bound) -> Json {
    kernel
        .dims
        .iter()
        .zip(&bound.dims)
        .map(|(n, v)| (n.clone(), json!(v)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// `build`: the kernel in one configuration as `phobosc build` lowers it.
pub fn build(source: &str, name: Option<&str>, config: &BTreeMap<String, i64>) -> Response {
    let (_, name, kernel) = match kernel(source, name, config) {
        Ok(k) => k,
        Err(r) => return r,
    };
    let options = phobos_gpu::GpuOptions::for_kernel(&kernel);
    match phobos_gpu::compile(&kernel, &options) {
        Ok(c) => Response {
            json: json!({
                "ok": true,
                "kernel": name,
                "config": kernel.config.iter().cloned().collect::<BTreeMap<_, _>>(),
                "wgsl": c.wgsl(),
                "plan": c.explain(),
                "workgroup_size": options.workgroup_size,
                "grid": kernel.grid.clone().map(|g| g.display(&kernel.dims)),
                "layout": c.layout,
                "notes": c.notes,
            }),
            blob: Vec::new(),
        },
        Err(e) => Response::fail(e.to_string()),
    }
}

/// `run`: the kernel on the reference interpreter, then its check lines.
pub fn run(r: &LaunchRequest) -> Response {
    let mut p = match prepare(r) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let work = work(&p);
    if work > MAX_WORK {
        return Response::fail(format!(
            "this launch would evaluate about {work} expression nodes on the interpreter, \
             more than the playground's bound of {MAX_WORK}; use smaller dims"
        ));
    }
    if let Err(e) = interp::run(&p.kernel, &mut p.args) {
        return Response::fail(e.to_string());
    }
    let mut blob = Vec::new();
    let mut outputs = Vec::new();
    for (param, arg) in p.kernel.params.iter().zip(&p.args) {
        if let (ParamKind::Tensor { written: true, .. }, Arg::Tensor(t)) = (&param.kind, arg) {
            let data = words(t);
            outputs.push(json!({
                "name": param.name,
                "elem": t.elem().name(),
                "shape": t.shape,
                "offset": blob.len(),
                "bytes": data.len(),
            }));
            blob.extend_from_slice(&data);
        }
    }
    let checks = checks(&p);
    Response {
        json: json!({
            "ok": true,
            "kernel": p.name,
            "dims": dims_json(&p.kernel, &p.bound),
            "grid": p.bound.grid,
            "work": work,
            "outputs": outputs,
            "checks": checks,
        }),
        blob,
    }
}

/// The file's `// check` lines for the kernel, each run as its own kernel on
/// the interpreter over the arguments after the run (as `phobosc run`
/// does): for how many elements each holds, or why it could not run.
fn checks(p: &Prepared) -> Vec<Json> {
    let mut out = Vec::new();
    for check in p.program.checks_for(&p.name) {
        let result = (|| {
            let ck = p
                .program
                .check_kernel(&p.name, &p.kernel.config, check)
                .map_err(|d| d.first().map_or(String::new(), |d| d.message.clone()))?;
            let Some(ParamKind::Tensor { elem, shape, .. }) = ck.params.last().map(|p| &p.kind)
            else {
                return Err("the check kernel has no output".to_string());
            };
            let extents: Vec<usize> = shape.iter().map(|d| d.extent(&p.bound.dims)).collect();
            let mut args = p.args.clone();
            args.push(Arg::Tensor(Tensor::zeros(*elem, &extents)));
            interp::run(&ck, &mut args).map_err(|e| e.to_string())?;
            let Some(Arg::Tensor(t)) = args.pop() else {
                return Err("the check kernel has no output".to_string());
            };
            let holds = (0..t.len()).filter(|&i| t.get(i).as_f64() != 0.0).count();
            Ok((holds, t.len()))
        })();
        out.push(match result {
            Ok((holds, total)) => json!({ "name": check.name, "holds": holds, "total": total }),
            Err(why) => json!({ "name": check.name, "error": why }),
        });
    }
    out
}

/// The options a `plan` compiles with: WebGPU's defaults (as `phobosc
/// build`'s), or the page's device's own limits where it sent them: its
/// workgroup memory, and its invocations for the workgroup-size heuristic
/// (a power of two, from 64 to the compiler's largest).
fn options_within(kernel: &Kernel, limits: crate::Limits) -> phobos_gpu::GpuOptions {
    let mut options = phobos_gpu::GpuOptions::for_kernel(kernel);
    if let Some(bytes) = limits.max_compute_workgroup_storage_size {
        options.workgroup_memory = bytes.max(phobos_gpu::WORKGROUP_MEMORY_LIMIT);
    }
    if let Some(n) = limits.max_compute_invocations_per_workgroup {
        let most = n.clamp(
            phobos_gpu::DEFAULT_WORKGROUP_SIZE,
            phobos_gpu::MAX_WORKGROUP_SIZE,
        );
        let most = 1 << most.ilog2();
        options.workgroup_size =
            phobos_gpu::workgroup_size_within(kernel, most, phobos_gpu::Precision::Exact);
    }
    options
}

/// `plan`: the launch for WebGPU. The WGSL is `phobosc build`'s for this
/// configuration unless the launch's dims change it, as the runtime's
/// (`phobos_gpu::specialize`; `specialized` says so): tiles whose extent is
/// a dim are made constant, and rows whose length is a dim that is a
/// multiple of 4 move 16 bytes at a time.
pub fn plan(r: &LaunchRequest) -> Response {
    let p = match prepare(r) {
        Ok(p) => p,
        Err(r) => return r,
    };
    // A launch that would hold the reader's GPU for long is refused before
    // it is dispatched, as the interpreter refuses its own.
    let work = work(&p);
    if work > MAX_GPU_WORK {
        return Response::fail(format!(
            "this launch would evaluate about {work} expression nodes, more than the \
             playground's bound of {MAX_GPU_WORK} for WebGPU{}; use smaller dims",
            if work == u64::MAX {
                " (a loop's bounds are not built from constants, dims and enclosing \
                 loops' variables with + - * /, so the count is not known)"
            } else {
                ""
            }
        ));
    }
    let specialized = phobos_gpu::specialize(&p.kernel, &p.bound.dims);
    let is_specialized = matches!(specialized, std::borrow::Cow::Owned(_));
    let options = options_within(&specialized, r.limits);
    let compiled = match phobos_gpu::compile(&specialized, &options) {
        Ok(c) => c,
        Err(e) => return Response::fail_on_gpu(e.to_string()),
    };
    // Refused here, naming the arrays and the limit, not by the browser.
    if let Err(e) = compiled.check_workgroup_memory(options.workgroup_memory) {
        return Response::fail_on_gpu(e);
    }
    // WebGPU's default limits: 65,535 workgroups per dimension, blocks
    // numbered in u32.
    let max = 65_535u64;
    let blocks = p.bound.grid.iter().fold(1u64, |n, g| n.saturating_mul(*g));
    if blocks >= 1 << 32 || blocks > max * max {
        return Response::fail(format!(
            "the grid has {blocks} blocks, more than one WebGPU dispatch runs"
        ));
    }
    // A workgroup may run several blocks (`Compiled::blocks_per_workgroup`).
    let per = u64::from(compiled.blocks_per_workgroup);
    let workgroups = phobos_gpu::dispatch_size([blocks.div_ceil(per) as u32, 1, 1], max as u32);
    let scalars: Vec<Option<Value>> = p
        .args
        .iter()
        .map(|a| match a {
            Arg::Scalar(v) => Some(*v),
            Arg::Tensor(_) => None,
        })
        .collect();
    let uniform = match compiled
        .layout
        .uniform_block(&scalars, &p.bound.dims, p.bound.grid)
    {
        Ok(u) => u,
        Err(e) => return Response::fail(e.to_string()),
    };
    let mut blob = uniform.clone();
    let mut buffers = Vec::new();
    for t in &compiled.layout.tensors {
        let Some(Arg::Tensor(data)) = p.args.get(t.param_index) else {
            return Response::fail(format!("no tensor for `{}`", t.name));
        };
        let ParamKind::Tensor { read, written, .. } = p.kernel.params[t.param_index].kind else {
            return Response::fail(format!("`{}` is not a tensor", t.name));
        };
        let bytes = words(data);
        // Storage buffers are at least 16 bytes and a multiple of 4.
        let size = (bytes.len() as u64).next_multiple_of(4).max(16);
        let init = if read {
            let at = blob.len();
            blob.extend_from_slice(&bytes);
            json!({ "offset": at, "bytes": bytes.len() })
        } else {
            Json::Null
        };
        buffers.push(json!({
            "name": t.name,
            "param_index": t.param_index,
            "binding": t.binding,
            "read_only": t.read_only,
            "written": written,
            "elem": t.elem.name(),
            "shape": data.shape,
            "bytes": bytes.len(),
            "size": size,
            "init": init,
        }));
    }
    Response {
        json: json!({
            "ok": true,
            "kernel": p.name,
            "wgsl": compiled.wgsl(),
            "specialized": is_specialized,
            "workgroup_memory": options.workgroup_memory,
            "entry_point": phobos_gpu::ENTRY_POINT,
            "workgroup_size": options.workgroup_size,
            "workgroups": workgroups,
            "dims": dims_json(&p.kernel, &p.bound),
            "grid": p.bound.grid,
            "uniform": { "offset": 0, "bytes": uniform.len() },
            "buffers": buffers,
            "notes": compiled.notes,
        }),
        blob,
    }
}
