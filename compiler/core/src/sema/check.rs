//! The checker's state, kernel signatures, `@autotune`, and statements.

use std::collections::HashMap;

use super::Program;
use super::grid;
use super::literal::{Abs, Ty, Val};
use crate::bounds;
use crate::diag::{Diagnostic, code};
use crate::ir::{self, ExprId, ExprKind, Index, LocalId, LocalKind, ParamKind, Place, Stmt};
use crate::span::Span;
use crate::syntax::ast::{self, AnnArg, ExprKind as AK, SliceArg, TypeExpr};
use crate::types::{Dim, Scalar, Shape, SymId};

/// What a name means where it is used.
#[derive(Clone, Debug)]
pub enum Binding {
    Tensor(usize),
    Scalar(usize),
    Dim(SymId),
    Local(LocalId),
    /// A `fn` parameter, bound to its argument.
    Arg(Val),
    /// A `let` or `var` whose value had errors; uses are not reported again.
    Poisoned,
}

/// Where `iota` may appear, and what it means there.
#[derive(Clone, Debug)]
pub enum IotaCtx {
    /// In the value of an assignment or `var` whose tile has this shape.
    Assign(Shape),
    Let,
    /// In the operand of a reduction.
    Reduction,
    /// Anywhere else: slice starts, types, annotations.
    Elsewhere,
}

/// A declared `@autotune` parameter.
#[derive(Clone, Debug)]
pub struct DeclaredTune {
    pub name: String,
    pub values: Vec<i64>,
    pub span: Span,
}

pub struct Checker<'p> {
    pub prog: &'p Program,
    pub diags: Vec<Diagnostic>,
    pub k: ir::Kernel,
    pub abs: HashMap<ExprId, Abs>,
    pub scopes: Vec<HashMap<String, Binding>>,
    pub tune: Vec<(DeclaredTune, i64)>,
    pub tune_used: Vec<bool>,
    pub iota: IotaCtx,
    /// The `fn` calls being expanded, outermost first.
    pub calls: Vec<(String, Span)>,
    /// For each local bound by `let`, its value (the grid inference reads it).
    pub let_values: HashMap<LocalId, ExprId>,
    /// The first use of `ctx.block.{x,y,z}`.
    pub block_uses: [Option<Span>; 3],
    /// The first use of `ctx.grid.{x,y,z}`.
    pub grid_used: Option<Span>,
    /// The `for` loops open around the statement being checked.
    pub loop_depth: usize,
    /// The loop depth at which each `var` was declared.
    pub var_depth: HashMap<LocalId, usize>,
}

/// Reads a kernel's `@autotune` declarations, reporting malformed ones.
pub fn tune_params(k: &ast::KernelDef, diags: &mut Vec<Diagnostic>) -> Vec<DeclaredTune> {
    let mut out: Vec<DeclaredTune> = Vec::new();
    for a in k.annotations.iter().filter(|a| a.name.name == "autotune") {
        for arg in &a.args {
            let AnnArg::Choice { name, values } = arg else {
                diags.push(
                    Diagnostic::error(code::ANNOTATION, "malformed @autotune parameter")
                        .label(a.span, "expected `NAME in [v1, v2, ...]`")
                        .help("for example @autotune(R in [16, 32])"),
                );
                continue;
            };
            let mut vals = Vec::new();
            for v in values {
                match v.kind {
                    AK::Int(x) if (1..=i32::MAX as i128).contains(&x) => vals.push(x as i64),
                    _ => diags.push(
                        Diagnostic::error(
                            code::NOT_CONSTANT,
                            format!("a value of `{}` must be a positive integer", name.name),
                        )
                        .label(v.span, "not a positive integer literal")
                        .help("tuning values are literals such as 16 or 32"),
                    ),
                }
            }
            if values.is_empty() {
                diags.push(
                    Diagnostic::error(
                        code::ANNOTATION,
                        format!("`{}` has no candidate values", name.name),
                    )
                    .label(name.span, "give at least one value")
                    .help(format!("for example {} in [16]", name.name)),
                );
                continue;
            }
            if let Some(prev) = out.iter().find(|t| t.name == name.name) {
                diags.push(
                    Diagnostic::error(
                        code::DUPLICATE,
                        format!("`{}` is declared twice", name.name),
                    )
                    .label(name.span, "declared again here")
                    .label(prev.span, "first declared here")
                    .help("list all its values in one declaration"),
                );
                continue;
            }
            if !vals.is_empty() {
                out.push(DeclaredTune {
                    name: name.name.clone(),
                    values: vals,
                    span: name.span,
                });
            }
        }
    }
    out
}

/// Checks one kernel in one configuration and builds its IR.
pub fn check_kernel(
    prog: &Program,
    def: &ast::KernelDef,
    config: &[(String, i64)],
) -> Result<ir::Kernel, Vec<Diagnostic>> {
    check_kernel_reading(prog, def, config).result
}

/// What checking one configuration gave, which tuning parameters it read,
/// and how much IR it built.
pub struct Reading {
    pub result: Result<ir::Kernel, Vec<Diagnostic>>,
    /// By declaration index. Every value of a tuning parameter is read
    /// through [`Checker::use_tune`], so the result depends on the values
    /// of the parameters read and on nothing else of the configuration.
    pub read: Vec<bool>,
    /// The IR expressions built, whether or not the check succeeded: the
    /// measure of its work.
    pub nodes: usize,
}

/// [`check_kernel`], and the tuning parameters it read.
pub fn check_kernel_reading(
    prog: &Program,
    def: &ast::KernelDef,
    config: &[(String, i64)],
) -> Reading {
    let mut c = Checker::new(prog, def, config);
    for s in &def.body {
        c.stmt(s);
    }
    grid::set_grid(&mut c, def);
    for (i, (t, _)) in c.tune.iter().enumerate() {
        if !c.tune_used[i] {
            c.diags.push(
                Diagnostic::error(
                    code::UNUSED_TUNE_PARAM,
                    format!("tuning parameter `{}` is never used", t.name),
                )
                .label(t.span, "declared here")
                .help("use it in a slice or tile shape, or remove it from @autotune"),
            );
        }
    }
    let read = c.tune_used.clone();
    let nodes = c.k.exprs.len();
    Reading {
        result: c.finish(),
        read,
        nodes,
    }
}

/// The name of the output a check kernel writes.
pub const CHECK_OUTPUT: &str = "__check";

/// Builds a kernel that evaluates `expr` over whole tensors of `def`'s
/// signature and stores it into one more tensor parameter, `__check`, placed
/// last. The `// check` lines of a file run this way.
pub fn check_expr_kernel(
    prog: &Program,
    def: &ast::KernelDef,
    config: &[(String, i64)],
    expr: &ast::Expr,
) -> Result<ir::Kernel, Vec<Diagnostic>> {
    check_expr_kernel_reading(prog, def, config, expr).result
}

/// [`check_expr_kernel`], and the tuning parameters it read.
pub fn check_expr_kernel_reading(
    prog: &Program,
    def: &ast::KernelDef,
    config: &[(String, i64)],
    expr: &ast::Expr,
) -> Reading {
    let mut c = Checker::new(prog, def, config);
    if let Some(v) = c.expr(expr).and_then(|v| c.default_type(v)) {
        let Ty::S(elem) = v.ty else {
            unreachable!("defaulted")
        };
        if c.block_uses.iter().any(Option::is_some) || c.grid_used.is_some() {
            c.error(
                Diagnostic::error(
                    code::BAD_FIELD,
                    "a check runs over whole tensors and has no block",
                )
                .label(expr.span, "ctx.block is not available here")
                .help("name whole tensors, e.g. Y == 0.0 || Y == X / 0.9"),
            );
        }
        let param = c.k.params.len();
        c.k.params.push(ir::Param {
            name: CHECK_OUTPUT.to_string(),
            kind: ParamKind::Tensor {
                elem,
                shape: v.shape.clone(),
                read: false,
                written: true,
            },
            span: None,
        });
        let (index, _) = c.full_slice(Place::Param(param));
        c.k.body.push(Stmt::Store {
            place: Place::Param(param),
            index,
            value: v.id,
        });
    }
    let read = c.tune_used.clone();
    let nodes = c.k.exprs.len();
    Reading {
        // Verified again after spreading (`finish` verifies the spread
        // kernel), so a bad rewrite is an internal error, never a check
        // that counts something else.
        result: c.finish_with(super::check_grid::spread),
        read,
        nodes,
    }
}

impl<'p> Checker<'p> {
    fn new(prog: &'p Program, def: &ast::KernelDef, config: &[(String, i64)]) -> Checker<'p> {
        let mut diags = Vec::new();
        let declared = tune_params(def, &mut diags);
        let tune: Vec<(DeclaredTune, i64)> = declared
            .into_iter()
            .map(|t| {
                let v = config
                    .iter()
                    .find(|(n, _)| *n == t.name)
                    .map_or(t.values[0], |(_, v)| *v);
                (t, v)
            })
            .collect();
        let mut c = Checker {
            prog,
            diags,
            k: ir::Kernel {
                name: def.name.name.clone(),
                params: Vec::new(),
                dims: Vec::new(),
                dim_align: Vec::new(),
                config: tune.iter().map(|(t, v)| (t.name.clone(), *v)).collect(),
                grid: [
                    ir::GridExpr::Const(1),
                    ir::GridExpr::Const(1),
                    ir::GridExpr::Const(1),
                ],
                locals: ir::IdVec::new(),
                exprs: ir::IdVec::new(),
                body: Vec::new(),
            },
            abs: HashMap::new(),
            scopes: vec![HashMap::new()],
            tune_used: vec![false; tune.len()],
            tune,
            iota: IotaCtx::Elsewhere,
            calls: Vec::new(),
            let_values: HashMap::new(),
            block_uses: [None; 3],
            grid_used: None,
            loop_depth: 0,
            var_depth: HashMap::new(),
        };
        for a in &def.annotations {
            if a.name.name != "autotune" && a.name.name != "grid" {
                c.error(
                    Diagnostic::error(
                        code::ANNOTATION,
                        format!("unknown annotation `@{}`", a.name.name),
                    )
                    .label(a.name.span, "not an annotation Phobos knows")
                    .help("kernels take @autotune(...) and @grid(...)"),
                );
            }
        }
        c.params(def);
        c
    }

    fn finish(self) -> Result<ir::Kernel, Vec<Diagnostic>> {
        self.finish_with(|k| k)
    }

    /// [`Checker::finish`], with `rewrite` applied to a kernel that checked
    /// before it is verified.
    fn finish_with(
        mut self,
        rewrite: impl FnOnce(ir::Kernel) -> ir::Kernel,
    ) -> Result<ir::Kernel, Vec<Diagnostic>> {
        if self.diags.is_empty() {
            // A check kernel is small: cloning it costs nothing to speak of.
            self.k = rewrite(self.k.clone());
            let errors = ir::verify(&self.k);
            if errors.is_empty() {
                return Ok(self.k);
            }
            // The checker accepted the kernel but built invalid IR: a
            // compiler bug, never a kernel that silently does something else.
            let mut d = Diagnostic::error(
                code::INTERNAL,
                format!(
                    "internal compiler error: the IR of `{}` is invalid",
                    self.k.name
                ),
            )
            .help("please report this with the source; the IR follows");
            for e in &errors {
                d = d.note(e.to_string());
            }
            Err(vec![d.note(self.k.print())])
        } else {
            self.diags.sort_by(|a, b| (a.span(), a).cmp(&(b.span(), b)));
            self.diags.dedup();
            Err(self.diags)
        }
    }

    /// Records a diagnostic; inside an expanded `fn`, also points at the call
    /// in the kernel that led there, unless the diagnostic already does.
    pub fn error(&mut self, mut d: Diagnostic) {
        if let Some((name, span)) = self.calls.first()
            && !d.labels.iter().any(|l| l.span == *span)
        {
            d = d.label(*span, format!("in this call to `{name}`"));
        }
        self.diags.push(d);
    }

    pub fn push(&mut self, kind: ExprKind, ty: Scalar, shape: Shape) -> ExprId {
        self.k.exprs.push(ir::Expr { kind, ty, shape })
    }

    pub fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned())
    }

    pub fn bind(&mut self, name: &str, b: Binding) {
        self.scopes
            .last_mut()
            .expect("there is always a scope")
            .insert(name.to_string(), b);
    }

    pub fn shape_text(&self, s: &[Dim]) -> String {
        self.k.shape_text(s)
    }

    pub fn use_tune(&mut self, i: usize) -> i64 {
        self.tune_used[i] = true;
        self.tune[i].1
    }

    pub fn tune_index(&self, name: &str) -> Option<usize> {
        self.tune.iter().position(|(t, _)| t.name == name)
    }

    fn params(&mut self, def: &ast::KernelDef) {
        for p in &def.params {
            if self.lookup(&p.name.name).is_some() {
                self.error(
                    Diagnostic::error(
                        code::DUPLICATE,
                        format!("`{}` is declared twice", p.name.name),
                    )
                    .label(p.name.span, "declared again here")
                    .help("give each parameter its own name"),
                );
                continue;
            }
            let index = self.k.params.len();
            let (kind, binding) = match &p.ty {
                TypeExpr::Scalar(t) => match self.scalar_type(t) {
                    Some(s) if s.is_half() => {
                        self.half_value(s, t.span, "a scalar parameter");
                        continue;
                    }
                    Some(s) => (ParamKind::Scalar(s), Binding::Scalar(index)),
                    None => continue,
                },
                TypeExpr::Tensor { elem, dims, .. } => {
                    let Some(elem) = self.scalar_type(elem) else {
                        continue;
                    };
                    let Some(shape) = self.tensor_dims(dims) else {
                        continue;
                    };
                    (
                        ParamKind::Tensor {
                            elem,
                            shape,
                            read: false,
                            written: false,
                        },
                        Binding::Tensor(index),
                    )
                }
                TypeExpr::Tile { span, .. } => {
                    self.error(
                        Diagnostic::error(
                            code::UNKNOWN_TYPE,
                            "a kernel parameter cannot be a tile",
                        )
                        .label(*span, "tiles live inside a kernel")
                        .help("take a tensor<T>[...] and slice it"),
                    );
                    continue;
                }
            };
            self.k.params.push(ir::Param {
                name: p.name.name.clone(),
                kind,
                span: Some(p.name.span.to(p.ty.span())),
            });
            self.bind(&p.name.name, binding);
        }
    }

    pub fn scalar_type(&mut self, t: &ast::Ident) -> Option<Scalar> {
        let s = Scalar::from_name(&t.name);
        if s.is_none() {
            self.error(
                Diagnostic::error(code::UNKNOWN_TYPE, format!("unknown type `{}`", t.name))
                    .label(t.span, "not a type")
                    .help("element types are bool, i32, u32, i64, u64, f32, f64, and f16 and bf16 for tensors"),
            );
        }
        s
    }

    /// Refuses a 16-bit float type where a value would have it: `f16` and
    /// `bf16` are storage types, which only tensors hold.
    pub fn half_value(&mut self, s: Scalar, at: Span, what: &str) {
        self.error(
            Diagnostic::error(
                code::UNKNOWN_TYPE,
                format!("{what} cannot be {s}: {s} is a storage type"),
            )
            .label(at, format!("{s} is for tensors"))
            .help(format!(
                "a load from a tensor<{s}> gives f32, arithmetic is f32, and a store to it (or `{s}(x)`) rounds to nearest even: use f32 here"
            )),
        );
    }

    /// A tensor's dims: literals and tuning parameters are constants, other
    /// names are symbolic dims bound at launch.
    fn tensor_dims(&mut self, dims: &[ast::Expr]) -> Option<Shape> {
        let mut out = Vec::new();
        for d in dims {
            if let AK::Name(n) = &d.kind
                && self.tune_index(n).is_none()
                && self.lookup(n).is_none_or(|b| matches!(b, Binding::Dim(_)))
            {
                let sym = match self.k.dims.iter().position(|x| x == n) {
                    Some(s) => s,
                    None => {
                        self.k.dims.push(n.clone());
                        self.bind(n, Binding::Dim(self.k.dims.len() - 1));
                        self.k.dims.len() - 1
                    }
                };
                out.push(Dim::Sym(sym));
                continue;
            }
            out.push(self.const_dim(d)?);
        }
        Some(out)
    }

    /// An extent known when the kernel is configured (a literal, a tuning
    /// parameter, arithmetic on them) or a symbolic dim.
    pub fn const_dim(&mut self, e: &ast::Expr) -> Option<Dim> {
        if let AK::Name(n) = &e.kind
            && let Some(Binding::Dim(s)) = self.lookup(n)
        {
            return Some(Dim::Sym(s));
        }
        let v = self.const_int(e)?;
        if v < 0 || v > u32::MAX as i128 {
            self.error(
                Diagnostic::error(code::NOT_CONSTANT, format!("extent {v} is out of range"))
                    .label(e.span, "an extent must be between 0 and 2^32 - 1")
                    .help("use a smaller tile"),
            );
            return None;
        }
        Some(Dim::Const(v as u64))
    }

    /// A compile-time integer: literals, tuning parameters, `+ - * /`.
    pub fn const_int(&mut self, e: &ast::Expr) -> Option<i128> {
        match &e.kind {
            AK::Int(v) => Some(*v),
            AK::Name(n) => {
                if let Some(i) = self.tune_index(n) {
                    return Some(self.use_tune(i) as i128);
                }
                let known = self.lookup(n).is_some();
                let d = if known {
                    Diagnostic::error(
                        code::NOT_CONSTANT,
                        format!("`{n}` is not known when the kernel is compiled"),
                    )
                    .label(e.span, "a tile extent must be a constant")
                    .help("tile extents are literals or @autotune parameters")
                } else {
                    Diagnostic::error(
                        code::UNDECLARED_TUNE_PARAM,
                        format!("`{n}` is used as a tile extent but never declared"),
                    )
                    .label(e.span, "undeclared")
                    .help(format!(
                        "declare it before the kernel: @autotune({n} in [16])"
                    ))
                };
                self.error(d);
                None
            }
            AK::Binary(op, a, b) => {
                let (a, b) = (self.const_int(a)?, self.const_int(b)?);
                use ast::BinOp::*;
                let v = match op {
                    Add => a.checked_add(b),
                    Sub => a.checked_sub(b),
                    Mul => a.checked_mul(b),
                    Div if b != 0 => Some(a / b),
                    _ => None,
                };
                if v.is_none() {
                    self.error(
                        Diagnostic::error(code::NOT_CONSTANT, "not a constant extent")
                            .label(e.span, "only + - * / of constants are allowed here")
                            .help("tile extents are literals or @autotune parameters"),
                    );
                }
                v
            }
            _ => {
                self.error(
                    Diagnostic::error(code::NOT_CONSTANT, "not a constant extent")
                        .label(e.span, "this must be known when the kernel is compiled")
                        .help("tile extents are literals or @autotune parameters"),
                );
                None
            }
        }
    }

    pub(super) fn stmt(&mut self, s: &ast::Stmt) {
        match s {
            ast::Stmt::Let { name, value, span } => {
                self.iota = IotaCtx::Let;
                let v = self.expr(value).and_then(|v| self.default_type(v));
                self.iota = IotaCtx::Elsewhere;
                let Some(v) = v else {
                    self.bind(&name.name, Binding::Poisoned);
                    return;
                };
                let Ty::S(elem) = v.ty else { return };
                self.check_tile_bound(&name.name, elem, &v.shape, value.span);
                let local =
                    self.new_local(&name.name, LocalKind::Let, elem, v.shape.clone(), *span);
                self.let_values.insert(local, v.id);
                self.hoist_reductions(v.id, *span);
                self.k.body.push(Stmt::Let { local, value: v.id });
                self.bind(&name.name, Binding::Local(local));
            }
            ast::Stmt::Var {
                name,
                ty,
                value,
                span,
            } => {
                let Some((elem, shape)) = self.var_type(ty) else {
                    self.bind(&name.name, Binding::Poisoned);
                    return;
                };
                self.check_tile_bound(&name.name, elem, &shape, ty.span());
                let Some(v) = self.assigned_value(value, elem, &shape, ty.span()) else {
                    self.bind(&name.name, Binding::Poisoned);
                    return;
                };
                let local = self.new_local(&name.name, LocalKind::Var, elem, shape, *span);
                self.var_depth.insert(local, self.loop_depth);
                self.hoist_reductions(v, *span);
                self.k.body.push(Stmt::Var { local, value: v });
                self.bind(&name.name, Binding::Local(local));
            }
            ast::Stmt::Assign { place, value, span } => {
                let Some((target, index, elem, shape)) = self.place(place) else {
                    return;
                };
                // A var declared outside the loop being checked is its
                // accumulator: say so if a value would change its type.
                let acc = match target {
                    Place::Local(l) if self.var_depth.get(&l) < Some(&self.loop_depth) => {
                        Some(self.k.locals[l].name.clone())
                    }
                    _ => None,
                };
                let Some(v) = self.assigned_value_to(value, elem, &shape, place.span, acc) else {
                    return;
                };
                if let Place::Param(i) = target
                    && let ParamKind::Tensor { written, .. } = &mut self.k.params[i].kind
                {
                    *written = true;
                }
                self.hoist_reductions(v, *span);
                self.k.body.push(Stmt::Store {
                    place: target,
                    index,
                    value: v,
                });
            }
            ast::Stmt::For {
                var,
                start,
                end,
                body,
                ..
            } => self.for_loop(var, start, end, body),
            ast::Stmt::Error(_) => {}
        }
    }

    /// Reports a `let` or `var` tile beyond [`bounds::MAX_TILE_BYTES`], so
    /// that no backend is ever asked to hold one. A symbolic dim counts as 1
    /// here; `launch::bind_shapes` checks the whole tile once dims are known.
    fn check_tile_bound(&mut self, name: &str, elem: Scalar, shape: &[Dim], at: Span) {
        let extents: Vec<u64> = shape
            .iter()
            .map(|d| match d {
                Dim::Const(v) => *v,
                Dim::Sym(_) => 1,
            })
            .collect();
        if bounds::tile_fits(elem, extents.iter().copied()) {
            return;
        }
        let elements = extents
            .iter()
            .fold(1u128, |n, e| n.saturating_mul((*e).max(1) as u128));
        let bytes = bounds::tile_bytes(elem, extents.iter().copied());
        let at_least = if shape.iter().any(|d| matches!(d, Dim::Sym(_))) {
            "at least "
        } else {
            ""
        };
        self.error(
            Diagnostic::error(
                code::TILE_TOO_LARGE,
                format!("the tile `{name}` is too large for any backend to hold"),
            )
            .label(
                at,
                format!("{at_least}{elements} {elem} elements, {bytes} bytes"),
            )
            .note(format!(
                "a `let` or `var` tile holds at most {} bytes ({} {elem} elements) on every backend",
                bounds::MAX_TILE_BYTES,
                bounds::max_tile_elements(elem)
            ))
            .help("use a smaller tile: give each block a slice of the work, or store the value straight into a tensor"),
        );
    }

    pub(super) fn new_local(
        &mut self,
        name: &str,
        kind: LocalKind,
        elem: Scalar,
        shape: Shape,
        span: Span,
    ) -> LocalId {
        self.k.locals.push(ir::Local {
            name: name.to_string(),
            kind,
            elem,
            shape,
            span: Some(span),
        })
    }

    fn var_type(&mut self, ty: &TypeExpr) -> Option<(Scalar, Shape)> {
        match ty {
            TypeExpr::Scalar(t) => {
                let s = self.scalar_type(t)?;
                if s.is_half() {
                    self.half_value(s, t.span, "a `var`");
                    return None;
                }
                Some((s, Vec::new()))
            }
            TypeExpr::Tile { elem, dims, .. } => {
                let span = elem.span;
                let elem = self.scalar_type(elem)?;
                if elem.is_half() {
                    self.half_value(elem, span, "a `var` tile");
                    return None;
                }
                let mut shape = Vec::new();
                for d in dims {
                    shape.push(self.const_dim(d)?);
                }
                Some((elem, shape))
            }
            TypeExpr::Tensor { span, .. } => {
                self.error(
                    Diagnostic::error(code::UNKNOWN_TYPE, "a `var` holds a tile, not a tensor")
                        .label(*span, "tensors are kernel parameters")
                        .help("write tile<T>[...]"),
                );
                None
            }
        }
    }

    /// Checks the value of an assignment or `var`: `iota` is a position in
    /// `shape`, the type must be `elem`, and the value must broadcast to `shape`.
    fn assigned_value(
        &mut self,
        value: &ast::Expr,
        elem: Scalar,
        shape: &Shape,
        dest: Span,
    ) -> Option<ExprId> {
        self.assigned_value_to(value, elem, shape, dest, None)
    }

    /// [`Self::assigned_value`]; `accumulator` names the var when the
    /// destination is a var declared outside the loop being checked.
    fn assigned_value_to(
        &mut self,
        value: &ast::Expr,
        elem: Scalar,
        shape: &Shape,
        dest: Span,
        accumulator: Option<String>,
    ) -> Option<ExprId> {
        self.iota = IotaCtx::Assign(shape.clone());
        let v = self.expr(value);
        self.iota = IotaCtx::Elsewhere;
        let v = v?;
        let v = match v.ty {
            Ty::S(t) if t == elem => v,
            Ty::S(t) if accumulator.is_some() => {
                let name = accumulator.unwrap_or_default();
                self.error(
                    Diagnostic::error(
                        code::ACCUMULATOR_TYPE,
                        format!("the accumulator `{name}` is {elem}; this loop would make it {t}"),
                    )
                    .label(v.span, format!("this is {t}"))
                    .label(dest, format!("`{name}` was declared {elem} before the loop"))
                    .help(format!(
                        "an accumulator keeps its declared type in every iteration: convert the value, `{elem}(...)`, or declare `{name}` as {t}"
                    )),
                );
                return None;
            }
            Ty::S(t) => {
                self.error(
                    Diagnostic::error(code::TYPE_MISMATCH, format!("cannot store {t} into {elem}"))
                        .label(v.span, format!("this is {t}"))
                        .label(dest, format!("this holds {elem}"))
                        .help(format!("convert the value: `{elem}(...)`")),
                );
                return None;
            }
            _ => self.concretize(&v, elem)?,
        };
        self.check_broadcasts_to(&v, shape, dest)?;
        Some(v.id)
    }

    /// Resolves the left side of an assignment.
    fn place(&mut self, e: &ast::Expr) -> Option<(Place, Vec<Index>, Scalar, Shape)> {
        let (base, args): (&ast::Expr, Option<&[SliceArg]>) = match &e.kind {
            AK::Index(base, args) => (base, Some(args)),
            _ => (e, None),
        };
        let AK::Name(name) = &base.kind else {
            self.error(
                Diagnostic::error(code::NOT_A_PLACE, "this cannot be assigned to")
                    .label(e.span, "not a tensor or a var")
                    .help("assign to a tensor slice such as Y[r :+ R, :] or to a var"),
            );
            return None;
        };
        let place = match self.lookup(name) {
            Some(Binding::Tensor(i)) => Place::Param(i),
            Some(Binding::Local(l)) if self.k.locals[l].kind == LocalKind::Var => Place::Local(l),
            Some(Binding::Local(l)) if self.k.locals[l].kind == LocalKind::Loop => {
                self.error(
                    Diagnostic::error(
                        code::STORE_TO_INPUT,
                        format!("`{name}` is a loop variable and cannot be assigned"),
                    )
                    .label(base.span, "set by its `for` loop")
                    .help("keep your own count in a `var` declared before the loop"),
                );
                return None;
            }
            Some(Binding::Local(_)) => {
                self.error(
                    Diagnostic::error(
                        code::STORE_TO_INPUT,
                        format!("`{name}` is a `let` binding and cannot be assigned"),
                    )
                    .label(base.span, "bound by let")
                    .help(format!(
                        "declare it with `var {name}: tile<...>[...] = ...` to assign to it"
                    )),
                );
                return None;
            }
            Some(Binding::Poisoned) => return None,
            Some(Binding::Scalar(_) | Binding::Dim(_) | Binding::Arg(_)) => {
                self.error(
                    Diagnostic::error(
                        code::STORE_TO_INPUT,
                        format!("cannot store to the input `{name}`"),
                    )
                    .label(base.span, "a scalar input of the kernel")
                    .help("kernels write results into tensor parameters"),
                );
                return None;
            }
            None if self.tune_index(name).is_some() => {
                self.error(
                    Diagnostic::error(
                        code::STORE_TO_INPUT,
                        format!("cannot store to the tuning parameter `{name}`"),
                    )
                    .label(base.span, "a compile-time constant")
                    .help("kernels write results into tensor parameters"),
                );
                return None;
            }
            None => {
                self.unknown_name(name, base.span);
                return None;
            }
        };
        let (index, shape) = match args {
            Some(args) => self.slice(place, args, base.span)?,
            None => self.full_slice(place),
        };
        // A 16-bit tensor takes f32 values, rounded on store.
        let elem = self.place_elem(place).value_type();
        Some((place, index, elem, shape))
    }

    pub fn place_elem(&self, place: Place) -> Scalar {
        self.k.place_elem(place)
    }

    pub fn place_shape(&self, place: Place) -> Shape {
        self.k.place_shape(place)
    }

    pub fn full_slice(&self, place: Place) -> (Vec<Index>, Shape) {
        let shape = self.place_shape(place);
        let index = shape
            .iter()
            .map(|d| Index::Range {
                start: None,
                len: *d,
            })
            .collect();
        (index, shape)
    }

    /// Checks the indices of a slice of `place`; returns them and the shape
    /// of the slice.
    pub fn slice(
        &mut self,
        place: Place,
        args: &[SliceArg],
        at: Span,
    ) -> Option<(Vec<Index>, Shape)> {
        let dims = self.place_shape(place);
        if dims.len() != args.len() {
            let what = match place {
                Place::Param(i) => self.k.params[i].name.clone(),
                Place::Local(l) => self.k.locals[l].name.clone(),
            };
            self.error(
                Diagnostic::error(
                    code::RANK,
                    format!(
                        "`{what}` has {} axes but {} indices were given",
                        dims.len(),
                        args.len()
                    ),
                )
                .label(at, format!("shape {}", self.shape_text(&dims)))
                .help("give one index per axis: `:` for a whole axis, `a :+ n` for a range"),
            );
            return None;
        }
        let saved = std::mem::replace(&mut self.iota, IotaCtx::Elsewhere);
        let mut index = Vec::new();
        let mut shape = Vec::new();
        let mut ok = true;
        for (arg, dim) in args.iter().zip(&dims) {
            match arg {
                SliceArg::Full(_) => {
                    index.push(Index::Range {
                        start: None,
                        len: *dim,
                    });
                    shape.push(*dim);
                }
                SliceArg::Range { start, len } => {
                    let s = self.index_expr(start);
                    let l = self.const_dim(len);
                    match (s, l) {
                        (Some(s), Some(l)) => {
                            self.check_bounds(&s, l, *dim, start.span.to(len.span));
                            index.push(Index::Range {
                                start: Some(s.id),
                                len: l,
                            });
                            shape.push(l);
                        }
                        _ => ok = false,
                    }
                }
                SliceArg::Index(i) => match self.index_expr(i) {
                    Some(s) => {
                        self.check_bounds(&s, Dim::Const(1), *dim, i.span);
                        index.push(Index::Single(s.id));
                    }
                    None => ok = false,
                },
            }
        }
        self.iota = saved;
        ok.then_some((index, shape))
    }

    fn index_expr(&mut self, e: &ast::Expr) -> Option<Val> {
        let v = self.expr(e)?;
        if !v.shape.is_empty() {
            self.error(
                Diagnostic::error(code::SHAPE_MISMATCH, "a slice start must be a scalar")
                    .label(
                        v.span,
                        format!("this has shape {}", self.shape_text(&v.shape)),
                    )
                    .help("index with a scalar such as ctx.block.x * R"),
            );
            return None;
        }
        if !v.ty.is_int() {
            self.error(
                Diagnostic::error(
                    code::TYPE_MISMATCH,
                    format!("a slice start must be an integer, not {}", v.ty.name()),
                )
                .label(v.span, "not an integer")
                .help("convert it: `i32(...)`"),
            );
            return None;
        }
        self.default_type(v)
    }

    /// Reports a slice that certainly falls outside its tensor.
    fn check_bounds(&mut self, start: &Val, len: Dim, dim: Dim, at: Span) {
        let (Some(s), Dim::Const(l), Dim::Const(d)) = (self.const_value(start.id), len, dim) else {
            return;
        };
        if s < 0 || s + l as i128 > d as i128 {
            self.error(
                Diagnostic::error(
                    code::SLICE_OUT_OF_BOUNDS,
                    format!("the slice {s} :+ {l} falls outside an axis of extent {d}"),
                )
                .label(at, format!("covers {s} .. {}", s + l as i128))
                .help(format!("positions on this axis are 0 .. {d}")),
            );
        }
    }
}
