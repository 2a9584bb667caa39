//! The meaning of every scalar operation. This file is the specification the
//! other backends reproduce bit for bit.
//!
//! - Integer `+ - *` and negation wrap.
//! - `x / 0 == x` and `x % 0 == 0`; `MIN / -1 == MIN` and `MIN % -1 == 0`
//!   (WGSL's rules). Division truncates toward zero.
//! - Shift counts are taken modulo the bit width; `>>` is arithmetic on
//!   signed integers and logical on unsigned ones.
//! - f32 and f64 follow IEEE 754 with round-to-nearest-even, subnormals kept,
//!   and each operation rounded on its own (never fused).
//! - Float to integer conversion truncates and saturates; NaN becomes 0.
//!   Integer to integer conversion wraps (two's complement); to bool is `!= 0`.
//! - `min(a, b)` is `b < a ? b : a` and `max(a, b)` is `b > a ? b : a`, so a
//!   NaN in `a` is returned and a NaN in `b` is not.
//! - NaN bits: inside a computation a NaN is just a NaN (its sign and
//!   payload are whatever the host or device makes them, and no operation
//!   can tell them apart: comparisons are false, conversions to integers give
//!   0). A float becomes observable bits in exactly two ways, and there every
//!   NaN is the canonical quiet NaN, `0x7FC00000` for f32 and
//!   `0x7FF8000000000000` for f64 ([`canonical_nan`]):
//!   - a store to a tensor (`let`/`var` tiles are not observable and keep
//!     whatever NaN they get);
//!   - `bitcast` from a float type to an integer type.
//!
//!   So 0.0/0.0, inf - inf, a NaN operand's payload and a NaN loaded from an
//!   input all store and bitcast as the same bits on every backend.

use crate::ir::{BinOp, Builtin, ReduceOp, UnOp};
use crate::types::{Scalar, Value, half_bits, half_value};

pub fn unary(op: UnOp, a: Value) -> Value {
    use Value::*;
    match (op, a) {
        (UnOp::Neg, I32(x)) => I32(x.wrapping_neg()),
        (UnOp::Neg, I64(x)) => I64(x.wrapping_neg()),
        (UnOp::Neg, U32(x)) => U32(x.wrapping_neg()),
        (UnOp::Neg, U64(x)) => U64(x.wrapping_neg()),
        (UnOp::Neg, F32(x)) => F32(-x),
        (UnOp::Neg, F64(x)) => F64(-x),
        (UnOp::Not, Bool(x)) => Bool(!x),
        (UnOp::Not | UnOp::BitNot, I32(x)) => I32(!x),
        (UnOp::Not | UnOp::BitNot, U32(x)) => U32(!x),
        (UnOp::Not | UnOp::BitNot, I64(x)) => I64(!x),
        (UnOp::Not | UnOp::BitNot, U64(x)) => U64(!x),
        (op, a) => unreachable!("the checker rejects {op:?} on {}", a.scalar()),
    }
}

macro_rules! int_ops {
    ($op:expr, $x:expr, $y:expr, $ctor:path, $bits:expr, $min:expr) => {{
        let (x, y) = ($x, $y);
        match $op {
            BinOp::Add => $ctor(x.wrapping_add(y)),
            BinOp::Sub => $ctor(x.wrapping_sub(y)),
            BinOp::Mul => $ctor(x.wrapping_mul(y)),
            BinOp::Div => $ctor(
                if y == 0 || (x == $min && y.wrapping_add(1) == 0 && $min != 0) {
                    if y == 0 { x } else { $min }
                } else {
                    x / y
                },
            ),
            BinOp::Rem => $ctor(
                if y == 0 || (x == $min && y.wrapping_add(1) == 0 && $min != 0) {
                    0
                } else {
                    x % y
                },
            ),
            BinOp::Shl => $ctor(x.wrapping_shl((y as u32) & ($bits - 1))),
            BinOp::Shr => $ctor(x.wrapping_shr((y as u32) & ($bits - 1))),
            BinOp::BitAnd => $ctor(x & y),
            BinOp::BitOr => $ctor(x | y),
            BinOp::BitXor => $ctor(x ^ y),
            BinOp::Eq => Value::Bool(x == y),
            BinOp::Ne => Value::Bool(x != y),
            BinOp::Lt => Value::Bool(x < y),
            BinOp::Le => Value::Bool(x <= y),
            BinOp::Gt => Value::Bool(x > y),
            BinOp::Ge => Value::Bool(x >= y),
            BinOp::And | BinOp::Or => unreachable!("logical ops take bools"),
        }
    }};
}

macro_rules! float_ops {
    ($op:expr, $x:expr, $y:expr, $ctor:path) => {{
        let (x, y) = ($x, $y);
        match $op {
            BinOp::Add => $ctor(x + y),
            BinOp::Sub => $ctor(x - y),
            BinOp::Mul => $ctor(x * y),
            BinOp::Div => $ctor(x / y),
            BinOp::Eq => Value::Bool(x == y),
            BinOp::Ne => Value::Bool(x != y),
            BinOp::Lt => Value::Bool(x < y),
            BinOp::Le => Value::Bool(x <= y),
            BinOp::Gt => Value::Bool(x > y),
            BinOp::Ge => Value::Bool(x >= y),
            op => unreachable!("the checker rejects {op:?} on floats"),
        }
    }};
}

pub fn binary(op: BinOp, a: Value, b: Value) -> Value {
    use Value::*;
    match (a, b) {
        (I32(x), I32(y)) => int_ops!(op, x, y, I32, 32, i32::MIN),
        (U32(x), U32(y)) => int_ops!(op, x, y, U32, 32, 0u32),
        (I64(x), I64(y)) => int_ops!(op, x, y, I64, 64, i64::MIN),
        (U64(x), U64(y)) => int_ops!(op, x, y, U64, 64, 0u64),
        (F32(x), F32(y)) => float_ops!(op, x, y, F32),
        (F64(x), F64(y)) => float_ops!(op, x, y, F64),
        (Bool(x), Bool(y)) => match op {
            BinOp::And | BinOp::BitAnd => Bool(x && y),
            BinOp::Or | BinOp::BitOr => Bool(x || y),
            BinOp::BitXor | BinOp::Ne => Bool(x != y),
            BinOp::Eq => Bool(x == y),
            op => unreachable!("the checker rejects {op:?} on bools"),
        },
        (a, b) => unreachable!("operands {} and {} differ", a.scalar(), b.scalar()),
    }
}

/// A value conversion (`f32(x)`, `i32(x)`, ...).
pub fn cast(a: Value, to: Scalar) -> Value {
    use Value::*;
    if let Bool(b) = a {
        return match to {
            Scalar::Bool => Bool(b),
            Scalar::F32 => F32(b as u8 as f32),
            Scalar::F64 => F64(b as u8 as f64),
            int => from_i128(b as i128, int),
        };
    }
    if to == Scalar::Bool {
        return Bool(match a {
            F32(x) => x != 0.0,
            F64(x) => x != 0.0,
            other => other.as_i128() != 0,
        });
    }
    match (a, to) {
        // Rust's `as` from float to integer truncates, saturates and maps NaN to 0.
        (F32(x), Scalar::I32) => I32(x as i32),
        (F32(x), Scalar::U32) => U32(x as u32),
        (F32(x), Scalar::I64) => I64(x as i64),
        (F32(x), Scalar::U64) => U64(x as u64),
        (F64(x), Scalar::I32) => I32(x as i32),
        (F64(x), Scalar::U32) => U32(x as u32),
        (F64(x), Scalar::I64) => I64(x as i64),
        (F64(x), Scalar::U64) => U64(x as u64),
        (F32(x), Scalar::F32) => F32(x),
        (F32(x), Scalar::F64) => F64(x as f64),
        (F64(x), Scalar::F32) => F32(x as f32),
        (F64(x), Scalar::F64) => F64(x),
        // Integer to float rounds to nearest even.
        (I32(x), Scalar::F32) => F32(x as f32),
        (U32(x), Scalar::F32) => F32(x as f32),
        (I64(x), Scalar::F32) => F32(x as f32),
        (U64(x), Scalar::F32) => F32(x as f32),
        (I32(x), Scalar::F64) => F64(x as f64),
        (U32(x), Scalar::F64) => F64(x as f64),
        (I64(x), Scalar::F64) => F64(x as f64),
        (U64(x), Scalar::F64) => F64(x as f64),
        (int, to) => from_i128(int.as_i128(), to),
    }
}

/// Wraps an integer into an integer type (two's complement).
fn from_i128(v: i128, to: Scalar) -> Value {
    match to {
        Scalar::I32 => Value::I32(v as i32),
        Scalar::U32 => Value::U32(v as u32),
        Scalar::I64 => Value::I64(v as i64),
        Scalar::U64 => Value::U64(v as u64),
        Scalar::F32 => Value::F32(v as f32),
        Scalar::F64 => Value::F64(v as f64),
        Scalar::Bool => Value::Bool(v != 0),
        Scalar::F16 | Scalar::BF16 => unreachable!("no value is 16-bit (Scalar::value_type)"),
    }
}

/// The canonical quiet NaN in place of any NaN; every other value as it is.
/// Applied where a float becomes observable bits: tensor stores and
/// `bitcast` from a float to an integer type.
pub fn canonical_nan(a: Value) -> Value {
    match a {
        Value::F32(x) if x.is_nan() => Value::F32(f32::from_bits(0x7FC0_0000)),
        Value::F64(x) if x.is_nan() => Value::F64(f64::from_bits(0x7FF8_0000_0000_0000)),
        other => other,
    }
}

/// Reinterprets the bits of a value as another type of the same size. A NaN
/// bitcast to an integer type gives the canonical NaN's bits
/// ([`canonical_nan`]).
pub fn bitcast(a: Value, to: Scalar) -> Value {
    let a = if to.is_float() { a } else { canonical_nan(a) };
    let bits = a.bits();
    match to {
        Scalar::I32 => Value::I32(bits as u32 as i32),
        Scalar::U32 => Value::U32(bits as u32),
        Scalar::F32 => Value::F32(f32::from_bits(bits as u32)),
        Scalar::I64 => Value::I64(bits as i64),
        Scalar::U64 => Value::U64(bits),
        Scalar::F64 => Value::F64(f64::from_bits(bits)),
        Scalar::Bool => unreachable!("the checker rejects bitcasts to bool"),
        Scalar::F16 | Scalar::BF16 => unreachable!("no value is 16-bit (Scalar::value_type)"),
    }
}

/// The value of a builtin: its row's function in `ir::builtin::TABLE`.
pub fn builtin(f: Builtin, args: &[Value]) -> Value {
    f.eval(args)
}

/// `sqrt`: IEEE square root, correctly rounded.
pub fn sqrt(f: Builtin, args: &[Value]) -> Value {
    use Value::*;
    match args {
        [F32(x)] => F32(x.sqrt()),
        [F64(x)] => F64(x.sqrt()),
        _ => unreachable!("the checker rejects {f:?} on {args:?}"),
    }
}

/// `_round_f16(x)`, `_round_bf16(x)`: `x` rounded to the 16-bit format,
/// ties to even, widened back (exactly) to f32. The `half` crate's
/// conversions are the meaning: NaN keeps its sign and the top bits of its
/// payload, quieted.
pub fn round_half(f: Builtin, args: &[Value]) -> Value {
    let elem = match f {
        Builtin::RoundF16 => Scalar::F16,
        _ => Scalar::BF16,
    };
    match args {
        [Value::F32(x)] => Value::F32(half_value(elem, half_bits(elem, *x))),
        _ => unreachable!("the checker rejects {f:?} on {args:?}"),
    }
}

/// `_native_*(x, exact)`: `exact`. Only GPU fast mode computes anything else.
pub fn native(_: Builtin, args: &[Value]) -> Value {
    args[1]
}

/// `abs`: the sign cleared on floats; wrapping on integers (`abs(MIN) == MIN`).
pub fn abs(f: Builtin, args: &[Value]) -> Value {
    use Value::*;
    match args {
        [F32(x)] => F32(x.abs()),
        [F64(x)] => F64(x.abs()),
        [I32(x)] => I32(x.wrapping_abs()),
        [I64(x)] => I64(x.wrapping_abs()),
        _ => unreachable!("the checker rejects {f:?} on {args:?}"),
    }
}

/// `min(a, b)`: `b < a ? b : a`.
pub fn min(_: Builtin, args: &[Value]) -> Value {
    let [a, b] = args else {
        unreachable!("min takes two arguments")
    };
    select(binary(BinOp::Lt, *b, *a), *b, *a)
}

/// `max(a, b)`: `b > a ? b : a`.
pub fn max(_: Builtin, args: &[Value]) -> Value {
    let [a, b] = args else {
        unreachable!("max takes two arguments")
    };
    select(binary(BinOp::Gt, *b, *a), *b, *a)
}

/// `_tandem_key.q(seed)`: word `q` of [`tandem_key`].
pub fn tandem_key_word(f: Builtin, args: &[Value]) -> Value {
    match (f, args) {
        (Builtin::TandemKey(q), [Value::U32(seed)]) => Value::U32(tandem_key(*seed)[q as usize]),
        _ => unreachable!("the checker rejects {f:?} on {args:?}"),
    }
}

/// `_tandem_word(k0, k1, k2, k3, i)`: [`tandem_word`].
pub fn tandem_word_value(f: Builtin, args: &[Value]) -> Value {
    use Value::U32;
    match args {
        [U32(k0), U32(k1), U32(k2), U32(k3), U32(i)] => U32(tandem_word([*k0, *k1, *k2, *k3], *i)),
        _ => unreachable!("the checker rejects {f:?} on {args:?}"),
    }
}

/// `_tandem_below_retry(rejected, k0, k1, k2, k3, i, n)`:
/// [`tandem_below_retry`] when `rejected`, else 0.
pub fn tandem_below_retry_value(f: Builtin, args: &[Value]) -> Value {
    use Value::{Bool, U32};
    match args {
        [
            Bool(rejected),
            U32(k0),
            U32(k1),
            U32(k2),
            U32(k3),
            U32(i),
            U32(n),
        ] => U32(if *rejected {
            tandem_below_retry([*k0, *k1, *k2, *k3], *i, *n)
        } else {
            0
        }),
        _ => unreachable!("the checker rejects {f:?} on {args:?}"),
    }
}

/// One step of a reduction (`ir/reduce.rs`): `sum` adds, `max` and `min`
/// keep the left item unless it is not NaN and the right one is NaN or
/// beats it. (`argmax` and `argmin` combine pairs; see
/// [`index_takes_right`].)
pub fn reduce_combine(op: ReduceOp, a: Value, b: Value) -> Value {
    match op {
        ReduceOp::Sum => binary(BinOp::Add, a, b),
        _ => select(takes_right(op, a, b), b, a),
    }
}

/// Whether the combine of `argmax` (`argmin`) of (left value `a`, right
/// value `b`) keeps the right item: `a` is not NaN, and `b` is NaN or
/// greater (less).
pub fn index_takes_right(op: ReduceOp, a: Value, b: Value) -> bool {
    takes_right(op, a, b) == Value::Bool(true)
}

fn takes_right(op: ReduceOp, a: Value, b: Value) -> Value {
    let beats = if op.value_op() == ReduceOp::Min {
        BinOp::Lt
    } else {
        BinOp::Gt
    };
    let a_ok = binary(BinOp::Eq, a, a);
    let b_nan = binary(BinOp::Ne, b, b);
    let better = binary(BinOp::Or, b_nan, binary(beats, b, a));
    binary(BinOp::And, a_ok, better)
}

/// A reduction over an empty axis: `sum` 0, `max` the least value (`-inf`
/// for floats), `min` the greatest (`+inf`), `argmax` and `argmin` -1.
pub fn reduce_empty(op: ReduceOp, elem: Scalar) -> Value {
    use Value::*;
    match (op, elem) {
        (ReduceOp::Sum, s) => s.zero(),
        (ReduceOp::Argmax | ReduceOp::Argmin, _) => I32(-1),
        (ReduceOp::Max, Scalar::F32) => F32(f32::NEG_INFINITY),
        (ReduceOp::Max, Scalar::F64) => F64(f64::NEG_INFINITY),
        (ReduceOp::Min, Scalar::F32) => F32(f32::INFINITY),
        (ReduceOp::Min, Scalar::F64) => F64(f64::INFINITY),
        (ReduceOp::Max, Scalar::I32) => I32(i32::MIN),
        (ReduceOp::Max, Scalar::I64) => I64(i64::MIN),
        (ReduceOp::Max, Scalar::U32) => U32(0),
        (ReduceOp::Max, Scalar::U64) => U64(0),
        (ReduceOp::Min, Scalar::I32) => I32(i32::MAX),
        (ReduceOp::Min, Scalar::I64) => I64(i64::MAX),
        (ReduceOp::Min, Scalar::U32) => U32(u32::MAX),
        (ReduceOp::Min, Scalar::U64) => U64(u64::MAX),
        (op, s) => unreachable!("the checker rejects {op:?} on {s}"),
    }
}

/// The chunk length of the in-kernel Tandem stream: the default, the stream
/// `phobosc fill` writes.
pub const TANDEM_K: u32 = phobos_tandem::core::DEFAULT_K;

/// The words of `Key::from_seed(seed)`.
pub fn tandem_key(seed: u32) -> [u32; 4] {
    phobos_tandem::Key::from_seed(u64::from(seed)).words()
}

/// Word `i` of the stream of `key` with `K = 32`: element `i` of
/// `Tandem::new(key).fill_u32`.
pub fn tandem_word(key: [u32; 4], i: u32) -> u32 {
    let b = phobos_tandem::core::block_at(key, TANDEM_K, u64::from(i >> 2));
    b[(i & 3) as usize]
}

/// The retry of a rejected bounded draw `i` (SPEC.md section 7.5): the
/// first word of the continuation of `key.sub(PURPOSE_BELOW).split(i)` that
/// Lemire's method accepts. `n` is non-zero (only a non-zero `n` rejects).
pub fn tandem_below_retry(key: [u32; 4], i: u32, n: u32) -> u32 {
    let sub = phobos_tandem::Key::from_words(key).sub(phobos_tandem::PURPOSE_BELOW);
    let mut more = phobos_tandem::core::Continuation::new(sub.split(u64::from(i)).words());
    loop {
        if let Some(v) = phobos_tandem::lemire32(more.next_u32(), n) {
            return v;
        }
    }
}

pub fn select(c: Value, a: Value, b: Value) -> Value {
    match c {
        Value::Bool(true) => a,
        _ => b,
    }
}
