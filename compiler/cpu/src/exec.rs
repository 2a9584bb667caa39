//! Running a compiled kernel: binding the launch, filling the frame, and
//! handing blocks to threads.

use crate::compile::{CompileError, Compiled, compile};
use phobos_core::bounds;
use phobos_core::ir::analysis;
use phobos_core::ir::{Kernel, Stmt};
use phobos_core::launch::{Arg, Bound, LaunchError, bind};
use phobos_core::tensor::{Data, Tensor};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a run did, for provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    pub bound: Bound,
    pub threads: usize,
    pub compile_ms: f64,
    pub cache_hit: bool,
}

#[derive(Debug)]
pub enum RunError {
    Launch(LaunchError),
    Compile(CompileError),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Launch(e) => write!(f, "{e}"),
            RunError::Compile(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<LaunchError> for RunError {
    fn from(e: LaunchError) -> Self {
        RunError::Launch(e)
    }
}

/// Blocks handed to a thread at a time: enough to amortise the counter,
/// few enough to balance a ragged grid.
const CHUNK: u64 = 4;

/// Runs `kernel` over `args` on `threads` threads (default: every core).
pub fn run(kernel: &Kernel, args: &mut [Arg], threads: Option<usize>) -> Result<RunInfo, RunError> {
    run_blocks(kernel, args, threads, None)
}

/// [`run`] over some of the grid's blocks only: along grid axis `axis`,
/// the blocks whose index there lies in `range` (all of every other axis).
/// `ctx.block` and `ctx.grid` keep their values in the whole grid, so each
/// block computes what it computes in a whole run; the rest of the grid is
/// left to others (`phobos_runtime::split` runs the rest on other devices).
/// `None` runs every block, as [`run`] does.
pub fn run_blocks(
    kernel: &Kernel,
    args: &mut [Arg],
    threads: Option<usize>,
    blocks: Option<(u8, std::ops::Range<u64>)>,
) -> Result<RunInfo, RunError> {
    let bound = bind(kernel, args)?;
    let (compiled, cache_hit) = compile(kernel).map_err(RunError::Compile)?;
    let (frame, scratch_len) = frame(kernel, &compiled, &bound, args)?;
    // The sub-grid run: its extents, and where it starts in the whole grid.
    let mut sub = bound.grid;
    let mut origin = [0u64; 3];
    if let Some((axis, range)) = &blocks {
        let a = usize::from(*axis).min(2);
        let end = range.end.min(bound.grid[a]);
        origin[a] = range.start.min(end);
        sub[a] = end - origin[a];
    }
    let [gx, gy, gz] = sub;
    let total = gx * gy * gz;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if compiled.parallel {
        threads.unwrap_or(cores).clamp(1, total.max(1) as usize)
    } else {
        1
    };
    let next = AtomicU64::new(0);
    let work = |scratch: &mut Vec<u64>| loop {
        let first = next.fetch_add(CHUNK, Ordering::Relaxed);
        if first >= total {
            break;
        }
        for b in first..(first + CHUNK).min(total) {
            let (x, y, z) = (
                origin[0] + b % gx,
                origin[1] + (b / gx) % gy,
                origin[2] + b / (gx * gy),
            );
            // SAFETY: the frame points at tensors bound above, which outlive
            // this call; the code stays within their extents and its scratch.
            unsafe {
                (compiled.func)(
                    frame.as_ptr(),
                    scratch.as_mut_ptr() as *mut u8,
                    x as i64,
                    y as i64,
                    z as i64,
                )
            };
        }
    };
    let scratch_words = scratch_len.div_ceil(8).max(1);
    if threads == 1 {
        work(&mut vec![0u64; scratch_words]);
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| work(&mut vec![0u64; scratch_words]));
            }
        });
    }
    Ok(RunInfo {
        bound,
        threads,
        compile_ms: compiled.compile_ms,
        cache_hit,
    })
}

fn data_ptr(t: &mut Tensor) -> u64 {
    (match &mut t.data {
        Data::Bool(v) => v.as_mut_ptr() as *mut u8,
        Data::I32(v) => v.as_mut_ptr() as *mut u8,
        Data::U32(v) => v.as_mut_ptr() as *mut u8,
        Data::I64(v) => v.as_mut_ptr() as *mut u8,
        Data::U64(v) => v.as_mut_ptr() as *mut u8,
        Data::F32(v) => v.as_mut_ptr() as *mut u8,
        Data::F64(v) => v.as_mut_ptr() as *mut u8,
        Data::F16(v) => v.as_mut_ptr() as *mut u8,
        Data::BF16(v) => v.as_mut_ptr() as *mut u8,
    }) as u64
}

/// The frame's slots, and the bytes of scratch one thread needs.
fn frame(
    k: &Kernel,
    c: &Compiled,
    bound: &Bound,
    args: &mut [Arg],
) -> Result<(Vec<u64>, usize), LaunchError> {
    let lay = &c.layout;
    let mut f = vec![0u64; lay.len];
    for (i, a) in args.iter_mut().enumerate() {
        let at = lay.params[i];
        match a {
            Arg::Tensor(t) => {
                for (j, e) in t.shape.iter().enumerate() {
                    f[at + 1 + j] = *e as u64;
                }
                f[at] = data_ptr(t);
            }
            Arg::Scalar(v) => f[at] = v.bits(),
        }
    }
    let mut offset = 0usize;
    for (l, local) in k.locals.iter_enumerated() {
        let ext: Vec<usize> = local.shape.iter().map(|d| d.extent(&bound.dims)).collect();
        // `bind` refused a tile beyond `bounds::MAX_TILE_BYTES`.
        let n: usize = ext.iter().product();
        let at = lay.locals[l];
        f[at] = offset as u64;
        for (j, e) in ext.iter().enumerate() {
            f[at + 1 + j] = *e as u64;
        }
        // Keep every local 8-byte aligned.
        offset += (n * local.elem.size()).div_ceil(8) * 8;
    }
    for (n, slot) in &lay.temps {
        let Stmt::Store { index, place, .. } = &k.body[*n] else {
            unreachable!("temps belong to stores")
        };
        let tile: Vec<u64> = analysis::slice_tile(index)
            .iter()
            .map(|len| len.extent(&bound.dims) as u64)
            .collect();
        // The value of a store that reads its own destination is held whole
        // first; it has the same bound as a tile.
        if !bounds::tile_fits(k.place_elem(*place), tile.iter().copied()) {
            return Err(LaunchError::TileTooLarge {
                name: format!("the value of statement {n}"),
                shape: tile.iter().map(|e| *e as usize).collect(),
            });
        }
        let n_elems: usize = tile.iter().map(|e| *e as usize).product();
        f[*slot] = offset as u64;
        offset += (n_elems * k.place_elem(*place).size()).div_ceil(8) * 8;
    }
    f[lay.dims..lay.dims + bound.dims.len()].copy_from_slice(&bound.dims);
    f[lay.grid..lay.grid + 3].copy_from_slice(&bound.grid);
    Ok((f, offset))
}
