#!/usr/bin/env python3
"""Issue 29's peers on the GPU, in the same call as Phobos's rows
(bench/attention-h200.sh): `torch.matmul` in f16 and
`torch.nn.functional.scaled_dot_product_attention` with `dropout_p=0.1`,
forward and forward + backward, in f16, with the backend PyTorch picks
(FlashAttention where it is present; which one is printed).

    python3 bench/peers/attention.py

Each call: a warm-up, then 21 calls each between two CUDA events; the
median, as TFLOP/s counted as the peers count them: 2*M*N*K for a GEMM,
4*B*H*S^2*D for the attention forward and 2.5 times that for the backward
(10*B*H*S^2*D forward + backward is 3.5 times the forward).
"""
import statistics
import sys

import torch
import torch.nn.functional as F


def timed(fn, runs=21):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(runs):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ms.append(a.elapsed_time(b))
    return statistics.median(ms)


def main():
    dev = torch.device("cuda")
    print(f"# torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    for n in (2048, 4096):
        a = torch.randn(n, n, device=dev, dtype=torch.float16)
        b = torch.randn(n, n, device=dev, dtype=torch.float16)
        ms = timed(lambda: a @ b)
        print(f"peer\tmatmul f16\t{n}x{n}x{n}\t{ms:.4f} ms\t{2 * n**3 / ms / 1e9:.1f} TFLOP/s")
    for s in (1024, 4096):
        for d in (64, 128):
            bsz, h = 4, 16
            q, k, v = (torch.randn(bsz, h, s, d, device=dev, dtype=torch.float16, requires_grad=True) for _ in range(3))
            fwd_flop = 4 * bsz * h * s * s * d

            def fwd():
                return F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)

            ms = timed(fwd)
            print(f"peer\tsdpa dropout forward\tB={bsz} H={h} S={s} D={d}\t{ms:.4f} ms\t{fwd_flop / ms / 1e9:.1f} TFLOP/s")
            o = fwd()
            g = torch.randn_like(o)

            def both():
                q.grad = k.grad = v.grad = None
                fwd().backward(g)

            ms2 = timed(both)
            print(f"peer\tsdpa dropout forward+backward\tB={bsz} H={h} S={s} D={d}\t{ms2:.4f} ms\t{3.5 * fwd_flop / ms2 / 1e9:.1f} TFLOP/s\tbackward alone {ms2 - ms:.4f} ms\t{2.5 * fwd_flop / max(ms2 - ms, 1e-9) / 1e9:.1f} TFLOP/s")
    try:
        from torch.backends.cuda import flash_sdp_enabled, mem_efficient_sdp_enabled
        print(f"# flash sdp enabled: {flash_sdp_enabled()}, mem-efficient: {mem_efficient_sdp_enabled()}")
    except Exception as e:  # noqa: BLE001
        print(f"# sdp backend query failed: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
