//! Diagnostics as Python exceptions: `phobos.CompileError` carries the text
//! the CLI prints (rendered once, by `phobos_core::render`, without colour)
//! and each diagnostic as a dict of its code, message and spans.

use phobos_core::diag::Severity;
use phobos_core::span::{SourceMap, Span};
use phobos_core::{Diagnostic, render};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

create_exception!(
    phobos,
    CompileError,
    PyException,
    "A kernel that does not compile. `str(e)` is the diagnostic as `phobosc check` prints it; `e.diagnostics` lists each one as a dict (code, severity, message, file, line, column, start, end, labels, notes, help)."
);

/// The `CompileError` of `diags`, with `rendered` and `diagnostics` set.
pub fn compile_error(py: Python<'_>, diags: &[Diagnostic], sources: &SourceMap) -> PyErr {
    let rendered = render(diags, sources, false);
    let err = CompileError::new_err(rendered.clone());
    let structured = || -> PyResult<()> {
        let list = PyList::empty(py);
        for d in diags {
            list.append(diagnostic(py, d, sources)?)?;
        }
        let value = err.value(py);
        value.setattr("rendered", rendered)?;
        value.setattr("diagnostics", list)?;
        Ok(())
    };
    match structured() {
        Ok(()) => err,
        Err(e) => e,
    }
}

fn diagnostic<'py>(
    py: Python<'py>,
    d: &Diagnostic,
    sources: &SourceMap,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("code", d.code)?;
    out.set_item(
        "severity",
        match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        },
    )?;
    out.set_item("message", &d.message)?;
    // The primary span's place, flat, for the common case.
    let at = d.span().map(|s| place(py, s, sources)).transpose()?;
    for key in ["file", "line", "column", "start", "end"] {
        out.set_item(key, at.as_ref().map(|p| p.get_item(key)).transpose()?)?;
    }
    let labels = PyList::empty(py);
    for l in &d.labels {
        let p = place(py, l.span, sources)?;
        p.set_item("message", &l.message)?;
        labels.append(p)?;
    }
    out.set_item("labels", labels)?;
    out.set_item("notes", &d.notes)?;
    out.set_item("help", &d.help)?;
    Ok(out)
}

/// A span's file, 1-based line and column (in characters), and byte range.
fn place<'py>(py: Python<'py>, span: Span, sources: &SourceMap) -> PyResult<Bound<'py, PyDict>> {
    let text = sources.text(span.src);
    let lo = (span.lo as usize).min(text.len());
    let before = text.get(..lo).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    let out = PyDict::new(py);
    out.set_item("file", sources.name(span.src))?;
    out.set_item("line", line)?;
    out.set_item("column", column)?;
    out.set_item("start", span.lo)?;
    out.set_item("end", span.hi)?;
    Ok(out)
}
