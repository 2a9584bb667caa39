//! Element types, dimensions and scalar values: the vocabulary shared by the
//! checker, the IR and every backend.

use std::fmt;

/// An element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    Bool,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl Scalar {
    pub const ALL: [Scalar; 7] = [
        Scalar::Bool,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::F32,
        Scalar::F64,
    ];

    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    pub fn is_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64)
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::I64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// Size in bytes as stored in a tensor (bool takes one byte).
    pub fn size(self) -> usize {
        match self {
            Scalar::Bool => 1,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    /// Whether an integer value fits this integer type.
    pub fn int_fits(self, v: i128) -> bool {
        match self {
            Scalar::I32 => i32::try_from(v).is_ok(),
            Scalar::U32 => u32::try_from(v).is_ok(),
            Scalar::I64 => i64::try_from(v).is_ok(),
            Scalar::U64 => u64::try_from(v).is_ok(),
            _ => false,
        }
    }

    pub fn zero(self) -> Value {
        match self {
            Scalar::Bool => Value::Bool(false),
            Scalar::I32 => Value::I32(0),
            Scalar::U32 => Value::U32(0),
            Scalar::I64 => Value::I64(0),
            Scalar::U64 => Value::U64(0),
            Scalar::F32 => Value::F32(0.0),
            Scalar::F64 => Value::F64(0.0),
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Index of a symbolic dimension (`M`) in its kernel's `dims`.
pub type SymId = usize;

/// One extent of a shape: known when the kernel is configured, or bound at launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Const(u64),
    Sym(SymId),
}

impl Dim {
    /// The extent once a launch has bound the symbolic dims.
    pub fn extent(self, dims: &[u64]) -> usize {
        match self {
            Dim::Const(v) => v as usize,
            Dim::Sym(s) => dims[s] as usize,
        }
    }
}

pub type Shape = Vec<Dim>;

/// One scalar value of some element type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
}

impl Value {
    pub fn scalar(self) -> Scalar {
        match self {
            Value::Bool(_) => Scalar::Bool,
            Value::I32(_) => Scalar::I32,
            Value::U32(_) => Scalar::U32,
            Value::I64(_) => Scalar::I64,
            Value::U64(_) => Scalar::U64,
            Value::F32(_) => Scalar::F32,
            Value::F64(_) => Scalar::F64,
        }
    }

    /// The value as an integer (bools as 0/1); floats truncate.
    pub fn as_i128(self) -> i128 {
        match self {
            Value::Bool(b) => b as i128,
            Value::I32(v) => v as i128,
            Value::U32(v) => v as i128,
            Value::I64(v) => v as i128,
            Value::U64(v) => v as i128,
            Value::F32(v) => v as i128,
            Value::F64(v) => v as i128,
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Value::F32(v) => v as f64,
            Value::F64(v) => v,
            other => other.as_i128() as f64,
        }
    }

    /// The bits, for exact comparison (NaNs compare by payload).
    pub fn bits(self) -> u64 {
        match self {
            Value::Bool(b) => b as u64,
            Value::I32(v) => v as u32 as u64,
            Value::U32(v) => v as u64,
            Value::I64(v) => v as u64,
            Value::U64(v) => v,
            Value::F32(v) => v.to_bits() as u64,
            Value::F64(v) => v.to_bits(),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
            Value::U32(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::U64(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v:?}"),
            Value::F64(v) => write!(f, "{v:?}"),
        }
    }
}
