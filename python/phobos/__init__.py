"""Phobos from Python: compile tile kernels and run them on NumPy arrays.

    import numpy as np, phobos
    mod = phobos.compile("examples/dropout_rows.ph")
    y = mod.dropout_rows(X=np.ones((1000, 256), np.float32), seed=3)

`compile` takes a path or the source text and returns a `Module` whose
kernels are attributes. A kernel called with keyword arguments runs on the
best backend present (`backend="auto" | "cpu" | "interp" | "gpu"`) and
returns what it stores as NumPy arrays; `kernel.run(...)` also returns the
provenance. `fill` draws a Tandem stream with the bits of `phobosc fill`,
and `tandem.Key` derives keys. The GIL is released while kernels and fills
run, so threads run them at once. `figure(y)` (or `run.figure("y")`) draws
an array as the web playground's tile figure, which a notebook shows.
"""

import os as _os

from . import tandem
from ._phobos import CompileError, Figure, Kernel, Module, Run, __version__
from ._phobos import compile_source as _compile_source
from ._phobos import draw_figure as _draw_figure
from ._phobos import fill

__all__ = [
    "CompileError",
    "Figure",
    "Kernel",
    "Module",
    "Run",
    "compile",
    "figure",
    "fill",
    "tandem",
    "__version__",
]


def compile(path_or_source, name=None):
    """Parses and checks Phobos source and returns its `Module`.

    `path_or_source` is a path (a `str` naming an existing file, or any
    `os.PathLike`) or the source text itself. Diagnostics name the file, or
    `name` (default `<string>`) for text. Raises `CompileError`, whose text
    is what `phobosc check` prints, when the source does not compile.
    """
    if isinstance(path_or_source, _os.PathLike) or (
        isinstance(path_or_source, str)
        and "\n" not in path_or_source
        and (path_or_source.endswith(".ph") or _os.path.isfile(path_or_source))
    ):
        path = _os.fspath(path_or_source)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return _compile_source(name or path, text)
    if not isinstance(path_or_source, str):
        raise TypeError(
            "compile() takes a path or the source text, not a "
            + type(path_or_source).__name__
        )
    return _compile_source(name or "<string>", path_or_source)


def figure(array, name="out", shading=None):
    """The tile figure of an array, as the web playground draws a kernel's output.

    The last axis runs across and every other axis down; each element is a
    cell. `shading` is `"uniform"` (opacity by the value in [0, 1)),
    `"randn"` (blue below zero, red above, up to 3), `"dropout"` (filled
    where kept, empty where zero) or `"heat"` (viridis over the finite
    range); left out, it follows `name` as the playground does: the names
    `uniform`, `randn` and `dropout` shade as themselves, any other as a
    heat map. A heat map of more than 4,096 cells is one image, a pixel a
    cell. The returned `Figure` shows itself in a notebook (`_repr_html_`:
    tile, legend and caption; `_repr_svg_`: the tile) and has the SVG text
    (`svg`, `legend`), the `caption` and the `html`.

    `array` is anything `numpy.asarray` takes (bool, integer or float
    elements); its values are drawn as float64.
    """
    import numpy as np

    if not isinstance(name, str):
        raise TypeError("figure: name must be a str, not " + type(name).__name__)
    a = np.asarray(array)
    if a.dtype.kind not in "biuf":
        raise TypeError(
            "figure: the array must hold bools, integers or floats, not " + str(a.dtype)
        )
    values = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
    return _draw_figure(name, [int(n) for n in a.shape], values, shading)
