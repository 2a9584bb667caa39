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

/// The recursion among a program's `fn`s.
#[derive(Clone, Debug, Default)]
pub struct Recursion {
    /// One diagnostic per group of mutually recursive `fn`s.
    pub diags: Vec<Diagnostic>,
    /// Every `fn` on a cycle.
    pub fns: BTreeSet<String>,
}

/// Reports recursion once per group of mutually recursive `fn`s (a strongly
/// connected component of the call graph), at a call that closes the
/// shortest cycle through the group's first `fn` by name. Linear in the
/// size of the call graph: enumerating every cycle instead took time
/// exponential in the number of `fn`s (ten that all call each other took
/// 17 s and gave 1013 diagnostics).
pub fn check_recursion(prog: &Program) -> Recursion {
    let mut names: Vec<&str> = prog.fns.keys().map(String::as_str).collect();
    names.sort_unstable();
    let index = |n: &str| names.binary_search(&n).ok();
    let calls: Vec<Vec<(usize, Span)>> = names
        .iter()
        .map(|name| {
            let mut out = Vec::new();
            collect_calls(&prog.fns[*name].body, &mut out);
            out.into_iter()
                .filter_map(|(n, span)| Some((index(n)?, span)))
                .collect()
        })
        .collect();
    let component = components(&calls);
    let mut diags = Vec::new();
    let mut on_cycle = BTreeSet::new();
    let mut reported = vec![false; names.len()];
    for start in 0..names.len() {
        let c = component[start];
        if reported[c] {
            continue;
        }
        reported[c] = true;
        if let Some((cycle, span)) = shortest_cycle(start, &calls, &component) {
            on_cycle.extend(
                (0..names.len())
                    .filter(|&i| component[i] == c)
                    .map(|i| names[i].to_string()),
            );
            let cycle: Vec<&str> = cycle.into_iter().map(|i| names[i]).collect();
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
    }
    Recursion {
        diags,
        fns: on_cycle,
    }
}

/// The strongly connected component of each node (Kosaraju's algorithm,
/// without recursion, so that a long chain of `fn`s cannot overflow the
/// stack). Components are numbered by their first node.
fn components(calls: &[Vec<(usize, Span)>]) -> Vec<usize> {
    let n = calls.len();
    // Post-order of a depth-first search of the call graph.
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for root in 0..n {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        let mut stack = vec![(root, 0)];
        while let Some((node, next)) = stack.last_mut() {
            if let Some(&(callee, _)) = calls[*node].get(*next) {
                *next += 1;
                if !seen[callee] {
                    seen[callee] = true;
                    stack.push((callee, 0));
                }
            } else {
                order.push(*node);
                stack.pop();
            }
        }
    }
    let mut callers = vec![Vec::new(); n];
    for (caller, out) in calls.iter().enumerate() {
        for &(callee, _) in out {
            callers[callee].push(caller);
        }
    }
    // Each component is what reaches its first node in reverse post-order.
    let mut component = vec![usize::MAX; n];
    for &root in order.iter().rev() {
        if component[root] != usize::MAX {
            continue;
        }
        let mut members = vec![root];
        component[root] = root;
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            for &caller in &callers[node] {
                if component[caller] == usize::MAX {
                    component[caller] = root;
                    members.push(caller);
                    stack.push(caller);
                }
            }
        }
        let first = *members.iter().min().expect("a component has its root");
        for m in members {
            component[m] = first;
        }
    }
    component
}

/// The shortest cycle from `start` back to it within its component (by
/// breadth-first search, calls in source order), and the call that closes
/// it; `None` when `start` is on no cycle.
fn shortest_cycle(
    start: usize,
    calls: &[Vec<(usize, Span)>],
    component: &[usize],
) -> Option<(Vec<usize>, Span)> {
    let mut parent: Vec<Option<usize>> = vec![None; calls.len()];
    let mut queue = std::collections::VecDeque::from([start]);
    let mut visited = vec![false; calls.len()];
    visited[start] = true;
    while let Some(node) = queue.pop_front() {
        for &(callee, span) in &calls[node] {
            if callee == start {
                let mut cycle = vec![node];
                while let Some(p) = parent[*cycle.last().expect("not empty")] {
                    cycle.push(p);
                }
                cycle.reverse();
                return Some((cycle, span));
            }
            if component[callee] == component[start] && !visited[callee] {
                visited[callee] = true;
                parent[callee] = Some(node);
                queue.push_back(callee);
            }
        }
    }
    None
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
