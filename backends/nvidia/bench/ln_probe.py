"""Layer norm (examples/04) under tritium compiler variants and Triton 3.6, one process, CUDA-event medians.
Variants undo this session's compiler changes (PERF.md, "Layer norm at 4 warps"): ``nodedup`` computes masks per
element again, ``noregroup`` skips the SLP regrouping pass, ``final`` leaves the choice to the default
(``TRITIUM_NVIDIA_REGROUP=auto``: regrouped only where ptxas then needs fewer registers), the others regroup always,
``base`` neither dedups nor regroups. Usage: ln_probe.py [variant ...]"""
import importlib.util
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
from _bench import median_ms, triton_twin  # noqa: E402

EX = os.path.join(ROOT, "examples", "04-layer-norm.py")
os.environ["TRITON_ALWAYS_COMPILE"] = "1"
VARIANTS = sys.argv[1:] or ["base", "nodedup", "noregroup", "final"]


def patched(name):
    """Undo the changes a variant names (restored afterwards by the caller)."""
    from tritium.gpu.lower import basic
    from tritium_nvidia import compiler
    from tritium_nvidia.knobs import nvidia
    saved = (basic.constant_groups, compiler.regroup, nvidia.regroup)
    if name in ("base", "nodedup"):
        basic.constant_groups = lambda ctx, res, lay: list(range(lay.num_regs))
    # TRITIUM_NVIDIA_REGROUP: 1 always regroups, 0 never; the default ("auto", kept by "final") regroups only
    # where ptxas then needs fewer registers
    nvidia.regroup = "0" if name in ("base", "noregroup") else "auto" if name == "final" else "1"
    return saved


def restore(saved):
    from tritium.gpu.lower import basic
    from tritium_nvidia import compiler
    from tritium_nvidia.knobs import nvidia
    basic.constant_groups, compiler.regroup, nvidia.regroup = saved


def fresh(tag):
    spec = importlib.util.spec_from_file_location(f"ln_{tag}", EX)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    from tritium_nvidia import toolchain
    p = toolchain.find_ptxas()
    print("ptxas", p, toolchain.ptxas_version(p) if p else None, flush=True)
    M, N = 32768, 4096
    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    w = torch.rand(N, device="cuda", dtype=torch.float16)
    b = torch.rand(N, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    mean = torch.empty(M, device="cuda", dtype=torch.float32)
    rstd = torch.empty(M, device="cuda", dtype=torch.float32)
    ref = torch.nn.functional.layer_norm(x, (N, ), w, b, 1e-5)
    gb = 2 * x.numel() * 2 / 1e9
    twin = triton_twin(EX)
    for W in (4, 8):
        def tri():
            twin.layer_norm_fwd[(M, )](x, y, w, b, mean, rstd, x.stride(0), N, 1e-5, BLOCK_SIZE=4096, num_warps=W)
        tri()
        torch.testing.assert_close(y, ref, atol=1e-2, rtol=0)
        t_tri = median_ms(tri, "cuda")
        for name in VARIANTS:
            saved = patched(name)
            mod = fresh(f"{name}{W}")

            def ours():
                mod.layer_norm_fwd[(M, )](x, y, w, b, mean, rstd, x.stride(0), N, 1e-5, BLOCK_SIZE=4096,
                                          num_warps=W)
            y.zero_()
            ours()
            torch.cuda.synchronize()
            restore(saved)
            torch.testing.assert_close(y, ref, atol=1e-2, rtol=0)
            t = median_ms(ours, "cuda", min_time=0.6)
            t_tri2 = median_ms(tri, "cuda", min_time=0.3)
            tt = min(t_tri, t_tri2)
            line = (f"warps={W} {name:10s} tritium {gb / (t * 1e-3):7.1f} GB/s | Triton {gb / (tt * 1e-3):7.1f} GB/s "
                    f"| ratio {tt / t:.3f}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
