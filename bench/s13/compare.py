#!/usr/bin/env python3
"""Compares the device's outputs of bench/attention-h200.sh (DIR, the
call's bits/ folder) with the interpreter's (REF, written by
bench/s13/reference.sh), bit for bit, and prints one line per file."""
import sys
from pathlib import Path
import numpy as np

dev, ref = Path(sys.argv[1]), Path(sys.argv[2])
bad = 0
for r in sorted(ref.glob("*.npy")):
    d = dev / r.name
    if not d.exists():
        print(f"{r.name}: missing on the device"); bad += 1; continue
    a, b = np.load(r), np.load(d)
    w = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    diff = int((a.view(w) != b.view(w)).sum()) if a.shape == b.shape else -1
    print(f"{r.name}: {a.size} elements, {a.dtype}: {'identical' if diff == 0 else f'{diff} differ'}")
    bad += diff != 0
sys.exit(1 if bad else 0)
