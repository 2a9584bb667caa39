//! Scalar operations with `phobos_core::interp::ops`'s meaning.

use super::{H, Lower};
use crate::Precision;
use naga::{BinaryOperator, Expression, MathFunction, ScalarKind, UnaryOperator};
use phobos_core::ir::{BinOp, UnOp};
use phobos_core::ir::{Builtin, Native};
use phobos_core::types::{Scalar, Value};

impl<'k> Lower<'k> {
    pub(super) fn unary(&mut self, op: UnOp, ty: Scalar, x: H) -> H {
        match (op, ty) {
            // WGSL has no unary minus on u32; 0 - x wraps the same way.
            (UnOp::Neg, Scalar::U32) => {
                let zero = self.u32c(0);
                self.binary(BinaryOperator::Subtract, zero, x)
            }
            (UnOp::Neg, _) => self.expr(Expression::Unary {
                op: UnaryOperator::Negate,
                expr: x,
            }),
            (UnOp::Not, Scalar::Bool) => self.expr(Expression::Unary {
                op: UnaryOperator::LogicalNot,
                expr: x,
            }),
            (UnOp::Not | UnOp::BitNot, _) => self.expr(Expression::Unary {
                op: UnaryOperator::BitwiseNot,
                expr: x,
            }),
        }
    }

    pub(super) fn binop(&mut self, op: BinOp, ty: Scalar, x: H, y: H) -> H {
        use BinaryOperator as B;
        let simple = |op| -> Option<B> {
            Some(match op {
                BinOp::Add => B::Add,
                BinOp::Sub => B::Subtract,
                BinOp::Mul => B::Multiply,
                BinOp::Eq => B::Equal,
                BinOp::Ne => B::NotEqual,
                BinOp::Lt => B::Less,
                BinOp::Le => B::LessEqual,
                BinOp::Gt => B::Greater,
                BinOp::Ge => B::GreaterEqual,
                _ => return None,
            })
        };
        if ty == Scalar::Bool {
            let b = match op {
                BinOp::And | BinOp::BitAnd => B::LogicalAnd,
                BinOp::Or | BinOp::BitOr => B::LogicalOr,
                BinOp::BitXor | BinOp::Ne => B::NotEqual,
                BinOp::Eq => B::Equal,
                op => unreachable!("the checker rejects {op:?} on bools"),
            };
            return self.binary(b, x, y);
        }
        if op == BinOp::Ne && ty == Scalar::F32 {
            return self.float_ne(x, y);
        }
        if let Some(b) = simple(op) {
            return self.binary(b, x, y);
        }
        match op {
            BinOp::Div if ty == Scalar::F32 => match self.options.precision {
                Precision::Exact if !self.options.knobs.ablate_div => self.exact_div(x, y),
                Precision::Exact | Precision::Fast => self.binary(B::Divide, x, y),
            },
            BinOp::Div | BinOp::Rem => {
                // ops.rs: x / 0 == x, x % 0 == 0, MIN / -1 == MIN, MIN % -1 == 0.
                // Spelled out so no backend's division by 0 or overflow is reached.
                let zero = self.lit(ty.zero());
                let mut bad = self.binary(B::Equal, y, zero);
                if ty == Scalar::I32 {
                    let min = self.lit(Value::I32(i32::MIN));
                    let m1 = self.lit(Value::I32(-1));
                    let is_min = self.binary(B::Equal, x, min);
                    let is_m1 = self.binary(B::Equal, y, m1);
                    let ovf = self.binary(B::LogicalAnd, is_min, is_m1);
                    bad = self.binary(B::LogicalOr, bad, ovf);
                }
                let one = self.lit(if ty == Scalar::I32 {
                    Value::I32(1)
                } else {
                    Value::U32(1)
                });
                let safe = self.select(bad, one, y);
                if op == BinOp::Div {
                    let q = self.binary(B::Divide, x, safe);
                    // Both bad cases return x (MIN / -1 == MIN == x).
                    self.select(bad, x, q)
                } else {
                    let r = self.binary(B::Modulo, x, safe);
                    self.select(bad, zero, r)
                }
            }
            BinOp::Shl | BinOp::Shr => {
                // Shift counts modulo 32, masked here rather than trusting
                // WGSL's masking to survive into SPIR-V (where it is undefined).
                let count = if ty == Scalar::I32 {
                    self.bitcast(y, ScalarKind::Uint)
                } else {
                    y
                };
                let mask = self.u32c(31);
                let count = self.binary(B::And, count, mask);
                let b = if op == BinOp::Shl {
                    B::ShiftLeft
                } else {
                    B::ShiftRight
                };
                self.binary(b, x, count)
            }
            BinOp::BitAnd => self.binary(B::And, x, y),
            BinOp::BitOr => self.binary(B::InclusiveOr, x, y),
            BinOp::BitXor => self.binary(B::ExclusiveOr, x, y),
            op => unreachable!("the checker rejects {op:?} on {ty}"),
        }
    }

    /// IEEE `x != y`, true when either is NaN. naga writes WGSL's `!=` on
    /// floats as SPIR-V `OpFOrdNotEqual`, which is false for NaN (lavapipe
    /// gave false where ops.rs gives true), so it is spelled `!(x == y)`.
    pub(super) fn float_ne(&mut self, x: H, y: H) -> H {
        let eq = self.binary(BinaryOperator::Equal, x, y);
        self.expr(Expression::Unary {
            op: UnaryOperator::LogicalNot,
            expr: eq,
        })
    }

    pub(super) fn builtin(&mut self, f: Builtin, ty: Scalar, args: &[H]) -> H {
        use BinaryOperator as B;
        match f {
            Builtin::Sqrt => match self.options.precision {
                Precision::Exact => self.exact_sqrt(args[0]),
                Precision::Fast => self.math(MathFunction::Sqrt, args[0]),
            },
            // `node` lowers only the operand it uses; see `native_operand`.
            Builtin::Native(n) => match self.native_operand(ty) {
                0 => self.math(native_fn(n), args[0]),
                _ => args[0],
            },
            Builtin::Abs if ty == Scalar::F32 => self.math(MathFunction::Abs, args[0]),
            Builtin::Abs => {
                // Wrapping: abs(MIN) == MIN, as 0 - x gives.
                let zero = self.lit(ty.zero());
                let neg = self.binary(B::Less, args[0], zero);
                let negated = self.binary(B::Subtract, zero, args[0]);
                self.select(neg, negated, args[0])
            }
            // ops.rs: min(a, b) = b < a ? b : a; max(a, b) = b > a ? b : a.
            Builtin::Min => {
                let c = self.binary(B::Less, args[1], args[0]);
                self.select(c, args[1], args[0])
            }
            Builtin::Max => {
                let c = self.binary(B::Greater, args[1], args[0]);
                self.select(c, args[1], args[0])
            }
            Builtin::RoundF16 | Builtin::RoundBF16 => self.round_half(f, args[0]),
            f => unreachable!("{f:?} is lowered by tandem_draw.rs"),
        }
    }
}

impl Lower<'_> {
    /// Which operand of a `Builtin::Native` of type `ty` gives its value:
    /// 0 (the argument, for the driver's function) in fast mode on f32,
    /// else 1 (the standard library's exact function).
    pub(super) fn native_operand(&self, ty: Scalar) -> usize {
        match self.options.precision {
            Precision::Fast if ty == Scalar::F32 => 0,
            Precision::Exact if ty == Scalar::F32 && self.options.knobs.ablate_native => 0,
            _ => 1,
        }
    }
}

/// The driver's function that fast mode calls for `n`.
fn native_fn(n: Native) -> MathFunction {
    match n {
        Native::Exp => MathFunction::Exp,
        Native::Log => MathFunction::Log,
        Native::Cos => MathFunction::Cos,
        Native::Tanh => MathFunction::Tanh,
        Native::InverseSqrt => MathFunction::InverseSqrt,
    }
}
