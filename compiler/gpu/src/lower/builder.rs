//! Appending naga expressions and blocks to the function being built.

use super::{H, Lower};
use crate::LowerError;
use naga::{
    BinaryOperator, Block, Expression, Literal, LocalVariable, MathFunction, Range, ScalarKind,
    Span, Statement,
};
use phobos_core::types::{Dim, Scalar, Value};

impl<'k> Lower<'k> {
    /// Appends an expression, emitting it in the current block unless naga
    /// treats it as always available.
    pub(super) fn expr(&mut self, e: Expression) -> H {
        let pre = e.needs_pre_emit();
        let h = self.f.expressions.append(e, Span::UNDEFINED);
        if !pre {
            self.cur.push(Statement::Emit(Range::new_from_bounds(h, h)));
        }
        h
    }

    pub(super) fn lit(&mut self, v: Value) -> H {
        let l = match v {
            Value::Bool(b) => Literal::Bool(b),
            Value::I32(x) => Literal::I32(x),
            Value::U32(x) => Literal::U32(x),
            // naga rejects non-finite float literals, and WGSL a NaN or
            // infinity in a constant expression: a bitcast of a `let`-bound
            // u32 (not a constant expression) keeps the bits (`fold.rs`).
            Value::F32(x) if !x.is_finite() => {
                let bits = self.lit(Value::U32(x.to_bits()));
                let bits = self.convert(bits, ScalarKind::Uint);
                let name = if x.is_nan() { "nan_bits" } else { "inf_bits" };
                self.f.named_expressions.insert(bits, name.to_string());
                return self.bitcast(bits, ScalarKind::Float);
            }
            Value::F32(x) => Literal::F32(x),
            other => unreachable!("64-bit value {other} is rejected before lowering"),
        };
        self.expr(Expression::Literal(l))
    }

    pub(super) fn binary(&mut self, op: BinaryOperator, left: H, right: H) -> H {
        self.expr(Expression::Binary { op, left, right })
    }

    pub(super) fn select(&mut self, condition: H, accept: H, reject: H) -> H {
        self.expr(Expression::Select {
            condition,
            accept,
            reject,
        })
    }

    pub(super) fn bitcast(&mut self, expr: H, kind: ScalarKind) -> H {
        self.expr(Expression::As {
            expr,
            kind,
            convert: None,
        })
    }

    pub(super) fn convert(&mut self, expr: H, kind: ScalarKind) -> H {
        let width = if kind == ScalarKind::Bool { 1 } else { 4 };
        self.expr(Expression::As {
            expr,
            kind,
            convert: Some(width),
        })
    }

    /// The value behind `pointer` (a local or workgroup variable, or an
    /// element of one).
    pub(super) fn var_load(&mut self, pointer: H) -> H {
        self.expr(Expression::Load { pointer })
    }

    /// `*pointer = value`.
    pub(super) fn var_store(&mut self, pointer: H, value: H) {
        self.cur.push(Statement::Store { pointer, value });
    }

    /// A pointer to element `index` of the array behind `base`.
    pub(super) fn access(&mut self, base: H, index: H) -> H {
        self.expr(Expression::Access { base, index })
    }

    pub(super) fn u32c(&mut self, v: u32) -> H {
        self.lit(Value::U32(v))
    }

    /// Whether `h` is the literal u32 0 (a constant extent of 0).
    pub(super) fn is_const_zero(&self, h: H) -> bool {
        matches!(self.f.expressions[h], Expression::Literal(Literal::U32(0)))
    }

    /// Runs `build` with a fresh current block and returns that block.
    pub(super) fn nested(
        &mut self,
        build: impl FnOnce(&mut Self) -> Result<(), LowerError>,
    ) -> Result<Block, LowerError> {
        let outer = std::mem::take(&mut self.cur);
        let r = build(self);
        let inner = std::mem::replace(&mut self.cur, outer);
        r?;
        Ok(Block::from_vec(inner))
    }

    /// `if condition { accept }`, with nothing in the other branch.
    pub(super) fn if_then(&mut self, condition: H, accept: Block) {
        self.cur.push(Statement::If {
            condition,
            accept,
            reject: Block::new(),
        });
    }

    /// `loop { body; continuing { continuing } }`: `body` breaks out.
    pub(super) fn push_loop(&mut self, body: Block, continuing: Block) {
        self.cur.push(Statement::Loop {
            body,
            continuing,
            break_if: None,
        });
    }

    /// A fresh function-local variable of `ty`.
    pub(super) fn temp(&mut self, ty: Scalar) -> H {
        let v = self.f.local_variables.append(
            LocalVariable {
                name: None,
                ty: self.types[&ty],
                init: None,
            },
            Span::UNDEFINED,
        );
        self.expr(Expression::LocalVariable(v))
    }

    pub(super) fn extent(&mut self, d: Dim) -> H {
        match d {
            // `check_extents` has refused constants beyond u32.
            Dim::Const(v) => self.u32c(v as u32),
            Dim::Sym(s) => self.dims[s],
        }
    }

    pub(super) fn math(&mut self, fun: MathFunction, arg: H) -> H {
        self.expr(Expression::Math {
            fun,
            arg,
            arg1: None,
            arg2: None,
            arg3: None,
        })
    }
}
