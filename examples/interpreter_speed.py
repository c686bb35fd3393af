"""
Interpreter speed: tritium's interpreter against Triton's, side by side
=====================================================================

Runs the same four kernels (vector add, softmax, matmul, layer norm; small sizes, as one uses an
interpreter) in interpreter mode under tritium (this process) and under Triton 3.6 (a second process,
``/work/tvenv/bin/python`` or ``--triton-python``, since Triton lives in its own environment), checks each
result against torch, and prints the median time of each and the ratio; and, for comparison, tritium's
interpreter running one program at a time (``TRITIUM_INTERPRET_BATCH=0``).

The loop bounds K (matmul) and N (layer norm) are tl.constexpr: Triton 3.6's interpreter cannot iterate
``range()`` over a run-time scalar with numpy 2.4 ("only 0-dimensional arrays can be converted to Python
scalars"); tritium's can, but both run the same source here.

Run: python examples/interpreter_speed.py [--triton-python PATH] [--repeat N]
"""
import json
import os
import statistics
import subprocess
import sys
import time

AS_TRITON = "--as-triton" in sys.argv
os.environ["TRITON_INTERPRET"] = "1"
if AS_TRITON:
    # Triton's environment has no torch: borrow the one next to tritium (same Python version)
    sys.path.extend(p for p in sys.argv[sys.argv.index("--as-triton") + 1].split(os.pathsep) if p)
    import triton
    import triton.language as tl
else:
    import tritium as triton
    import tritium.language as tl

import torch  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk[None, :]) * sak,
                    mask=(rm[:, None] < M) & (k + rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk[:, None]) * sbk + rn[None, :] * sbn,
                    mask=(k + rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, N: tl.constexpr, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < N, other=0.0)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < N, other=0.0)
        d = tl.where(cols < N, x - mean, 0.0)
        acc += d * d
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        tl.store(y_ptr + cols, (x - mean) * rstd * w + b, mask=mask)


def cases():
    """(name, run, check) for every benchmark; ``run`` launches once."""
    torch.manual_seed(0)
    n = 98432
    x, y = torch.rand(n), torch.rand(n)
    out = torch.empty(n)
    yield ("vector add, 98432 fp32 (97 programs)",
           lambda: add_kernel[(triton.cdiv(n, 1024), )](x, y, out, n, BLOCK=1024),
           lambda: torch.testing.assert_close(out, x + y))

    sm_in = torch.randn(256, 781)
    sm_out = torch.empty_like(sm_in)
    yield ("softmax, 256 x 781 fp32 (256 programs)",
           lambda: softmax_kernel[(256, )](sm_out, sm_in, sm_in.stride(0), 781, BLOCK=1024),
           lambda: torch.testing.assert_close(sm_out, torch.softmax(sm_in, dim=1)))

    M = N = K = 256
    a, b = torch.randn(M, K), torch.randn(K, N)
    c = torch.empty(M, N)
    yield ("matmul, 256^3 fp32, 32x32x32 blocks (64 programs)",
           lambda: matmul_kernel[(M // 32, N // 32)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                                    b.stride(1), c.stride(0), c.stride(1), BM=32, BN=32, BK=32),
           lambda: torch.testing.assert_close(c, a @ b, atol=1e-3, rtol=1e-3))

    rows, cols = 256, 1000
    lx = torch.randn(rows, cols)
    w, bias = torch.rand(cols), torch.rand(cols)
    ly = torch.empty_like(lx)
    yield ("layer norm, 256 x 1000 fp32 (256 programs)",
           lambda: layer_norm_kernel[(rows, )](lx, ly, w, bias, lx.stride(0), cols, 1e-5, BLOCK=256),
           lambda: torch.testing.assert_close(ly, torch.nn.functional.layer_norm(lx, (cols, ), w, bias, 1e-5),
                                              atol=1e-4, rtol=1e-4))


def measure(repeat):
    results = {}
    for name, run, check in cases():
        run()
        check()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        results[name] = statistics.median(times) * 1000
    return results


def main():
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 5
    if AS_TRITON:
        print(json.dumps(measure(repeat)))
        return
    py = sys.argv[sys.argv.index("--triton-python") + 1] if "--triton-python" in sys.argv else "/work/tvenv/bin/python"
    if os.path.dirname(torch.__file__):
        torch_site = os.path.dirname(os.path.dirname(torch.__file__))
    ours = measure(repeat)
    from tritium import knobs
    with knobs.interpreter.scope():
        knobs.interpreter.batch = False   # one program at a time: what batching the grid buys
        single = measure(max(1, repeat // 2))
    proc = subprocess.run([py, __file__, "--as-triton", torch_site, "--repeat", str(repeat)], capture_output=True,
                          text=True, env=dict(os.environ, TRITON_INTERPRET="1"))
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        raise SystemExit(f"Triton's interpreter failed ({py})")
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"{'kernel':52} {'tritium ms':>11} {'Triton ms':>11} {'speedup':>8}   {'tritium, unbatched ms':>22}")
    for name, t in ours.items():
        print(f"{name:52} {t:11.2f} {theirs[name]:11.2f} {theirs[name] / t:7.1f}x   {single[name]:22.2f}")


if __name__ == "__main__":
    main()
