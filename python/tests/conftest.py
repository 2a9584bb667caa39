"""Shared fixtures: the repository's paths, the `phobosc` binary the
results are compared with, and whether a GPU adapter is here."""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _phobosc():
    """The CLI: $PHOBOSC, else the workspace's debug build (what `cargo
    test` built in CI), else its release build, else `phobosc` on PATH."""
    if os.environ.get("PHOBOSC"):
        return os.environ["PHOBOSC"]
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / "phobosc"
        if p.exists():
            return str(p)
    return shutil.which("phobosc")


@pytest.fixture(scope="session")
def phobosc():
    path = _phobosc()
    if path is None:
        pytest.skip("no phobosc binary: build it with `cargo build -p phobosc` or set PHOBOSC")
    return path


@pytest.fixture(scope="session", autouse=True)
def _cache_dir(tmp_path_factory):
    """One tuning and pipeline cache for the CLI and the package, away
    from the user's."""
    d = tmp_path_factory.mktemp("phobos-cache")
    old = os.environ.get("PHOBOS_CACHE_DIR")
    os.environ["PHOBOS_CACHE_DIR"] = str(d)
    yield
    if old is None:
        del os.environ["PHOBOS_CACHE_DIR"]
    else:
        os.environ["PHOBOS_CACHE_DIR"] = old


def run_cli(phobosc, *args):
    """Runs phobosc; fails the test with its stderr when it fails."""
    r = subprocess.run([phobosc, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"phobosc {' '.join(map(str, args))} failed:\n{r.stderr}"
    return r


@pytest.fixture(scope="session")
def gpu():
    """Whether a GPU adapter runs kernels here (lavapipe in CI, with
    WGPU_BACKEND=vulkan). Skips when none, unless PHOBOS_REQUIRE_GPU=1."""
    import phobos

    try:
        phobos.fill("u32", key=1, count=4, backend="gpu")
    except RuntimeError as e:
        if os.environ.get("PHOBOS_REQUIRE_GPU") == "1":
            pytest.fail(f"PHOBOS_REQUIRE_GPU=1 but no GPU adapter: {e}")
        pytest.skip(f"no GPU adapter (install mesa-vulkan-drivers and set WGPU_BACKEND=vulkan): {e}")
    return True
