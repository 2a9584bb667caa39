//! Whether a kernel's blocks may run in parallel without changing its bits.
//!
//! The interpreter runs blocks in order, so a kernel whose blocks write the
//! same element, or read what another block writes, depends on that order.
//! Such kernels run on one thread, in order. A kernel qualifies for threads
//! when no tensor is both read and written, and every store to a tensor is
//! tiled along every block axis the kernel uses: some index of it starts at
//! `n * ctx.block.a + c` with length `n`, the same index, `n` and `c` for
//! every store to that tensor (so that stores of neighbouring blocks never
//! meet).

use phobos_core::ir::{ExprId, ExprKind, Index, Kernel, LocalId, ParamKind, Place, Stmt};
use phobos_core::types::{Dim, Value};
use std::collections::HashMap;

pub fn blocks_independent(k: &Kernel) -> bool {
    let in_place = k.params.iter().any(|p| {
        matches!(
            p.kind,
            ParamKind::Tensor {
                read: true,
                written: true,
                ..
            }
        )
    });
    if in_place {
        return false;
    }
    let used: Vec<u8> = (0..3u8)
        .filter(|a| k.exprs.iter().any(|e| e.kind == ExprKind::BlockId(*a)))
        .collect();
    let lets: HashMap<LocalId, ExprId> = k
        .body
        .iter()
        .filter_map(|s| match s {
            Stmt::Let { local, value } => Some((*local, *value)),
            _ => None,
        })
        .collect();
    // Stores to one tensor tile it together: along each block axis used,
    // some axis of the tensor where every store to it starts at the same
    // `n * ctx.block.a + c` with length `n`. Else a store at `r + 1 :+ n`
    // beside one at `r :+ n` writes the first element of the next block's
    // slice, and which is last would depend on the threads.
    let together = k.params.iter().enumerate().all(|(p, _)| {
        let stores: Vec<&[Index]> = (k.body.iter())
            .filter_map(|s| match s {
                Stmt::Store {
                    place: Place::Param(q),
                    index,
                    ..
                } if *q == p => Some(index.as_slice()),
                _ => None,
            })
            .collect();
        stores.len() < 2
            || used.iter().all(|&axis| {
                let tile = |index: &[Index], d: usize| match index.get(d) {
                    Some(Index::Range {
                        start: Some(s),
                        len: Dim::Const(n),
                    }) => affine(k, *s, &lets).filter(|(coef, _)| {
                        coef[axis as usize] == *n as i64
                            && (0..3).all(|b| b == axis as usize || coef[b] == 0)
                    }),
                    _ => None,
                };
                (0..stores[0].len()).any(|d| {
                    let first = tile(stores[0], d);
                    first.is_some() && stores.iter().all(|s| tile(s, d) == first)
                })
            })
    });
    together
        && k.body.iter().all(|s| match s {
            Stmt::Store {
                place: Place::Param(_),
                index,
                ..
            } => used.iter().all(|axis| {
                index.iter().any(|ix| match ix {
                    Index::Range {
                        start: Some(s),
                        len: Dim::Const(n),
                    } => affine(k, *s, &lets).is_some_and(|(coef, _)| {
                        coef[*axis as usize] == *n as i64
                            && (0..3).all(|b| b == *axis as usize || coef[b] == 0)
                    }),
                    _ => false,
                })
            }),
            _ => true,
        })
}

fn affine(k: &Kernel, id: ExprId, lets: &HashMap<LocalId, ExprId>) -> Option<([i64; 3], i64)> {
    phobos_core::ir::analysis::block_affine(
        k,
        id,
        &|x| match k.exprs[x].kind {
            ExprKind::Const(Value::I32(v)) => Some(i64::from(v)),
            _ => None,
        },
        &|l| lets.get(&l).copied(),
    )
}
