"""
Layer normalization (forward)
=============================

y = (x - mean(x)) / sqrt(var(x) + eps) * w + b for each row. A program handles one row: it walks the
row in blocks to compute the mean and the variance, then normalizes, scales and shifts. Shows loops
over blocks with loop-carried tiles, `tl.sqrt`, and storing the per-row statistics (which a backward
pass would reuse).

Run: python examples/04-layer-norm.py
"""
import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.0)
        acc += d * d
    var = tl.sum(acc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y, mask=mask)


#: what CI compiles for GPU targets without a GPU (tests/nvidia_compile): (kernel, signature, constexprs)
COMPILE_CASES = [(layer_norm_fwd, {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean": "*fp32",
                                   "Rstd": "*fp32", "stride": "i32", "N": "i32", "eps": "fp32",
                                   "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 4096})]

def layer_norm(x, w, b, eps=1e-5, y=None, mean=None, rstd=None, block=None):
    M, N = x.shape
    lib = np if isinstance(x, np.ndarray) else None
    if lib is not None:
        y = np.empty_like(x) if y is None else y
        mean = np.empty(M, np.float32) if mean is None else mean
        rstd = np.empty(M, np.float32) if rstd is None else rstd
        stride = x.strides[0] // x.itemsize
    else:
        import torch
        y = torch.empty_like(x) if y is None else y
        mean = torch.empty(M, dtype=torch.float32, device=x.device) if mean is None else mean
        rstd = torch.empty(M, dtype=torch.float32, device=x.device) if rstd is None else rstd
        stride = x.stride(0)
    block = block or min(triton.next_power_of_2(N), 65536 // x.element_size() if lib is None else 16384)
    layer_norm_fwd[(M, )](x, y, w, b, mean, rstd, stride, N, eps, BLOCK_SIZE=block)
    return y


def main():
    import torch

    from _bench import device, interleaved, line, triton_twin
    dev = device()
    if dev == "cpu":
        M, N = 4096, 1024
        x = torch.randn(M, N)
        w, b = torch.rand(N), torch.rand(N)
        y = layer_norm(x, w, b)
        ref = torch.nn.functional.layer_norm(x, (N, ), w, b, 1e-5)
        torch.testing.assert_close(y, ref, atol=1e-4, rtol=1e-4)
        gb = 2 * x.numel() * 4 / 1e9
        t = interleaved({"tritium": lambda: layer_norm(x, w, b, y=y),
                         "torch": lambda: torch.nn.functional.layer_norm(x, (N, ), w, b, 1e-5)}, dev)
        line("layer-norm fwd fp32 4096x1024 (cpu)", t["tritium"], "torch", t["torch"], "GB/s", gb)
        return
    M, N = 32768, 4096
    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    w = torch.rand(N, device="cuda", dtype=torch.float16)
    b = torch.rand(N, device="cuda", dtype=torch.float16)
    y = layer_norm(x, w, b)
    ref = torch.nn.functional.layer_norm(x, (N, ), w, b, 1e-5)
    torch.testing.assert_close(y, ref, atol=1e-2, rtol=0)
    gb = 2 * x.numel() * 2 / 1e9
    fns = {"tritium": lambda: layer_norm(x, w, b, y=y),
           "torch": lambda: torch.nn.functional.layer_norm(x, (N, ), w, b, 1e-5)}
    twin = triton_twin(__file__)
    if twin is not None:
        y2 = twin.layer_norm(x, w, b)
        torch.testing.assert_close(y2, ref, atol=1e-2, rtol=0)
        fns["Triton"] = lambda: twin.layer_norm(x, w, b, y=y2)
    t = interleaved(fns, dev)
    for ref_name in ("Triton", "torch"):
        if ref_name in t:
            line("layer-norm fwd fp16 32768x4096 (gpu)", t["tritium"], ref_name, t[ref_name], "GB/s", gb)


if __name__ == "__main__":
    main()
