//! Phobos from Python: the compiler and the runtime as the CPython
//! extension `phobos._phobos`, which `phobos/__init__.py` re-exports.
//!
//! ```python
//! import numpy as np, phobos
//! mod = phobos.compile("examples/dropout_rows.ph")
//! x = np.ones((1000, 256), np.float32)
//! y = mod.dropout_rows(X=x, seed=3)          # NumPy in, NumPy out
//! run = mod.dropout_rows.run(X=x, seed=3)    # the outputs and the provenance
//! z = phobos.fill("normal_f32", key=1, count=1 << 20)
//! ```
//!
//! Everything here converts and delegates: source to `phobos_core::Program`
//! (`module.rs`), arrays to and from `Tensor`s (`array.rs`), keyword
//! arguments to the core's binder and a launch through `phobos_runtime`
//! with the GIL released (`kernel.rs`), fills through
//! `phobos_runtime::fills` and Tandem keys (`fill.rs`), the tile figure
//! through `phobos_core::figure` (`figure.rs`), and diagnostics to
//! `CompileError` (`errors.rs`). No semantics live in this crate.

mod array;
mod errors;
mod figure;
mod fill;
mod kernel;
mod module;

use pyo3::prelude::*;

#[pymodule]
fn _phobos(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CompileError", py.get_type::<errors::CompileError>())?;
    m.add_class::<module::Module>()?;
    m.add_class::<kernel::Kernel>()?;
    m.add_class::<kernel::Run>()?;
    m.add_class::<fill::Key>()?;
    m.add_class::<figure::Figure>()?;
    m.add_function(wrap_pyfunction!(figure::draw_figure, m)?)?;
    m.add_function(wrap_pyfunction!(module::compile_source, m)?)?;
    m.add_function(wrap_pyfunction!(fill::fill, m)?)?;
    m.add("PURPOSE_USER", phobos_tandem::PURPOSE_USER)?;
    m.add("PURPOSE_BELOW", phobos_tandem::PURPOSE_BELOW)?;
    m.add("PURPOSE_NORMAL64", phobos_tandem::PURPOSE_NORMAL64)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
