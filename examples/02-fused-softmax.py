"""
Fused softmax
=============

Softmax of each row of a matrix in one pass over memory: a program loads whole rows, subtracts the
row maximum (for numerical stability), exponentiates, normalizes and stores. Shows reductions
(`tl.max`, `tl.sum`), `tl.exp`, `other=` for masked-off lanes, and a persistent loop over rows with
`tl.range`.

Run: python examples/02-fused-softmax.py
"""
import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    first_row = tl.program_id(0)
    row_step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    for row in tl.range(first_row, n_rows, row_step):
        # masked-off lanes read -inf so that they change neither the maximum nor the sum
        x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
        z = x - tl.max(x, axis=0)
        num = tl.exp(z)
        den = tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


#: what CI compiles for GPU targets without a GPU (tests/nvidia_compile): (kernel, signature, constexprs)
COMPILE_CASES = [(softmax_kernel, {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": "i32",
                                   "out_row_stride": "i32", "n_rows": "i32", "n_cols": "i32",
                                   "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 1024})]

def softmax(x, out=None, programs=None):
    n_rows, n_cols = x.shape
    out = (np.empty_like(x) if isinstance(x, np.ndarray) else x.new_empty(x.shape)) if out is None else out
    block = triton.next_power_of_2(n_cols)
    if programs is None:
        programs = min(n_rows, 4096)
    strides = (x.strides[0] // x.itemsize, out.strides[0] // out.itemsize) if isinstance(x, np.ndarray) \
        else (x.stride(0), out.stride(0))
    softmax_kernel[(programs, )](out, x, strides[0], strides[1], n_rows, n_cols, BLOCK_SIZE=block)
    return out


def main():
    import torch

    from _bench import device, interleaved, line, triton_twin
    dev = device()
    if dev == "cpu":
        x = torch.randn(4096, 1024)
        out = softmax(x, programs=64)
        torch.testing.assert_close(out, torch.softmax(x, dim=1), atol=1e-6, rtol=1e-5)
        gb = 2 * x.numel() * 4 / 1e9
        t = interleaved({"tritium": lambda: softmax(x, out, programs=64), "torch": lambda: torch.softmax(x, dim=1)},
                        dev)
        line("softmax fp32 4096x1024 (cpu)", t["tritium"], "torch", t["torch"], "GB/s", gb)
        return
    x = torch.randn(32768, 4096, device="cuda")
    out = softmax(x, programs=132 * 8)
    torch.testing.assert_close(out, torch.softmax(x, dim=1))
    gb = 2 * x.numel() * 4 / 1e9
    fns = {"tritium": lambda: softmax(x, out, programs=132 * 8), "torch": lambda: torch.softmax(x, dim=1)}
    twin = triton_twin(__file__)
    if twin is not None:
        out2 = twin.softmax(x, programs=132 * 8)
        torch.testing.assert_close(out2, torch.softmax(x, dim=1))
        fns["Triton"] = lambda: twin.softmax(x, out2, programs=132 * 8)
    t = interleaved(fns, dev)
    for ref in ("Triton", "torch"):
        if ref in t:
            line("softmax fp32 32768x4096 (gpu)", t["tritium"], ref, t[ref], "GB/s", gb)


if __name__ == "__main__":
    main()
