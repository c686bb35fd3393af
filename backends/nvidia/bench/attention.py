"""Fused attention forward (Triton's tutorial 06, tests/gpu/attention.py) on the GPU: max abs error against
torch's scaled_dot_product_attention per configuration, causal and not, for the block-pointer and the
pointer-tensor forms; then, with ``--time``, TFLOP/s of tritium and Triton 3.6 (the same source compiled by
both, in this process) and SDPA. Prints one line per case and a table last.

    python backends/nvidia/bench/attention.py [--time] [--quick]
"""
from __future__ import annotations

import importlib.util
import math
import os
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "..", "tests", "gpu", "attention.py")

# (BLOCK_M, BLOCK_N, num_warps, num_stages, HEAD_DIM, N_CTX); BLOCK_N divides BLOCK_M (the causal split
# needs it, as in the tutorial)
CONFIGS = [(64, 64, 4, 1, 64, 256), (64, 64, 4, 3, 64, 4096), (128, 64, 4, 3, 64, 4096),
           (128, 64, 8, 3, 128, 4096), (128, 128, 8, 3, 128, 4096), (128, 128, 8, 1, 128, 256),
           (128, 128, 4, 3, 64, 256), (128, 64, 8, 1, 64, 256), (64, 64, 4, 3, 128, 256),
           (64, 64, 2, 3, 64, 256), (32, 32, 4, 3, 128, 4096)]          # the last two: mma.sync (no wgmma)


def load(framework: str):
    src = open(SRC).read()
    if framework == "triton":
        src = src.replace("import tritium as triton\nimport tritium.language as tl\n",
                          "import triton\nimport triton.language as tl\n")
    path = os.path.join(tempfile.mkdtemp(prefix=f"attn-{framework}-"), f"attn_{framework}.py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(f"attn_{framework}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def inputs(Z, H, N, D, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return [torch.randn((Z, H, N, D), device="cuda", dtype=torch.float16, generator=g) for _ in range(3)]


def launch(mod, q, k, v, causal, cfg, kind):
    BM, BN, W, S, D, N = cfg
    out = torch.full_like(q, float("nan"))
    m = torch.empty((q.shape[0] * q.shape[1], N), device="cuda", dtype=torch.float32)
    scale = 1.0 / math.sqrt(D)
    run = lambda: mod.run(q, k, v, out, m, scale, causal, BM, BN, W, S, kind)  # noqa: E731
    return run, out


def check(mod, cfg, causal, kind, Z=2, H=4):
    BM, BN, W, S, D, N = cfg
    q, k, v = inputs(Z, H, N, D, seed=BM + 7 * BN + 31 * D + N + causal)
    run, out = launch(mod, q, k, v, causal, cfg, kind)
    run()
    torch.cuda.synchronize()
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                           scale=1.0 / math.sqrt(D))
    return (out.float() - ref).abs().max().item()


def tflops(run, Z, H, N, D, causal):
    import triton
    ms = triton.testing.do_bench(run, warmup=50, rep=300, return_mode="median")
    flops = 4 * Z * H * N * N * D * (0.5 if causal else 1.0)
    return flops / ms * 1e-9


def main() -> None:
    os.chdir(os.path.join(HERE, "..", "..", ".."))
    quick = "--quick" in sys.argv
    tt = load("tritium")
    rows = []
    for cfg in (CONFIGS[:3] if quick else CONFIGS):
        for causal in (False, True):
            for kind in ("pointers", "block_ptr"):
                try:
                    err = f"{check(tt, cfg, causal, kind):.2e}"
                except Exception as exc:  # noqa: BLE001 - report and go on
                    err = f"{type(exc).__name__}: {str(exc)[:100]}"
                line = f"BM={cfg[0]:3d} BN={cfg[1]:3d} warps={cfg[2]} stages={cfg[3]} D={cfg[4]:3d} N={cfg[5]:4d} " \
                       f"causal={causal!s:5} {kind:9}: max abs err {err}"
                print(line, flush=True)
                rows.append(line)
    if "--time" in sys.argv:
        tr = load("triton")
        Z, H, N = 4, 32, 4096
        for D, cfg in ((64, (128, 64, 4, 3, 64, N)), (128, (128, 64, 8, 3, 128, N)), (128, (128, 128, 8, 3, 128, N))):
            for causal in (False, True):
                q, k, v = inputs(Z, H, N, D, seed=1)
                res = []
                for name, mod in (("tritium", tt), ("triton", tr)):
                    try:
                        run, out = launch(mod, q, k, v, causal, cfg, "pointers")
                        run()
                        res.append(f"{name} {tflops(run, Z, H, N, D, causal):6.1f}")
                    except Exception as exc:  # noqa: BLE001
                        res.append(f"{name} {type(exc).__name__}: {str(exc)[:80]}")
                sd = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
                res.append(f"sdpa {tflops(sd, Z, H, N, D, causal):6.1f}")
                line = f"TFLOP/s Z={Z} H={H} N={N} D={D} cfg={cfg[:4]} causal={causal!s:5}: " + " | ".join(res)
                print(line, flush=True)
                rows.append(line)
    print("\n== summary")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
