"""tritium-nvidia against Triton 3.6 on the same GPU, in one process: each kernel is written once
(kernels.py.in) and compiled by both; results are checked against torch, times are medians of CUDA-event
timings (Triton's do_bench for both, L2 flushed, the two taking turns). Usage: python bench.py [add softmax layernorm matmul]."""
from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = 5


def load(framework: str):
    src = open(os.path.join(HERE, "kernels.py.in")).read()
    head = {"triton": "import triton\nimport triton.language as tl\nfrom triton import jit\n",
            "tritium": "import tritium as triton\nimport tritium.language as tl\nfrom tritium import jit\n"}[framework]
    d = tempfile.mkdtemp(prefix=f"bench-{framework}-")
    path = os.path.join(d, f"k_{framework}.py")
    with open(path, "w") as f:
        f.write(head + src)
    spec = importlib.util.spec_from_file_location(f"k_{framework}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cdiv(a, b):
    return (a + b - 1) // b


def case_add(k, fw):
    n = 1 << 28
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    run = lambda: k.add_kernel[(cdiv(n, 1024), )](x, y, out, n, BLOCK=1024)  # noqa: E731
    run()
    torch.testing.assert_close(out, x + y)
    return run, 3 * n * 4, "GB/s"


def case_softmax(k, fw, warps=16):
    M, N = 32768, 4096
    x = torch.randn(M, N, device="cuda")
    y = torch.empty_like(x)
    run = lambda: k.softmax_kernel[(M, )](y, x, x.stride(0), y.stride(0), N, BLOCK=4096,  # noqa: E731
                                          num_warps=warps)
    run()
    torch.testing.assert_close(y, torch.softmax(x, dim=1), atol=1e-5, rtol=1e-4)
    return run, 2 * M * N * 4, "GB/s"


def case_softmax_8w(k, fw):
    return case_softmax(k, fw, warps=8)


def case_layernorm(k, fw):
    M, N = 32768, 4096
    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    w = torch.rand(N, device="cuda", dtype=torch.float16)
    b = torch.rand(N, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    mean = torch.empty(M, device="cuda")
    rstd = torch.empty(M, device="cuda")
    run = lambda: k.layernorm_kernel[(M, )](x, y, w, b, mean, rstd, x.stride(0), N, 1e-5, BLOCK=4096,  # noqa: E731
                                            num_warps=8)
    run()
    ref = torch.nn.functional.layer_norm(x.float(), (N, ), w.float(), b.float(), 1e-5).half()
    torch.testing.assert_close(y, ref, atol=1e-2, rtol=1e-2)
    return run, 2 * M * N * 2, "GB/s"


def _matmul(k, dtype, size=8192, BM=128, BN=128, BK=64, warps=8, stages=3):
    M = N = K = size
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    c = torch.empty(M, N, device="cuda", dtype=dtype)
    grid = (cdiv(M, BM) * cdiv(N, BN), )
    run = lambda: k.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),  # noqa
                                        c.stride(0), c.stride(1), BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
                                        num_warps=warps, num_stages=stages)
    run()
    ref = torch.matmul(a.float(), b.float())
    err = ((c.float() - ref).norm() / ref.norm()).item()
    assert err < 1e-2, f"relative error {err}"
    return run, 2 * M * N * K, "TFLOP/s"


def case_matmul_fp16(k, fw):
    return _matmul(k, torch.float16)


def case_matmul_bf16(k, fw):
    return _matmul(k, torch.bfloat16)


CASES = {"add": case_add, "softmax": case_softmax, "softmax_8w": case_softmax_8w, "layernorm": case_layernorm, "matmul_fp16": case_matmul_fp16,
         "matmul_bf16": case_matmul_bf16}


def launch_overhead(mods) -> None:
    """Host time of one launch of an empty kernel (no synchronization between launches), per framework."""
    import time
    x = torch.empty(16, device="cuda")
    for fw in ("tritium", "triton"):
        k = mods[fw].nop_kernel
        for _ in range(100):
            k[(1, )](x, x, 16, BLOCK=16)
        torch.cuda.synchronize()
        best = 1e9
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(2000):
                k[(1, )](x, x, 16, BLOCK=16)
            best = min(best, (time.perf_counter() - t0) / 2000)
            torch.cuda.synchronize()
        print(f"launch       {fw:8s} {best * 1e6:10.2f} us per launch (host)", flush=True)


def main() -> None:
    import triton
    import tritium
    names = sys.argv[1:] or ["launch"] + list(CASES)
    mods = {"triton": load("triton"), "tritium": load("tritium")}
    if "launch" in names:
        names.remove("launch")
        launch_overhead(mods)
    # one timer for both: Triton's do_bench (CUDA events, L2 flushed before each run), the two taking turns in
    # ROUNDS rounds (order reversed every other round) so a drift of the GPU's clock does not favour either
    rows = []
    for name in names:
        res, runs, times = {}, {}, {}
        for fw in ("tritium", "triton"):
            try:
                runs[fw], work, unit = CASES[name](mods[fw], fw)
            except Exception as exc:
                print(f"{name:12s} {fw:8s} FAILED: {type(exc).__name__}: {str(exc)[:2000]}", flush=True)
        for r in range(ROUNDS):
            for fw in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
                times.setdefault(fw, []).append(
                    triton.testing.do_bench(runs[fw], warmup=25, rep=100, return_mode="median"))
        for fw, ts in times.items():
            ms = statistics.median(ts)
            scale = 1e-9 if unit == "GB/s" else 1e-12
            res[fw] = work * scale / (ms * 1e-3)
            print(f"{name:12s} {fw:8s} {ms * 1e3:10.1f} us  {res[fw]:8.1f} {unit}", flush=True)
        if len(res) == 2:
            rows.append((name, res["tritium"], res["triton"], res["tritium"] / res["triton"], unit))
    print("\nkernel        tritium   triton   ratio")
    for name, a, b, r, unit in rows:
        print(f"{name:12s} {a:8.1f} {b:8.1f}  {r:6.3f}  ({unit})")


if __name__ == "__main__":
    main()
