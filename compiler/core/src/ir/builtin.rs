//! The builtins: the one table from which the checker, the printer, the
//! verifier and the interpreter take each builtin's name, arity, typing rule
//! and meaning.
//!
//! A builtin here is an IR node (`ExprKind::Builtin`) that every backend
//! implements. The surface forms that are not nodes of their own (`iota`,
//! `where`, conversions such as `f32(x)`, `_tandem_index`) are the checker's
//! (`sema::expr`), and the math functions written in Phobos (`exp`, `log`,
//! `tanh`, `erf`, `fma`, ...) are the standard library's (`std/math.ph`);
//! the `_native_*` rows mark those that GPU fast mode may replace by the
//! driver's function.
//! Adding a builtin: a variant, a row in [`TABLE`], its meaning in
//! `interp::ops`, and its code in each backend (ARCHITECTURE.md, "Where to
//! add an operation").

use crate::interp::ops;
use crate::types::{Scalar, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    Sqrt,
    Abs,
    Min,
    Max,
    /// `(seed: u32) -> u32`: word `q` (0..4) of the Tandem key
    /// `Key::from_seed(seed)` (stdlib/tandem/SPEC.md section 2).
    TandemKey(u8),
    /// `(k0, k1, k2, k3, i: u32) -> u32`: word `i` of the Tandem stream of
    /// the key `[k0, k1, k2, k3]` with `K = 32` (SPEC.md section 3.6),
    /// element `i` of `fill_u32`.
    TandemWord,
    /// `(rejected: bool, k0, k1, k2, k3, i, n: u32) -> u32`: when `rejected`,
    /// the value Lemire's method accepts on the continuation of
    /// `key.sub(PURPOSE_BELOW).split(i)` (SPEC.md section 7.5); else 0,
    /// without drawing anything.
    TandemBelowRetry,
    /// `(x, exact: f32) -> f32`: `exact`, a standard-library function of
    /// `x` written from exact operations, which GPU fast mode may replace
    /// by the driver's own function of `x` (`std/math.ph`'s `exp`, `log`,
    /// `cos`, `tanh` and `rsqrt`). Every exact backend computes `exact`.
    Native(Native),
    /// `(x: f32) -> f32`: `x` rounded to the nearest IEEE binary16, ties
    /// to even, as f32 (what `f16(x)` and a store to a `tensor<f16>` do).
    RoundF16,
    /// `(x: f32) -> f32`: `x` rounded to the nearest bfloat16, ties to
    /// even, as f32 (`bf16(x)`, a store to a `tensor<bf16>`).
    RoundBF16,
}

/// The driver functions fast mode may call in place of the standard
/// library's exact ones (WGSL's names, with their WGSL accuracy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Native {
    Exp,
    Log,
    Cos,
    Tanh,
    InverseSqrt,
}

/// How a builtin's argument types give its result type. The checker first
/// brings the arguments to one type where the rule asks for it (untyped
/// literals take the others' type, then default), then asks
/// [`Typing::result`]; the verifier asks the same question of the IR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Typing {
    /// Arguments of one float type; the result has it.
    Float,
    /// Arguments of one float or signed integer type; the result has it.
    Signed,
    /// Arguments of one type other than bool; the result has it.
    Numeric,
    /// Exactly these argument types (untyped literals take them), and this
    /// result type.
    Fixed(&'static [Scalar], Scalar),
}

impl Typing {
    /// Whether the checker unifies the arguments into one type.
    pub fn same_type(self) -> bool {
        !matches!(self, Typing::Fixed(..))
    }

    /// The result type for arguments of these types, or the first argument
    /// (by position) that the rule does not accept.
    pub fn result(self, args: &[Scalar]) -> Result<Scalar, usize> {
        if let Typing::Fixed(want, ret) = self {
            return match args.iter().zip(want).position(|(a, w)| a != w) {
                Some(i) => Err(i),
                None => Ok(ret),
            };
        }
        let first = *args.first().ok_or(0usize)?;
        if let Some(i) = args.iter().position(|a| *a != first) {
            return Err(i);
        }
        let ok = match self {
            Typing::Float => first.is_float(),
            Typing::Signed => first.is_float() || first.is_signed_int(),
            Typing::Numeric => first != Scalar::Bool,
            Typing::Fixed(..) => unreachable!("handled above"),
        };
        if ok { Ok(first) } else { Err(0) }
    }
}

/// One row of the table.
#[derive(Debug)]
pub struct Def {
    /// The builtin; for a family (`TandemKey`), its first member.
    pub builtin: Builtin,
    /// The name a kernel calls it by.
    pub name: &'static str,
    /// The number of operands of the IR node.
    pub arity: usize,
    pub typing: Typing,
    /// For a family: the number of members, chosen by one more argument,
    /// a compile-time integer constant `0 .. n`, after the operands.
    pub word: Option<u8>,
    /// The meaning: the interpreter's function, the reference the backends
    /// match bit for bit.
    pub eval: fn(Builtin, &[Value]) -> Value,
}

use Scalar::{Bool, F32, U32};

/// Every builtin, in the order of [`Builtin`]'s variants.
pub static TABLE: &[Def] = &[
    Def {
        builtin: Builtin::Sqrt,
        name: "sqrt",
        arity: 1,
        typing: Typing::Float,
        word: None,
        eval: ops::sqrt,
    },
    Def {
        builtin: Builtin::Abs,
        name: "abs",
        arity: 1,
        typing: Typing::Signed,
        word: None,
        eval: ops::abs,
    },
    Def {
        builtin: Builtin::Min,
        name: "min",
        arity: 2,
        typing: Typing::Numeric,
        word: None,
        eval: ops::min,
    },
    Def {
        builtin: Builtin::Max,
        name: "max",
        arity: 2,
        typing: Typing::Numeric,
        word: None,
        eval: ops::max,
    },
    Def {
        builtin: Builtin::TandemKey(0),
        name: "_tandem_key",
        arity: 1,
        typing: Typing::Fixed(&[U32], U32),
        word: Some(4),
        eval: ops::tandem_key_word,
    },
    Def {
        builtin: Builtin::TandemWord,
        name: "_tandem_word",
        arity: 5,
        typing: Typing::Fixed(&[U32, U32, U32, U32, U32], U32),
        word: None,
        eval: ops::tandem_word_value,
    },
    Def {
        builtin: Builtin::TandemBelowRetry,
        name: "_tandem_below_retry",
        arity: 7,
        typing: Typing::Fixed(&[Bool, U32, U32, U32, U32, U32, U32], U32),
        word: None,
        eval: ops::tandem_below_retry_value,
    },
    Def {
        builtin: Builtin::Native(Native::Exp),
        name: "_native_exp",
        arity: 2,
        typing: Typing::Float,
        word: None,
        eval: ops::native,
    },
    Def {
        builtin: Builtin::Native(Native::Log),
        name: "_native_log",
        arity: 2,
        typing: Typing::Float,
        word: None,
        eval: ops::native,
    },
    Def {
        builtin: Builtin::Native(Native::Cos),
        name: "_native_cos",
        arity: 2,
        typing: Typing::Float,
        word: None,
        eval: ops::native,
    },
    Def {
        builtin: Builtin::Native(Native::Tanh),
        name: "_native_tanh",
        arity: 2,
        typing: Typing::Float,
        word: None,
        eval: ops::native,
    },
    Def {
        builtin: Builtin::Native(Native::InverseSqrt),
        name: "_native_rsqrt",
        arity: 2,
        typing: Typing::Float,
        word: None,
        eval: ops::native,
    },
    Def {
        builtin: Builtin::RoundF16,
        name: "_round_f16",
        arity: 1,
        typing: Typing::Fixed(&[F32], F32),
        word: None,
        eval: ops::round_half,
    },
    Def {
        builtin: Builtin::RoundBF16,
        name: "_round_bf16",
        arity: 1,
        typing: Typing::Fixed(&[F32], F32),
        word: None,
        eval: ops::round_half,
    },
];

impl Builtin {
    /// This builtin's row of [`TABLE`].
    pub fn def(self) -> &'static Def {
        let row = match self {
            Builtin::Sqrt => 0,
            Builtin::Abs => 1,
            Builtin::Min => 2,
            Builtin::Max => 3,
            Builtin::TandemKey(_) => 4,
            Builtin::TandemWord => 5,
            Builtin::TandemBelowRetry => 6,
            Builtin::Native(n) => 7 + n as usize,
            Builtin::RoundF16 => 12,
            Builtin::RoundBF16 => 13,
        };
        &TABLE[row]
    }

    /// The builtin a kernel calls `name`, if any.
    pub fn lookup(name: &str) -> Option<&'static Def> {
        TABLE.iter().find(|d| d.name == name)
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// The member of a family (`word`), if this builtin is one.
    pub fn word(self) -> Option<u8> {
        match self {
            Builtin::TandemKey(q) => Some(q),
            _ => None,
        }
    }

    /// The member `q` of the family whose first member is `self`.
    pub fn with_word(self, q: u8) -> Builtin {
        match self {
            Builtin::TandemKey(_) => Builtin::TandemKey(q),
            other => other,
        }
    }

    /// The value on these arguments ([`Def::eval`]).
    pub fn eval(self, args: &[Value]) -> Value {
        (self.def().eval)(self, args)
    }

    /// The Tandem builtins: integer operations on u32 words (and one bool),
    /// whose meaning is the reference crate `phobos-tandem`.
    pub fn is_tandem(self) -> bool {
        matches!(
            self,
            Builtin::TandemKey(_) | Builtin::TandemWord | Builtin::TandemBelowRetry
        )
    }

    /// The argument types of a builtin of fixed types, in order.
    pub fn tandem_args(self) -> &'static [Scalar] {
        match self.def().typing {
            Typing::Fixed(args, _) => args,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_variant_order_and_names_are_unique() {
        for (i, d) in TABLE.iter().enumerate() {
            assert!(std::ptr::eq(d.builtin.def(), &TABLE[i]), "{}", d.name);
            assert_eq!(Builtin::lookup(d.name).map(|x| x.builtin), Some(d.builtin));
            if let Typing::Fixed(args, _) = d.typing {
                assert_eq!(args.len(), d.arity, "{}", d.name);
            }
        }
    }

    #[test]
    fn typing_rules() {
        use Scalar::*;
        assert_eq!(Typing::Float.result(&[F32]), Ok(F32));
        assert_eq!(Typing::Float.result(&[I32]), Err(0));
        assert_eq!(Typing::Signed.result(&[I64]), Ok(I64));
        assert_eq!(Typing::Signed.result(&[U32]), Err(0));
        assert_eq!(Typing::Numeric.result(&[U32, U32]), Ok(U32));
        assert_eq!(Typing::Numeric.result(&[U32, I32]), Err(1));
        assert_eq!(Typing::Numeric.result(&[Bool, Bool]), Err(0));
        let t = Typing::Fixed(&[Bool, U32], U32);
        assert_eq!(t.result(&[Bool, U32]), Ok(U32));
        assert_eq!(t.result(&[Bool, I32]), Err(1));
    }
}
