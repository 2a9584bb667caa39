#!/usr/bin/env python3
"""Inputs for the device's bit comparisons of issue 29 (bench/attention-h200.sh):
every f16 and bf16 pattern for halves.ph, and small random f16 tensors for
matmul.ph and the attention kernels. Writes into the directory given (bench/s13/data, not committed)."""
import sys
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(29)
np.save(f"{out}/X.npy", np.arange(65536, dtype=np.uint16).view(np.float16).reshape(1024, 64))
np.save(f"{out}/B.npy", (np.arange(65536, dtype=np.uint32) * 40503 % 65536).astype(np.uint16).reshape(1024, 64))
for name, shape in [("A", (256, 200)), ("Bm", (200, 320))]:
    np.save(f"{out}/{name}.npy", rng.uniform(-2, 2, shape).astype(np.float16))
for name in ["Q", "K", "V", "dO"]:
    np.save(f"{out}/{name}.npy", rng.uniform(-1, 1, (2, 136, 64)).astype(np.float16))
