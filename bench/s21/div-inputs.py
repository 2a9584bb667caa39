"""Operands for bench/s21/div.ph: edge values crossed with each other, then
random bit patterns (half with exponents of 96..159, where the checks
usually accept the estimate; a quarter of probabilities over divisors near
1 and above, softmax's and dropout's case; a quarter of any bits).
Writes X.npy and Z.npy (f32, shape (n,)) into the directory given."""
import os, random, struct, sys

def npy(path, words):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(words)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%dI" % len(words), *words))

edges = [0, 1, 2, 0x007FFFFF, 0x00800000, 0x00800001, 0x3F800000, 0x3F800001, 0x3F7FFFFF,
         0x40400000, 0x3DCCCCCD, 0x7F7FFFFF, 0x7F7FFFFE, 0x7F800000, 0x7FC00000, 0x7F800001,
         0x0C800000, 0x13000000, 0x6C000000, 0x45800000, 0x3F666666, 0x0D000000, 0x4C000000]
edges += [e | 0x80000000 for e in edges]
x, z = [], []
for a in edges:
    for b in edges:
        x.append(a); z.append(b)
rng = random.Random(21)
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 22
while len(x) < n:
    a, b = rng.getrandbits(32), rng.getrandbits(32)
    k = len(x) % 4
    if k < 2:
        a = (a & 0x807FFFFF) | ((96 + (a >> 8) % 64) << 23)
        b = (b & 0x807FFFFF) | ((96 + (b >> 8) % 64) << 23)
    elif k == 2:
        a = (a & 0x007FFFFF) | ((100 + (a >> 8) % 27) << 23)
        b = (b & 0x007FFFFF) | ((126 + (b >> 8) % 15) << 23)
    x.append(a); z.append(b)
npy(os.path.join(sys.argv[1], "X.npy"), x)
npy(os.path.join(sys.argv[1], "Z.npy"), z)
print("operands:", len(x))
