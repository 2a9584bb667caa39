//! What is known of integer nodes before a kernel runs, for lowerings that
//! can then emit less code: here, how many low bits of a counter are zero
//! at a statement's first position (the stepped Tandem draws of the GPU
//! lowering use it to drop the loop for misaligned counters).
//!
//! The analysis is local and conservative: it follows sums, products,
//! shifts, masks, selects and scalar `let`s a few levels deep, and counts
//! no bits for anything else.

use super::BinOp;
use super::{ExprId, ExprKind, Kernel, Stmt};
use crate::types::{Scalar, Value};

/// How many levels of operands the analysis follows.
const DEPTH: u32 = 12;

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
            Scalar::Bool
            | Scalar::I64
            | Scalar::U64
            | Scalar::F32
            | Scalar::F64
            | Scalar::F16
            | Scalar::BF16 => 0,
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
        | ExprKind::Builtin(..)
        | ExprKind::Reduce { .. }
        | ExprKind::Dot { .. }
        | ExprKind::Transpose(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::Program;

    /// How many low bits of the integer `value` converted by the one store
    /// are known to be zero at the first position.
    fn low(value: &str) -> u32 {
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
        zero_low_bits_at_origin(&k, a)
    }

    #[test]
    fn counters_known_to_be_multiples_at_the_first_position() {
        assert_eq!(low("u32((r + iota(0)) * 256 + iota(1))"), 10);
        assert_eq!(low("u32((r + iota(0)) * 255 + iota(1))"), 2);
        assert_eq!(low("u32((r + iota(0)) * 256 + iota(1) + 1)"), 0);
        assert_eq!(low("u32(iota(0) << 3)"), 32);
        assert_eq!(low("(x & 4294967280) | 64"), 4);
        assert_eq!(low("where(x > 3, x << 3, x << 5)"), 3);
        assert_eq!(low("x << 3"), 3);
        assert_eq!(low("x"), 0);
        assert_eq!(low("x / 4"), 0);
    }
}
