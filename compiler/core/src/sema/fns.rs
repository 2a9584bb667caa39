//! Checks on `fn` definitions as a whole: duplicates and recursion.

use super::Program;
use crate::diag::{Diagnostic, code};
use crate::span::{SourceMap, Span};
use crate::syntax::ast::{self, ExprKind as AK};
use std::collections::{BTreeMap, BTreeSet};

pub fn duplicate_fn(f: &ast::FnDef, prev: &ast::FnDef, sources: &SourceMap) -> Diagnostic {
    Diagnostic::error(
        code::DUPLICATE,
        format!("`{}` is defined twice", f.name.name),
    )
    .label(f.name.span, "defined again here")
    .label(
        prev.name.span,
        format!(
            "first defined here, in {}",
            sources.name(prev.name.span.src)
        ),
    )
    .help("rename one of them")
}

pub fn check_duplicate_kernels(prog: &Program) -> Vec<Diagnostic> {
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    let mut out = Vec::new();
    for k in &prog.file.kernels {
        if let Some(prev) = seen.insert(&k.name.name, k.name.span) {
            out.push(
                Diagnostic::error(
                    code::DUPLICATE,
                    format!("kernel `{}` is defined twice", k.name.name),
                )
                .label(k.name.span, "defined again here")
                .label(prev, "first defined here")
                .help("rename one of them"),
            );
        }
    }
    out
}

/// Reports each cycle of `fn` calls once, at a call inside the cycle.
pub fn check_recursion(prog: &Program) -> Vec<Diagnostic> {
    let mut calls: BTreeMap<&str, Vec<(&str, Span)>> = BTreeMap::new();
    for (name, f) in &prog.fns {
        let mut out = Vec::new();
        collect_calls(&f.body, &mut out);
        calls.insert(
            name.as_str(),
            out.into_iter()
                .filter(|(n, _)| prog.fns.contains_key(*n))
                .collect(),
        );
    }
    let mut diags = Vec::new();
    let mut reported: BTreeSet<Vec<&str>> = BTreeSet::new();
    for start in calls.keys() {
        let mut path = vec![*start];
        find_cycles(start, &calls, &mut path, &mut |cycle, span| {
            let mut key: Vec<&str> = cycle.to_vec();
            key.sort();
            if reported.insert(key) {
                diags.push(
                    Diagnostic::error(code::RECURSION, format!("`{}` is recursive", cycle[0]))
                        .label(span, "this call closes the cycle")
                        .note(format!(
                            "call chain: {} -> {}",
                            cycle.join(" -> "),
                            cycle[0]
                        ))
                        .help("fns are expanded inline and cannot recurse; unroll the computation"),
                );
            }
        });
    }
    diags
}

fn find_cycles<'a>(
    at: &'a str,
    calls: &BTreeMap<&'a str, Vec<(&'a str, Span)>>,
    path: &mut Vec<&'a str>,
    report: &mut dyn FnMut(&[&'a str], Span),
) {
    for (callee, span) in calls.get(at).into_iter().flatten() {
        if *callee == path[0] {
            report(path, *span);
        } else if !path.contains(callee) && path.len() < 32 {
            path.push(callee);
            find_cycles(callee, calls, path, report);
            path.pop();
        }
    }
}

fn collect_calls<'a>(e: &'a ast::Expr, out: &mut Vec<(&'a str, Span)>) {
    match &e.kind {
        AK::Call(f, args) => {
            out.push((f.name.as_str(), f.span));
            args.iter().for_each(|a| collect_calls(a, out));
        }
        AK::Unary(_, a) | AK::Bitcast(_, a) | AK::Field(a, _) | AK::Keyword(_, a) => {
            collect_calls(a, out)
        }
        AK::Binary(_, a, b) => {
            collect_calls(a, out);
            collect_calls(b, out);
        }
        AK::Index(a, args) => {
            collect_calls(a, out);
            for s in args {
                match s {
                    ast::SliceArg::Full(_) => {}
                    ast::SliceArg::Range { start, len } => {
                        collect_calls(start, out);
                        collect_calls(len, out);
                    }
                    ast::SliceArg::Index(i) => collect_calls(i, out),
                }
            }
        }
        AK::Int(_) | AK::Float(_) | AK::Bool(_) | AK::Name(_) | AK::Error => {}
    }
}
