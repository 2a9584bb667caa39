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
run, so threads run them at once.
"""

import os as _os

from . import tandem
from ._phobos import CompileError, Kernel, Module, Run, __version__
from ._phobos import compile_source as _compile_source
from ._phobos import fill

__all__ = ["CompileError", "Kernel", "Module", "Run", "compile", "fill", "tandem", "__version__"]


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
