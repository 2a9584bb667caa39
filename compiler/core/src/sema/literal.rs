//! Untyped literals and how they take a type.
//!
//! An integer or float literal has no type until it meets one, as in WGSL: in
//! `x * 3` with `x: u32` the `3` is a u32. A literal that never meets a type
//! (a `let`, a `fn` argument) defaults to i32 or f32. The range of an integer
//! literal is checked when its type is fixed.

use super::check::Checker;
use crate::diag::{Diagnostic, code};
use crate::ir::{BinOp, UnOp};
use crate::ir::{ExprId, ExprKind};
use crate::span::Span;
use crate::types::{Dim, Scalar, Shape, Value};

/// The type of a checked expression: an element type, or a literal's kind
/// while it is still untyped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    S(Scalar),
    AbsInt,
    AbsFloat,
}

impl Ty {
    pub fn name(self) -> String {
        match self {
            Ty::S(s) => s.name().to_string(),
            Ty::AbsInt => "integer literal".to_string(),
            Ty::AbsFloat => "float literal".to_string(),
        }
    }

    pub fn is_int(self) -> bool {
        matches!(self, Ty::AbsInt) || matches!(self, Ty::S(s) if s.is_int())
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::AbsFloat) || matches!(self, Ty::S(s) if s.is_float())
    }

    pub fn is_bool(self) -> bool {
        self == Ty::S(Scalar::Bool)
    }
}

/// What an untyped node is, kept until its type is fixed.
#[derive(Clone, Debug)]
pub enum Abs {
    Int(i128),
    Float(String),
    /// An operation whose operands are all untyped: it takes their type.
    Op,
}

/// A checked expression: its node, type, shape and where it was written.
#[derive(Clone, Debug)]
pub struct Val {
    pub id: ExprId,
    pub ty: Ty,
    pub shape: Shape,
    pub span: Span,
}

impl Checker<'_> {
    /// Fixes the type of an untyped node (and the untyped nodes below it).
    pub fn concretize(&mut self, v: &Val, to: Scalar) -> Option<Val> {
        self.retype(v.id, to, v.span)?;
        Some(Val {
            ty: Ty::S(to),
            ..v.clone()
        })
    }

    /// Gives an untyped value its default type: i32 or f32.
    pub fn default_type(&mut self, v: Val) -> Option<Val> {
        match v.ty {
            Ty::AbsInt => self.concretize(&v, Scalar::I32),
            Ty::AbsFloat => self.concretize(&v, Scalar::F32),
            Ty::S(_) => Some(v),
        }
    }

    fn retype(&mut self, id: ExprId, to: Scalar, span: Span) -> Option<()> {
        let Some(abs) = self.abs.remove(&id) else {
            return Some(());
        };
        let value = match abs {
            Abs::Int(v) => Some(self.int_literal(v, to, span)?),
            Abs::Float(text) => Some(self.float_literal(&text, to, span)?),
            Abs::Op => None,
        };
        if let Some(value) = value {
            self.k.exprs[id].kind = ExprKind::Const(value);
        } else {
            // The operation was accepted for untyped operands; it must also
            // exist for the type they now take (`3 % 2` cannot become f32).
            let bad = match &self.k.exprs[id].kind {
                ExprKind::Binary(op, ..) => match op {
                    BinOp::Rem | BinOp::Shl | BinOp::Shr => !to.is_int(),
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => to.is_float(),
                    _ => false,
                }
                .then(|| op.symbol()),
                ExprKind::Unary(UnOp::Neg, _) if !to.is_float() && !to.is_signed_int() => Some("-"),
                ExprKind::Unary(op @ (UnOp::Not | UnOp::BitNot), _) if to.is_float() => {
                    Some(op.symbol())
                }
                _ => None,
            };
            if let Some(op) = bad {
                self.error(
                    Diagnostic::error(code::BAD_OPERAND, format!("`{op}` is not defined on {to}"))
                        .label(span, format!("these literals become {to} here"))
                        .help(if to.is_float() {
                            format!("compute it on integers and convert: `{to}(i32(...))`")
                        } else {
                            "unsigned integers have no negation; write the value itself".to_string()
                        }),
                );
                return None;
            }
            let kids: Vec<ExprId> = match &self.k.exprs[id].kind {
                ExprKind::Unary(_, a) => vec![*a],
                ExprKind::Binary(_, a, b) => vec![*a, *b],
                ExprKind::Select(_, a, b) => vec![*a, *b],
                _ => Vec::new(),
            };
            for kid in kids {
                self.retype(kid, to, span)?;
            }
        }
        self.k.exprs[id].ty = to;
        Some(())
    }

    fn int_literal(&mut self, v: i128, to: Scalar, span: Span) -> Option<Value> {
        let out_of_range = |this: &mut Self| {
            this.error(
                Diagnostic::error(
                    code::INT_OUT_OF_RANGE,
                    format!("integer literal `{v}` does not fit in {to}"),
                )
                .label(span, format!("this is used as {to}"))
                .help(range_help(to)),
            );
            None
        };
        Some(match to {
            Scalar::I32 => Value::I32(match i32::try_from(v) {
                Ok(x) => x,
                Err(_) => return out_of_range(self),
            }),
            Scalar::U32 => Value::U32(match u32::try_from(v) {
                Ok(x) => x,
                Err(_) => return out_of_range(self),
            }),
            Scalar::I64 => Value::I64(match i64::try_from(v) {
                Ok(x) => x,
                Err(_) => return out_of_range(self),
            }),
            Scalar::U64 => Value::U64(match u64::try_from(v) {
                Ok(x) => x,
                Err(_) => return out_of_range(self),
            }),
            Scalar::F32 => Value::F32(v as f32),
            Scalar::F64 => Value::F64(v as f64),
            Scalar::F16 | Scalar::BF16 => unreachable!("no value is 16-bit (Scalar::value_type)"),
            Scalar::Bool => {
                self.error(
                    Diagnostic::error(code::TYPE_MISMATCH, "an integer literal cannot be a bool")
                        .label(span, "expected a bool here")
                        .help("write `true` or `false`, or compare: `x != 0`"),
                );
                return None;
            }
        })
    }

    fn float_literal(&mut self, text: &str, to: Scalar, span: Span) -> Option<Value> {
        let value = match to {
            Scalar::F32 => text.parse::<f32>().ok().map(Value::F32),
            Scalar::F64 => text.parse::<f64>().ok().map(Value::F64),
            _ => {
                self.error(
                    Diagnostic::error(
                        code::TYPE_MISMATCH,
                        format!("a float literal cannot be {to}"),
                    )
                    .label(span, format!("expected {to} here"))
                    .help(format!("convert explicitly: `{to}(...)`")),
                );
                return None;
            }
        };
        match value {
            Some(Value::F32(x)) if x.is_finite() => Some(Value::F32(x)),
            Some(Value::F64(x)) if x.is_finite() => Some(Value::F64(x)),
            _ => {
                self.error(
                    Diagnostic::error(
                        code::INT_OUT_OF_RANGE,
                        format!("float literal `{text}` is out of the range of {to}"),
                    )
                    .label(span, "too large")
                    .help(format!("the largest finite {to} is about {}", max_of(to))),
                );
                None
            }
        }
    }

    /// Brings two operands to one type, typing untyped literals from the other
    /// side. Both untyped stay untyped (a float literal wins over an integer).
    pub fn unify(&mut self, a: &Val, b: &Val, at: Span, what: &str) -> Option<(Val, Val, Ty)> {
        match (a.ty, b.ty) {
            (Ty::S(x), Ty::S(y)) if x == y => Some((a.clone(), b.clone(), a.ty)),
            (Ty::S(x), Ty::S(y)) => {
                self.error(
                    Diagnostic::error(code::TYPE_MISMATCH, format!("{what}: {x} and {y}"))
                        .label(at, format!("{x} and {y} do not mix"))
                        .label(a.span, format!("this is {x}"))
                        .label(b.span, format!("this is {y}"))
                        .help(format!(
                            "Phobos never converts implicitly; convert one side, e.g. `{x}(...)`"
                        )),
                );
                None
            }
            (Ty::S(x), _) => Some((a.clone(), self.concretize(b, x)?, a.ty)),
            (_, Ty::S(y)) => Some((self.concretize(a, y)?, b.clone(), b.ty)),
            (Ty::AbsInt, Ty::AbsInt) => Some((a.clone(), b.clone(), Ty::AbsInt)),
            _ => Some((a.clone(), b.clone(), Ty::AbsFloat)),
        }
    }

    /// The shape two operands broadcast to, or a diagnostic.
    pub fn broadcast(&mut self, a: &Val, b: &Val, at: Span) -> Option<Shape> {
        if let Some(s) = broadcast_shapes(&a.shape, &b.shape) {
            return Some(s);
        }
        let (sa, sb) = (self.shape_text(&a.shape), self.shape_text(&b.shape));
        self.error(
            Diagnostic::error(
                code::SHAPE_MISMATCH,
                format!("tile shapes {sa} and {sb} do not broadcast"),
            )
            .label(at, "these operands have incompatible shapes")
            .label(a.span, format!("shape {sa}"))
            .label(b.span, format!("shape {sb}"))
            .note("shapes are aligned on their last axes; each pair of extents must be equal or one of them 1")
            .help("slice both operands to the same extents"),
        );
        None
    }

    /// Whether a value can be stored into (or used as) a tile of shape `to`.
    pub fn check_broadcasts_to(&mut self, v: &Val, to: &Shape, at: Span) -> Option<()> {
        match broadcast_shapes(&v.shape, to) {
            Some(s) if s == *to => Some(()),
            _ => {
                let (sv, st) = (self.shape_text(&v.shape), self.shape_text(to));
                self.error(
                    Diagnostic::error(
                        code::SHAPE_MISMATCH,
                        format!("a tile of shape {sv} cannot be stored into {st}"),
                    )
                    .label(v.span, format!("this has shape {sv}"))
                    .label(at, format!("the destination has shape {st}"))
                    .note("a value broadcasts to its destination when, aligned on the last axes, each extent is equal or 1")
                    .help("slice the value or the destination so that the extents agree"),
                );
                None
            }
        }
    }

    /// Creates a node for an operation on untyped operands.
    pub fn abstract_op(&mut self, kind: ExprKind, ty: Ty, shape: Shape, span: Span) -> Val {
        let placeholder = if ty == Ty::AbsFloat {
            Scalar::F32
        } else {
            Scalar::I32
        };
        let id = self.push(kind, placeholder, shape.clone());
        self.abs.insert(id, Abs::Op);
        Val {
            id,
            ty,
            shape,
            span,
        }
    }

    pub fn literal_int(&mut self, v: i128, span: Span) -> Val {
        let id = self.push(ExprKind::Const(Value::I32(0)), Scalar::I32, Vec::new());
        self.abs.insert(id, Abs::Int(v));
        Val {
            id,
            ty: Ty::AbsInt,
            shape: Vec::new(),
            span,
        }
    }

    pub fn literal_float(&mut self, text: &str, span: Span) -> Val {
        let id = self.push(ExprKind::Const(Value::F32(0.0)), Scalar::F32, Vec::new());
        self.abs.insert(id, Abs::Float(text.to_string()));
        Val {
            id,
            ty: Ty::AbsFloat,
            shape: Vec::new(),
            span,
        }
    }

    /// The compile-time integer value of a node, if it has one.
    pub fn const_value(&self, id: ExprId) -> Option<i128> {
        if let Some(Abs::Int(v)) = self.abs.get(&id) {
            return Some(*v);
        }
        match &self.k.exprs[id].kind {
            ExprKind::Const(v) if v.scalar().is_int() => Some(v.as_i128()),
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.const_value(*a)?, self.const_value(*b)?);
                match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Numpy-style broadcasting on the last axes; `None` if the shapes clash.
pub fn broadcast_shapes(a: &Shape, b: &Shape) -> Option<Shape> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let da = (i + a.len()).checked_sub(n).map(|j| a[j]);
        let db = (i + b.len()).checked_sub(n).map(|j| b[j]);
        out.push(match (da, db) {
            (Some(x), None) | (None, Some(x)) => x,
            (Some(x), Some(y)) if x == y => x,
            (Some(Dim::Const(1)), Some(y)) => y,
            (Some(x), Some(Dim::Const(1))) => x,
            _ => return None,
        });
    }
    Some(out)
}

fn range_help(to: Scalar) -> String {
    match to {
        Scalar::I32 => "i32 holds -2147483648 ..= 2147483647; for a bit pattern use a u32 literal or bitcast<i32>(...)".to_string(),
        Scalar::U32 => "u32 holds 0 ..= 4294967295".to_string(),
        Scalar::I64 => "i64 holds -2^63 ..= 2^63 - 1".to_string(),
        _ => "u64 holds 0 ..= 2^64 - 1".to_string(),
    }
}

fn max_of(to: Scalar) -> &'static str {
    if to == Scalar::F32 {
        "3.4e38"
    } else {
        "1.8e308"
    }
}
