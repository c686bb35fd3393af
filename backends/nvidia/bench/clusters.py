"""num_ctas (thread-block clusters) on the H200: fp16 matmul 8192^3 at num_ctas 1 and 2, tritium beside Triton 3.6
in one process (CUDA-event medians), with each result's relative error against torch. Pointer tensors (examples/03's
grouped kernel: tritium splits the accumulator's N across the cluster) and tensor descriptors (a plain tiled kernel,
the shape Triton's num_ctas=2 example splits; tritium runs it on the cluster's first CTA). Prints which form tritium
took.

    python backends/nvidia/bench/clusters.py
"""
from __future__ import annotations

import importlib.util
import os
import sys

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")


@triton.jit
def desc_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([k, pid_n * BN]), acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


def run_desc(a, b, c, BM, BN, BK, **launch):
    M, K = a.shape
    N = b.shape[1]
    descs = (TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BK, BN]),
             TensorDescriptor.from_tensor(c, [BM, BN]))
    return desc_matmul[(M // BM, N // BN)](*descs, K, BM, BN, BK, **launch)


def main() -> None:
    import torch
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from _bench import median_ms, triton_twin
    path = os.path.join(ROOT, "examples", "03-matrix-multiplication.py")
    spec = importlib.util.spec_from_file_location("ex03", path)
    ex03 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex03)
    ours = {"ptr": ex03.matmul, "desc": run_desc}
    twin03, twin_here = triton_twin(path), triton_twin(os.path.abspath(__file__))
    theirs = {"ptr": twin03.matmul if twin03 else None, "desc": twin_here.run_desc if twin_here else None}
    M = N = K = 8192
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    ref = (a.float() @ b.float())
    cases = [("ptr", (128, 256, 64)), ("ptr", (128, 128, 64)), ("desc", (128, 256, 64))]
    rows = []
    for kind, (BM, BN, BK) in cases:
        for ctas in (1, 2):
            res = {}
            form = ""
            for fw, fns in (("tritium", ours), ("triton", theirs)):
                fn = fns[kind]
                if fn is None:
                    res[fw] = (float("nan"), "absent")
                    continue
                c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
                launch = dict(num_warps=8, num_stages=3, num_ctas=ctas)
                try:
                    if kind == "ptr":
                        run = (lambda fn=fn, c=c: fn(a, b, c, BM, BN, BK, GROUP_M=8, **launch))
                    else:
                        run = (lambda fn=fn, c=c: fn(a, b, c, BM, BN, BK, **launch))
                    run()
                    torch.cuda.synchronize()
                    err = ((c.float() - ref).norm() / ref.norm()).item()
                    ms = median_ms(run, "cuda")
                    res[fw] = (2 * M * N * K / (ms * 1e-3) / 1e12, f"{err:.1e}")
                except Exception as exc:  # noqa: BLE001
                    res[fw] = (float("nan"), f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            if kind == "desc":
                form = "one CTA computes" if ctas > 1 else ""
            elif ctas > 1:
                form = "N split" if BN // ctas >= 16 else "one CTA computes"
            line = (f"matmul fp16 {M}^3 {kind} {BM}x{BN}x{BK} num_ctas={ctas}{' (' + form + ')' if form else ''}: "
                    f"tritium {res['tritium'][0]:.0f} TFLOP/s | Triton {res['triton'][0]:.0f} | ratio "
                    f"{res['tritium'][0] / res['triton'][0]:.2f}x | rel err {res['tritium'][1]} / {res['triton'][1]}")
            print(line, flush=True)
            rows.append(line)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
