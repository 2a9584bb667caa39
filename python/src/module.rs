//! `phobos.compile`'s result: a parsed and checked source file whose
//! kernels are attributes (`module.dropout_rows`).

use crate::errors::compile_error;
use crate::kernel::Kernel;
use phobos_core::Program;
use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// A compiled Phobos source: its kernels are attributes (`mod.NAME`), and
/// `mod.kernels` maps each name to its kernel.
#[pyclass(frozen, module = "phobos")]
pub struct Module {
    name: String,
    kernels: Vec<(String, Py<Kernel>)>,
}

/// Parses and checks `text` (named `name` in diagnostics) as `phobosc
/// check` does, and checks every kernel in its first configuration, so
/// that a kernel that cannot compile is refused here, not at its first
/// call.
#[pyfunction]
pub fn compile_source(py: Python<'_>, name: &str, text: &str) -> PyResult<Module> {
    let (program, mut diags) = Program::parse(name, text);
    diags.extend(program.check());
    diags.sort_by(|a, b| (a.span(), a).cmp(&(b.span(), b)));
    diags.dedup();
    if !diags.is_empty() {
        return Err(compile_error(py, &diags, &program.sources));
    }
    let names: Vec<String> = program
        .kernel_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut checked = Vec::new();
    for n in &names {
        match program.kernel(n, &[]) {
            Ok(k) => checked.push(k),
            Err(d) => return Err(compile_error(py, &d, &program.sources)),
        }
    }
    let program = Arc::new(program);
    let mut kernels = Vec::new();
    for (n, k) in names.into_iter().zip(checked) {
        let kernel = Py::new(py, Kernel::new(program.clone(), n.clone(), k))?;
        kernels.push((n, kernel));
    }
    Ok(Module {
        name: name.to_string(),
        kernels,
    })
}

#[pymethods]
impl Module {
    fn __getattr__(&self, py: Python<'_>, attr: &str) -> PyResult<Py<Kernel>> {
        match self.kernels.iter().find(|(n, _)| n == attr) {
            Some((_, k)) => Ok(k.clone_ref(py)),
            None => Err(PyAttributeError::new_err(format!(
                "{} has no kernel `{attr}`; its kernels are {}",
                self.name,
                self.names()
            ))),
        }
    }

    fn __dir__(&self) -> Vec<String> {
        let mut out: Vec<String> = self.kernels.iter().map(|(n, _)| n.clone()).collect();
        out.extend(["kernels", "name"].map(String::from));
        out
    }

    /// Each kernel by name, in the order the source defines them.
    #[getter]
    fn kernels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (n, k) in &self.kernels {
            d.set_item(n, k.clone_ref(py))?;
        }
        Ok(d)
    }

    /// The source's name: its path, or `<string>`.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!("<phobos.Module {} ({})>", self.name, self.names())
    }
}

impl Module {
    fn names(&self) -> String {
        if self.kernels.is_empty() {
            "none".to_string()
        } else {
            let v: Vec<&str> = self.kernels.iter().map(|(n, _)| n.as_str()).collect();
            v.join(", ")
        }
    }
}
