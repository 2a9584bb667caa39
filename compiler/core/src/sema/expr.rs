//! Expressions: operators, names, loads, `ctx`, builtins and `fn` calls.
//! The typing and broadcasting rules of every operation live here.

use super::check::{Binding, Checker, IotaCtx};
use super::literal::{Ty, Val};
use super::reduce::is_reduction_call;
use crate::bounds::MAX_CALL_DEPTH;
use crate::diag::{Diagnostic, code};
use crate::ir::{self, Builtin, BuiltinDef, ExprKind, ParamKind, Place, ReduceOp};
use crate::span::Span;
use crate::syntax::ast::{self, ExprKind as AK};
use crate::types::{Scalar, Value};

/// The builtin forms the checker turns into other nodes: they are not rows
/// of `ir::BUILTINS` (the builtins that are IR nodes), nor conversions
/// (named by their type).
const FORMS: &[&str] = &["iota", "where", "sum", "argmax", "argmin", "_tandem_index"];

/// Every name a call may use that is not a `fn`: the forms, the
/// conversions and the IR's builtins.
fn builtin_names() -> impl Iterator<Item = &'static str> {
    FORMS
        .iter()
        .copied()
        .chain(Scalar::ALL.iter().map(|s| s.name()))
        .chain(ir::BUILTINS.iter().map(|d| d.name))
}

pub fn is_builtin(name: &str) -> bool {
    builtin_names().any(|n| n == name)
}

impl Checker<'_> {
    pub fn expr(&mut self, e: &ast::Expr) -> Option<Val> {
        let span = e.span;
        match &e.kind {
            AK::Int(v) => Some(self.literal_int(*v, span)),
            AK::Float(t) => Some(self.literal_float(t, span)),
            AK::Bool(b) => {
                Some(self.concrete(ExprKind::Const(Value::Bool(*b)), Scalar::Bool, vec![], span))
            }
            AK::Name(n) => self.name(n, span),
            AK::Unary(op, a) => self.unary(*op, a, span),
            AK::Binary(op, a, b) => self.binary(*op, a, b, span),
            AK::Call(f, args) => self.call(f, args, span),
            AK::Bitcast(t, a) => self.bitcast(t, a, span),
            AK::Field(..) => self.ctx_field(e),
            AK::Index(base, args) => self.load(base, args, span),
            AK::Keyword(name, _) => {
                self.stray_keyword(name, span);
                None
            }
            AK::Error => None,
        }
    }

    pub fn concrete(
        &mut self,
        kind: ExprKind,
        ty: Scalar,
        shape: Vec<crate::types::Dim>,
        span: Span,
    ) -> Val {
        let id = self.push(kind, ty, shape.clone());
        Val {
            id,
            ty: Ty::S(ty),
            shape,
            span,
        }
    }

    fn name(&mut self, n: &str, span: Span) -> Option<Val> {
        if self.calls.is_empty()
            && let Some(i) = self.tune_index(n)
        {
            let v = self.use_tune(i);
            return Some(self.literal_int(v as i128, span));
        }
        match self.lookup(n) {
            Some(Binding::Arg(v)) => Some(Val { span, ..v }),
            Some(Binding::Poisoned) => None,
            Some(Binding::Scalar(i)) => {
                let ParamKind::Scalar(s) = self.k.params[i].kind else {
                    unreachable!("scalar binding to a tensor")
                };
                Some(self.concrete(ExprKind::Param(i), s, vec![], span))
            }
            Some(Binding::Dim(s)) => {
                Some(self.concrete(ExprKind::DimValue(s), Scalar::I32, vec![], span))
            }
            Some(Binding::Tensor(i)) => {
                let (index, shape) = self.full_slice(Place::Param(i));
                self.mark_read(Place::Param(i));
                let elem = self.place_elem(Place::Param(i)).value_type();
                Some(self.concrete(
                    ExprKind::Load {
                        place: Place::Param(i),
                        index,
                    },
                    elem,
                    shape,
                    span,
                ))
            }
            Some(Binding::Local(l)) => {
                let local = &self.k.locals[l];
                let (elem, shape) = (local.elem, local.shape.clone());
                Some(self.concrete(ExprKind::Local(l), elem, shape, span))
            }
            None => {
                if n == "ctx" {
                    self.error(
                        Diagnostic::error(code::BAD_FIELD, "`ctx` is not a value")
                            .label(span, "use one of its fields")
                            .help("ctx.block.x, ctx.block.y, ctx.block.z, ctx.grid.x, ..."),
                    );
                } else if self.prog.fns.contains_key(n) || is_builtin(n) {
                    self.error(
                        Diagnostic::error(
                            code::UNKNOWN_NAME,
                            format!("`{n}` is a function, not a value"),
                        )
                        .label(span, "a function")
                        .help(format!("call it: `{n}(...)`")),
                    );
                } else if !self.calls.is_empty() && self.tune_index(n).is_some() {
                    self.error(
                        Diagnostic::error(
                            code::UNKNOWN_NAME,
                            format!("the tuning parameter `{n}` is not visible inside a fn"),
                        )
                        .label(span, "fn bodies see only their parameters")
                        .help(format!("pass it as an argument: `f(..., {n})`")),
                    );
                } else {
                    self.unknown_name(n, span);
                }
                None
            }
        }
    }

    pub fn unknown_name(&mut self, n: &str, span: Span) {
        let mut candidates: Vec<String> =
            self.scopes.iter().flat_map(|s| s.keys().cloned()).collect();
        if self.calls.is_empty() {
            candidates.extend(self.tune.iter().map(|(t, _)| t.name.clone()));
        }
        let d = Diagnostic::error(code::UNKNOWN_NAME, format!("unknown name `{n}`"))
            .label(span, "not defined here");
        let d = match closest(n, &candidates) {
            Some(c) => d.help(format!("did you mean `{c}`?")),
            None => d.help(
                "names are kernel parameters, `let` and `var` bindings, and @autotune parameters",
            ),
        };
        self.error(d);
    }

    fn mark_read(&mut self, place: Place) {
        if let Place::Param(i) = place
            && let ParamKind::Tensor { read, .. } = &mut self.k.params[i].kind
        {
            *read = true;
        }
    }

    fn load(&mut self, base: &ast::Expr, args: &[ast::SliceArg], span: Span) -> Option<Val> {
        let AK::Name(n) = &base.kind else {
            self.error(
                Diagnostic::error(code::BAD_OPERAND, "only tensors and tiles can be sliced")
                    .label(base.span, "not a tensor or tile name")
                    .help("slice a tensor parameter, a let or a var: X[r :+ R, :]"),
            );
            return None;
        };
        let place = match self.lookup(n) {
            Some(Binding::Tensor(i)) => Place::Param(i),
            Some(Binding::Local(l)) => Place::Local(l),
            Some(Binding::Poisoned) => return None,
            Some(_) => {
                self.error(
                    Diagnostic::error(
                        code::BAD_OPERAND,
                        format!("`{n}` is a scalar and cannot be sliced"),
                    )
                    .label(base.span, "a scalar")
                    .help("only tensors and tiles have axes"),
                );
                return None;
            }
            None => {
                self.unknown_name(n, base.span);
                return None;
            }
        };
        let (index, shape) = self.slice(place, args, base.span)?;
        self.mark_read(place);
        let elem = self.place_elem(place).value_type();
        Some(self.concrete(ExprKind::Load { place, index }, elem, shape, span))
    }

    fn ctx_field(&mut self, e: &ast::Expr) -> Option<Val> {
        let bad = |this: &mut Self| {
            this.error(
                Diagnostic::error(code::BAD_FIELD, "unknown field")
                    .label(e.span, "not a field Phobos knows")
                    .help("the fields are ctx.block.{x,y,z} (this block's index) and ctx.grid.{x,y,z} (the number of blocks)"),
            );
            None
        };
        let AK::Field(mid, axis) = &e.kind else {
            return bad(self);
        };
        let AK::Field(root, group) = &mid.kind else {
            return bad(self);
        };
        if !matches!(&root.kind, AK::Name(n) if n == "ctx") || self.lookup("ctx").is_some() {
            return bad(self);
        }
        let a = match axis.name.as_str() {
            "x" => 0u8,
            "y" => 1,
            "z" => 2,
            _ => return bad(self),
        };
        let kind = match group.name.as_str() {
            "block" => {
                self.block_uses[a as usize].get_or_insert(e.span);
                ExprKind::BlockId(a)
            }
            "grid" => {
                self.grid_used.get_or_insert(e.span);
                ExprKind::GridSize(a)
            }
            _ => return bad(self),
        };
        Some(self.concrete(kind, Scalar::I32, vec![], e.span))
    }

    fn unary(&mut self, op: ast::UnOp, a: &ast::Expr, span: Span) -> Option<Val> {
        let v = self.expr(a)?;
        use ast::UnOp;
        let ok = match op {
            UnOp::Neg => {
                v.ty.is_float()
                    || v.ty == Ty::AbsInt
                    || matches!(v.ty, Ty::S(s) if s.is_signed_int())
            }
            UnOp::Not => v.ty.is_bool() || v.ty.is_int(),
            UnOp::BitNot => v.ty.is_int(),
        };
        if !ok {
            self.bad_operand(op.symbol(), &v, span);
            return None;
        }
        let kind = ExprKind::Unary(op.into(), v.id);
        Some(match v.ty {
            Ty::S(s) => self.concrete(kind, s, v.shape, span),
            abs => self.abstract_op(kind, abs, v.shape, span),
        })
    }

    fn bad_operand(&mut self, op: &str, v: &Val, span: Span) {
        let help = match (op, v.ty) {
            ("%", t) if t.is_float() => {
                "`%` is defined on integers only; write x - y * floor(x / y) if you need it"
            }
            ("-", Ty::S(s)) if s == Scalar::U32 || s == Scalar::U64 => {
                "unsigned integers have no negation; use 0 - x for the wrapping one"
            }
            _ => "see the operator table in docs/language.md",
        };
        self.error(
            Diagnostic::error(
                code::BAD_OPERAND,
                format!("`{op}` is not defined on {}", v.ty.name()),
            )
            .label(span, "this operation")
            .label(v.span, format!("this is {}", v.ty.name()))
            .help(help),
        );
    }

    fn binary(&mut self, op: ast::BinOp, a: &ast::Expr, b: &ast::Expr, span: Span) -> Option<Val> {
        let (va, vb) = (self.expr(a), self.expr(b));
        let (va, vb) = (va?, vb?);
        let shape = self.broadcast(&va, &vb, span)?;
        use ast::BinOp::*;
        let (va, vb, ty) = match op {
            And | Or => {
                for v in [&va, &vb] {
                    if !v.ty.is_bool() {
                        self.bad_operand(op.symbol(), v, span);
                        return None;
                    }
                }
                (va, vb, Ty::S(Scalar::Bool))
            }
            Eq | Ne | Lt | Le | Gt | Ge => {
                let (va, vb, t) = self.unify(&va, &vb, span, "compared values differ in type")?;
                let (va, vb) = if t == Ty::AbsInt || t == Ty::AbsFloat {
                    let s = if t == Ty::AbsInt {
                        Scalar::I32
                    } else {
                        Scalar::F32
                    };
                    (self.concretize(&va, s)?, self.concretize(&vb, s)?)
                } else {
                    (va, vb)
                };
                if !matches!(op, Eq | Ne) && va.ty.is_bool() {
                    self.bad_operand(op.symbol(), &va, span);
                    return None;
                }
                (va, vb, Ty::S(Scalar::Bool))
            }
            _ => {
                let (va, vb, t) = self.unify(&va, &vb, span, "operands differ in type")?;
                let ok = match op {
                    Add | Sub | Mul | Div => t.is_int() || t.is_float(),
                    Rem | Shl | Shr => t.is_int(),
                    BitAnd | BitOr | BitXor => t.is_int() || t.is_bool(),
                    _ => unreachable!("comparisons handled above"),
                };
                if !ok {
                    self.bad_operand(op.symbol(), &va, span);
                    return None;
                }
                (va, vb, t)
            }
        };
        let kind = ExprKind::Binary(op.into(), va.id, vb.id);
        Some(match ty {
            Ty::S(s) => self.concrete(kind, s, shape, span),
            abs => self.abstract_op(kind, abs, shape, span),
        })
    }

    fn bitcast(&mut self, t: &ast::Ident, a: &ast::Expr, span: Span) -> Option<Val> {
        let to = self.scalar_type(t)?;
        let v = self.expr(a)?;
        let v = match v.ty {
            Ty::AbsInt => {
                let lit = self.const_value(v.id).unwrap_or(0);
                let pick = match to.size() {
                    8 if Scalar::I64.int_fits(lit) => Scalar::I64,
                    8 => Scalar::U64,
                    _ if Scalar::I32.int_fits(lit) => Scalar::I32,
                    _ => Scalar::U32,
                };
                self.concretize(&v, pick)?
            }
            _ => self.default_type(v)?,
        };
        let Ty::S(from) = v.ty else { return None };
        if from == Scalar::Bool || to == Scalar::Bool || from.size() != to.size() {
            self.error(
                Diagnostic::error(code::TYPE_MISMATCH, format!("cannot bitcast {from} to {to}"))
                    .label(span, "the sizes differ")
                    .help("bitcast reinterprets bits between types of one size (i32, u32, f32; i64, u64, f64); use a conversion such as `f32(x)` to convert a value"),
            );
            return None;
        }
        Some(self.concrete(ExprKind::Bitcast(v.id), to, v.shape, span))
    }

    fn call(&mut self, f: &ast::Ident, args: &[ast::Expr], span: Span) -> Option<Val> {
        let name = f.name.as_str();
        if let Some(to) = Scalar::from_name(name) {
            let [a] = self.args::<1>(f, args, span)?;
            return self.cast(to, a, span);
        }
        match name {
            "sum" => self.reduction(ReduceOp::Sum, args, span),
            "argmax" => self.reduction(ReduceOp::Argmax, args, span),
            "argmin" => self.reduction(ReduceOp::Argmin, args, span),
            "max" if is_reduction_call(args) => self.reduction(ReduceOp::Max, args, span),
            "min" if is_reduction_call(args) => self.reduction(ReduceOp::Min, args, span),
            "iota" => {
                let [a] = self.args::<1>(f, args, span)?;
                self.iota(a, span)
            }
            "dot" => self.dot(args, span),
            "trans" => {
                let [a] = self.args::<1>(f, args, span)?;
                self.transpose(a, span)
            }
            "where" => {
                let [c, a, b] = self.args::<3>(f, args, span)?;
                self.select(c, a, b, span)
            }
            "_tandem_index" => {
                let [a] = self.args::<1>(f, args, span)?;
                self.tandem_index(a, span)
            }
            _ => match Builtin::lookup(name) {
                Some(def) => self.builtin(def, f, args, span),
                None => self.call_fn(f, args, span),
            },
        }
    }

    /// A call of a builtin of `ir::BUILTINS`, typed by its row's rule.
    fn builtin(
        &mut self,
        def: &'static BuiltinDef,
        f: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Val> {
        let given = def.arity + usize::from(def.word.is_some());
        if args.len() != given {
            self.arity(&f.name, given, args.len(), span, None);
            return None;
        }
        let mut b = def.builtin;
        if let Some(n) = def.word {
            let q = self.const_int(&args[def.arity])?;
            if !(0..i128::from(n)).contains(&q) {
                self.error(
                    Diagnostic::error(
                        code::RANK,
                        format!("`{}` has words 0 to {}, not {q}", def.name, n - 1),
                    )
                    .label(span, "this word")
                    .help(format!(
                        "write `{0}(..., 0)` .. `{0}(..., {1})`",
                        def.name,
                        n - 1
                    )),
                );
                return None;
            }
            b = b.with_word(q as u8);
        }
        let operands = &args[..def.arity];
        if let ir::Typing::Fixed(want, _) = def.typing {
            let xs: Vec<&ast::Expr> = operands.iter().collect();
            return self.fixed(b, want, &xs, span);
        }
        let mut vals = Vec::with_capacity(operands.len());
        for a in operands {
            vals.push(self.expr(a)?);
        }
        let mut shape = Vec::new();
        for v in &vals {
            let acc = Val { shape, ..v.clone() };
            shape = self.broadcast(&acc, v, span)?;
        }
        // One type for all: untyped literals take the typed arguments' type
        // (`concretize` retypes nodes in place, so unifying twice is free).
        for i in 1..vals.len() {
            let (a, b, _) = self.unify(&vals[0], &vals[i], span, "arguments differ in type")?;
            vals[0] = a;
            vals[i] = b;
        }
        for i in 1..vals.len().saturating_sub(1) {
            let (_, b, _) = self.unify(&vals[0], &vals[i], span, "arguments differ in type")?;
            vals[i] = b;
        }
        let mut ids = Vec::with_capacity(vals.len());
        let mut types = Vec::with_capacity(vals.len());
        for v in vals.iter().cloned() {
            let v = self.default_type(v)?;
            let Ty::S(s) = v.ty else { return None };
            ids.push(v.id);
            types.push(s);
        }
        let ty = match def.typing.result(&types) {
            Ok(t) => t,
            Err(i) => {
                let v = self.default_type(vals[i].clone())?;
                self.bad_operand(def.name, &v, span);
                return None;
            }
        };
        Some(self.concrete(ExprKind::Builtin(b, ids), ty, shape, span))
    }

    /// A builtin of fixed argument types (the Tandem builtins): each argument
    /// must have the type the builtin takes (an untyped literal takes it),
    /// and the shapes broadcast.
    fn fixed(
        &mut self,
        b: Builtin,
        want: &'static [Scalar],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Val> {
        let mut ids = Vec::new();
        let mut shape: Vec<crate::types::Dim> = Vec::new();
        for (a, want) in args.iter().zip(want) {
            let v = self.expr(a)?;
            let v = match v.ty {
                Ty::AbsInt | Ty::AbsFloat => self.concretize(&v, *want)?,
                _ => v,
            };
            if v.ty != Ty::S(*want) {
                self.error(
                    Diagnostic::error(
                        code::TYPE_MISMATCH,
                        format!("`{}` takes {want}, not {}", b.name(), v.ty.name()),
                    )
                    .label(v.span, format!("this is {}", v.ty.name()))
                    .help(format!("convert the argument: `{want}(...)`")),
                );
                return None;
            }
            let acc = Val {
                shape: shape.clone(),
                ..v.clone()
            };
            shape = self.broadcast(&acc, &v, span)?;
            ids.push(v.id);
        }
        let ir::Typing::Fixed(_, ret) = b.def().typing else {
            unreachable!("called for fixed typing rules only")
        };
        Some(self.concrete(ExprKind::Builtin(b, ids), ret, shape, span))
    }

    /// The counter of a Tandem draw as u32: an i32 counter is read as its
    /// bits (so counters run from 0 to 2^32 - 1 either way), a u32 one as it
    /// is; any other type is an error at the argument.
    fn tandem_index(&mut self, a: &ast::Expr, span: Span) -> Option<Val> {
        let v = self.expr(a)?;
        // A counter passed down through stdlib `fn`s is labelled by the
        // caller's call (`error` adds it), not inside the stdlib.
        let inside_stdlib = self.calls.first().is_some_and(|(_, c)| c.src != v.span.src);
        match v.ty {
            Ty::AbsInt => self.concretize(&v, Scalar::U32),
            Ty::S(Scalar::U32) => Some(v),
            Ty::S(Scalar::I32) => {
                Some(self.concrete(ExprKind::Bitcast(v.id), Scalar::U32, v.shape, span))
            }
            _ => {
                let mut d = Diagnostic::error(
                    code::TYPE_MISMATCH,
                    format!("a Tandem counter is i32 or u32, not {}", v.ty.name()),
                )
                .help("pass the element's index, such as `(r + iota(0)) * 256 + iota(1)`");
                if !inside_stdlib {
                    d = d.label(v.span, format!("this is {}", v.ty.name()));
                }
                self.error(d);
                None
            }
        }
    }

    /// Checks the argument count of a builtin.
    fn args<'a, const N: usize>(
        &mut self,
        f: &ast::Ident,
        args: &'a [ast::Expr],
        span: Span,
    ) -> Option<[&'a ast::Expr; N]> {
        if args.len() != N {
            self.arity(&f.name, N, args.len(), span, None);
            return None;
        }
        Some(std::array::from_fn(|i| &args[i]))
    }

    fn arity(&mut self, name: &str, want: usize, got: usize, span: Span, def: Option<Span>) {
        let plural = if want == 1 { "" } else { "s" };
        let mut d = Diagnostic::error(
            code::ARITY,
            format!("`{name}` takes {want} argument{plural} but {got} were given"),
        )
        .label(span, format!("{got} given"));
        if let Some(def) = def {
            d = d.label(def, "defined here");
        }
        self.error(d.help(format!("pass exactly {want} argument{plural}")));
    }

    fn cast(&mut self, to: Scalar, a: &ast::Expr, span: Span) -> Option<Val> {
        if to.is_half() {
            return self.round_half(to, a, span);
        }
        let v = self.expr(a)?;
        let v = match v.ty {
            Ty::AbsInt if to != Scalar::Bool => self.concretize(&v, to)?,
            Ty::AbsFloat if to.is_float() => self.concretize(&v, to)?,
            _ => self.default_type(v)?,
        };
        if v.ty == Ty::S(to) {
            return Some(Val { span, ..v });
        }
        Some(self.concrete(ExprKind::Cast(v.id), to, v.shape, span))
    }

    /// `f16(x)` and `bf16(x)`: `x` rounded to the nearest 16-bit float
    /// (ties to even), an f32 value (16-bit types are storage types). `x`
    /// is an f32; integers are accepted by `f16`, through an f32 that is
    /// exact wherever the f16 is finite, so one rounding happens; an f64,
    /// or an integer for `bf16`, would round twice and is refused.
    fn round_half(&mut self, to: Scalar, a: &ast::Expr, span: Span) -> Option<Val> {
        let v = self.expr(a)?;
        let v = match v.ty {
            Ty::AbsInt | Ty::AbsFloat => self.concretize(&v, Scalar::F32)?,
            _ => self.default_type(v)?,
        };
        let Ty::S(from) = v.ty else { return None };
        let v = match from {
            Scalar::F32 => v,
            t if t.is_int() && to == Scalar::F16 => {
                self.concrete(ExprKind::Cast(v.id), Scalar::F32, v.shape.clone(), span)
            }
            t => {
                self.error(
                    Diagnostic::error(code::TYPE_MISMATCH, format!("cannot convert {t} to {to}"))
                        .label(v.span, format!("this is {t}"))
                        .help(format!(
                            "`{to}(x)` rounds an f32 once; write `{to}(f32(x))` to round twice, knowingly"
                        )),
                );
                return None;
            }
        };
        let round = match to {
            Scalar::F16 => Builtin::RoundF16,
            _ => Builtin::RoundBF16,
        };
        Some(self.concrete(
            ExprKind::Builtin(round, vec![v.id]),
            Scalar::F32,
            v.shape,
            span,
        ))
    }

    fn iota(&mut self, a: &ast::Expr, span: Span) -> Option<Val> {
        let shape = match &self.iota {
            IotaCtx::Assign(shape) => shape.clone(),
            IotaCtx::Let => {
                self.error(
                    Diagnostic::error(code::IOTA_IN_LET, "`iota` cannot be used in a `let`")
                        .label(span, "iota is a position in the assigned tile, and a let has none")
                        .help("hold it in a tile instead: `var c: tile<i32>[R, 256] = ... iota(0) ...`"),
                );
                return None;
            }
            IotaCtx::Reduction => {
                self.error(
                    Diagnostic::error(
                        code::IOTA_IN_REDUCTION,
                        "`iota` cannot be used inside a reduction",
                    )
                    .label(span, "a position here would be in the statement's tile and in the reduced one at once")
                    .help("compute the operand into a var first: `var t: tile<f32>[R, 256] = ... iota(1) ...`, then `sum(t, axis = 1)`"),
                );
                return None;
            }
            IotaCtx::Elsewhere => {
                self.error(
                    Diagnostic::error(
                        code::IOTA_OUTSIDE,
                        "`iota` is only meaningful in the value of an assignment",
                    )
                    .label(span, "there is no assigned tile here")
                    .help("use iota on the right of `Y[...] = ...` or in a var's value"),
                );
                return None;
            }
        };
        let saved = std::mem::replace(&mut self.iota, IotaCtx::Elsewhere);
        let axis = self.const_int(a);
        self.iota = saved;
        let axis = axis?;
        if axis < 0 || axis as usize >= shape.len() {
            self.error(
                Diagnostic::error(
                    code::RANK,
                    format!("iota({axis}) names an axis the tile does not have"),
                )
                .label(
                    span,
                    format!("the assigned tile has shape {}", self.shape_text(&shape)),
                )
                .help(format!("axes are 0 .. {}", shape.len())),
            );
            return None;
        }
        Some(self.concrete(ExprKind::Iota(axis as u8), Scalar::I32, shape, span))
    }

    fn select(&mut self, c: &ast::Expr, a: &ast::Expr, b: &ast::Expr, span: Span) -> Option<Val> {
        let (vc, va, vb) = (self.expr(c), self.expr(a), self.expr(b));
        let (vc, va, vb) = (vc?, va?, vb?);
        if !vc.ty.is_bool() {
            self.error(
                Diagnostic::error(
                    code::TYPE_MISMATCH,
                    format!(
                        "the condition of `where` must be bool, not {}",
                        vc.ty.name()
                    ),
                )
                .label(vc.span, "not a bool")
                .help("compare it: `x != 0`"),
            );
            return None;
        }
        let s1 = self.broadcast(&va, &vb, span)?;
        let tmp = Val {
            shape: s1,
            ..va.clone()
        };
        let shape = self.broadcast(&vc, &tmp, span)?;
        let (va, vb, ty) = self.unify(&va, &vb, span, "the branches of `where` differ in type")?;
        let kind = ExprKind::Select(vc.id, va.id, vb.id);
        Some(match ty {
            Ty::S(s) => self.concrete(kind, s, shape, span),
            abs => self.abstract_op(kind, abs, shape, span),
        })
    }

    /// Expands a call to a `fn`: arguments are checked here, then the body is
    /// checked with the parameters bound to them.
    fn call_fn(&mut self, f: &ast::Ident, args: &[ast::Expr], span: Span) -> Option<Val> {
        let Some(def) = self.prog.fns.get(&f.name) else {
            let names: Vec<String> = self
                .prog
                .fns
                .keys()
                .cloned()
                .chain(builtin_names().map(str::to_string))
                .collect();
            let d = Diagnostic::error(code::UNKNOWN_FN, format!("unknown function `{}`", f.name))
                .label(f.span, "not defined");
            let d = match closest(&f.name, &names) {
                Some(c) => d.help(format!("did you mean `{c}`?")),
                None => d.help("define it with `fn name(args) = expr`"),
            };
            self.error(d);
            return None;
        };
        if def.params.len() != args.len() {
            self.arity(
                &f.name,
                def.params.len(),
                args.len(),
                span,
                Some(def.name.span),
            );
            return None;
        }
        // Recursion is reported once per group of `fn`s by
        // `fns::check_recursion`; here it only stops the expansion, before
        // the first call into the group.
        if self.prog.is_recursive(&f.name) {
            return None;
        }
        if self.calls.len() >= MAX_CALL_DEPTH {
            // The outermost call is in the kernel, so in the user's file.
            let outer = self.calls.first().map_or(span, |(_, s)| *s);
            self.error(
                Diagnostic::error(
                    code::CALLS_TOO_DEEP,
                    format!("`fn` calls here nest more than {MAX_CALL_DEPTH} deep"),
                )
                .label(outer, format!("expanding this reaches `{}` at depth {}", f.name, MAX_CALL_DEPTH + 1))
                .help(format!(
                    "the checker expands every `fn` call in place, at most {MAX_CALL_DEPTH} deep (bounds::MAX_CALL_DEPTH); fold some of the chain into one `fn`"
                )),
            );
            return None;
        }
        let mut bound = Vec::new();
        let mut ok = true;
        for (p, a) in def.params.iter().zip(args) {
            let want = match &p.ty {
                None => None,
                Some(ast::TypeExpr::Scalar(t)) => match Scalar::from_name(&t.name) {
                    Some(s) if s.is_half() => {
                        self.half_value(s, t.span, "a `fn` parameter");
                        ok = false;
                        continue;
                    }
                    Some(s) => Some(s),
                    None => {
                        self.scalar_type(t);
                        ok = false;
                        continue;
                    }
                },
                Some(other) => {
                    self.error(
                        Diagnostic::error(
                            code::UNKNOWN_TYPE,
                            "a fn parameter takes an element type",
                        )
                        .label(other.span(), "not an element type")
                        .help("write `x: f32`; the argument may be a tile of any shape"),
                    );
                    ok = false;
                    continue;
                }
            };
            let v = match (self.expr(a), want) {
                (Some(v), Some(want)) if matches!(v.ty, Ty::AbsInt | Ty::AbsFloat) => {
                    self.concretize(&v, want)
                }
                (v, _) => v.and_then(|v| self.default_type(v)),
            };
            let Some(v) = v else {
                ok = false;
                continue;
            };
            if let Some(want) = want
                && v.ty != Ty::S(want)
            {
                self.error(
                    Diagnostic::error(
                        code::TYPE_MISMATCH,
                        format!(
                            "`{}` of `{}` must be {want}, not {}",
                            p.name.name,
                            f.name,
                            v.ty.name()
                        ),
                    )
                    .label(v.span, format!("this is {}", v.ty.name()))
                    .label(p.name.span, format!("declared {want} here"))
                    .help(format!("convert the argument: `{want}(...)`")),
                );
                ok = false;
            }
            bound.push((p.name.name.clone(), v));
        }
        if !ok {
            return None;
        }
        let def = def.clone();
        self.calls.push((f.name.clone(), span));
        let outer = std::mem::replace(&mut self.scopes, vec![Default::default()]);
        for (n, v) in bound {
            self.bind(&n, Binding::Arg(v));
        }
        let result = self.expr(&def.body);
        self.scopes = outer;
        self.calls.pop();
        result.map(|v| Val { span, ..v })
    }
}

/// The candidate nearest to `name` by edit distance, if it is near enough.
fn closest(name: &str, candidates: &[String]) -> Option<String> {
    let dist = |a: &str, b: &str| -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for j in 0..b.len() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != b[j]))
                    .min(row[j] + 1)
                    .min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    };
    candidates
        .iter()
        .filter(|c| !c.starts_with('_'))
        .map(|c| (dist(name, c), c))
        .filter(|(d, c)| *d <= 2.max(name.len() / 3) && *d < c.len())
        .min()
        .map(|(_, c)| c.clone())
}
