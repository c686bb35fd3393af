"""num_ctas (thread-block clusters) on the H200: fp16 matmul 8192^3 at num_ctas 1, 2, 4, tritium beside Triton 3.6
in one process (CUDA-event medians), each result's relative error against torch. Three kernels: examples/03's
(pointer tensors, grouped order), a plain tiled kernel on tensor descriptors (the shape of Triton's num_ctas=2
example) and examples/08's persistent descriptor kernel. Prints the form tritium took (split along N, or one CTA
computing and why).

    python backends/nvidia/bench/clusters.py [--ctas 1,2,4] [--kinds desc,...]
"""
from __future__ import annotations

import importlib.util
import os
import re
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


def run_desc(a, b, b_nk, c, BM, BN, BK, **launch):
    M, K = a.shape
    N = b.shape[1]
    descs = (TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BK, BN]),
             TensorDescriptor.from_tensor(c, [BM, BN]))
    return desc_matmul[(M // BM, N // BN)](*descs, K, BM, BN, BK, **launch)


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def runners(ex03, ex08, here):
    def ptr(a, b, b_nk, c, BM, BN, BK, **launch):
        M, K = a.shape
        N = b.shape[1]
        grid = (((M + BM - 1) // BM) * ((N + BN - 1) // BN), )
        return ex03.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                        c.stride(0), c.stride(1), BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
                                        **launch)

    def persistent(a, b, b_nk, c, BM, BN, BK, **launch):
        M, K = a.shape
        N = b_nk.shape[0]
        descs = (ex08.TensorDescriptor(a, list(a.shape), list(a.stride()), [BM, BK]),
                 ex08.TensorDescriptor(b_nk, list(b_nk.shape), list(b_nk.stride()), [BN, BK]),
                 ex08.TensorDescriptor(c, list(c.shape), list(c.stride()), [BM, BN]))
        return ex08.matmul_persistent[(132, )](*descs, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
                                               NUM_SMS=132, WARP_SPECIALIZE=False, **launch)

    return {"ptr (03)": ptr, "desc": here.run_desc, "persistent desc (08)": persistent}


def form(kernel) -> str:
    text = kernel.asm.get("ttgir", "") if hasattr(kernel, "asm") else ""
    if "tritium.cluster_split" in text:
        return "split along N"
    why = re.search(r'tritium.cluster_one_cta = "([^"]*)"', text)
    return f"one CTA computes: {why.group(1)}" if why else ""


def main() -> None:
    import argparse

    import torch
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctas", default="1,2,4")
    ap.add_argument("--kinds", default="desc,persistent desc (08),ptr (03)")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from _bench import median_ms, triton_twin
    p03 = os.path.join(ROOT, "examples", "03-matrix-multiplication.py")
    p08 = os.path.join(ROOT, "examples", "08-persistent-matmul-descriptors.py")
    ours = runners(_load("ex03", p03), _load("ex08", p08), sys.modules[__name__])
    t03, t08, there = triton_twin(p03), triton_twin(p08), triton_twin(os.path.abspath(__file__))
    theirs = runners(t03, t08, there) if t03 and t08 and there else None
    M = N = K = 8192
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b_nk = torch.randn(N, K, device="cuda", dtype=torch.float16)
    b = b_nk.T.contiguous()
    ref = a.float() @ b.float()
    kinds = args.kinds.split(",")
    cases = [(k, blocks) for k, blocks in (("desc", (128, 256, 64)), ("desc", (128, 128, 64)),
                                           ("persistent desc (08)", (128, 256, 64)),
                                           ("persistent desc (08)", (128, 128, 64)), ("ptr (03)", (128, 256, 64)))
             if k in kinds]
    rows = []
    for kind, (BM, BN, BK) in cases:
        for ctas in (int(x) for x in args.ctas.split(",")):
            # tritium with multicast (the default) and without (TRITIUM_NVIDIA_MULTICAST=0), then Triton
            res, shape = {}, ""
            for fw in ("tritium", "triton"):
                key = fw
                table = theirs if fw == "triton" else ours
                if table is None:
                    res[key] = (float("nan"), "Triton absent")
                    continue
                fn = table[kind]
                c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
                launch = dict(num_warps=8, num_stages=3, num_ctas=ctas)
                run = (lambda fn=fn, c=c, blocks=(BM, BN, BK), launch=launch: fn(a, b, b_nk, c, *blocks, **launch))
                try:
                    k = run()
                    torch.cuda.synchronize()
                    err = ((c.float() - ref).norm() / ref.norm()).item()
                    if fw == "tritium" and ctas > 1:
                        shape = form(k)
                    ms = median_ms(run, "cuda")
                    res[key] = (2 * M * N * K / (ms * 1e-3) / 1e12, f"{err:.1e}")
                except Exception as exc:  # noqa: BLE001
                    res[key] = (float("nan"), f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            tri = res["triton"][0]
            cells = " | ".join(f"{k} {v[0]:.0f} ({v[0] / tri:.2f}x)" for k, v in res.items() if k != "triton")
            line = (f"matmul fp16 {M}^3 {kind} {BM}x{BN}x{BK} num_ctas={ctas}{' (' + shape + ')' if shape else ''}: "
                    f"{cells} | Triton {tri:.0f} TFLOP/s | rel err " + " / ".join(v[1] for v in res.values()))
            print(line, flush=True)
            rows.append(line)
    print("\n".join(["== table"] + rows))


if __name__ == "__main__":
    main()
