//! The reference interpreter: the definition of what a kernel computes.
//!
//! Blocks run one after another in x, then y, then z order. Within a block,
//! statements run in order (the body of a `for` once for each value of its
//! variable, bounds evaluated when the loop starts); each evaluates its
//! value element by element over its tile, each element on its own
//! (`eval.rs`; a reduction evaluates its operand along the reduced axis and
//! combines it in the tree of `ir/reduce.rs`). A store writes the elements
//! that fall inside the destination and drops the rest; a load outside a
//! tensor reads 0; a NaN stored to a tensor is the canonical NaN
//! (`ops::canonical_nan`). Nothing here is clever, on purpose: every other backend is
//! tested against it.

mod eval;
pub mod ops;

use crate::ir::{ExprId, Index, Kernel, LocalId, Place, Stmt};
use crate::launch::{Arg, Bound, LaunchError, bind};
use crate::tensor::Tensor;
use crate::types::{Dim, Value};
use eval::Block;

/// Runs `kernel` over `args`, writing its outputs into the tensor arguments.
pub fn run(kernel: &Kernel, args: &mut [Arg]) -> Result<Bound, LaunchError> {
    let bound = bind(kernel, args)?;
    let loops = kernel.loops();
    let [gx, gy, gz] = bound.grid;
    for z in 0..gz {
        for y in 0..gy {
            for x in 0..gx {
                let mut block = Block::new(kernel, &bound, [x as i64, y as i64, z as i64]);
                run_block(&mut block, &loops, args)?;
            }
        }
    }
    Ok(bound)
}

/// The statements of one block in order, `for` loops included: a loop's
/// bounds are evaluated once when it starts, and its body runs for each
/// value of its variable from the start up to the end excluded.
fn run_block(
    b: &mut Block<'_>,
    loops: &[Option<usize>],
    args: &mut [Arg],
) -> Result<(), LaunchError> {
    let kernel = b.kernel;
    let body = &kernel.body;
    // The end of each open loop, innermost last.
    let mut ends: Vec<i32> = Vec::new();
    let mut pc = 0;
    while pc < body.len() {
        match &body[pc] {
            Stmt::For { local, start, end } => {
                let (s, e) = (
                    b.eval_int(*start, args) as i32,
                    b.eval_int(*end, args) as i32,
                );
                let close = loops[pc].expect("the verifier matched every loop");
                if s >= e {
                    pc = close + 1;
                    continue;
                }
                set_loop_var(b, *local, s);
                ends.push(e);
            }
            Stmt::EndFor => {
                let open = loops[pc].expect("the verifier matched every loop");
                let Stmt::For { local, .. } = body[open] else {
                    unreachable!("an EndFor matches a For")
                };
                let end = *ends.last().expect("an open loop");
                // `v < end <= i32::MAX`, so `v + 1` does not overflow.
                let next = loop_var(b, local) + 1;
                if next < end {
                    set_loop_var(b, local, next);
                    pc = open + 1;
                    continue;
                }
                ends.pop();
            }
            s => exec(b, s, args)?,
        }
        pc += 1;
    }
    Ok(())
}

fn set_loop_var(b: &mut Block<'_>, local: LocalId, v: i32) {
    let mut t = Tensor::zeros(crate::types::Scalar::I32, &[]);
    t.set(0, Value::I32(v));
    b.locals[local] = Some(t);
}

fn loop_var(b: &Block<'_>, local: LocalId) -> i32 {
    match b.locals[local].as_ref().map(|t| t.get(0)) {
        Some(Value::I32(v)) => v,
        other => unreachable!("a loop variable holds an i32, not {other:?}"),
    }
}

fn exec(b: &mut Block<'_>, stmt: &Stmt, args: &mut [Arg]) -> Result<(), LaunchError> {
    b.begin_statement();
    match stmt {
        Stmt::Let { local, value } | Stmt::Var { local, value } => {
            // Within `bounds::MAX_TILE_BYTES`: the checker and `bind` refused
            // any larger tile.
            let shape = b.extents(&b.kernel.locals[*local].shape);
            let elem = b.kernel.locals[*local].elem;
            let mut tile = Tensor::zeros(elem, &shape);
            for (flat, pos) in positions(&shape).enumerate() {
                tile.set(flat, b.eval(*value, &pos, args));
            }
            b.locals[*local] = Some(tile);
        }
        Stmt::For { .. } | Stmt::EndFor => unreachable!("run_block runs loops"),
        Stmt::Store {
            place,
            index,
            value,
        } => {
            let mut writes = store_values(b, index, *value, args, place);
            if let Place::Param(_) = place {
                // A store to a tensor makes floats observable: NaNs are
                // canonical there (ops.rs).
                for (_, v) in &mut writes {
                    *v = ops::canonical_nan(*v);
                }
            }
            let dest: &mut Tensor = match place {
                Place::Param(p) => match &mut args[*p] {
                    Arg::Tensor(t) => t,
                    Arg::Scalar(_) => unreachable!("stores go to tensors"),
                },
                Place::Local(l) => b.locals[*l]
                    .as_mut()
                    .expect("a var is set before it is stored to"),
            };
            for (i, v) in writes {
                dest.set(i, v);
            }
        }
    }
    Ok(())
}

/// The (flat destination index, value) of every element a store writes.
fn store_values(
    b: &mut Block<'_>,
    index: &[Index],
    value: ExprId,
    args: &[Arg],
    place: &Place,
) -> Vec<(usize, Value)> {
    let dest_shape = b.place_extents(*place, args);
    let mut starts = Vec::new();
    let mut tile = Vec::new();
    for ix in index {
        match ix {
            Index::Range { start, len } => {
                starts.push(start.map_or(0, |s| b.eval_int(s, args)));
                tile.push(b.extent(*len));
            }
            Index::Single(s) => starts.push(b.eval_int(*s, args)),
        }
    }
    // Only positions inside the destination are evaluated: the others are
    // never written, and values are pure, so skipping them changes nothing
    // (and a slice far larger than its tensor costs nothing).
    let mut lo = Vec::new();
    let mut ext = Vec::new();
    let mut axis = 0;
    for (ix, (start, dim)) in index.iter().zip(starts.iter().zip(&dest_shape)) {
        if let Index::Range { .. } = ix {
            let first = (-start).clamp(0, tile[axis] as i64);
            let last = (*dim as i64 - start).clamp(first, tile[axis] as i64);
            lo.push(first as usize);
            ext.push((last - first) as usize);
            axis += 1;
        }
    }
    let mut out = Vec::new();
    for rel in positions(&ext) {
        let pos: Vec<usize> = rel.iter().zip(&lo).map(|(r, l)| r + l).collect();
        if let Some(flat) = locate(index, &starts, &pos, &dest_shape) {
            out.push((flat, b.eval(value, &pos, args)));
        }
    }
    out
}

/// The flat index in a tensor of `shape` of the element at `pos` within a
/// slice, or `None` when it falls outside the tensor.
pub(crate) fn locate(
    index: &[Index],
    starts: &[i64],
    pos: &[usize],
    shape: &[usize],
) -> Option<usize> {
    let mut flat: usize = 0;
    let mut p = pos.iter();
    for ((ix, start), extent) in index.iter().zip(starts).zip(shape) {
        let coord = match ix {
            Index::Range { .. } => start.checked_add(*p.next()? as i64)?,
            Index::Single(_) => *start,
        };
        if coord < 0 || coord as u64 >= *extent as u64 {
            return None;
        }
        flat = flat * extent + coord as usize;
    }
    Some(flat)
}

/// Every position of a tile of the given extents, in row-major order.
pub(crate) fn positions(shape: &[usize]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let n: usize = shape.iter().product();
    (0..n).map(move |mut flat| {
        let mut pos = vec![0; shape.len()];
        for (k, e) in shape.iter().enumerate().rev() {
            pos[k] = flat % e;
            flat /= e;
        }
        pos
    })
}

impl Block<'_> {
    pub fn extent(&self, d: Dim) -> usize {
        d.extent(&self.bound.dims)
    }

    pub fn extents(&self, shape: &[Dim]) -> Vec<usize> {
        shape.iter().map(|d| self.extent(*d)).collect()
    }
}
