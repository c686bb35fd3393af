"""Matmul 8192^3 in fp8 e4m3, tf32 (fp32 operands) and int8, examples/03's kernel (pointer tensors, grouped order;
int8: the same kernel with an int32 accumulator, bench/int8_matmul.py), tritium beside Triton 3.6 in one process,
CUDA-event medians. Each with B K-major (stored (N, K), passed as its transposed (K, N) view: as Hopper's 8-bit
and tf32 tensor cores read it) and N-major (stored (K, N)).

    python backends/nvidia/bench/typed_matmul.py [substrings of the case names to run, e.g. "int8 B N"]
"""
from __future__ import annotations

import importlib.util
import os
import sys

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "examples"))


def main() -> None:
    from _bench import interleaved, triton_twin
    path = os.path.join(ROOT, "examples", "03-matrix-multiplication.py")
    spec = importlib.util.spec_from_file_location("ex03", path)
    ours = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ours)
    theirs = triton_twin(path)
    i8_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "int8_matmul.py")
    spec = importlib.util.spec_from_file_location("int8_matmul", i8_path)
    ours_i8 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ours_i8)
    theirs_i8 = triton_twin(i8_path)
    M = N = K = 8192
    fp8 = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=128)
    tf32 = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32)
    cases = [("fp8e4m3 B K-major", torch.float8_e4m3fn, True, fp8),
             ("fp8e4m3 B N-major", torch.float8_e4m3fn, False, fp8),
             ("tf32 B K-major", torch.float32, True, tf32),
             ("tf32 B N-major", torch.float32, False, tf32),
             ("int8 B K-major", torch.int8, True, fp8),
             ("int8 B N-major", torch.int8, False, fp8)]
    only = sys.argv[1:]
    rows = []
    for name, dtype, k_major, blocks in cases:
        if only and not any(w in name for w in only):
            continue
        if dtype == torch.int8:
            a = torch.randint(-8, 8, (M, K), device="cuda", dtype=torch.int8)
            b_nk = torch.randint(-8, 8, (N, K), device="cuda", dtype=torch.int8)
        else:
            a = torch.randn(M, K, device="cuda").to(dtype)
            b_nk = torch.randn(N, K, device="cuda").to(dtype)
        b = b_nk.T if k_major else b_nk.T.contiguous()
        ref = (a.float() @ b.float()) if dtype != torch.float32 else (a.double() @ b.double()).float()
        cfg = dict(blocks, GROUP_M=8, num_warps=8, num_stages=3)
        res, fns = {}, {}
        pair = (("tritium", ours_i8), ("triton", theirs_i8)) if dtype == torch.int8 else \
            (("tritium", ours), ("triton", theirs))
        for fw, mod in pair:
            out_dtype = torch.int32 if dtype == torch.int8 else torch.float16 if dtype.itemsize == 1 else torch.float32
            c = torch.full((M, N), -1, device="cuda", dtype=out_dtype) if dtype == torch.int8 else \
                torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
            try:
                mod.matmul(a, b, c, **cfg)
                err = ((c.float() - ref).norm() / ref.norm()).item()
                fns[fw] = lambda mod=mod, c=c: mod.matmul(a, b, c, **cfg)
                res[fw] = (float("nan"), f"{err:.1e}")
            except Exception as exc:  # noqa: BLE001
                res[fw] = (float("nan"), f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}")
        for fw, ms in interleaved(fns, "cuda").items():
            res[fw] = (2 * M * N * K / (ms * 1e-3) / 1e12, res[fw][1])
        line = (f"matmul {name} {M}^3 {blocks}: tritium {res['tritium'][0]:.0f} TFLOP/s | Triton "
                f"{res['triton'][0]:.0f} | ratio {res['tritium'][0] / res['triton'][0]:.2f}x | rel err "
                f"{res['tritium'][1]} / {res['triton'][1]}")
        print(line, flush=True)
        rows.append(line)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
