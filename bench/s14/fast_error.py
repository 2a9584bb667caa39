#!/usr/bin/env python3
"""Fast mode's error against the interpreter's exact outputs: for each
.npy in DIR (a call's fast/ folder) the one of the same name in REF
(bench/s13/reference.sh), printed as the largest absolute difference over
the largest |REF| (so an f16 result rounded once is about 2^-11), the
median of that, and any non-finite value where REF has none.

    python3 bench/s14/fast_error.py DIR REF"""
import sys
from pathlib import Path
import numpy as np

dev, ref = Path(sys.argv[1]), Path(sys.argv[2])
for d in sorted(dev.glob("*.npy")):
    r = ref / d.name
    if not r.exists():
        print(f"{d.name}: no reference"); continue
    a = np.load(r).astype(np.float64)
    b = np.load(d).astype(np.float64)
    if a.shape != b.shape:
        print(f"{d.name}: shape {b.shape}, reference {a.shape}"); continue
    scale = np.abs(a[np.isfinite(a)]).max() or 1.0
    err = np.abs(a - b) / scale
    bad = int((~np.isfinite(b) & np.isfinite(a)).sum())
    print(f"{d.name}: {a.size} elements: largest error {np.nanmax(err):.3e}, "
          f"median {np.nanmedian(err):.3e} of max |ref| {scale:.4g}; {bad} non-finite")
