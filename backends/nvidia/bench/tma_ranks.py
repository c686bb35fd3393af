"""Tensor descriptors of every rank on the H200: one case per rank where the copy engine should pay, tritium with
TMA of every rank (TRITIUM_NVIDIA_TMA_RANKS on: "ranks"), with TMA for 2-D pipelined loads and stores only
(off: "2d"), on the portable path (TRITIUM_NVIDIA_TMA off: per-element accesses), and Triton 3.6, in one process,
the variants taking turns (CUDA-event medians of medians), each result checked against torch. Host
``TensorDescriptor`` arguments.

    python backends/nvidia/bench/tma_ranks.py [--cases copy1d,softmax2d,...] [--variants ranks,2d,portable]
"""
from __future__ import annotations

import os
import sys

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")


@triton.jit
def copy1d(dx, dy, B: tl.constexpr):
    i = tl.program_id(0) * B
    dy.store([i], dx.load([i]))


@triton.jit
def softmax2d(dx, dy):
    # one row per program, the row's load feeding reductions (no dot, no loop)
    r = tl.program_id(0)
    v = dx.load([r, 0]).to(tl.float32)
    e = tl.exp(v - tl.max(v, 1)[:, None])
    dy.store([r, 0], (e / tl.sum(e, 1)[:, None]).to(dy.dtype))


@triton.jit
def copy3d(dx, dy, B1: tl.constexpr, B2: tl.constexpr, n1, n2):
    p = tl.program_id(0)
    per1 = tl.cdiv(n1, B1)
    per2 = tl.cdiv(n2, B2)
    b = p // (per1 * per2)
    i = (p // per2) % per1 * B1
    j = p % per2 * B2
    dy.store([b, i, j], dx.load([b, i, j]))


@triton.jit
def copy4d(dx, dy, B2: tl.constexpr, B3: tl.constexpr, n1, n2, n3):
    p = tl.program_id(0)
    per2 = tl.cdiv(n2, B2)
    per3 = tl.cdiv(n3, B3)
    a = p // (n1 * per2 * per3)
    b = p // (per2 * per3) % n1
    i = p // per3 % per2 * B2
    j = p % per3 * B3
    dy.store([a, b, i, j], dx.load([a, b, i, j]))


@triton.jit
def copy5d(dx, dy, B3: tl.constexpr, B4: tl.constexpr, n1, n2, n3, n4):
    p = tl.program_id(0)
    per3 = tl.cdiv(n3, B3)
    per4 = tl.cdiv(n4, B4)
    q = p // (per3 * per4)
    i = p // per4 % per3 * B3
    j = p % per4 * B4
    dy.store([q // (n1 * n2), q // n2 % n1, q % n2, i, j], dx.load([q // (n1 * n2), q // n2 % n1, q % n2, i, j]))


@triton.jit
def rowsum_loop(dx, out, N, BM: tl.constexpr, BN: tl.constexpr):
    # a loop of descriptor loads feeding reductions (not a dot: not software-pipelined), a layer norm's first pass
    r = tl.program_id(0) * BM
    acc = tl.zeros((BM, ), tl.float32)
    for j in range(0, N, BN):
        acc += tl.sum(dx.load([r, j]).to(tl.float32), 1)
    tl.store(out + r + tl.arange(0, BM), acc)


@triton.jit
def bmm3d(da, db, dc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # batched matmul on 3-D descriptors: C[z] = A[z] @ B[z]^T
    z = tl.program_id(2)
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = da.load([z, m, k]).reshape(BM, BK)
        b = db.load([z, n, k]).reshape(BN, BK)
        acc = tl.dot(a, b.T, acc)
    dc.store([z, m, n], acc.to(tl.float16).reshape(1, BM, BN))


def cases(mod, torch):
    """name -> (make(): (run, check, amount, unit))."""
    T = mod.TensorDescriptor         # the framework's own (Triton's for the twin)

    def c1():
        n, B = 1 << 27, 1024
        x = torch.randn(n, device="cuda")
        y = torch.empty_like(x)
        d = (T.from_tensor(x, [B]), T.from_tensor(y, [B]))
        run = lambda: mod.copy1d[(n // B, )](*d, B, num_warps=4)  # noqa
        return run, lambda: (y - x).abs().max().item(), 2 * x.numel() * 4, "GB/s"

    def c2():
        R, N = 32768, 1024
        x = torch.randn(R, N, device="cuda", dtype=torch.float16)
        y = torch.empty_like(x)
        d = (T.from_tensor(x, [1, N]), T.from_tensor(y, [1, N]))
        run = lambda: mod.softmax2d[(R, )](*d, num_warps=4)  # noqa
        return run, lambda: (y.float() - torch.softmax(x.float(), 1)).abs().max().item(), 2 * x.numel() * 2, "GB/s"

    def c3():
        Z, M, N, B1, B2 = 64, 1024, 1024, 32, 128
        x = torch.randn(Z, M, N, device="cuda", dtype=torch.float16)
        y = torch.empty_like(x)
        grid = (Z * (M // B1) * (N // B2), )
        d = (T.from_tensor(x, [1, B1, B2]), T.from_tensor(y, [1, B1, B2]))
        run = lambda: mod.copy3d[grid](*d, B1, B2, M, N, num_warps=4)  # noqa
        return run, lambda: (y - x).abs().max().item(), 2 * x.numel() * 2, "GB/s"

    def c4():
        A, Bn, M, N, B2, B3 = 8, 16, 512, 512, 32, 128
        x = torch.randn(A, Bn, M, N, device="cuda", dtype=torch.float16)
        y = torch.empty_like(x)
        grid = (A * Bn * (M // B2) * (N // B3), )
        d = (T.from_tensor(x, [1, 1, B2, B3]), T.from_tensor(y, [1, 1, B2, B3]))
        run = lambda: mod.copy4d[grid](*d, B2, B3, Bn, M, N, num_warps=4)  # noqa
        return run, lambda: (y - x).abs().max().item(), 2 * x.numel() * 2, "GB/s"

    def c5():
        s, B3, B4 = (4, 4, 8, 256, 512), 32, 32
        x = torch.randn(*s, device="cuda")
        y = torch.empty_like(x)
        grid = (s[0] * s[1] * s[2] * (s[3] // B3) * (s[4] // B4), )
        blk = [1, 1, 1, B3, B4]
        d = (T.from_tensor(x, blk), T.from_tensor(y, blk))
        run = lambda: mod.copy5d[grid](*d, B3, B4, *s[1:], num_warps=4)  # noqa
        return run, lambda: (y - x).abs().max().item(), 2 * x.numel() * 4, "GB/s"

    def c7():
        R, N, BM, BN = 32768, 4096, 8, 256
        x = torch.randn(R, N, device="cuda", dtype=torch.float16)
        out = torch.empty(R, device="cuda")
        d = T.from_tensor(x, [BM, BN])
        run = lambda: mod.rowsum_loop[(R // BM, )](d, out, N, BM, BN, num_warps=4)  # noqa
        return run, lambda: (out - x.float().sum(1)).abs().max().item(), x.numel() * 2, "GB/s"

    def c6():
        Z, M, N, K, BM, BN, BK = 16, 1024, 1024, 1024, 128, 128, 64
        a = torch.randn(Z, M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(Z, N, K, device="cuda", dtype=torch.float16)
        c = torch.empty(Z, M, N, device="cuda", dtype=torch.float16)
        ref = torch.bmm(a.float(), b.float().transpose(1, 2))
        d = (T.from_tensor(a, [1, BM, BK]), T.from_tensor(b, [1, BN, BK]), T.from_tensor(c, [1, BM, BN]))
        run = lambda: mod.bmm3d[(M // BM, N // BN, Z)](*d, K, BM, BN, BK, num_warps=8, num_stages=3)  # noqa
        return run, lambda: ((c.float() - ref).norm() / ref.norm()).item(), 2 * Z * M * N * K / 1e3, "TFLOP/s"

    def example08(dtype_name, ws=False):
        # examples/08 (persistent matmul on host descriptors, 8192^3): its epilogue's store is the 2-D store
        # whose start is not proved non-negative (grouped tile ids divide by an argument's cdiv)
        def make():
            ex = mod.EXAMPLE08
            M = N = K = 8192
            a, b, c = ex.inputs(dtype_name, M, N, K, "cuda")
            cfg, sms = ex.CONFIGS[dtype_name], torch.cuda.get_device_properties(0).multi_processor_count
            small = ex.inputs(dtype_name, 512, 768, 1024, "cuda")
            ex.matmul(*small, sms, cfg, ws)   # the same kernel (same specialization) at a shape checked in float64
            ref = small[0].double() @ small[1].double().T
            return (lambda: ex.matmul(a, b, c, sms, cfg, ws),
                    lambda: ((small[2].double() - ref).norm() / ref.norm()).item(), 2 * M * N * K / 1e3, "TFLOP/s")
        return make

    table = {"copy1d": c1, "softmax2d": c2, "copy3d": c3, "copy4d": c4, "copy5d": c5, "bmm3d": c6,
             "rowsum_loop": c7}
    if getattr(mod, "EXAMPLE08", None) is not None:
        for dt in ("float16", "bfloat16", "float8_e4m3fn", "float32"):
            table[f"ex08_{dt}"] = example08(dt)
        table["ex08_float16_ws"] = example08("float16", True)
    return table


def _knobs(nvk, label):
    """Set the knobs of one variant (inside an ``nvk.scope()``): "ranks" TMA of every rank, "default" the
    package default, "2d" TMA for 2-D pipelined loads and stores only, "portable" no TMA, "loop" every rank but
    loads inside non-pipelined loops element by element."""
    if label in ("ranks", "loop"):
        nvk.tma_ranks = True
    elif label == "2d":
        nvk.tma_ranks = False
    elif label == "portable":
        nvk.tma = False
    if label == "loop":
        nvk.tma_loop_loads = False


def main() -> None:
    import argparse
    import statistics

    import torch
    from tritium_nvidia.knobs import nvidia as nvk
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="copy1d,softmax2d,copy3d,copy4d,copy5d,bmm3d,rowsum_loop",
                    help="also ex08_float16, ex08_bfloat16, ex08_float8_e4m3fn, ex08_float32, ex08_float16_ws: "
                    "examples/08 at 8192^3")
    ap.add_argument("--variants", default="ranks,2d,portable", help="tritium's variants beside Triton: "
                    "ranks (TRITIUM_NVIDIA_TMA_RANKS on), 2d (off), portable (TRITIUM_NVIDIA_TMA off), default")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from _bench import median_ms, triton_twin
    me = sys.modules[__name__]
    twin = triton_twin(os.path.abspath(__file__))
    if any(c.startswith("ex08") for c in args.cases.split(",")):
        import importlib.util
        ex08 = os.path.join(ROOT, "examples", "08-persistent-matmul-descriptors.py")
        spec = importlib.util.spec_from_file_location("example08", ex08)
        me.EXAMPLE08 = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(me.EXAMPLE08)
        if twin is not None:
            twin.EXAMPLE08 = triton_twin(ex08)
    ours = cases(me, torch)
    theirs = cases(twin, torch) if twin is not None else None
    rows = []
    for name in args.cases.split(","):
        labels = args.variants.split(",")
        if name == "rowsum_loop":
            labels.insert(1, "loop")
        runs, res, form, unit = {}, {}, "?", ""
        for label in labels + ["triton"]:
            table = theirs if label == "triton" else ours
            if table is None:
                continue
            with nvk.scope():
                _knobs(nvk, label)
                try:
                    run, check, amount, unit = table[name]()
                    k = run()
                    torch.cuda.synchronize()
                    err = check()
                    if label == "ranks" and hasattr(k, "asm"):      # (examples/08's matmul returns C)
                        form = "TMA" if "cp.async.bulk.tensor" in k.asm.get("ptx", "") else "no TMA"
                    runs[label] = (run, f"{err:.1e}")
                except Exception as exc:  # noqa: BLE001
                    res[label] = (float("nan"), f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
        # the variants take turns, in reversed order every other round (a clock drift spreads over all of them);
        # each variant's knobs are set around its whole median (the first call re-keys, untimed)
        times: dict = {label: [] for label in runs}
        order = list(runs)
        for r in range(args.rounds):
            for label in (order if r % 2 == 0 else order[::-1]):
                with nvk.scope():
                    if label != "triton":
                        _knobs(nvk, label)
                    times[label].append(median_ms(runs[label][0], "cuda", min_time=0.1))
        for label, t in times.items():
            res[label] = (amount / (statistics.median(t) * 1e-3) / 1e9, runs[label][1])
        torch.cuda.empty_cache()
        tri = res.get("triton", (float("nan"), ""))[0]
        cells = " | ".join(f"{k} {v[0]:.0f} ({v[0] / tri:.2f}x)" for k, v in res.items() if k != "triton")
        line = (f"{name} ({form}): tritium {cells} | Triton {tri:.0f} {unit} | err "
                + " / ".join(f"{k} {v[1]}" for k, v in res.items()))
        print(line, flush=True)
        rows.append(line)
    print("\n".join(["== table"] + rows))


if __name__ == "__main__":
    main()
