//! Binding a launch: matching arguments to a kernel's parameters, binding its
//! symbolic dims, and computing the grid. Every backend starts here, so every
//! backend rejects bad arguments with the same errors.

use crate::bounds;
use crate::ir::{Kernel, ParamKind};
use crate::tensor::Tensor;
use crate::types::{Dim, Scalar, Value};
use std::fmt;

/// One argument of a launch, in parameter order.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Tensor(Tensor),
    Scalar(Value),
}

/// What a launch resolved: the extent of every symbolic dim and the grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub dims: Vec<u64>,
    pub grid: [u64; 3],
}

pub use crate::bounds::MAX_BLOCKS;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchError {
    ArgCount {
        expected: usize,
        got: usize,
    },
    Kind {
        param: String,
        expected: String,
    },
    Dtype {
        param: String,
        expected: String,
        got: String,
    },
    Rank {
        param: String,
        expected: usize,
        got: usize,
    },
    Extent {
        param: String,
        axis: usize,
        expected: u64,
        got: usize,
    },
    DimConflict {
        dim: String,
        first: String,
        first_extent: u64,
        second: String,
        second_extent: u64,
    },
    Grid {
        axis: usize,
        formula: String,
    },
    TileTooLarge {
        name: String,
        shape: Vec<usize>,
    },
    /// More blocks than [`MAX_BLOCKS`], all axes together.
    GridTooLarge {
        grid: [u64; 3],
        blocks: u128,
    },
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::ArgCount { expected, got } => {
                write!(
                    f,
                    "the kernel takes {expected} arguments but {got} were given"
                )
            }
            LaunchError::Kind { param, expected } => write!(f, "`{param}` must be {expected}"),
            LaunchError::Dtype {
                param,
                expected,
                got,
            } => {
                write!(f, "`{param}` must hold {expected}, but {got} was given")
            }
            LaunchError::Rank {
                param,
                expected,
                got,
            } => {
                write!(
                    f,
                    "`{param}` must have {expected} axes, but the tensor given has {got}"
                )
            }
            LaunchError::Extent {
                param,
                axis,
                expected,
                got,
            } => write!(
                f,
                "axis {axis} of `{param}` must have extent {expected}, but the tensor given has {got}"
            ),
            LaunchError::DimConflict {
                dim,
                first,
                first_extent,
                second,
                second_extent,
            } => write!(
                f,
                "dimension `{dim}` is {first_extent} in `{first}` but {second_extent} in `{second}`"
            ),
            LaunchError::TileTooLarge { name, shape } => write!(
                f,
                "the tile `{name}` would have shape {shape:?}, too large to hold (a tile holds at most {} bytes); use a smaller tile",
                bounds::MAX_TILE_BYTES
            ),
            LaunchError::Grid { axis, formula } => write!(
                f,
                "the grid along {} ({formula}) is negative, too large, or divides by zero",
                ["x", "y", "z"][*axis]
            ),
            LaunchError::GridTooLarge { grid, blocks } => write!(
                f,
                "the grid would have {} x {} x {} = {blocks} blocks, over the limit of {MAX_BLOCKS} (bounds::MAX_BLOCKS); use smaller dims or larger blocks",
                grid[0], grid[1], grid[2]
            ),
        }
    }
}

impl std::error::Error for LaunchError {}

/// Checks `args` against the kernel's parameters and binds its dims.
pub fn bind(kernel: &Kernel, args: &[Arg]) -> Result<Bound, LaunchError> {
    let shapes: Vec<ArgShape> = args
        .iter()
        .map(|a| match a {
            Arg::Tensor(t) => ArgShape::Tensor {
                elem: t.elem(),
                shape: &t.shape,
            },
            Arg::Scalar(v) => ArgShape::Scalar(*v),
        })
        .collect();
    bind_shapes(kernel, &shapes)
}

/// What binding needs to know of an argument: a tensor's element type and
/// shape (its data may live elsewhere, in a GPU buffer say) or a scalar.
#[derive(Clone, Copy, Debug)]
pub enum ArgShape<'a> {
    Tensor { elem: Scalar, shape: &'a [usize] },
    Scalar(Value),
}

/// [`bind`] for arguments known by their shapes only.
pub fn bind_shapes(kernel: &Kernel, args: &[ArgShape]) -> Result<Bound, LaunchError> {
    if args.len() != kernel.params.len() {
        return Err(LaunchError::ArgCount {
            expected: kernel.params.len(),
            got: args.len(),
        });
    }
    let mut dims: Vec<Option<(u64, &str)>> = vec![None; kernel.dims.len()];
    for (p, a) in kernel.params.iter().zip(args) {
        match (&p.kind, a) {
            (ParamKind::Scalar(s), ArgShape::Scalar(v)) => {
                if v.scalar() != *s {
                    return Err(LaunchError::Dtype {
                        param: p.name.clone(),
                        expected: s.to_string(),
                        got: v.scalar().to_string(),
                    });
                }
            }
            (
                ParamKind::Tensor { elem, shape, .. },
                ArgShape::Tensor {
                    elem: got,
                    shape: t_shape,
                },
            ) => {
                if *got != *elem {
                    return Err(LaunchError::Dtype {
                        param: p.name.clone(),
                        expected: elem.to_string(),
                        got: got.to_string(),
                    });
                }
                if t_shape.len() != shape.len() {
                    return Err(LaunchError::Rank {
                        param: p.name.clone(),
                        expected: shape.len(),
                        got: t_shape.len(),
                    });
                }
                for (axis, (d, &got)) in shape.iter().zip(t_shape.iter()).enumerate() {
                    match *d {
                        Dim::Const(v) if v != got as u64 => {
                            return Err(LaunchError::Extent {
                                param: p.name.clone(),
                                axis,
                                expected: v,
                                got,
                            });
                        }
                        Dim::Const(_) => {}
                        Dim::Sym(s) => match dims[s] {
                            Some((v, first)) if v != got as u64 => {
                                return Err(LaunchError::DimConflict {
                                    dim: kernel.dims[s].clone(),
                                    first: first.to_string(),
                                    first_extent: v,
                                    second: p.name.clone(),
                                    second_extent: got as u64,
                                });
                            }
                            Some(_) => {}
                            None => dims[s] = Some((got as u64, &p.name)),
                        },
                    }
                }
            }
            (ParamKind::Scalar(s), ArgShape::Tensor { .. }) => {
                return Err(LaunchError::Kind {
                    param: p.name.clone(),
                    expected: format!("a scalar {s}"),
                });
            }
            (ParamKind::Tensor { elem, .. }, ArgShape::Scalar(_)) => {
                return Err(LaunchError::Kind {
                    param: p.name.clone(),
                    expected: format!("a tensor of {elem}"),
                });
            }
        }
    }
    // Every dim appears in some tensor's type, so every dim is bound here.
    let dims: Vec<u64> = dims.into_iter().map(|d| d.map_or(0, |(v, _)| v)).collect();
    let mut grid = [1u64; 3];
    for (axis, g) in kernel.grid.iter().enumerate() {
        grid[axis] = g
            .eval(&dims)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| LaunchError::Grid {
                axis,
                formula: g.display(&kernel.dims),
            })?;
    }
    let blocks = grid
        .iter()
        .fold(1u128, |n, g| n.saturating_mul(u128::from(*g)));
    if blocks > u128::from(MAX_BLOCKS) {
        return Err(LaunchError::GridTooLarge { grid, blocks });
    }
    // The checker refused every tile of constant extent beyond the bound;
    // one whose extent is a dim is refused here, before any backend runs.
    for local in &kernel.locals {
        let extents = local.shape.iter().map(|d| d.extent(&dims) as u64);
        if !bounds::tile_fits(local.elem, extents.clone()) {
            return Err(LaunchError::TileTooLarge {
                name: local.name.clone(),
                shape: extents.map(|e| e as usize).collect(),
            });
        }
    }
    Ok(Bound { dims, grid })
}
