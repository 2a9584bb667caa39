#!/usr/bin/env python3
"""Fast mode's products against float64 (session 26's device call):
    check_dot.py A.npy B.npy C.npy ...   (triples)
prints, for each, the largest |C - A B| over the largest |A| |B| of its
row and column (the scale the f16 rounding of C and the f32 sums are
relative to), and whether it is under 2^-10."""
import sys

import numpy as np

args = sys.argv[1:]
for i in range(0, len(args), 3):
    a, b, c = (np.load(p).astype(np.float64) for p in args[i : i + 3])
    ref = a @ b
    scale = np.abs(a) @ np.abs(b)
    err = (np.abs(c - ref) / np.maximum(scale, 1e-30)).max()
    print(f"{args[i + 2].rsplit('/', 1)[-1]}\t{c.shape}\terr/scale {err:.2e}\t{'ok' if err < 2**-10 else 'TOO LARGE'}")
