//! Evaluating a file's `// check NAME: EXPR` lines on a kernel's results.
//!
//! Each check line is a kernel of its own (`Program::check_kernel`): it reads
//! the checked kernel's parameters and stores the check's value for every
//! element into one more tensor, `__check`. [`evaluate_on`] compiles and
//! launches it like any kernel, on the backend that ran the kernel, so a
//! check costs what the kernel costs and not an interpretation of every
//! element. The checker spreads it over a grid of blocks of rows
//! (`sema::check_grid`), so it fills a GPU or the host's cores. On the GPU,
//! [`evaluate_kept`] binds the buffers the kernel's launch left on the
//! device, so a check uploads nothing, and counts its values there with a
//! second small kernel ([`COUNT_SRC`]), so only a count for every 64
//! values comes back. An element holds when its value is nonzero (or
//! true); backends keep the interpreter's bits, so the counts are the same
//! on every backend.
//!
//! Where a backend cannot run a check kernel (the GPU takes no `bool`
//! tensors, a device refuses a type or cannot keep exact precision), that
//! check runs on the interpreter instead, and [`CheckResult::fallback`] says
//! why. A `bool` check on the GPU is first tried as `u32(EXPR)`, whose 0 and
//! 1 count the same elements.

use crate::{Backend, Options, Precision, RuntimeError, gpu, launch};
use phobos_core::Program;
use phobos_core::ir::{Kernel, ParamKind};
use phobos_core::launch::{Arg, bind};
use phobos_core::sema::Check;
use phobos_core::syntax::ast::{Expr, ExprKind, Ident};
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::Scalar;

use std::fmt;

/// For how many elements a check held, and where it was evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckResult {
    pub name: String,
    pub holds: usize,
    pub total: usize,
    /// The backend that ran the check kernel.
    pub backend: Backend,
    /// Why the check ran on the interpreter rather than on the backend
    /// asked for; `None` when it ran where it was asked to.
    pub fallback: Option<String>,
}

impl CheckResult {
    pub fn all(&self) -> bool {
        self.holds == self.total
    }
}

#[derive(Debug)]
pub struct CheckError {
    pub check: String,
    pub why: String,
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "check `{}`: {}", self.check, self.why)
    }
}

impl std::error::Error for CheckError {}

/// Runs the checks of kernel `name` (checked as `kernel`) over `args`, the
/// arguments after the kernel ran, on the interpreter: the reference.
pub fn evaluate(
    program: &Program,
    name: &str,
    kernel: &Kernel,
    args: &[Arg],
) -> Result<Vec<CheckResult>, CheckError> {
    let mut args = args.to_vec();
    let on = Options {
        backend: Backend::Interp,
        ..Options::default()
    };
    evaluate_on(program, name, kernel, &mut args, &on)
}

/// Runs the checks of kernel `name` (checked as `kernel`) over `args`, the
/// arguments after the kernel ran, on `on.backend` (pass the backend that
/// ran the kernel, as its provenance names it). Checks always run in exact
/// precision: they state what the reference computes. `args` is borrowed
/// to hold each check's output while it runs, and left as it was given.
pub fn evaluate_on(
    program: &Program,
    name: &str,
    kernel: &Kernel,
    args: &mut Vec<Arg>,
    on: &Options,
) -> Result<Vec<CheckResult>, CheckError> {
    evaluate_kept(program, name, kernel, args, on, None)
}

/// [`evaluate_on`] where the kernel ran on the GPU and left its tensors
/// there (`crate::launch_kept`): each check kernel binds those buffers,
/// writes its values to one buffer of its own and is counted as that
/// buffer is read back in pieces, so no tensor is uploaded again and no
/// host copy of a check's values is made. `args` must be the launch's
/// arguments: the interpreter reads them when the GPU refuses a check,
/// after reading back from `resident` any tensor the launch handed to its
/// sink alone (`crate::Transfers::sink_only`).
pub fn evaluate_kept(
    program: &Program,
    name: &str,
    kernel: &Kernel,
    args: &mut Vec<Arg>,
    on: &Options,
    resident: Option<&gpu::Resident>,
) -> Result<Vec<CheckResult>, CheckError> {
    // The check values' buffer, kept for the next check of the same size.
    let scratch = std::cell::RefCell::new(None);
    let on_backend = |ck: &Kernel, args: &mut Vec<Arg>, backend: Backend| match (backend, resident)
    {
        (Backend::Gpu, Some(resident)) => run_resident(ck, kernel, args, resident, &scratch),
        // Elsewhere the check reads the host's tensors, which a streamed
        // launch may have left to its sink (`crate::Transfers::sink_only`).
        (_, Some(resident)) if !resident.host_current() => {
            let g = gpu::Gpu::shared().map_err(|e| e.to_string())?;
            crate::phases::scoped("host read-back", || g.read_back_stale(resident, args))
                .map_err(|e| format!("reading the results back for the interpreter: {e}"))?;
            run_check(ck, kernel, args, backend, on)
        }
        _ => run_check(ck, kernel, args, backend, on),
    };
    let mut out = Vec::new();
    for check in program.checks_for(name) {
        let err = |why: String| CheckError {
            check: check.name.clone(),
            why,
        };
        let ck = program
            .check_kernel(name, &kernel.config, check)
            .map_err(|d| err(d.first().map_or(String::new(), |d| d.message.clone())))?;
        let (count, backend, fallback) = match on.backend {
            Backend::Interp => (
                on_backend(&ck, args, Backend::Interp).map_err(err)?,
                Backend::Interp,
                None,
            ),
            backend => {
                let tried = match (backend, check_elem(&ck)) {
                    // The GPU stores no bools: count the same elements as 0 and 1.
                    (Backend::Gpu, Scalar::Bool) => program
                        .check_kernel(name, &kernel.config, &as_u32(check))
                        .map_err(|d| d.first().map_or(String::new(), |d| d.message.clone()))
                        .and_then(|k| on_backend(&k, args, backend)),
                    _ => on_backend(&ck, args, backend),
                };
                match tried {
                    Ok(c) => (c, backend, None),
                    Err(why) => {
                        let c = on_backend(&ck, args, Backend::Interp).map_err(err)?;
                        (
                            c,
                            Backend::Interp,
                            Some(format!("{} cannot run it: {why}", backend.name())),
                        )
                    }
                }
            }
        };
        let (holds, total) = count;
        out.push(CheckResult {
            name: check.name.clone(),
            holds,
            total,
            backend,
            fallback,
        });
    }
    Ok(out)
}

/// The element type of a check kernel's output.
fn check_elem(ck: &Kernel) -> Scalar {
    let ParamKind::Tensor { elem, .. } = &ck.params.last().expect("the check output is last").kind
    else {
        unreachable!("the check output is a tensor")
    };
    *elem
}

/// The check `u32(EXPR)`: 1 where `EXPR` is true, 0 where it is false.
fn as_u32(check: &Check) -> Check {
    let span = check.expr.span;
    Check {
        name: check.name.clone(),
        kernel: check.kernel.clone(),
        expr: Expr {
            kind: ExprKind::Call(
                Ident {
                    name: "u32".to_string(),
                    span,
                },
                vec![check.expr.clone()],
            ),
            span,
        },
    }
}

/// The element type and extents of the check kernel `ck`'s output (its last
/// parameter) for a launch of `kernel` on `args`.
fn check_output(
    ck: &Kernel,
    kernel: &Kernel,
    args: &[Arg],
) -> Result<(Scalar, Vec<usize>), String> {
    let bound = bind(kernel, args).map_err(|e| e.to_string())?;
    let ParamKind::Tensor { elem, shape, .. } =
        &ck.params.last().expect("the check output is last").kind
    else {
        unreachable!("the check output is a tensor")
    };
    Ok((*elem, shape.iter().map(|d| d.extent(&bound.dims)).collect()))
}

/// Launches the check kernel `ck` on `backend` with its output pushed after
/// `args` (popped again before returning) and counts the elements that hold.
fn run_check(
    ck: &Kernel,
    kernel: &Kernel,
    args: &mut Vec<Arg>,
    backend: Backend,
    on: &Options,
) -> Result<(usize, usize), String> {
    let (elem, extents) = check_output(ck, kernel, args)?;
    args.push(Arg::Tensor(Tensor::zeros(elem, &extents)));
    let options = Options {
        backend,
        precision: Precision::Exact,
        threads: on.threads,
        // A check kernel is not the kernel tuned: the heuristic's size.
        workgroup_size: None,
        // A check the GPU refuses runs on the CPU backend.
        gpu_only: false,
    };
    let ran = launch(ck, args, &options);
    let Some(Arg::Tensor(t)) = args.pop() else {
        unreachable!("pushed above")
    };
    ran.map_err(|e: RuntimeError| e.to_string())?;
    Ok((nonzero(&t), t.len()))
}

/// [`run_check`] on the GPU over the buffers a launch left there: the
/// check's values go to a buffer of their own, counted where they are.
/// That buffer is left in `scratch` for the next check, which takes it
/// when it needs the same size: allocating gigabytes of device memory is
/// not free, and a check kernel stores every value, while the padding past
/// the last one, which nothing stores, stays zero.
fn run_resident(
    ck: &Kernel,
    kernel: &Kernel,
    args: &[Arg],
    resident: &gpu::Resident,
    scratch: &std::cell::RefCell<Option<wgpu::Buffer>>,
) -> Result<(usize, usize), String> {
    let g = gpu::Gpu::shared().map_err(|e| e.to_string())?;
    let (elem, extents) = check_output(ck, kernel, args)?;
    let total = extents.iter().product::<usize>();
    let bytes = (total * elem.size()) as u64;
    // Whole rows of the counting kernel's view; wgpu zero-fills the rest,
    // which counts nothing.
    let rows = total.div_ceil(COUNT_ROW).max(1);
    let size = bytes
        .max((rows * COUNT_ROW * elem.size()) as u64)
        .next_multiple_of(4)
        .max(16);
    let kept = scratch.borrow_mut().take().filter(|b| b.size() == size);
    let out = kept.unwrap_or_else(|| {
        crate::phases::time("allocate", || {
            g.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("phobos __check"),
                size,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        })
    });
    let mut on_device = Vec::new();
    for (i, (p, a)) in kernel.params.iter().zip(args).enumerate() {
        on_device.push(match a {
            Arg::Tensor(t) => gpu::GpuArg::Tensor {
                buffer: resident
                    .buffer(i)
                    .ok_or_else(|| format!("`{}` was not left on the device", p.name))?,
                elem: t.elem(),
                shape: &t.shape,
            },
            Arg::Scalar(v) => gpu::GpuArg::Scalar(*v),
        });
    }
    on_device.push(gpu::GpuArg::Tensor {
        buffer: &out,
        elem,
        shape: &extents,
    });
    g.dispatch(ck, &on_device, Precision::Exact)
        .map_err(|e| e.to_string())?;
    crate::phases::time("kernel", || g.wait()).map_err(|e| e.to_string())?;
    if total == 0 {
        return Ok((0, 0));
    }
    let holds = crate::phases::time("count", || count_on_device(g, &out, elem, rows))?;
    *scratch.borrow_mut() = Some(out);
    Ok((holds, total))
}

/// The words one count of [`COUNT_SRC`] covers.
const COUNT_ROW: usize = 64;

/// Counts a check's values where they are, viewed as rows of
/// [`COUNT_ROW`] words, 64 rows a block, each row summed by one
/// invocation (on lavapipe 5x faster than rows of 4096 summed by a whole
/// workgroup, whose tree waits at a barrier per level). A word holds when
/// it is nonzero under `mask`, so that a float's ±0.0 does not hold and
/// its NaN does, as [`nonzero`] says. A row's count is at most 64, an
/// integer sum whose value no order changes; the host adds the rows'
/// counts, 1/64 of the values' bytes.
const COUNT_SRC: &str = "\
@autotune(R in [64])
kernel count_nonzero(V: tensor<u32>[G, 64], C: tensor<u32>[G, 1], mask: u32) {
  let r = ctx.block.x * R
  C[r :+ R, :] = sum(u32((V[r :+ R, :] & mask) != 0), axis = 1)
}
";

/// How many of the check values in `values` (`elem`s, `rows` rows of
/// [`COUNT_ROW`], zero past the last value) hold, counted on the device by
/// [`COUNT_SRC`]: one word a row comes back, not the values.
fn count_on_device(
    g: &gpu::Gpu,
    values: &wgpu::Buffer,
    elem: Scalar,
    rows: usize,
) -> Result<usize, String> {
    static COUNT: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
    let counter = COUNT.get_or_init(|| {
        let (program, diags) = Program::parse("count_nonzero.ph", COUNT_SRC);
        assert!(diags.is_empty(), "the counting kernel checks: {diags:?}");
        program
            .kernel("count_nonzero", &[])
            .expect("the counting kernel checks")
    });
    let mask = match elem {
        Scalar::F32 => 0x7fff_ffffu32,
        Scalar::I32 | Scalar::U32 => u32::MAX,
        other => return Err(format!("{other} check values are not counted on the GPU")),
    };
    let counts = g.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("phobos check counts"),
        size: (rows as u64 * 4).max(16),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let args = [
        gpu::GpuArg::Tensor {
            buffer: values,
            elem: Scalar::U32,
            shape: &[rows, COUNT_ROW],
        },
        gpu::GpuArg::Tensor {
            buffer: &counts,
            elem: Scalar::U32,
            shape: &[rows, 1],
        },
        gpu::GpuArg::Scalar(phobos_core::types::Value::U32(mask)),
    ];
    g.dispatch(counter, &args, Precision::Exact)
        .map_err(|e| e.to_string())?;
    let words = g
        .read_buffer(&counts, rows as u64 * 4)
        .map_err(|e| e.to_string())?;
    Ok(words
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")) as usize)
        .sum())
}

/// How many elements of `t` are nonzero (or true). A float holds unless it
/// is ±0.0, so NaN holds, as `Value::as_f64() != 0.0` says.
fn nonzero(t: &Tensor) -> usize {
    match &t.data {
        Data::Bool(v) => v.iter().filter(|&&x| x).count(),
        Data::I32(v) => v.iter().filter(|&&x| x != 0).count(),
        Data::U32(v) => v.iter().filter(|&&x| x != 0).count(),
        Data::I64(v) => v.iter().filter(|&&x| x != 0).count(),
        Data::U64(v) => v.iter().filter(|&&x| x != 0).count(),
        Data::F32(v) => v.iter().filter(|&&x| x != 0.0).count(),
        Data::F64(v) => v.iter().filter(|&&x| x != 0.0).count(),
        Data::F16(v) => v.iter().filter(|x| x.to_bits() & 0x7fff != 0).count(),
        Data::BF16(v) => v.iter().filter(|x| x.to_bits() & 0x7fff != 0).count(),
    }
}
