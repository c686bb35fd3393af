"""examples/03's pointer matmul over the configurations an autotuner picks among (block sizes, warps, stages),
fp16 and bf16, tritium beside Triton 3.6 in one process (CUDA-event medians), with tritium's variants selected
by knobs at run time (each recompiles): ``fence`` puts a fence.proxy.async after each cp.async wait (the
default before this sweep), ``nofence`` drops it as Triton 3.6 does, ``nouni`` computes wgmma's warpgroup index
without the uniform warp (the default since the sixth session has it). 64-row tiles at 8 warps run wgmma with two
warpgroups along N (wgmma_split; mma.sync before). Each result's error against torch is printed.

    python backends/nvidia/bench/config_sweep.py [--quick] [--m 8192]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")

#: (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages): Triton's tutorial autotune list, then the neighbours of the
#: benchmarked 128x256x64 / 8 / 3
CONFIGS = [(128, 256, 64, 8, 3), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4),
           (128, 32, 32, 4, 4), (64, 32, 32, 2, 5), (32, 64, 32, 2, 5),
           (128, 128, 64, 8, 3), (128, 128, 64, 4, 3), (128, 128, 64, 8, 4), (256, 128, 64, 8, 3),
           (64, 64, 64, 4, 3), (128, 256, 32, 8, 4), (256, 64, 64, 8, 4), (64, 128, 32, 8, 3), (64, 256, 32, 8, 3),
           (64, 64, 32, 8, 3)]
QUICK = [(128, 256, 64, 8, 3), (128, 128, 64, 8, 3), (128, 128, 32, 4, 4), (64, 256, 32, 4, 4), (64, 128, 32, 8, 3),
         (64, 256, 32, 8, 3)]
BF16 = [(128, 256, 64, 8, 3), (128, 128, 64, 8, 3)]
VARIANTS = {"fence": {"cp_async_fence": True}, "nofence": {"cp_async_fence": False},
            # the 64-row, 8-warp tiles as before wgmma_split (mma.sync), where that differs
            "mma": {"wgmma_split_n": False},
            # wgmma's warpgroup index from tid >> 5 instead of lane 0's warp (TRITIUM_NVIDIA_UNIFORM_WARP=0)
            "nouni": {"uniform_warp": False}}


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    import torch
    from tritium_nvidia.knobs import nvidia as nvk
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--m", type=int, default=8192)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from _bench import median_ms, triton_twin
    path = os.path.join(ROOT, "examples", "03-matrix-multiplication.py")
    ours, theirs = _load("ex03_sweep", path), triton_twin(path)
    M = N = K = args.m
    flops = 2 * M * N * K
    rows = []
    cases = [("fp16", c) for c in (QUICK if args.quick else CONFIGS)] + [("bf16", c) for c in BF16]
    for dt, (BM, BN, BK, w, s) in cases:
        variants = [v for v in args.variants.split(",") if v != "mma" or (BM == 64 and w == 8)]
        tdt = getattr(torch, {"fp16": "float16", "bf16": "bfloat16"}[dt])
        torch.manual_seed(0)
        a = torch.randn(M, K, device="cuda", dtype=tdt)
        b = torch.randn(K, N, device="cuda", dtype=tdt)
        ref = (a.float() @ b.float())
        res = {}
        for name in variants + ["triton"]:
            mod = theirs if name == "triton" else ours
            if mod is None:
                res[name] = (float("nan"), "Triton absent")
                continue
            c = torch.empty(M, N, device="cuda", dtype=tdt)
            with nvk.scope():
                for knob, value in VARIANTS.get(name, {}).items():
                    setattr(nvk, knob, value)

                def run(mod=mod, c=c, a=a, b=b, blocks=(BM, BN, BK), w=w, s=s):
                    mod.matmul(a, b, c, *blocks, num_warps=w, num_stages=s)
                try:
                    run()
                    torch.cuda.synchronize()
                    err = ((c.float() - ref).norm() / ref.norm()).item()
                    ms = median_ms(run, "cuda")
                    res[name] = (flops / (ms * 1e-3) / 1e12, f"{err:.1e}")
                except Exception as exc:  # noqa: BLE001
                    res[name] = (float("nan"), f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}")
        tri = res["triton"][0]
        cells = " | ".join(f"{v} {res[v][0]:.0f} ({res[v][0] / tri:.2f}x)" for v in variants)
        line = (f"{dt} {M}^3 {BM}x{BN}x{BK} w{w} s{s}: {cells} | Triton {tri:.0f} TFLOP/s | rel err "
                + " / ".join(res[v][1] for v in variants + ["triton"]))
        print(line, flush=True)
        rows.append(line)
    print("\n".join(["== table"] + rows))


if __name__ == "__main__":
    main()
