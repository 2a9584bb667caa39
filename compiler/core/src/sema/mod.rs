//! Semantic checking: names, types, shapes, slices, the grid, and the tuning
//! space. The entry points take a parsed [`Program`] and either report
//! diagnostics or produce an [`ir::Kernel`](crate::ir::Kernel) for one
//! configuration.

mod check;
mod check_grid;
mod dot;
mod expr;
mod fns;
mod grid;
mod literal;
mod loops;
mod reduce;
mod space;

use std::collections::HashMap;

use crate::diag::{Diagnostic, code};
use crate::ir;
use crate::span::{SourceMap, SrcId};
use crate::syntax::{self, ast};

pub use check::{CHECK_OUTPUT, check_expr_kernel, check_kernel};
pub use literal::broadcast_shapes;

/// A user file together with the stdlib prelude, parsed.
#[derive(Clone, Debug)]
pub struct Program {
    pub sources: SourceMap,
    pub user: SrcId,
    pub file: ast::File,
    /// Every `fn` visible to kernels: the prelude's and the user's.
    pub fns: HashMap<String, ast::FnDef>,
    /// The `// check NAME: EXPR` lines of the user's file.
    pub checks: Vec<Check>,
    /// The recursion among `fns`, found once: `check` and every `kernel`
    /// call report it, and the checker expands no `fn` of a cycle.
    recursion: std::sync::OnceLock<fns::Recursion>,
}

/// A `// check NAME: EXPR` line: a property of the kernel after it, written
/// as an expression over its whole tensors. `phobosc run` evaluates it after
/// the kernel and reports for how many elements it holds.
#[derive(Clone, Debug)]
pub struct Check {
    pub name: String,
    /// The kernel the line is before.
    pub kernel: String,
    pub expr: ast::Expr,
}

/// One `@autotune` parameter and its candidate values.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneParam {
    pub name: String,
    pub values: Vec<i64>,
}

impl Program {
    /// Parses `text` (shown as `name`) after the stdlib. The diagnostics are
    /// the syntax errors and duplicate definitions; call [`Program::check`]
    /// for the rest.
    pub fn parse(name: &str, text: &str) -> (Program, Vec<Diagnostic>) {
        let (mut sources, mut fns, mut diags) = prelude().clone();
        let user = sources.add(name, text);
        let (file, d) = syntax::parse(user, text);
        diags.extend(d);
        for f in &file.fns {
            if let Some(prev) = fns.get(&f.name.name) {
                diags.push(fns::duplicate_fn(f, prev, &sources));
            } else if expr::is_builtin(&f.name.name) {
                diags.push(
                    Diagnostic::error(
                        code::DUPLICATE,
                        format!("`{}` is a builtin and cannot be redefined", f.name.name),
                    )
                    .label(f.name.span, "this name is taken by a builtin")
                    .help("choose another name"),
                );
            } else {
                fns.insert(f.name.name.clone(), f.clone());
            }
        }
        let checks = read_checks(user, text, &file, &mut diags);
        let prog = Program {
            sources,
            user,
            file,
            fns,
            checks,
            recursion: std::sync::OnceLock::new(),
        };
        (prog, diags)
    }

    /// Each group of mutually recursive `fn`s, reported once
    /// (`fns::check_recursion`), computed on first use.
    fn recursion(&self) -> &[Diagnostic] {
        &self
            .recursion
            .get_or_init(|| fns::check_recursion(self))
            .diags
    }

    /// Whether `name` is a `fn` on a cycle of calls. The checker does not
    /// expand such a call: expanding a group of `fn`s that all call each
    /// other, stopping only where a name repeats, visits every ordering of
    /// the group.
    pub(crate) fn is_recursive(&self, name: &str) -> bool {
        self.recursion
            .get_or_init(|| fns::check_recursion(self))
            .fns
            .contains(name)
    }

    /// The check lines that apply to a kernel.
    pub fn checks_for(&self, kernel: &str) -> Vec<&Check> {
        self.checks.iter().filter(|c| c.kernel == kernel).collect()
    }

    /// The kernel that evaluates a check after `kernel` ran in `config`.
    pub fn check_kernel(
        &self,
        kernel: &str,
        config: &[(String, i64)],
        check: &Check,
    ) -> Result<ir::Kernel, Vec<Diagnostic>> {
        let k = self
            .kernel_def(kernel)
            .expect("checks belong to existing kernels");
        check_expr_kernel(self, k, config, &check.expr)
    }

    pub fn kernel_names(&self) -> Vec<&str> {
        self.file
            .kernels
            .iter()
            .map(|k| k.name.name.as_str())
            .collect()
    }

    pub fn kernel_def(&self, name: &str) -> Option<&ast::KernelDef> {
        self.file.kernels.iter().find(|k| k.name.name == name)
    }

    /// The `@autotune` space of a kernel, in declaration order. Malformed
    /// declarations are skipped here and reported by `check`.
    pub fn tune_space(&self, kernel: &str) -> Vec<TuneParam> {
        self.kernel_def(kernel)
            .map(|k| check::tune_params(k, &mut Vec::new()))
            .unwrap_or_default()
            .into_iter()
            .map(|t| TuneParam {
                name: t.name,
                values: t.values,
            })
            .collect()
    }

    /// Every configuration of a kernel's tuning space (one empty one when it
    /// has none), in order, first value first. Empty when the space has more
    /// than [`MAX_TUNE_CONFIGS`](crate::bounds::MAX_TUNE_CONFIGS)
    /// configurations: such a space is never enumerated, and `check` and
    /// `kernel` report it (`E0124`).
    pub fn configs(&self, kernel: &str) -> Vec<Vec<(String, i64)>> {
        let Some(k) = self.kernel_def(kernel) else {
            return vec![Vec::new()];
        };
        let params = check::tune_params(k, &mut Vec::new());
        if space::over_bound(k, &params).is_some() {
            return Vec::new();
        }
        space::Configs::new(&params)
            .map(|values| space::named(&params, &values))
            .collect()
    }

    /// Checks everything: fn definitions, and each kernel in each
    /// configuration of its tuning space (`space.rs`: each distinct result
    /// once, and no space over the bound). Returns the diagnostics, sorted.
    pub fn check(&self) -> Vec<Diagnostic> {
        let mut diags = self.recursion().to_vec();
        diags.extend(fns::check_duplicate_kernels(self));
        for k in &self.file.kernels {
            diags.extend(space::check_all(self, k));
        }
        diags.sort_by(|a, b| (a.span(), a).cmp(&(b.span(), b)));
        diags.dedup();
        diags
    }

    /// The checked kernel for one configuration. Tuning parameters left out of
    /// `config` take their first value.
    pub fn kernel(
        &self,
        name: &str,
        config: &[(String, i64)],
    ) -> Result<ir::Kernel, Vec<Diagnostic>> {
        let Some(k) = self.kernel_def(name) else {
            let names = self.kernel_names().join(", ");
            return Err(vec![
                Diagnostic::error(code::NO_KERNEL, format!("no kernel named `{name}`")).help(
                    if names.is_empty() {
                        "this file defines no kernel".to_string()
                    } else {
                        format!("kernels here: {names}")
                    },
                ),
            ]);
        };
        let declared = check::tune_params(k, &mut Vec::new());
        if let Some(d) = space::over_bound(k, &declared) {
            return Err(vec![d]);
        }
        let mut full = Vec::new();
        for p in self.tune_space(name) {
            let v = config
                .iter()
                .find(|(n, _)| *n == p.name)
                .map(|(_, v)| *v)
                .unwrap_or(p.values[0]);
            if !p.values.contains(&v) {
                let listed: Vec<String> = p.values.iter().map(|v| v.to_string()).collect();
                return Err(vec![
                    Diagnostic::error(
                        code::UNDECLARED_TUNE_PARAM,
                        format!("{}={v} is not one of the values @autotune declares", p.name),
                    )
                    .label(k.name.span, "this kernel")
                    .help(format!(
                        "choose one of {}, or add {v} to the @autotune list",
                        listed.join(", ")
                    )),
                ]);
            }
            full.push((p.name, v));
        }
        for (n, _) in config {
            if !full.iter().any(|(m, _)| m == n) {
                return Err(vec![
                    Diagnostic::error(
                        code::UNDECLARED_TUNE_PARAM,
                        format!("`{n}` is not a tuning parameter of `{name}`"),
                    )
                    .label(k.name.span, "this kernel")
                    .help("declare it with @autotune or remove the setting"),
                ]);
            }
        }
        let mut diags = self.recursion().to_vec();
        match check_kernel(self, k, &full) {
            Ok(kernel) if diags.is_empty() => Ok(kernel),
            Ok(_) => Err(diags),
            Err(d) => {
                diags.extend(d);
                diags.sort_by(|a, b| (a.span(), a).cmp(&(b.span(), b)));
                diags.dedup();
                Err(diags)
            }
        }
    }
}

/// The stdlib, parsed once per process: its sources, its fns, and its
/// diagnostics (none, which a test checks).
fn prelude() -> &'static (SourceMap, HashMap<String, ast::FnDef>, Vec<Diagnostic>) {
    static PRELUDE: std::sync::OnceLock<(SourceMap, HashMap<String, ast::FnDef>, Vec<Diagnostic>)> =
        std::sync::OnceLock::new();
    PRELUDE.get_or_init(|| {
        let mut sources = SourceMap::new();
        let mut diags = Vec::new();
        let mut fns = HashMap::new();
        for (path, src) in phobos_stdlib::FILES {
            let id = sources.add(*path, *src);
            let (file, d) = syntax::parse(id, src);
            diags.extend(d);
            for f in file.fns {
                fns.insert(f.name.name.clone(), f);
            }
        }
        (sources, fns, diags)
    })
}

/// Finds the `// check NAME: EXPR` lines and the kernel each one precedes.
fn read_checks(
    src: SrcId,
    text: &str,
    file: &ast::File,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Check> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_start();
        let Some(rest) = trimmed.strip_prefix("// check ") else {
            continue;
        };
        let Some((name, expr)) = rest.split_once(':') else {
            continue;
        };
        let expr_at = start + (line.len() - trimmed.len()) + "// check ".len() + name.len() + 1;
        let expr_text = expr.trim_end_matches(['\n', '\r']);
        let Some(kernel) = file
            .kernels
            .iter()
            .filter(|k| k.span.lo as usize > start)
            .min_by_key(|k| k.span.lo)
        else {
            diags.push(
                Diagnostic::error(code::NO_KERNEL, "a check line must come before a kernel")
                    .label(
                        crate::span::Span::new(src, start, offset),
                        "no kernel follows",
                    )
                    .help("move it above the kernel it checks"),
            );
            continue;
        };
        match syntax::parse_expr(src, expr_text, expr_at) {
            Ok(expr) => out.push(Check {
                name: name.trim().to_string(),
                kernel: kernel.name.name.clone(),
                expr,
            }),
            Err(d) => diags.extend(d),
        }
    }
    out
}
