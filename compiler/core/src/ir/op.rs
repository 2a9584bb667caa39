//! The IR's operators. They mirror the syntax's `ast::BinOp`/`ast::UnOp`
//! today, but belong to the IR, so that a backend never depends on the
//! syntax tree and the IR may gain operators the surface spells otherwise.
//! Their meaning on each type is `interp::ops`.

use crate::syntax::ast;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Negation: wrapping on integers, the sign flipped on floats.
    Neg,
    /// Logical not on bool, bitwise not on integers.
    Not,
    /// Bitwise not on integers.
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Logical and/or of bools (both operands are always evaluated).
    And,
    Or,
}

impl BinOp {
    /// The operator as the printed IR shows it.
    pub fn symbol(self) -> &'static str {
        ast::BinOp::from(self).symbol()
    }

    /// Whether the operator compares, giving bool.
    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
}

impl UnOp {
    pub fn symbol(self) -> &'static str {
        ast::UnOp::from(self).symbol()
    }
}

/// One list of the pairs, so the two directions cannot disagree.
macro_rules! same_variants {
    ($ir:ident, $ast:path, [$($v:ident),*]) => {
        impl From<$ast> for $ir {
            fn from(op: $ast) -> $ir {
                use $ast as A;
                match op {
                    $(A::$v => $ir::$v,)*
                }
            }
        }
        impl From<$ir> for $ast {
            fn from(op: $ir) -> $ast {
                use $ast as A;
                match op {
                    $($ir::$v => A::$v,)*
                }
            }
        }
    };
}

same_variants!(UnOp, ast::UnOp, [Neg, Not, BitNot]);
same_variants!(
    BinOp,
    ast::BinOp,
    [
        Add, Sub, Mul, Div, Rem, Shl, Shr, BitAnd, BitOr, BitXor, Eq, Ne, Lt, Le, Gt, Ge, And, Or
    ]
);
