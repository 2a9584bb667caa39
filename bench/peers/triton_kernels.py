"""Triton kernels written for issue 11's comparison, imported by
`peers.py --table` only where Triton imports (its absence prints n/a).

Each kernel is what a Triton user would write: one program per BLOCK
elements, `tl.arange` offsets, a mask at the end, Philox through
`tl.rand` / `tl.randn` / `tl.randint` with the element index as the
counter (one Philox call per element; those calls return one of Philox's
four words). The `*4x` fills use all four words of each call (`tl.rand4x`,
`tl.randn4x`), each word filling one quarter of a program's 4 * BLOCK
outputs: a fill as fast as Triton allows, shown as an extra row. `zero`
and `copy` are Triton's candidates for the CUDA ceilings.
"""

import triton
import triton.language as tl


@triton.jit
def zero(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], dtype=tl.int32), mask=offs < n)


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def randint_fill(y_ptr, n, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    r = tl.randint(seed, offs).to(tl.int32, bitcast=True)
    tl.store(y_ptr + offs, r, mask=offs < n)


@triton.jit
def rand_fill(y_ptr, n, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.rand(seed, offs), mask=offs < n)


@triton.jit
def randn_fill(y_ptr, n, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.randn(seed, offs), mask=offs < n)


@triton.jit
def rand4x_fill(y_ptr, n, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    base = pid * 4 * BLOCK + i
    r0, r1, r2, r3 = tl.rand4x(seed, pid * BLOCK + i)
    tl.store(y_ptr + base, r0, mask=base < n)
    tl.store(y_ptr + base + BLOCK, r1, mask=base + BLOCK < n)
    tl.store(y_ptr + base + 2 * BLOCK, r2, mask=base + 2 * BLOCK < n)
    tl.store(y_ptr + base + 3 * BLOCK, r3, mask=base + 3 * BLOCK < n)


@triton.jit
def randn4x_fill(y_ptr, n, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    base = pid * 4 * BLOCK + i
    r0, r1, r2, r3 = tl.randn4x(seed, pid * BLOCK + i)
    tl.store(y_ptr + base, r0, mask=base < n)
    tl.store(y_ptr + base + BLOCK, r1, mask=base + BLOCK < n)
    tl.store(y_ptr + base + 2 * BLOCK, r2, mask=base + 2 * BLOCK < n)
    tl.store(y_ptr + base + 3 * BLOCK, r3, mask=base + 3 * BLOCK < n)


@triton.jit
def dropout(x_ptr, y_ptr, n, p, seed, BLOCK: tl.constexpr):
    # As Triton's tutorial "Low-Memory Dropout" writes it.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    tl.store(y_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


@triton.jit
def noise(x_ptr, y_ptr, n, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x + 0.5 * tl.randn(seed, offs), mask=mask)
