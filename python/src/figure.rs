//! `phobos.figure`: the tile figure of an array, which a notebook shows
//! through `_repr_html_` and `_repr_svg_`. The drawing is
//! `phobos_core::figure`'s, the one the web playground shows; this file
//! only hands it the values (which `phobos/__init__.py` has turned into a
//! flat float64 array) and keeps the text it returns.

use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
use phobos_core::figure::{Figure as Drawing, Shading};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The tile figure of an array: its cells shaded as the playground shades
/// them (by `shading`, or by the name: `uniform`, `randn` and `dropout` as
/// random numbers, any other name as a heat map), its legend and caption.
#[pyclass(frozen, module = "phobos")]
pub struct Figure {
    /// The name the figure is drawn under.
    #[pyo3(get)]
    name: String,
    /// The array's shape.
    #[pyo3(get)]
    shape: Vec<u64>,
    /// `"uniform"`, `"randn"`, `"dropout"` or `"heat"`.
    #[pyo3(get)]
    shading: &'static str,
    /// Rows and columns of the tile: the last axis across, the others down.
    #[pyo3(get)]
    grid: (u64, u64),
    /// The tile as SVG text.
    #[pyo3(get)]
    svg: String,
    /// The legend (value scale or swatches) as SVG text.
    #[pyo3(get)]
    legend: String,
    /// The sentence under the figure, from the values.
    #[pyo3(get)]
    caption: String,
    /// Tile, legend and caption as one HTML fragment.
    #[pyo3(get)]
    html: String,
}

#[pymethods]
impl Figure {
    fn _repr_html_(&self) -> &str {
        &self.html
    }

    fn _repr_svg_(&self) -> &str {
        &self.svg
    }

    fn __repr__(&self) -> String {
        format!(
            "<phobos.Figure {:?} shape={:?} shading={}: {}>",
            self.name, self.shape, self.shading, self.caption
        )
    }
}

/// Draws `values` (flat, row-major, of `shape`) under `name`.
#[pyfunction]
#[pyo3(signature = (name, shape, values, shading = None))]
pub fn draw_figure(
    name: String,
    shape: Vec<u64>,
    values: PyReadonlyArray1<'_, f64>,
    shading: Option<&str>,
) -> PyResult<Figure> {
    let vals = values.as_slice().map_err(|_| {
        PyValueError::new_err(format!(
            "figure: the values must be contiguous, got {} of them strided",
            values.len()
        ))
    })?;
    let mut fig = Drawing::new(&name, &shape, vals).map_err(PyValueError::new_err)?;
    if let Some(s) = shading {
        let s = Shading::from_name(s).ok_or_else(|| {
            PyValueError::new_err(format!(
                "figure: shading must be \"uniform\", \"randn\", \"dropout\" or \"heat\", not {s:?}"
            ))
        })?;
        fig = fig.with_shading(s);
    }
    Ok(Figure {
        shading: fig.shading().name(),
        grid: fig.grid(),
        svg: fig.tile_svg(),
        legend: fig.legend_svg(),
        caption: fig.caption(),
        html: fig.html(),
        name,
        shape,
    })
}
