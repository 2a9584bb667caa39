//! The products (`dot`) the workgroup computes ahead of their statements
//! (`lower/dot_ahead.rs`): which take cooperative matrices (tensor cores,
//! fast mode only), how a subgroup's 16 x 16 tiles of the result are
//! arranged, and which operands the matrices load straight from their
//! tensors instead of staging them in workgroup memory.
//!
//! **Tiles.** Where the result's `m/16 x n/16` tiles split evenly into one
//! block of `rows x cols` tiles a subgroup, each subgroup keeps such a
//! block ([`Product::block`]), and each step of K loads `rows + cols`
//! fragments for `rows * cols` products: the shape the hand-written GEMM
//! of `phobos-bench-gemm` has. Otherwise subgroup `s` of `S` keeps tiles
//! `s, s + S, ...` and loads both fragments of each.
//!
//! **Direct operands.** An operand that is a slice of a read-only `f16`
//! tensor over two axes, the second the tensor's last (`A[i :+ BM, :]`,
//! `Q[bh, i :+ BM, :]`), or `trans` of one (`trans(K[bh, j :+ BN, :])`),
//! is rows of memory a fixed stride apart: a cooperative load takes its
//! fragment from the tensor itself ([`Direct`]). Such a tensor is bound as
//! `array<f16>` ([`native_halves`]). The emitter takes that path where the
//! block's slice lies inside the tensor and its rows are 16-byte aligned,
//! a test uniform over the workgroup; elsewhere (a ragged last block, a K
//! not a multiple of 16) it stages the operand as before. The values are
//! the same f16 values either way.

use crate::{GpuOptions, Precision};
use phobos_core::ir::{ExprId, ExprKind, GridExpr, Index, Kernel, LocalId, ParamKind, Place, Stmt};
use phobos_core::types::{Dim, Scalar, Value};

/// The side of a cooperative tile.
pub const TILE: u32 = 16;

/// A product computed ahead by the workgroup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Product {
    pub expr: ExprId,
    /// The result's extents (constants).
    pub m: u32,
    pub n: u32,
    /// Why it does not take cooperative matrices (`None` where it does).
    pub not_coop: Option<&'static str>,
    /// The tiles a subgroup keeps, as a block of `[rows, cols]` tiles,
    /// where the result's tiles split evenly into one such block a
    /// subgroup.
    pub block: Option<[u32; 2]>,
    /// Operands `a` and `b` loaded straight from their tensors.
    pub direct: [Option<Direct>; 2],
    /// Whether the one statement that reads the product is a store over
    /// its tile that takes each subgroup's tiles as they are, one at a time
    /// ([`stored_from_tiles`]), so that no array holds the whole result.
    pub from_tiles: bool,
    /// Whether some operand loads straight and every such operand's slice
    /// is known to lie inside its tensor at every block and iteration,
    /// with rows 16-byte aligned and K a multiple of 16
    /// ([`always_inside`]): the emitter then tests nothing and stages only
    /// the other operand, if any ([`Product::always_direct`]).
    pub always_inside: bool,
    /// The `for` loop (by statement) whose one tile statement is `acc =
    /// dot(a, b, acc)` over the whole of a `var` tile `acc`, Triton's loop
    /// over K ([`carried_loop`]): the subgroups keep the accumulators in
    /// their cooperative matrices from before the loop to after it.
    pub carried: Option<usize>,
}

impl Product {
    pub fn coop(&self) -> bool {
        self.not_coop.is_none()
    }

    /// Whether both operands load straight and are [`Product::always_inside`]:
    /// the emitter then has no test, no staging arrays and no staged path.
    pub fn always_direct(&self) -> bool {
        always_direct(&self.direct, self.always_inside)
    }
}

/// Whether a product with operands loaded straight as `direct` says, all
/// of them known inside where `inside`, loads both straight with no test.
pub fn always_direct(direct: &[Option<Direct>; 2], inside: bool) -> bool {
    inside && direct.iter().all(Option::is_some)
}

/// An operand that cooperative loads take from its tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Direct {
    /// The tensor, by parameter index.
    pub param: usize,
    /// The load node (under `trans` where `transposed`).
    pub load: ExprId,
    /// Whether the operand is `trans` of the load: the load's rows are the
    /// operand's columns, so the fragment is read column by column.
    pub transposed: bool,
}

/// The products of `k` that the workgroup computes ahead, for `options`
/// with `block` invocations a block and `packed` blocks a workgroup: those
/// of two constant extents whose operands draw no Tandem words.
pub fn plan(k: &Kernel, options: &GpuOptions, block: u32, packed: u32) -> Vec<Product> {
    if !options.knobs.dot_ahead {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (expr, e) in k.exprs.iter_enumerated() {
        let ExprKind::Dot { a, b, acc } = e.kind else {
            continue;
        };
        let [Dim::Const(m), Dim::Const(n)] = e.shape[..] else {
            continue;
        };
        let (Ok(m), Ok(n)) = (u32::try_from(m), u32::try_from(n)) else {
            continue;
        };
        let draws = |x| crate::lower::tandem_draw::staged::has_words(k, x);
        if m == 0 || n == 0 || draws(a) || draws(b) || acc.is_some_and(draws) {
            continue;
        }
        let not_coop = why_not_coop(options, m, n, block, packed);
        let coop = not_coop.is_none();
        let subgroups = match options.subgroup_width {
            0 => 0,
            w => block / w,
        };
        let direct = |x| match coop && options.knobs.coop_direct {
            true => direct(k, x),
            false => None,
        };
        let block = coop
            .then(|| tile_block(m / TILE, n / TILE, subgroups))
            .flatten();
        let direct = [direct(a), direct(b)];
        let inside = direct.iter().any(Option::is_some)
            && direct.iter().flatten().all(|d| always_inside(k, d.load));
        // A loop that carries the accumulators stores them once after it.
        let carried = block.and_then(|_| carried_loop(k, expr, acc?));
        out.push(Product {
            expr,
            m,
            n,
            not_coop,
            block,
            always_inside: inside,
            direct,
            from_tiles: coop && carried.is_none() && stored_from_tiles(k, expr, acc, [m, n]),
            carried,
        });
    }
    out
}

/// The subgroups that keep a 16 x 16 slot for the products stored from
/// their tiles (`lower/dot_tiles.rs`, which they share): every subgroup
/// where some product's tiles split evenly, else those that keep a tile.
pub fn tile_slots(products: &[Product], subgroups: u32) -> u32 {
    products
        .iter()
        .filter(|p| p.from_tiles)
        .map(|p| match p.block {
            Some(_) => subgroups,
            None => subgroups.min((p.m / TILE) * (p.n / TILE)),
        })
        .max()
        .unwrap_or(0)
}

/// The workgroup memory that `products` may take when they are computed
/// ahead: each one's staging arrays (none for an operand always loaded
/// straight) and its result's array (none where it is stored from its
/// tiles or carried in the accumulators), and the subgroups' slots. An
/// upper bound (the emitter shares arrays of one size between products,
/// and computes a product named by a `let` into the `let`'s tile): the
/// memory plan leaves it to them before staged Tandem words take what is
/// left (`memory::plan`).
pub fn reserve(products: &[Product], subgroups: u32) -> u64 {
    let mut bytes = 0u64;
    for p in products {
        let (chunk, elem) = match p.coop() {
            true => (crate::lower::COOP_CHUNK, 2),
            false => (crate::lower::CHUNK, 4),
        };
        for (side, d) in p.direct.iter().enumerate() {
            if p.always_inside && d.is_some() {
                continue;
            }
            let elements = if side == 0 { p.m * chunk } else { chunk * p.n };
            bytes += u64::from(elements) * elem;
        }
        if !p.from_tiles && p.carried.is_none() {
            bytes += 4 * u64::from(p.m) * u64::from(p.n);
        }
    }
    bytes + 4 * u64::from(TILE * TILE) * u64::from(tile_slots(products, subgroups))
}

/// Whether product `expr` of `[m, n]` is read by one statement only, a
/// store over a tile of its shape whose value computes no other product or
/// reduction and draws no Tandem words: every element of the store is then
/// a function of the product's element at the same position, so the store
/// can run tile by tile as the subgroups finish them (`lower/dot_tiles.rs`).
///
/// The store is to a tensor, reading nothing of it, or to the whole of an
/// f32 tile, reading the tile at its own positions only (`acc = acc *
/// alpha + dot(p, V)`); a `let` or `var` of an f32 tile of the product's
/// shape (`var s = dot(q, trans(k)) * scale`) is such a store too.
///
/// An accumulator (`dot(a, b, acc)`) must be an f32 tile of the product's
/// shape held whole in workgroup memory (`acc = dot(p, V, acc)`): the
/// subgroups load their tiles' accumulators from it, as the product
/// through the result array loads them from the array.
fn stored_from_tiles(k: &Kernel, expr: ExprId, acc: Option<ExprId>, [m, n]: [u32; 2]) -> bool {
    let mut readers = k.body.iter().filter(|s| match s {
        Stmt::Let { value, .. } | Stmt::Var { value, .. } => k.reachable(*value).contains(&expr),
        Stmt::Store { index, value, .. } => index
            .iter()
            .filter_map(Index::expr)
            .chain([*value])
            .any(|root| k.reachable(root).contains(&expr)),
        Stmt::For { start, end, .. } => [*start, *end]
            .iter()
            .any(|root| k.reachable(*root).contains(&expr)),
        Stmt::EndFor => false,
    });
    let (Some(reader), None) = (readers.next(), readers.next()) else {
        return false;
    };
    let shape = [Dim::Const(u64::from(m)), Dim::Const(u64::from(n))];
    let f32_tile = |l: LocalId| k.locals[l].elem == Scalar::F32 && k.locals[l].shape == shape;
    if let Some(c) = acc
        && accumulator_tile(k, c).is_none_or(|l| !f32_tile(l))
    {
        return false;
    }
    let (place, index, value) = match reader {
        Stmt::Store {
            place,
            index,
            value,
        } => (*place, index.clone(), *value),
        Stmt::Let { local, value } | Stmt::Var { local, value } if f32_tile(*local) => {
            (Place::Local(*local), whole_index(&shape), *value)
        }
        _ => return false,
    };
    let destination = match place {
        Place::Param(_) => !phobos_core::ir::analysis::reads_place(k, value, place),
        Place::Local(l) => {
            f32_tile(l) && crate::lower::reads_own_element(k, (place, &index, value), &|_| false)
        }
    };
    let under = k.reachable(value);
    phobos_core::ir::analysis::slice_tile(&index) == shape
        && destination
        && under.iter().all(|&id| match k.exprs[id].kind {
            ExprKind::Dot { .. } => id == expr,
            ExprKind::Reduce { .. } => false,
            _ => true,
        })
        && !crate::lower::tandem_draw::staged::has_words(k, value)
}

/// The tile an accumulator operand reads whole (`Local(l)` of a tile:
/// after `values::inline`, a local still read as a tile is in workgroup
/// memory).
pub fn accumulator_tile(k: &Kernel, acc: ExprId) -> Option<LocalId> {
    match k.exprs[acc].kind {
        ExprKind::Local(l) if !k.locals[l].shape.is_empty() => Some(l),
        _ => None,
    }
}

/// The index of the whole of a tile of `shape`.
pub fn whole_index(shape: &[Dim]) -> Vec<Index> {
    shape
        .iter()
        .map(|&len| Index::Range { start: None, len })
        .collect()
}

/// The `for` loop around `acc = dot(a, b, acc)` (product `expr`,
/// accumulator operand `acc`), where `acc` is a `var` tile the store
/// writes whole, at its own positions, and the loop's other statements are
/// scalar `let`s: no other statement of the loop reads or writes the tile,
/// so its elements may stay in the subgroups' accumulators for the whole
/// loop and be written back once after it.
fn carried_loop(k: &Kernel, expr: ExprId, acc: ExprId) -> Option<usize> {
    let ExprKind::Local(local) = k.exprs[acc].kind else {
        return None;
    };
    let shape = &k.locals[local].shape;
    let whole = |index: &[Index]| {
        index.len() == shape.len()
            && index.iter().zip(shape).all(|(ix, d)| match ix {
                Index::Range { start, len } => {
                    len == d
                        && start.is_none_or(|s| {
                            matches!(
                                k.exprs[s].kind,
                                ExprKind::Const(Value::I32(0) | Value::U32(0))
                            )
                        })
                }
                Index::Single(_) => false,
            })
    };
    let at = k.body.iter().position(|s| match s {
        Stmt::Store {
            place,
            index,
            value,
        } => *place == Place::Local(local) && *value == expr && whole(index),
        _ => false,
    })?;
    let start = k.body[..at]
        .iter()
        .rposition(|s| matches!(s, Stmt::For { .. }))?;
    let end = at
        + k.body[at..]
            .iter()
            .position(|s| matches!(s, Stmt::EndFor))?;
    let others = (start + 1..end).filter(|&i| i != at);
    let scalar_lets = others.clone().all(|i| match &k.body[i] {
        Stmt::Let { local, .. } => k.locals[*local].shape.is_empty(),
        _ => false,
    });
    let reads_tile =
        |root: ExprId| phobos_core::ir::analysis::reads_place(k, root, Place::Local(local));
    let untouched = others
        .clone()
        .all(|i| k.body[i].value().is_none_or(|v| !reads_tile(v)));
    (scalar_lets && untouched).then_some(start)
}

/// Whether load `load` (a slice of a tensor over two axes, the second its
/// last) lies inside its tensor at every block of the grid and every
/// iteration of the loops around it, with its first element and its rows
/// at multiples of 8 elements (16 bytes of f16), and both its range axes
/// multiples of 16 long: known where the extents, the grid and the loops'
/// bounds are constants and the positions sums and constant multiples of
/// block ids, loop variables and constants (a launch's specialised kernel,
/// `crate::specialize`).
pub fn always_inside(k: &Kernel, load: ExprId) -> bool {
    let ExprKind::Load {
        place: Place::Param(param),
        ref index,
    } = k.exprs[load].kind
    else {
        return false;
    };
    let ParamKind::Tensor { ref shape, .. } = k.params[param].kind else {
        return false;
    };
    let Some(grid) = k
        .grid
        .iter()
        .map(|g| {
            constant(g)
                .then(|| g.eval(&[]))
                .flatten()
                .filter(|v| *v > 0)
        })
        .collect::<Option<Vec<i64>>>()
    else {
        return false;
    };
    let Some(extents) = shape
        .iter()
        .map(|d| match d {
            Dim::Const(v) => i64::try_from(*v).ok(),
            Dim::Sym(_) => None,
        })
        .collect::<Option<Vec<i64>>>()
    else {
        return false;
    };
    let values = Values {
        k,
        grid: &grid,
        consts: phobos_core::ir::analysis::constant_values(k),
    };
    // The flat index of the slice's first element.
    let mut base = Known::exact(0);
    let mut stride = 1i64;
    let mut row_stride = None;
    for (axis, ix) in index.iter().enumerate().rev() {
        let (start, len) = match ix {
            Index::Range { start, len } => (*start, *len),
            Index::Single(s) => (Some(*s), Dim::Const(1)),
        };
        let Dim::Const(len) = len else {
            return false;
        };
        let Some(start) = start.map_or(Some(Known::exact(0)), |s| values.of(s, 0)) else {
            return false;
        };
        let Ok(len) = i64::try_from(len) else {
            return false;
        };
        // Both range axes are 16-tile sides: m or n (multiples of 16 for
        // cooperative matrices) and K.
        let tile_side = matches!(ix, Index::Range { .. }) && len % 16 != 0;
        if tile_side || start.lo < 0 || start.hi + len > extents[axis] {
            return false;
        }
        let Some(term) = start.scale(stride) else {
            return false;
        };
        let Some(sum) = base.add(term) else {
            return false;
        };
        base = sum;
        if matches!(ix, Index::Range { .. }) && axis + 1 < index.len() && row_stride.is_none() {
            row_stride = Some(stride);
        }
        let Some(next) = stride.checked_mul(extents[axis]) else {
            return false;
        };
        stride = next;
    }
    row_stride.is_some_and(|r| r % 8 == 0) && base.multiple_of(8)
}

/// What is known of an integer at every block and iteration: its range
/// `lo ..= hi`, and that it is `rem` plus a multiple of `step` (`step` 0:
/// it is `rem`).
#[derive(Clone, Copy, Debug)]
struct Known {
    lo: i64,
    hi: i64,
    rem: i64,
    step: i64,
}

impl Known {
    fn exact(v: i64) -> Known {
        Known {
            lo: v,
            hi: v,
            rem: v,
            step: 0,
        }
    }

    fn add(self, o: Known) -> Option<Known> {
        Some(Known {
            lo: self.lo.checked_add(o.lo)?,
            hi: self.hi.checked_add(o.hi)?,
            rem: self.rem.checked_add(o.rem)?,
            step: gcd(self.step, o.step),
        })
    }

    fn scale(self, c: i64) -> Option<Known> {
        let (a, b) = (self.lo.checked_mul(c)?, self.hi.checked_mul(c)?);
        Some(Known {
            lo: a.min(b),
            hi: a.max(b),
            rem: self.rem.checked_mul(c)?,
            step: self.step.checked_mul(c)?.abs(),
        })
    }

    fn multiple_of(self, m: i64) -> bool {
        self.rem % m == 0 && self.step % m == 0
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// [`Known`] of a kernel's integer nodes.
struct Values<'k> {
    k: &'k Kernel,
    grid: &'k [i64],
    consts: phobos_core::ir::IdVec<ExprId, Option<phobos_core::types::Value>>,
}

impl Values<'_> {
    /// What is known of node `id` (`depth` bounds the `let`s followed).
    fn of(&self, id: ExprId, depth: u32) -> Option<Known> {
        if let Some(v) = self.consts[id] {
            return i64::try_from(v.as_i128()).ok().map(Known::exact);
        }
        if depth > 64 {
            return None;
        }
        match self.k.exprs[id].kind {
            ExprKind::BlockId(a) => Some(Known {
                lo: 0,
                hi: self.grid[a as usize] - 1,
                rem: 0,
                step: 1,
            }),
            ExprKind::Local(l) => self.local(l, depth),
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.of(a, depth + 1)?, self.of(b, depth + 1)?);
                match op {
                    phobos_core::ir::BinOp::Add => x.add(y),
                    phobos_core::ir::BinOp::Sub => x.add(y.scale(-1)?),
                    phobos_core::ir::BinOp::Mul if y.step == 0 => x.scale(y.rem),
                    phobos_core::ir::BinOp::Mul if x.step == 0 => y.scale(x.rem),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// A `let`'s value, or a `for` variable's range (constant bounds): the
    /// first and last values it takes.
    fn local(&self, l: phobos_core::ir::LocalId, depth: u32) -> Option<Known> {
        let mut found = None;
        for s in &self.k.body {
            let this = match s {
                Stmt::Let { local, value } if *local == l => self.of(*value, depth + 1),
                Stmt::For { local, start, end } if *local == l => {
                    let (a, b) = (self.of(*start, depth + 1)?, self.of(*end, depth + 1)?);
                    (a.step == 0 && b.step == 0 && b.rem > a.rem).then_some(Known {
                        lo: a.rem,
                        hi: b.rem - 1,
                        rem: a.rem,
                        step: 1,
                    })
                }
                Stmt::Var { local, .. }
                | Stmt::Store {
                    place: Place::Local(local),
                    ..
                } if *local == l => {
                    return None;
                }
                _ => continue,
            };
            // A local bound once.
            if found.is_some() {
                return None;
            }
            found = Some(this?);
        }
        found
    }
}

/// Whether grid expression `g` names no dim (a launch's, specialised).
fn constant(g: &GridExpr) -> bool {
    match g {
        GridExpr::Const(_) => true,
        GridExpr::Dim(_) => false,
        GridExpr::Add(a, b)
        | GridExpr::Sub(a, b)
        | GridExpr::Mul(a, b)
        | GridExpr::Div(a, b)
        | GridExpr::Cdiv(a, b) => constant(a) && constant(b),
    }
}

/// Why a product of `[m, n]` does not take cooperative matrices.
fn why_not_coop(
    options: &GpuOptions,
    m: u32,
    n: u32,
    block: u32,
    packed: u32,
) -> Option<&'static str> {
    if options.precision != Precision::Fast {
        return Some("exact mode");
    }
    if !options.cooperative {
        return Some("no cooperative matrices on this device");
    }
    if !m.is_multiple_of(TILE) || !n.is_multiple_of(TILE) {
        return Some("extents not multiples of 16");
    }
    let width = options.subgroup_width;
    if width < 2 || !block.is_multiple_of(width) {
        return Some("subgroups of varying width");
    }
    (packed != 1).then_some("several blocks a workgroup")
}

/// The block of `[rows, cols]` tiles of a `tr x tc` grid of tiles that
/// each of `subgroups` keeps, where the grid splits evenly into one block
/// a subgroup: the one that loads the fewest fragments a step (`rows +
/// cols`), the squarer on a tie.
fn tile_block(tr: u32, tc: u32, subgroups: u32) -> Option<[u32; 2]> {
    if subgroups == 0 || !(tr * tc).is_multiple_of(subgroups) {
        return None;
    }
    let per = tr * tc / subgroups;
    (1..=per)
        .filter(|r| per.is_multiple_of(*r))
        .map(|r| [r, per / r])
        .filter(|[r, c]| tr.is_multiple_of(*r) && tc.is_multiple_of(*c))
        .min_by_key(|[r, c]| (r + c, r.abs_diff(*c)))
}

/// Operand `x` as a slice of a read-only f16 tensor over two axes, the
/// second the tensor's last (or `trans` of one).
fn direct(k: &Kernel, x: ExprId) -> Option<Direct> {
    let (load, transposed) = match k.exprs[x].kind {
        ExprKind::Transpose(inner) => (inner, true),
        _ => (x, false),
    };
    let ExprKind::Load {
        place: Place::Param(param),
        ref index,
    } = k.exprs[load].kind
    else {
        return None;
    };
    let ParamKind::Tensor {
        ref shape,
        elem,
        written,
        ..
    } = k.params[param].kind
    else {
        return None;
    };
    if elem != Scalar::F16 || written {
        return None;
    }
    let ranges: Vec<usize> = index
        .iter()
        .enumerate()
        .filter(|(_, ix)| matches!(ix, Index::Range { .. }))
        .map(|(axis, _)| axis)
        .collect();
    (ranges.len() == 2 && ranges[1] + 1 == shape.len()).then_some(Direct {
        param,
        load,
        transposed,
    })
}

/// The tensors bound as `array<f16>` because some product's operand is
/// loaded straight from them, by parameter index.
pub fn native_halves(k: &Kernel, products: &[Product]) -> Vec<bool> {
    let mut out = vec![false; k.params.len()];
    for d in products.iter().flat_map(|p| p.direct.iter().flatten()) {
        out[d.param] = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::tile_block;

    #[test]
    fn a_subgroup_keeps_the_block_that_loads_the_fewest_fragments() {
        // 64 x 64: sixteen tiles.
        assert_eq!(tile_block(4, 4, 1), Some([4, 4]));
        assert_eq!(tile_block(4, 4, 4), Some([2, 2]));
        assert_eq!(tile_block(4, 4, 2), Some([2, 4]));
        assert_eq!(tile_block(4, 4, 8), Some([1, 2]));
        assert_eq!(tile_block(4, 4, 16), Some([1, 1]));
        // 16 x 64 among two: a row of two tiles each.
        assert_eq!(tile_block(1, 4, 2), Some([1, 2]));
        // More subgroups than tiles, or no even split.
        assert_eq!(tile_block(1, 1, 4), None);
        assert_eq!(tile_block(3, 1, 2), None);
        assert_eq!(tile_block(4, 4, 0), None);
    }
}
