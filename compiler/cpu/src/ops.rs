//! Scalar operations in Cranelift IR, with the meaning `interp/ops.rs`
//! gives them. Every operation here is total: division never traps, shifts
//! mask their count, float-to-int conversions saturate.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value, types};
use cranelift_frontend::FunctionBuilder;
use phobos_core::ir::Builtin;
use phobos_core::ir::{BinOp, UnOp};
use phobos_core::types::{Scalar, Value as V};

/// The machine type of an element type; bool is a byte holding 0 or 1.
pub fn ty(s: Scalar) -> Type {
    match s {
        Scalar::Bool => types::I8,
        // A 16-bit float's bits, in memory only (`half.rs` converts).
        Scalar::F16 | Scalar::BF16 => types::I16,
        Scalar::I32 | Scalar::U32 => types::I32,
        Scalar::I64 | Scalar::U64 => types::I64,
        Scalar::F32 => types::F32,
        Scalar::F64 => types::F64,
    }
}

pub fn constant(b: &mut FunctionBuilder<'_>, v: V) -> Value {
    match v {
        V::Bool(x) => b.ins().iconst(types::I8, x as i64),
        V::I32(x) => b.ins().iconst(types::I32, x as u32 as i64),
        V::U32(x) => b.ins().iconst(types::I32, x as i64),
        V::I64(x) => b.ins().iconst(types::I64, x),
        V::U64(x) => b.ins().iconst(types::I64, x as i64),
        V::F32(x) => b.ins().f32const(Ieee32::with_bits(x.to_bits())),
        V::F64(x) => b.ins().f64const(Ieee64::with_bits(x.to_bits())),
    }
}

pub fn unary(b: &mut FunctionBuilder<'_>, op: UnOp, s: Scalar, a: Value) -> Value {
    match (op, s) {
        (UnOp::Neg, Scalar::F32 | Scalar::F64) => b.ins().fneg(a),
        (UnOp::Neg, _) => b.ins().ineg(a),
        (UnOp::Not, Scalar::Bool) => {
            let one = b.ins().iconst(types::I8, 1);
            b.ins().bxor(a, one)
        }
        (UnOp::Not | UnOp::BitNot, _) => b.ins().bnot(a),
    }
}

/// A binary operation on operands of element type `s`.
pub fn binary(b: &mut FunctionBuilder<'_>, op: BinOp, s: Scalar, x: Value, y: Value) -> Value {
    use BinOp::*;
    if s.is_float() {
        return match op {
            Add => b.ins().fadd(x, y),
            Sub => b.ins().fsub(x, y),
            Mul => b.ins().fmul(x, y),
            Div => b.ins().fdiv(x, y),
            Eq => b.ins().fcmp(FloatCC::Equal, x, y),
            Ne => b.ins().fcmp(FloatCC::NotEqual, x, y),
            Lt => b.ins().fcmp(FloatCC::LessThan, x, y),
            Le => b.ins().fcmp(FloatCC::LessThanOrEqual, x, y),
            Gt => b.ins().fcmp(FloatCC::GreaterThan, x, y),
            Ge => b.ins().fcmp(FloatCC::GreaterThanOrEqual, x, y),
            op => unreachable!("the checker rejects {op:?} on floats"),
        };
    }
    let signed = s.is_signed_int();
    let cc = |signed_cc: IntCC, unsigned_cc: IntCC| if signed { signed_cc } else { unsigned_cc };
    match op {
        Add => b.ins().iadd(x, y),
        Sub => b.ins().isub(x, y),
        Mul => b.ins().imul(x, y),
        Div | Rem => {
            // x / 0 == x and MIN / -1 == MIN; x % 0 == 0 and MIN % -1 == 0.
            // Dividing by 1 instead gives exactly those results and never traps.
            let t = b.func.dfg.value_type(x);
            let zero = b.ins().iconst(t, 0);
            let one = b.ins().iconst(t, 1);
            let mut bad = b.ins().icmp(IntCC::Equal, y, zero);
            if signed {
                let min = b.ins().iconst(
                    t,
                    if t == types::I32 {
                        i32::MIN as u32 as i64
                    } else {
                        i64::MIN
                    },
                );
                let neg1 = b
                    .ins()
                    .iconst(t, if t == types::I32 { u32::MAX as i64 } else { -1 });
                let is_min = b.ins().icmp(IntCC::Equal, x, min);
                let is_neg1 = b.ins().icmp(IntCC::Equal, y, neg1);
                let overflow = b.ins().band(is_min, is_neg1);
                bad = b.ins().bor(bad, overflow);
            }
            let d = b.ins().select(bad, one, y);
            match (op, signed) {
                (Div, true) => b.ins().sdiv(x, d),
                (Div, false) => b.ins().udiv(x, d),
                (_, true) => b.ins().srem(x, d),
                (_, false) => b.ins().urem(x, d),
            }
        }
        // Cranelift takes shift counts modulo the width, as Phobos does.
        Shl => b.ins().ishl(x, y),
        Shr if signed => b.ins().sshr(x, y),
        Shr => b.ins().ushr(x, y),
        BitAnd | And => b.ins().band(x, y),
        BitOr | Or => b.ins().bor(x, y),
        BitXor => b.ins().bxor(x, y),
        Eq => b.ins().icmp(IntCC::Equal, x, y),
        Ne => b.ins().icmp(IntCC::NotEqual, x, y),
        Lt => b
            .ins()
            .icmp(cc(IntCC::SignedLessThan, IntCC::UnsignedLessThan), x, y),
        Le => b.ins().icmp(
            cc(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual),
            x,
            y,
        ),
        Gt => b.ins().icmp(
            cc(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan),
            x,
            y,
        ),
        Ge => b.ins().icmp(
            cc(
                IntCC::SignedGreaterThanOrEqual,
                IntCC::UnsignedGreaterThanOrEqual,
            ),
            x,
            y,
        ),
    }
}

/// A value conversion from `from` to `to`, as Rust's `as` does it.
pub fn cast(b: &mut FunctionBuilder<'_>, from: Scalar, to: Scalar, x: Value) -> Value {
    use Scalar::*;
    if from == to {
        return x;
    }
    match (from, to) {
        (Bool, F32 | F64) => {
            let w = b.ins().uextend(types::I32, x);
            b.ins().fcvt_from_uint(ty(to), w)
        }
        (Bool, _) => b.ins().uextend(ty(to), x),
        (F32 | F64, Bool) => {
            let z = if from == F32 {
                b.ins().f32const(0.0)
            } else {
                b.ins().f64const(0.0)
            };
            b.ins().fcmp(FloatCC::NotEqual, x, z)
        }
        (_, Bool) => {
            let z = b.ins().iconst(ty(from), 0);
            b.ins().icmp(IntCC::NotEqual, x, z)
        }
        (F32, F64) => b.ins().fpromote(types::F64, x),
        (F64, F32) => b.ins().fdemote(types::F32, x),
        (F32 | F64, I32 | I64) => b.ins().fcvt_to_sint_sat(ty(to), x),
        (F32 | F64, U32 | U64) => b.ins().fcvt_to_uint_sat(ty(to), x),
        // Through a vector: the scalar conversion (cvtsi2ss) writes only part
        // of its register and so chains every iteration of a loop on the
        // last; the packed one (cvtdq2ps) writes all of it. Same rounding.
        (I32, F32) => {
            let v = b.ins().scalar_to_vector(types::I32X4, x);
            let f = b.ins().fcvt_from_sint(types::F32X4, v);
            b.ins().extractlane(f, 0)
        }
        (I32 | I64, F32 | F64) => b.ins().fcvt_from_sint(ty(to), x),
        (U32 | U64, F32 | F64) => b.ins().fcvt_from_uint(ty(to), x),
        (I32 | U32, I32 | U32) | (I64 | U64, I64 | U64) => x,
        (I32, I64 | U64) => b.ins().sextend(types::I64, x),
        (U32, I64 | U64) => b.ins().uextend(types::I64, x),
        (I64 | U64, I32 | U32) => b.ins().ireduce(types::I32, x),
        (from, to) => unreachable!("no conversion from {from} to {to}"),
    }
}

/// A bitcast; from a float to an integer type a NaN gives the canonical
/// NaN's bits, as in `interp/ops.rs`.
pub fn bitcast(b: &mut FunctionBuilder<'_>, from: Scalar, to: Scalar, x: Value) -> Value {
    if ty(from) == ty(to) {
        return x;
    }
    let x = if from.is_float() && !to.is_float() {
        canonical_nan(b, from, x)
    } else {
        x
    };
    b.ins().bitcast(ty(to), MemFlagsData::new(), x)
}

/// `x`, or the canonical quiet NaN when `x` is a NaN (`interp/ops.rs`): an
/// unordered self-comparison and a select. Values of other types pass.
pub fn canonical_nan(b: &mut FunctionBuilder<'_>, s: Scalar, x: Value) -> Value {
    let nan = match s {
        Scalar::F32 => constant(b, V::F32(f32::from_bits(0x7FC0_0000))),
        Scalar::F64 => constant(b, V::F64(f64::from_bits(0x7FF8_0000_0000_0000))),
        _ => return x,
    };
    let is_nan = b.ins().fcmp(FloatCC::Unordered, x, x);
    b.ins().select(is_nan, nan, x)
}

pub fn builtin(b: &mut FunctionBuilder<'_>, f: Builtin, s: Scalar, args: &[Value]) -> Value {
    match (f, args) {
        (Builtin::Sqrt, [x]) => b.ins().sqrt(*x),
        // The CPU is exact: the standard library's function.
        (Builtin::Native(_), [_, exact]) => *exact,
        (Builtin::Abs, [x]) if s.is_float() => b.ins().fabs(*x),
        (Builtin::Abs, [x]) => b.ins().iabs(*x),
        // min(a, b) = b < a ? b : a; max(a, b) = b > a ? b : a.
        (Builtin::Min, [x, y]) => {
            let c = binary(b, BinOp::Lt, s, *y, *x);
            b.ins().select(c, *y, *x)
        }
        (Builtin::Max, [x, y]) => {
            let c = binary(b, BinOp::Gt, s, *y, *x);
            b.ins().select(c, *y, *x)
        }
        (Builtin::RoundF16 | Builtin::RoundBF16, _) => {
            unreachable!("codegen calls the core's rounding (half.rs)")
        }
        (f, args) => unreachable!("{f:?} with {} arguments", args.len()),
    }
}
