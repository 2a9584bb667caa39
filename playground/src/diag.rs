//! Diagnostics as data for the page: each `phobos_core::Diagnostic` as JSON,
//! its spans given both as UTF-16 offsets into the user's source (what the
//! editor counts in) and as line and column, plus the text the one renderer
//! (`phobos_core::render`, no colour) makes of it.

use crate::SOURCE_NAME;
use phobos_core::diag::Severity;
use phobos_core::ir::ParamKind;
use phobos_core::span::{SourceMap, Span};
use phobos_core::types::Dim;
use phobos_core::{Diagnostic, Program, render};
use serde_json::{Value as Json, json};

/// `check { source }`: parses and checks everything, and describes each
/// kernel that checks in its first configuration.
pub fn check(source: &str) -> Json {
    let (program, mut diags) = Program::parse(SOURCE_NAME, source);
    diags.extend(program.check());
    let kernels: Vec<Json> = program
        .kernel_names()
        .into_iter()
        .map(|name| describe(&program, name))
        .collect();
    json!({
        "ok": diags.iter().all(|d| d.severity != Severity::Error),
        "diagnostics": to_json(&diags, &program),
        "kernels": kernels,
    })
}

/// A kernel's parameters, dims and tuning space, for the page's launch
/// form. `params` is empty when the kernel does not check.
fn describe(program: &Program, name: &str) -> Json {
    let tune: Vec<Json> = program
        .tune_space(name)
        .into_iter()
        .map(|p| json!({ "name": p.name, "values": p.values }))
        .collect();
    let (params, dims) = match program.kernel(name, &[]) {
        Ok(k) => {
            let params: Vec<Json> = k
                .params
                .iter()
                .map(|p| match &p.kind {
                    ParamKind::Tensor {
                        elem,
                        shape,
                        read,
                        written,
                    } => json!({
                        "name": p.name,
                        "kind": "tensor",
                        "elem": elem.name(),
                        "shape": shape.iter().map(|d| match d {
                            Dim::Const(v) => v.to_string(),
                            Dim::Sym(s) => k.dims[*s].clone(),
                        }).collect::<Vec<_>>(),
                        "read": read,
                        "written": written,
                    }),
                    ParamKind::Scalar(s) => json!({
                        "name": p.name,
                        "kind": "scalar",
                        "elem": s.name(),
                    }),
                })
                .collect();
            (params, k.dims.clone())
        }
        Err(_) => (Vec::new(), Vec::new()),
    };
    json!({ "name": name, "params": params, "dims": dims, "tune": tune })
}

/// Diagnostics as JSON, in the order given.
pub fn to_json(diags: &[Diagnostic], program: &Program) -> Vec<Json> {
    diags
        .iter()
        .map(|d| {
            json!({
                "severity": match d.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                },
                "code": d.code,
                "message": d.message,
                "labels": d.labels.iter().map(|l| label(l.span, &l.message, program)).collect::<Vec<_>>(),
                "notes": d.notes,
                "help": d.help,
                "rendered": render(std::slice::from_ref(d), &program.sources, false),
            })
        })
        .collect()
}

fn label(span: Span, message: &str, program: &Program) -> Json {
    let sources: &SourceMap = &program.sources;
    let text = sources.text(span.src);
    let (lo, hi) = (span.lo as usize, span.hi as usize);
    let (line, col) = line_col(text, lo);
    json!({
        "file": sources.name(span.src),
        "user": span.src == program.user,
        "from": utf16_offset(text, lo),
        "to": utf16_offset(text, hi.max(lo)),
        "line": line,
        "col": col,
        "message": message,
    })
}

/// The UTF-16 offset of byte `at` (clamped to the text, and back to a
/// character boundary).
pub fn utf16_offset(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text[..at].encode_utf16().count()
}

/// 1-based line and column (in characters) of byte `at`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit_once('\n')
        .map_or(before, |(_, l)| l)
        .chars()
        .count()
        + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_utf16_units() {
        let s = "é𝄞x";
        assert_eq!(utf16_offset(s, 0), 0);
        assert_eq!(utf16_offset(s, 2), 1);
        assert_eq!(utf16_offset(s, 6), 3);
        // Inside a character: back to its start; past the end: the end.
        assert_eq!(utf16_offset(s, 3), 1);
        assert_eq!(utf16_offset(s, 99), 4);
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
    }
}
