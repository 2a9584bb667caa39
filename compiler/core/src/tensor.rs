//! Host tensors: a shape and a typed, row-major buffer.

use crate::types::{Scalar, Value};

#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    F16(Vec<half::f16>),
    BF16(Vec<half::bf16>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Data,
}

macro_rules! each_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            Data::Bool($v) => $body,
            Data::I32($v) => $body,
            Data::U32($v) => $body,
            Data::I64($v) => $body,
            Data::U64($v) => $body,
            Data::F32($v) => $body,
            Data::F64($v) => $body,
            Data::F16($v) => $body,
            Data::BF16($v) => $body,
        }
    };
}

impl Tensor {
    /// A tensor of zeros.
    pub fn zeros(elem: Scalar, shape: &[usize]) -> Tensor {
        let n = shape.iter().product();
        let data = match elem {
            Scalar::Bool => Data::Bool(vec![false; n]),
            Scalar::I32 => Data::I32(vec![0; n]),
            Scalar::U32 => Data::U32(vec![0; n]),
            Scalar::I64 => Data::I64(vec![0; n]),
            Scalar::U64 => Data::U64(vec![0; n]),
            Scalar::F32 => Data::F32(vec![0.0; n]),
            Scalar::F64 => Data::F64(vec![0.0; n]),
            Scalar::F16 => Data::F16(vec![half::f16::ZERO; n]),
            Scalar::BF16 => Data::BF16(vec![half::bf16::ZERO; n]),
        };
        Tensor {
            shape: shape.to_vec(),
            data,
        }
    }

    /// A tensor whose element `i` is `f(i)`, converted to `elem` as a cast would.
    pub fn from_fn(elem: Scalar, shape: &[usize], f: impl Fn(usize) -> Value) -> Tensor {
        let mut t = Tensor::zeros(elem, shape);
        for i in 0..t.len() {
            t.set(i, crate::interp::ops::cast(f(i), elem.value_type()));
        }
        t
    }

    pub fn elem(&self) -> Scalar {
        match self.data {
            Data::Bool(_) => Scalar::Bool,
            Data::I32(_) => Scalar::I32,
            Data::U32(_) => Scalar::U32,
            Data::I64(_) => Scalar::I64,
            Data::U64(_) => Scalar::U64,
            Data::F32(_) => Scalar::F32,
            Data::F64(_) => Scalar::F64,
            Data::F16(_) => Scalar::F16,
            Data::BF16(_) => Scalar::BF16,
        }
    }

    pub fn len(&self) -> usize {
        each_data!(&self.data, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`; a 16-bit float is widened exactly to f32.
    pub fn get(&self, i: usize) -> Value {
        match &self.data {
            Data::Bool(v) => Value::Bool(v[i]),
            Data::I32(v) => Value::I32(v[i]),
            Data::U32(v) => Value::U32(v[i]),
            Data::I64(v) => Value::I64(v[i]),
            Data::U64(v) => Value::U64(v[i]),
            Data::F32(v) => Value::F32(v[i]),
            Data::F64(v) => Value::F64(v[i]),
            Data::F16(v) => Value::F32(v[i].to_f32()),
            Data::BF16(v) => Value::F32(v[i].to_f32()),
        }
    }

    /// Writes one element; the value must have the tensor's element type
    /// ([`Scalar::value_type`]: an f32 into a 16-bit tensor, rounded to
    /// nearest even).
    pub fn set(&mut self, i: usize, value: Value) {
        match (&mut self.data, value) {
            (Data::Bool(v), Value::Bool(x)) => v[i] = x,
            (Data::I32(v), Value::I32(x)) => v[i] = x,
            (Data::U32(v), Value::U32(x)) => v[i] = x,
            (Data::I64(v), Value::I64(x)) => v[i] = x,
            (Data::U64(v), Value::U64(x)) => v[i] = x,
            (Data::F32(v), Value::F32(x)) => v[i] = x,
            (Data::F64(v), Value::F64(x)) => v[i] = x,
            (Data::F16(v), Value::F32(x)) => v[i] = half::f16::from_f32(x),
            (Data::BF16(v), Value::F32(x)) => v[i] = half::bf16::from_f32(x),
            (_, x) => panic!("stored {} into a {} tensor", x.scalar(), self.elem()),
        }
    }

    /// Whether two tensors hold the same bits (NaNs compare by payload).
    pub fn bits_eq(&self, other: &Tensor) -> bool {
        self.shape == other.shape
            && self.elem() == other.elem()
            && (0..self.len()).all(|i| self.get(i).bits() == other.get(i).bits())
    }
}
