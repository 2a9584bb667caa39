//! A plain-text form of the syntax tree, one item per paragraph, for parse
//! snapshots: stable, readable, and free of spans.

use super::ast::*;
use std::fmt::Write;

/// Prints a parsed file as nested S-expressions.
pub fn print_file(file: &File) -> String {
    let mut out = String::new();
    for f in &file.fns {
        let params: Vec<String> = f.params.iter().map(fn_param).collect();
        let _ = writeln!(
            out,
            "(fn {} ({}) {})",
            f.name.name,
            params.join(" "),
            expr(&f.body)
        );
    }
    for k in &file.kernels {
        for a in &k.annotations {
            let args: Vec<String> = a.args.iter().map(ann_arg).collect();
            let _ = writeln!(out, "(@{} {})", a.name.name, args.join(" "));
        }
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| format!("({} {})", p.name.name, ty(&p.ty)))
            .collect();
        let _ = writeln!(out, "(kernel {} ({})", k.name.name, params.join(" "));
        for s in &k.body {
            let _ = writeln!(out, "  {}", stmt(s));
        }
        out.push_str(")\n");
    }
    out
}

fn fn_param(p: &FnParam) -> String {
    match &p.ty {
        Some(t) => format!("({} {})", p.name.name, ty(t)),
        None => p.name.name.clone(),
    }
}

fn ann_arg(a: &AnnArg) -> String {
    match a {
        AnnArg::Choice { name, values } => format!("({} in {})", name.name, list(values)),
        AnnArg::Expr(e) => expr(e),
    }
}

fn list(es: &[Expr]) -> String {
    let v: Vec<String> = es.iter().map(expr).collect();
    format!("[{}]", v.join(" "))
}

fn ty(t: &TypeExpr) -> String {
    match t {
        TypeExpr::Scalar(id) => id.name.clone(),
        TypeExpr::Tensor { elem, dims, .. } => format!("tensor<{}>{}", elem.name, list(dims)),
        TypeExpr::Tile { elem, dims, .. } => format!("tile<{}>{}", elem.name, list(dims)),
    }
}

fn stmt(s: &Stmt) -> String {
    match s {
        Stmt::Let { name, value, .. } => format!("(let {} {})", name.name, expr(value)),
        Stmt::Var {
            name, ty: t, value, ..
        } => format!("(var {} {} {})", name.name, ty(t), expr(value)),
        Stmt::Assign { place, value, .. } => format!("(= {} {})", expr(place), expr(value)),
        Stmt::For {
            var,
            start,
            end,
            body,
            ..
        } => {
            let body: Vec<String> = body.iter().map(stmt).collect();
            format!(
                "(for {} {} {} {})",
                var.name,
                expr(start),
                expr(end),
                body.join(" ")
            )
        }
        Stmt::Error(_) => "(error)".to_string(),
    }
}

fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(s) => s.clone(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Name(n) => n.clone(),
        ExprKind::Unary(op, a) => format!("({} {})", op.symbol(), expr(a)),
        ExprKind::Binary(op, a, b) => format!("({} {} {})", op.symbol(), expr(a), expr(b)),
        ExprKind::Call(f, args) => {
            let v: Vec<String> = args.iter().map(expr).collect();
            if v.is_empty() {
                format!("({})", f.name)
            } else {
                format!("({} {})", f.name, v.join(" "))
            }
        }
        ExprKind::Bitcast(t, a) => format!("(bitcast<{}> {})", t.name, expr(a)),
        ExprKind::Field(a, f) => format!("{}.{}", expr(a), f.name),
        ExprKind::Index(a, args) => {
            let v: Vec<String> = args
                .iter()
                .map(|s| match s {
                    SliceArg::Full(_) => ":".to_string(),
                    SliceArg::Range { start, len } => format!("({} :+ {})", expr(start), expr(len)),
                    SliceArg::Index(i) => expr(i),
                })
                .collect();
            format!("{}[{}]", expr(a), v.join(", "))
        }
        ExprKind::Keyword(n, a) => format!("{}={}", n.name, expr(a)),
        ExprKind::Error => "(error)".to_string(),
    }
}
