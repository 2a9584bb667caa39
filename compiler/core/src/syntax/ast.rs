//! The syntax tree the grammar builds: what the user wrote, with spans, before
//! any name is resolved or any type is known.

use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// One parsed file: expression functions and kernels, in source order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct File {
    pub fns: Vec<FnDef>,
    pub kernels: Vec<KernelDef>,
}

/// `fn name(a, b: T) = expr`: an expression function, inlined at each call.
#[derive(Clone, Debug, PartialEq)]
pub struct FnDef {
    pub name: Ident,
    pub params: Vec<FnParam>,
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FnParam {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
}

/// `@name(args)` before a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub name: Ident,
    pub args: Vec<AnnArg>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AnnArg {
    /// `R in [16, 32]`
    Choice {
        name: Ident,
        values: Vec<Expr>,
    },
    Expr(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct KernelDef {
    pub annotations: Vec<Annotation>,
    pub name: Ident,
    pub params: Vec<KernelParam>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct KernelParam {
    pub name: Ident,
    pub ty: TypeExpr,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExpr {
    Scalar(Ident),
    Tensor {
        elem: Ident,
        dims: Vec<Expr>,
        span: Span,
    },
    Tile {
        elem: Ident,
        dims: Vec<Expr>,
        span: Span,
    },
}

impl TypeExpr {
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Scalar(id) => id.span,
            TypeExpr::Tensor { span, .. } | TypeExpr::Tile { span, .. } => *span,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Let {
        name: Ident,
        value: Expr,
        span: Span,
    },
    Var {
        name: Ident,
        ty: TypeExpr,
        value: Expr,
        span: Span,
    },
    /// `place = value`; the grammar accepts any expression as the place and
    /// the checker says which ones can be stored to.
    Assign {
        place: Expr,
        value: Expr,
        span: Span,
    },
    /// `for var in start .. end { body }`: the body once for each i32
    /// `var` from `start` up to `end`, excluded.
    For {
        var: Ident,
        start: Expr,
        end: Expr,
        body: Vec<Stmt>,
        span: Span,
    },
    /// A statement the parser could not read; its diagnostic is already out.
    Error(Span),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    And,
    Or,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            Shl => "<<",
            Shr => ">>",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }
}

impl UnOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::Not => "!",
            UnOp::BitNot => "~",
        }
    }
}

/// One index of a slice: `:`, `a :+ n`, or a single position `a` that drops the axis.
#[derive(Clone, Debug, PartialEq)]
pub enum SliceArg {
    Full(Span),
    Range { start: Expr, len: Expr },
    Index(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal as written (decimal or hex); negation is folded in by
    /// the parser so that `-2147483648` is one literal.
    Int(i128),
    /// A float literal's text, parsed once its type is known so that f32
    /// literals are rounded once.
    Float(String),
    Bool(bool),
    Name(String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Call(Ident, Vec<Expr>),
    Bitcast(Ident, Box<Expr>),
    Field(Box<Expr>, Ident),
    Index(Box<Expr>, Vec<SliceArg>),
    /// `name = value` as an argument of a call; only reductions take one
    /// (`sum(x, axis = 1)`), and the checker refuses it anywhere else.
    Keyword(Ident, Box<Expr>),
    /// A part the parser could not read.
    Error,
}
