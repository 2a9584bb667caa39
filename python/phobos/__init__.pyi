"""Type stubs for phobos (the `phobos-lang` distribution)."""

import os
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import tandem as tandem

__version__: str

Backend = Literal["auto", "interp", "cpu", "gpu"]
Precision = Literal["exact", "fast"]

class CompileError(Exception):
    """A source that does not compile; `str(e)` is what `phobosc check` prints."""

    rendered: str
    """The diagnostics as the CLI renders them, without colour."""
    diagnostics: List[Dict[str, Any]]
    """Each diagnostic: code, severity, message, file, line, column, start,
    end (byte offsets of the primary span), labels, notes, help."""

class Run:
    """A run's results (`Kernel.run`)."""

    @property
    def outputs(self) -> Dict[str, np.ndarray]: ...
    @property
    def provenance(self) -> Dict[str, Any]:
        """backend, device, threads, precision, config, dims, grid,
        tuning_cache, tuning, workgroup_size, compile_ms,
        compile_cache_hit, lowering, plan (on the GPU, the plan of the
        module that ran, as `phobosc run --explain` prints it; else None),
        and split (None, or with `devices=` the split axis and each
        device's blocks, weight and time)."""
    def figure(self, name: Optional[str] = None) -> Figure:
        """`figure(self.outputs[name], name)`; `name` may be left out when
        the kernel stores one tensor."""

Shading = Literal["uniform", "randn", "dropout", "heat"]

class Figure:
    """The tile figure of an array (`figure`, `Run.figure`), drawn by the
    same code as the web playground's figure. A notebook shows it."""

    @property
    def name(self) -> str: ...
    @property
    def shape(self) -> List[int]: ...
    @property
    def shading(self) -> Shading: ...
    @property
    def grid(self) -> Tuple[int, int]:
        """Rows and columns of the tile: the last axis across, the others down."""
    @property
    def svg(self) -> str:
        """The tile as SVG text: a `<rect>` a cell (with a `<title>` giving
        its index and value), or one PNG `<image>` for a heat map of more
        than 4,096 cells."""
    @property
    def legend(self) -> str:
        """The value scale (or the kept and dropped swatches) as SVG text."""
    @property
    def caption(self) -> str:
        """The sentence under the figure, from the values."""
    @property
    def html(self) -> str:
        """Tile, legend and caption as one HTML fragment."""
    def _repr_html_(self) -> str: ...
    def _repr_svg_(self) -> str: ...

def figure(array: Any, name: str = "out", shading: Optional[Shading] = None) -> Figure:
    """The tile figure of an array (bools, integers or floats), shaded by
    `shading` or, left out, by `name` as the playground shades: `uniform`,
    `randn` and `dropout` as themselves, any other name as a heat map."""

class Kernel:
    """One kernel of a module. Call it with keyword arguments: the kernel's
    parameters (arrays for tensors, Python or NumPy scalars for scalars)
    and the options below. Returns the stored array, or a tuple of them in
    parameter order when the kernel stores several; arrays given for
    stored parameters are written into and returned."""

    def __call__(
        self,
        *,
        dims: Optional[Mapping[str, int]] = ...,
        out: Union[np.ndarray, Sequence[np.ndarray], Mapping[str, np.ndarray], None] = ...,
        backend: Backend = ...,
        precision: Precision = ...,
        config: Optional[Mapping[str, int]] = ...,
        tune: bool = ...,
        threads: Optional[int] = ...,
        devices: Union[str, Sequence[str], None] = ...,
        **args: Any,
    ) -> Union[np.ndarray, Tuple[np.ndarray, ...], None]: ...
    def run(
        self,
        *,
        dims: Optional[Mapping[str, int]] = ...,
        out: Union[np.ndarray, Sequence[np.ndarray], Mapping[str, np.ndarray], None] = ...,
        backend: Backend = ...,
        precision: Precision = ...,
        config: Optional[Mapping[str, int]] = ...,
        tune: bool = ...,
        threads: Optional[int] = ...,
        devices: Union[str, Sequence[str], None] = ...,
        **args: Any,
    ) -> Run: ...
    def wgsl(self, config: Optional[Mapping[str, int]] = None, precision: Precision = "exact") -> str:
        """The WGSL `phobosc build` writes for this configuration."""
    def spirv(self, config: Optional[Mapping[str, int]] = None, precision: Precision = "exact") -> bytes:
        """The SPIR-V `phobosc build` writes for this configuration."""
    def plan(self, config: Optional[Mapping[str, int]] = None, precision: Precision = "exact") -> str:
        """What the GPU lowering decided, as text."""
    @property
    def name(self) -> str: ...
    @property
    def params(self) -> List[Dict[str, Any]]:
        """Each parameter: name, kind ('tensor' or 'scalar'), dtype, and for
        tensors shape, read and written."""
    @property
    def configs(self) -> List[Dict[str, int]]:
        """The `@autotune` configurations."""

class Module:
    """A compiled source; each kernel is an attribute."""

    @property
    def name(self) -> str: ...
    @property
    def kernels(self) -> Dict[str, Kernel]: ...
    def __getattr__(self, name: str) -> Kernel: ...

def compile(path_or_source: Union[str, "os.PathLike[str]"], name: Optional[str] = None) -> Module:
    """Parses and checks a `.ph` file (a path) or source text; raises
    `CompileError` with the diagnostics."""

def fill(
    ty: str,
    key: Union[int, tandem.Key],
    count: int,
    start: int = 0,
    k: int = 32,
    backend: Literal["auto", "cpu", "interp", "gpu"] = "auto",
    threads: Optional[int] = None,
    devices: Union[str, Sequence[str], None] = None,
) -> np.ndarray:
    """Elements start .. start + count of the Tandem stream of `key` as
    TYPE (u8, u16, u32, u64, f16, f32, f64, bool, below:N, below:LOW:N,
    normal_f32, normal_f64, exp_f32, exp_f64, choice:W1,W2,...): the bits
    of `phobosc fill TYPE --key KEY --start START --count COUNT --k K`."""
