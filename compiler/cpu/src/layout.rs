//! The frame: the array of 64-bit slots through which a launch passes its
//! tensors, scalars, dims and grid to compiled code. Slot positions depend
//! only on the kernel, so they are compile-time constants in the code.

use phobos_core::ir::analysis;
use phobos_core::ir::{IdVec, Kernel, LocalId, ParamKind, Place, Stmt};
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct Layout {
    /// First slot of each parameter: a tensor's data pointer then its
    /// extents; a scalar's bits.
    pub params: Vec<usize>,
    /// First slot of each local: its byte offset in the scratch area, then
    /// its extents.
    pub locals: IdVec<LocalId, usize>,
    pub dims: usize,
    pub grid: usize,
    /// A slot that always holds 0: masked loads read it instead of memory
    /// outside a tensor.
    pub zero: usize,
    /// For each store that reads its own destination (statement index), the
    /// slot of its temporary tile's offset in the scratch area.
    pub temps: HashMap<usize, usize>,
    pub len: usize,
}

impl Layout {
    pub fn of(k: &Kernel) -> Layout {
        let mut next = 0;
        let mut take = |n: usize| {
            let at = next;
            next += n;
            at
        };
        let params = k
            .params
            .iter()
            .map(|p| match &p.kind {
                ParamKind::Tensor { shape, .. } => take(1 + shape.len()),
                ParamKind::Scalar(_) => take(1),
            })
            .collect();
        let locals = k.locals.iter().map(|l| take(1 + l.shape.len())).collect();
        let temps = k
            .body
            .iter()
            .enumerate()
            .filter(|(_, s)| reads_own_destination(k, s))
            .map(|(n, _)| (n, take(1)))
            .collect();
        let dims = take(k.dims.len());
        let grid = take(3);
        let zero = take(1);
        Layout {
            params,
            locals,
            dims,
            grid,
            zero,
            temps,
            len: next,
        }
    }

    /// The slot of a place's data pointer (tensor) or scratch offset (local);
    /// its extents follow.
    pub fn place(&self, p: Place) -> usize {
        match p {
            Place::Param(i) => self.params[i],
            Place::Local(l) => self.locals[l],
        }
    }
}

/// Whether a store's value reads the place it writes. The interpreter
/// evaluates the whole value before writing, so such a store goes through a
/// temporary tile: writing element by element would let later elements see
/// earlier writes.
pub fn reads_own_destination(k: &Kernel, s: &Stmt) -> bool {
    match s {
        Stmt::Store { place, value, .. } => analysis::reads_place(k, *value, *place),
        Stmt::Let { .. } | Stmt::Var { .. } | Stmt::For { .. } | Stmt::EndFor => false,
    }
}
