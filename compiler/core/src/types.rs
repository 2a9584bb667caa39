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
    /// IEEE binary16, a storage type: tensors hold it, values are f32
    /// (see [`Scalar::value_type`]).
    F16,
    /// bfloat16 (the top half of an f32), a storage type like `F16`.
    BF16,
}

impl Scalar {
    pub const ALL: [Scalar; 9] = [
        Scalar::Bool,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::F32,
        Scalar::F64,
        Scalar::F16,
        Scalar::BF16,
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
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
        }
    }

    /// Whether this is a 16-bit float, a storage type: a tensor of it
    /// holds 2-byte elements, a load widens each exactly to f32, and a
    /// store or a conversion `f16(x)`/`bf16(x)` rounds an f32 to nearest
    /// even. No IR value has this type.
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16)
    }

    /// The type a value read from a tensor of this element type has:
    /// f32 for the 16-bit floats, the type itself otherwise.
    pub fn value_type(self) -> Scalar {
        if self.is_half() { Scalar::F32 } else { self }
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
            Scalar::F16 | Scalar::BF16 => 2,
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
            Scalar::F32 | Scalar::F16 | Scalar::BF16 => Value::F32(0.0),
            Scalar::F64 => Value::F64(0.0),
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The bits of `x` rounded to the 16-bit float `elem` (`F16` or `BF16`),
/// to nearest, ties to even; a NaN keeps its sign and the top bits of its
/// payload, quieted. The `half` crate's conversion is the meaning, which
/// every backend's code reproduces: a store to a 16-bit tensor, and with
/// [`half_value`], `f16(x)` and `bf16(x)`.
pub fn half_bits(elem: Scalar, x: f32) -> u16 {
    match elem {
        Scalar::F16 => half::f16::from_f32(x).to_bits(),
        Scalar::BF16 => half::bf16::from_f32(x).to_bits(),
        other => unreachable!("{other} is not a 16-bit float"),
    }
}

/// The f32 of the 16-bit float `elem` with these bits: exact (a NaN is
/// quieted, keeping its payload), as a load from a 16-bit tensor gives.
pub fn half_value(elem: Scalar, bits: u16) -> f32 {
    match elem {
        Scalar::F16 => half::f16::from_bits(bits).to_f32(),
        Scalar::BF16 => half::bf16::from_bits(bits).to_f32(),
        other => unreachable!("{other} is not a 16-bit float"),
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
