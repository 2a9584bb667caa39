//! Upper bounds of integer nodes, for lowerings that choose a cheaper
//! instruction when a value is known to be small: the GPU converts an
//! integer of at most 2^23 to f32 with one integer `or` and one exact
//! float subtraction instead of a conversion, which NVIDIA runs at an
//! eighth of the float rate (`phobos_gpu`'s `cast.rs`).
//!
//! The analysis is local and conservative: it follows masks, shifts,
//! remainders, selects and small sums a few levels deep, and answers
//! `None` (no bound known) for anything else.

use super::{ExprId, ExprKind, Kernel, Stmt};
use crate::syntax::ast::BinOp;
use crate::types::{Scalar, Value};

/// How many levels of operands [`bound`] follows.
const DEPTH: u32 = 12;

/// When `Some(b)`, every value of the u32 or i32 node `e` lies in `0 ..= b`
/// (for i32: it is never negative). `None` when nothing is known, and for
/// nodes of other types.
pub fn bound(k: &Kernel, e: ExprId) -> Option<u64> {
    bound_at(k, e, DEPTH)
}

fn bound_at(k: &Kernel, e: ExprId, depth: u32) -> Option<u64> {
    let node = &k.exprs[e];
    let max = match node.ty {
        Scalar::U32 => u64::from(u32::MAX),
        Scalar::I32 => i32::MAX as u64,
        Scalar::Bool => return Some(1),
        Scalar::I64 | Scalar::U64 | Scalar::F32 | Scalar::F64 => return None,
    };
    if depth == 0 {
        return (node.ty == Scalar::U32).then_some(max);
    }
    let sub = |x: ExprId| bound_at(k, x, depth - 1);
    let konst = |x: ExprId| match k.exprs[x].kind {
        ExprKind::Const(Value::U32(v)) => Some(u64::from(v)),
        ExprKind::Const(Value::I32(v)) => u64::try_from(v).ok(),
        _ => None,
    };
    // The type's own range, for a u32 node of which nothing else is known.
    let unknown = (node.ty == Scalar::U32).then_some(max);
    let b = match &node.kind {
        ExprKind::Const(_) => konst(e),
        ExprKind::Binary(BinOp::Shr, a, s) => {
            let s = konst(*s)? & 31;
            Some(sub(*a).or(unknown)? >> s)
        }
        ExprKind::Binary(BinOp::BitAnd, a, b) => match (sub(*a), sub(*b)) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        },
        ExprKind::Binary(BinOp::Rem, a, d) => {
            let d = konst(*d).filter(|&d| d > 0)?;
            match sub(*a) {
                Some(x) => Some(x.min(d - 1)),
                None => (node.ty == Scalar::U32).then_some(d - 1),
            }
        }
        ExprKind::Binary(BinOp::Sub, a, b) => {
            // `c - x` with `0 <= x <= c`: no wrap, at most `c`.
            let c = konst(*a)?;
            (sub(*b)? <= c).then_some(c)
        }
        ExprKind::Binary(BinOp::Add, a, b) => sub(*a)?.checked_add(sub(*b)?),
        ExprKind::Binary(BinOp::Mul, a, b) => sub(*a)?.checked_mul(sub(*b)?),
        ExprKind::Binary(BinOp::BitOr | BinOp::BitXor, a, b) => {
            let m = sub(*a)?.max(sub(*b)?);
            Some((m + 1).next_power_of_two() - 1)
        }
        ExprKind::Select(_, a, b) => Some(sub(*a)?.max(sub(*b)?)),
        // u32 <-> i32 keep the bits, so a bound that fits both carries over.
        ExprKind::Cast(a) | ExprKind::Bitcast(a) => match k.exprs[*a].ty {
            Scalar::Bool => Some(1),
            Scalar::U32 | Scalar::I32 => sub(*a),
            Scalar::I64 | Scalar::U64 | Scalar::F32 | Scalar::F64 => None,
        },
        ExprKind::Binary(
            BinOp::Div
            | BinOp::Shl
            | BinOp::Eq
            | BinOp::Ne
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::And
            | BinOp::Or,
            ..,
        )
        | ExprKind::Param(_)
        | ExprKind::DimValue(_)
        | ExprKind::BlockId(_)
        | ExprKind::GridSize(_)
        | ExprKind::Iota(_)
        | ExprKind::Local(_)
        | ExprKind::Load { .. }
        | ExprKind::Unary(..)
        | ExprKind::Builtin(..) => None,
    };
    b.filter(|&b| b <= max).or(unknown)
}

/// How many low bits of the u32 or i32 node `e` are known to be zero where
/// every `iota` is 0 (a statement's first position): 32 for a node known to
/// be 0 there. The stepped Tandem draws use it to see at compile time that
/// a tile's first counter is a multiple of 4, as `(r + iota(0)) * 256 +
/// iota(1)` is, and then emit only their aligned loop. Scalar `let`
/// locals are followed to their value; anything else unknown counts 0.
pub fn zero_low_bits_at_origin(k: &Kernel, e: ExprId) -> u32 {
    low_bits_at(k, e, DEPTH)
}

fn low_bits_at(k: &Kernel, e: ExprId, depth: u32) -> u32 {
    if depth == 0 || !matches!(k.exprs[e].ty, Scalar::U32 | Scalar::I32) {
        return 0;
    }
    let sub = |x: ExprId| low_bits_at(k, x, depth - 1);
    let konst = |x: ExprId| match k.exprs[x].kind {
        ExprKind::Const(Value::U32(v)) => Some(v),
        ExprKind::Const(Value::I32(v)) => Some(v as u32),
        _ => None,
    };
    match &k.exprs[e].kind {
        ExprKind::Const(_) => konst(e).map_or(0, u32::trailing_zeros),
        ExprKind::Iota(_) => 32,
        ExprKind::Local(l) => k
            .body
            .iter()
            .find_map(|s| match s {
                Stmt::Let { local, value } if local == l && k.exprs[*value].shape.is_empty() => {
                    Some(sub(*value))
                }
                _ => None,
            })
            .unwrap_or(0),
        ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::BitOr | BinOp::BitXor, a, b) => {
            sub(*a).min(sub(*b))
        }
        ExprKind::Binary(BinOp::Mul, a, b) => (sub(*a) + sub(*b)).min(32),
        ExprKind::Binary(BinOp::BitAnd, a, b) => sub(*a).max(sub(*b)),
        ExprKind::Binary(BinOp::Shl, a, s) => match konst(*s) {
            Some(s) => (sub(*a) + (s & 31)).min(32),
            None => 0,
        },
        ExprKind::Select(_, a, b) => sub(*a).min(sub(*b)),
        ExprKind::Cast(a) | ExprKind::Bitcast(a) => match k.exprs[*a].ty {
            Scalar::U32 | Scalar::I32 => sub(*a),
            Scalar::Bool | Scalar::I64 | Scalar::U64 | Scalar::F32 | Scalar::F64 => 0,
        },
        ExprKind::Binary(
            BinOp::Div
            | BinOp::Rem
            | BinOp::Shr
            | BinOp::Eq
            | BinOp::Ne
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::And
            | BinOp::Or,
            ..,
        )
        | ExprKind::Param(_)
        | ExprKind::DimValue(_)
        | ExprKind::BlockId(_)
        | ExprKind::GridSize(_)
        | ExprKind::Load { .. }
        | ExprKind::Unary(..)
        | ExprKind::Builtin(..) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::Program;

    /// The kernel and the operand of the conversion its one store writes.
    fn cast_operand(value: &str) -> (Kernel, ExprId) {
        let text = format!(
            "kernel k(X: tensor<u32>[M, 256], Y: tensor<f32>[M, 256]) {{\n  \
             let r = ctx.block.x * 4\n  let x = X[r :+ 4, :]\n  Y[r :+ 4, :] = f32({value})\n}}"
        );
        let (prog, diags) = Program::parse("range.ph", &text);
        assert!(diags.is_empty(), "{diags:?}");
        let k = prog.kernel("k", &[]).expect("checks");
        let Some(Stmt::Store { value, .. }) = k.body.last() else {
            panic!("the last statement is the store")
        };
        let ExprKind::Cast(a) = k.exprs[*value].kind else {
            panic!("the stored value is a conversion")
        };
        (k, a)
    }

    fn bound_of(value: &str) -> Option<u64> {
        let (k, a) = cast_operand(value);
        bound(&k, a)
    }

    #[test]
    fn masks_shifts_and_selects_bound_a_value() {
        assert_eq!(bound_of("x >> 9"), Some((1 << 23) - 1));
        assert_eq!(bound_of("x >> 8"), Some((1 << 24) - 1));
        assert_eq!(bound_of("x & 65535"), Some(65535));
        assert_eq!(bound_of("(x >> 16) + (x & 65535)"), Some(131070));
        assert_eq!(bound_of("x % 1000"), Some(999));
        assert_eq!(bound_of("where(x > 5, x & 255, x >> 28)"), Some(255));
        assert_eq!(bound_of("1073741824 - (x & 1073741823)"), Some(1 << 30));
        assert_eq!(bound_of("i32(x >> 9)"), Some((1 << 23) - 1));
    }

    #[test]
    fn unknown_values_have_only_their_type_s_bound() {
        assert_eq!(bound_of("x"), Some(u64::from(u32::MAX)));
        assert_eq!(bound_of("x + 1"), Some(u64::from(u32::MAX)));
        // `1 - x` wraps for x > 1.
        assert_eq!(bound_of("1 - (x & 3)"), Some(u64::from(u32::MAX)));
        // An i32 may be negative: an arithmetic shift of it is unbounded.
        assert_eq!(bound_of("i32(x) >> 9"), None);
        assert_eq!(bound_of("i32(x) & -2"), None);
    }

    #[test]
    fn counters_known_to_be_multiples_at_the_first_position() {
        let low = |v: &str| {
            let (k, a) = cast_operand(v);
            zero_low_bits_at_origin(&k, a)
        };
        assert_eq!(low("u32((r + iota(0)) * 256 + iota(1))"), 10);
        assert_eq!(low("u32((r + iota(0)) * 255 + iota(1))"), 2);
        assert_eq!(low("u32((r + iota(0)) * 256 + iota(1) + 1)"), 0);
        assert_eq!(low("u32(iota(0) << 3)"), 32);
        assert_eq!(low("x << 3"), 3);
        assert_eq!(low("x"), 0);
    }
}
