"""The tile figure (`phobos.figure`, `Run.figure`): the SVG and HTML that a
notebook shows, read back as XML and checked against the array drawn. The
drawing is the web playground's (compiler/core/src/figure), so the seed's
caption here is the one playground/web/tests/browser.mjs expects."""

import base64
import struct
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

import phobos
from conftest import ROOT

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def seed_run():
    mod = phobos.compile(ROOT / "playground" / "examples" / "random_tile.ph")
    return mod.random_tile.run(dims={"ROWS": 8, "COLS": 32}, seed=1, backend="interp")


def cells(svg_text):
    root = ET.fromstring(svg_text)
    assert root.tag == SVG + "svg"
    return root, root.findall(SVG + "rect")


def test_the_seed_figure_is_the_playgrounds(seed_run):
    fig = seed_run.figure("uniform")
    assert fig.name == "uniform" and fig.shading == "uniform"
    assert fig.shape == [8, 32] and fig.grid == (8, 32)
    assert fig.caption == "uniform: 256 counters, mean 0.513; each a multiple of 2^-23 in [0, 1)."
    root, rects = cells(fig.svg)
    assert (root.get("data-rows"), root.get("data-cols")) == ("8", "32")
    assert "tile-uniform" in root.get("class")
    assert root.get("aria-label") == "uniform: a tile of 8 rows of 32"
    assert len(rects) == 256
    # Each cell's title names its index and value, row by row.
    u = seed_run.outputs["uniform"]
    for i, rect in enumerate(rects):
        r, c = divmod(i, 32)
        title = rect.find(SVG + "title").text
        assert title.startswith(f"[{r}, {c}] = ")
        assert float(title.split("= ")[1]) == float(u[r, c])
        assert float(rect.get("fill-opacity")) == pytest.approx(float(u[r, c]), abs=5e-4)
    assert fig._repr_svg_() == fig.svg


def test_dropout_and_randn_cells_follow_the_values(seed_run):
    d = seed_run.outputs["dropout"]
    _, rects = cells(seed_run.figure("dropout").svg)
    classes = [r.get("class") for r in rects]
    assert classes.count("cell kept") == np.count_nonzero(d)
    assert classes.count("cell dropped") == d.size - np.count_nonzero(d)
    assert [c == "cell kept" for c in classes] == list((d != 0).reshape(-1))

    z = seed_run.outputs["randn"]
    fig = seed_run.figure("randn")
    _, rects = cells(fig.svg)
    assert [r.get("class") == "cell neg" for r in rects] == list((z < 0).reshape(-1))
    inside = int(np.count_nonzero(np.abs(z) <= 3))
    assert fig.caption.startswith("randn: 256 counters, mean ")
    assert fig.caption.endswith(f"; {inside} of 256 in [-3, 3].")


def test_the_notebook_html_holds_tile_legend_and_caption(seed_run):
    fig = seed_run.figure("dropout")
    html = fig._repr_html_()
    assert html == fig.html
    root = ET.fromstring(html)  # well-formed: every name is escaped
    assert root.tag == "figure"
    assert root.get("data-name") == "dropout" and root.get("data-shading") == "dropout"
    svgs = root.iter(SVG + "svg")
    tile, legend = next(svgs), next(svgs)
    assert len(tile.findall(SVG + "rect")) == 256
    assert [t.text for t in legend.iter(SVG + "text")] == ["kept", "dropped"]
    assert root.find("figcaption").text == fig.caption
    assert fig.caption.startswith("dropout: 256 counters, ")
    assert fig.caption.endswith("; every kept value is 2.0.")


def test_run_figure_needs_a_name_when_several_tensors_are_stored(seed_run):
    with pytest.raises(TypeError, match="name one"):
        seed_run.figure()
    with pytest.raises(ValueError, match='no output named "y"'):
        seed_run.figure("y")


def test_other_names_are_heat_maps_over_their_range():
    y = np.arange(12, dtype=np.int32).reshape(3, 4) - 4
    fig = phobos.figure(y, name="y")
    assert fig.shading == "heat"
    assert fig.caption == "y: 12 values, mean 1.500, from -4.000 to 7.000."
    _, rects = cells(fig.svg)
    assert len(rects) == 12
    assert rects[0].get("fill") == "rgb(68,1,84)"  # the lowest: the ramp's start
    assert rects[-1].get("fill") == "rgb(253,231,37)"  # the highest: its end
    legend = ET.fromstring(fig.legend)
    assert [t.text for t in legend.iter(SVG + "text")] == ["-4.000", "1.500", "7.000"]
    # The shading may be chosen, whatever the name.
    assert phobos.figure(y, name="y", shading="randn").shading == "randn"


def png_of(svg_text):
    root = ET.fromstring(svg_text)
    (image,) = root.iter(SVG + "image")
    uri = image.get("href")
    assert uri.startswith("data:image/png;base64,")
    png = base64.b64decode(uri.split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, {}
    while at < len(png):
        (n,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + n]
        (crc,) = struct.unpack(">I", png[at + 8 + n : at + 12 + n])
        assert zlib.crc32(kind + body) == crc
        chunks[kind] = body
        at += 12 + n
    width, height = struct.unpack(">II", chunks[b"IHDR"][:8])
    raw = zlib.decompress(chunks[b"IDAT"])
    rows = [raw[i * (1 + 3 * width) + 1 : (i + 1) * (1 + 3 * width)] for i in range(height)]
    return root, width, height, rows


def test_a_large_heat_map_is_one_image_a_pixel_a_cell():
    y = np.zeros((2, 100, 50), np.float64)
    y[1, 99, 49] = 1.0
    fig = phobos.figure(y, name="y")
    assert fig.grid == (200, 50)
    root, width, height, rows = png_of(fig.svg)
    assert (width, height) == (50, 200)
    assert root.findall(SVG + "rect") == []
    assert rows[0][:3] == bytes([68, 1, 84])
    assert rows[199][-3:] == bytes([253, 231, 37])
    assert fig.caption == "y: 10000 values, mean 0.000, from 0.000 to 1.000."


def test_shapes_names_and_bad_input():
    assert phobos.figure(np.float32(0.25), name="uniform").grid == (1, 1)
    assert phobos.figure([[True, False]], name="dropout").caption == (
        "dropout: 2 counters, 1 kept (50.0%); every kept value is 1.0."
    )
    assert phobos.figure(np.zeros((0, 3)), name="y").caption == "y: no elements."
    fig = phobos.figure(np.ones(2), name='<b class="x">&')
    assert "<b " not in fig.html and ET.fromstring(fig.html).get("data-name") == '<b class="x">&'
    with pytest.raises(ValueError, match="shading must be"):
        phobos.figure(np.ones(2), shading="plasma")
    with pytest.raises(TypeError, match="complex128"):
        phobos.figure(np.ones(2, np.complex128))
    with pytest.raises(TypeError, match="name must be a str"):
        phobos.figure(np.ones(2), name=3)
    assert "shading=heat" in repr(phobos.figure(np.ones(2)))
