//! Value conversions with `phobos_core::interp::ops`'s meaning.

use super::{H, Lower, kind};
use crate::Precision;
use naga::{BinaryOperator, ScalarKind};
use phobos_core::ir::BinOp;
use phobos_core::ir::{Builtin, ExprId, ExprKind};
use phobos_core::types::{Scalar, Value};

impl<'k> Lower<'k> {
    /// The bits of an f32 as a u32, with any NaN made the canonical quiet
    /// NaN `0x7FC00000` (ops.rs: tensor stores and float-to-integer
    /// bitcasts). NaN is found from the bits with integer operations, which
    /// no driver's fast-math assumption can fold away (`x != x` may be).
    pub(super) fn canonical_bits(&mut self, x: H) -> H {
        use BinaryOperator as B;
        let bits = self.bitcast(x, ScalarKind::Uint);
        let abs_mask = self.u32c(0x7fff_ffff);
        let mag = self.binary(B::And, bits, abs_mask);
        let inf = self.u32c(0x7f80_0000);
        let nan = self.binary(B::Greater, mag, inf);
        let canonical = self.u32c(0x7fc0_0000);
        self.select(nan, canonical, bits)
    }

    /// Whether the f32 node `e` is never a NaN other than the canonical
    /// one, so a store may skip [`Lower::canonical_bits`]: a constant that
    /// is, a conversion from an integer, exact mode's `/` and `sqrt`
    /// (`crate::exact` returns the canonical NaN), and a select of two such
    /// values (`dropout`'s `where(.., x / (1 - p), 0.0)`). Anything the
    /// device computes natively may make its own NaN bits.
    pub(super) fn nan_canonical(&self, e: ExprId) -> bool {
        let canonical = |x: f32| !x.is_nan() || x.to_bits() == 0x7fc0_0000;
        if let Some(v) = self.consts[e] {
            return match v {
                Value::F32(x) => canonical(x),
                _ => true,
            };
        }
        let exact = self.options.precision == Precision::Exact;
        let node = &self.k.exprs[e];
        match &node.kind {
            ExprKind::Const(Value::F32(x)) => canonical(*x),
            ExprKind::Const(_) => true,
            ExprKind::Cast(x) => self.k.exprs[*x].ty != Scalar::F32 || self.nan_canonical(*x),
            ExprKind::Binary(BinOp::Div, _, _) => exact && node.ty == Scalar::F32,
            ExprKind::Builtin(Builtin::Sqrt, _) => exact,
            ExprKind::Builtin(Builtin::Native(_), xs) if exact => self.nan_canonical(xs[1]),
            ExprKind::Select(_, a, b) => self.nan_canonical(*a) && self.nan_canonical(*b),
            ExprKind::Transpose(x) => self.nan_canonical(*x),
            ExprKind::Param(_)
            | ExprKind::DimValue(_)
            | ExprKind::BlockId(_)
            | ExprKind::GridSize(_)
            | ExprKind::Iota(_)
            | ExprKind::Local(_)
            | ExprKind::Load { .. }
            | ExprKind::Unary(..)
            | ExprKind::Binary(..)
            | ExprKind::Bitcast(_)
            | ExprKind::Builtin(..)
            | ExprKind::Reduce { .. }
            | ExprKind::Dot { .. } => false,
        }
    }

    /// A value conversion with ops.rs's meaning.
    pub(super) fn cast(&mut self, from: Scalar, to: Scalar, x: H) -> H {
        use BinaryOperator as B;
        if from == to {
            return x;
        }
        if from == Scalar::Bool {
            let (one, zero) = match to {
                Scalar::F32 => (Value::F32(1.0), Value::F32(0.0)),
                Scalar::I32 => (Value::I32(1), Value::I32(0)),
                _ => (Value::U32(1), Value::U32(0)),
            };
            let (one, zero) = (self.lit(one), self.lit(zero));
            return self.select(x, one, zero);
        }
        if to == Scalar::Bool {
            // `x != 0`: a NaN is true, as in ops.rs.
            let zero = self.lit(from.zero());
            if from == Scalar::F32 {
                return self.float_ne(x, zero);
            }
            return self.binary(B::NotEqual, x, zero);
        }
        match (from, to) {
            (Scalar::F32, Scalar::I32 | Scalar::U32) => {
                // Truncating and saturating, NaN to 0. WGSL leaves NaN
                // undefined and SPIR-V out-of-range conversions too, so only
                // in-range values reach the conversion. NaN is found from
                // the bits, which no fast-math assumption can fold away.
                let bits = self.bitcast(x, ScalarKind::Uint);
                let abs_mask = self.u32c(0x7fff_ffff);
                let mag = self.binary(B::And, bits, abs_mask);
                let inf = self.u32c(0x7f80_0000);
                let nan = self.binary(B::Greater, mag, inf);
                let (lo, hi, minv, maxv) = if to == Scalar::I32 {
                    (
                        -2147483648.0f32,
                        2147483648.0f32,
                        Value::I32(i32::MIN),
                        Value::I32(i32::MAX),
                    )
                } else {
                    (-1.0, 4294967296.0, Value::U32(0), Value::U32(u32::MAX))
                };
                let lo_c = self.lit(Value::F32(lo));
                let hi_c = self.lit(Value::F32(hi));
                let below = self.binary(B::LessEqual, x, lo_c);
                let above = self.binary(B::GreaterEqual, x, hi_c);
                let out = self.binary(B::LogicalOr, below, above);
                let out = self.binary(B::LogicalOr, out, nan);
                let fzero = self.lit(Value::F32(0.0));
                let safe = self.select(out, fzero, x);
                let v = self.convert(safe, kind(to));
                let minv = self.lit(minv);
                let maxv = self.lit(maxv);
                let zero = self.lit(to.zero());
                let v = self.select(below, minv, v);
                let v = self.select(above, maxv, v);
                self.select(nan, zero, v)
            }
            // Integer to f32 rounds to nearest even (Vulkan: correctly rounded).
            (_, Scalar::F32) => self.convert(x, ScalarKind::Float),
            // i32 <-> u32: two's complement, the same bits.
            _ => self.bitcast(x, kind(to)),
        }
    }
}
