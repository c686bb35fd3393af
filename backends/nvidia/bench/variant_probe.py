"""Vector add (examples/01) and softmax (examples/02) under the compiler variants of ln_probe.py and Triton 3.6,
one process, CUDA-event medians: did the layer-norm changes (PERF.md) cost other kernels anything?
Usage: variant_probe.py [variant ...]  (base, nodedup, noregroup, final)"""
import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, HERE)
from _bench import median_ms, triton_twin  # noqa: E402
from ln_probe import patched, restore  # noqa: E402  (also sets TRITON_ALWAYS_COMPILE)

VARIANTS = sys.argv[1:] or ["base", "nodedup", "noregroup", "final"]


def load(path, tag):
    spec = importlib.util.spec_from_file_location(tag, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ex_add = os.path.join(ROOT, "examples", "01-vector-add.py")
    ex_sm = os.path.join(ROOT, "examples", "02-fused-softmax.py")
    x = torch.randn(32768, 4096, device="cuda")
    ref = torch.softmax(x, dim=1)
    a = torch.rand(1 << 28, device="cuda")
    cases = [("softmax", ex_sm, lambda m, o: m.softmax(x, o, programs=132 * 8), 2 * x.numel() * 4 / 1e9, ref),
             ("add", ex_add, lambda m, o: m.add(a, a, o), 3 * a.numel() * 4 / 1e9, None)]
    for name, path, call, gb, want in cases:
        twin = triton_twin(path)
        out = torch.empty_like(x if name == "softmax" else a)
        call(twin, out)
        t_tri = median_ms(lambda: call(twin, out), "cuda")
        for variant in VARIANTS:
            saved = patched(variant)
            mod = load(path, f"{name}_{variant}")
            call(mod, out)
            torch.cuda.synchronize()
            restore(saved)
            if want is not None:
                torch.testing.assert_close(out, want)
            t = median_ms(lambda: call(mod, out), "cuda", min_time=0.6)
            tt = min(t_tri, median_ms(lambda: call(twin, out), "cuda", min_time=0.3))
            print(f"{name:8s} {variant:10s} tritium {gb / (t * 1e-3):7.1f} GB/s | Triton {gb / (tt * 1e-3):7.1f} GB/s"
                  f" | ratio {tt / t:.3f}", flush=True)


if __name__ == "__main__":
    main()
