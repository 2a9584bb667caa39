//! Generated inputs: what `phobosc run` and the playground pass for a tensor
//! or scalar the user did not give. Deterministic, and documented in
//! docs/language.md. (Here in the core, not the runtime, so that the
//! playground's wasm build generates the same inputs.)
//!
//! Element `i` (the row-major flat index) of a generated tensor is
//! - for floats: `1 + h(i) / 2^32`, rounded to the element type, where
//!   `h(i) = (i * 2654435761) mod 2^32` (Knuth's multiplicative hash), so
//!   values lie in [1, 2) and are never 0;
//! - for integers: `i`, wrapped to the type;
//! - for bool: whether `i` is odd.
//!
//! A generated scalar is 0 (or false).

use crate::interp::ops;
use crate::tensor::Tensor;
use crate::types::{Scalar, Value};

/// The generated tensor of one element type and shape.
pub fn tensor(elem: Scalar, shape: &[usize]) -> Tensor {
    Tensor::from_fn(elem, shape, |i| element(elem, i))
}

fn element(elem: Scalar, i: usize) -> Value {
    match elem {
        Scalar::F32 | Scalar::F64 => {
            let h = (i as u64).wrapping_mul(2_654_435_761) & 0xFFFF_FFFF;
            Value::F64(1.0 + h as f64 / 4_294_967_296.0)
        }
        Scalar::Bool => Value::Bool(i % 2 == 1),
        _ => Value::U64(i as u64),
    }
}

/// The generated scalar of one type.
pub fn scalar(ty: Scalar) -> Value {
    ops::cast(Value::I32(0), ty)
}
