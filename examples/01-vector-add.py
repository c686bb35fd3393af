"""
Vector addition
===============

The first tritium kernel: each program adds one block of two vectors. Shows `@triton.jit`,
`tl.program_id`, `tl.arange`, masked `tl.load`/`tl.store`, and launching over a grid.

Run: python examples/01-vector-add.py   (on a GPU it also runs the same kernel under Triton)
"""
import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # the last block may run past the end of the vectors: mask those lanes off
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


#: what CI compiles for GPU targets without a GPU (tests/nvidia_compile): (kernel, signature, constexprs)
COMPILE_CASES = [(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32",
                               "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 1024})]

def add(x, y, out=None, block=1024):
    out = np.empty_like(x) if out is None and isinstance(x, np.ndarray) else (out if out is not None else x.new_empty(x.shape))
    n = x.numel() if hasattr(x, "numel") else x.size
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]), )
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=block)
    return out


def main():
    from _bench import device, interleaved, line, triton_twin
    dev = device()
    if dev == "cpu":
        n = 1 << 24
        rng = np.random.default_rng(0)
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        out = np.empty_like(x)
        add(x, y, out, block=4096)
        np.testing.assert_allclose(out, x + y)
        ref = np.empty_like(x)
        gb = 3 * n * 4 / 1e9
        t = interleaved({"tritium": lambda: add(x, y, out, block=4096), "numpy": lambda: np.add(x, y, out=ref)}, dev)
        line("vector-add fp32 n=2^24 (cpu)", t["tritium"], "numpy", t["numpy"], "GB/s", gb)
        return
    import torch
    n = 1 << 28
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = add(x, y)
    torch.testing.assert_close(out, x + y)
    gb = 3 * n * 4 / 1e9
    fns = {"tritium": lambda: add(x, y, out), "torch": lambda: torch.add(x, y, out=out)}
    twin = triton_twin(__file__)
    if twin is not None:
        out2 = twin.add(x, y)
        torch.testing.assert_close(out2, x + y)
        fns["Triton"] = lambda: twin.add(x, y, out2)
    t = interleaved(fns, dev)
    for ref in ("Triton", "torch"):
        if ref in t:
            line("vector-add fp32 n=2^28 (gpu)", t["tritium"], ref, t[ref], "GB/s", gb)


if __name__ == "__main__":
    main()
