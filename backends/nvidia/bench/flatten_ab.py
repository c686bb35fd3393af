"""examples/08's persistent descriptor matmul with its tile loop fused with the K loop (``flatten=True``, as the
example writes it) and not fused (the same source with ``flatten=False``), beside Triton 3.6 (which fuses it), in one
process: CUDA-event medians, the three alternated over ``ROUNDS`` rounds so that drift hits them alike.

    python backends/nvidia/bench/flatten_ab.py [dtype names: float16 bfloat16 float8_e4m3fn float32]
"""
from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
EXAMPLE = os.path.join(ROOT, "examples", "08-persistent-matmul-descriptors.py")
ROUNDS = 3
sys.path.insert(0, os.path.join(ROOT, "examples"))


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    import torch

    from _bench import median_ms, triton_twin
    fused = _load(EXAMPLE, "ex08_fused")
    src = open(EXAMPLE).read()
    assert src.count("flatten=True") == 1
    d = tempfile.mkdtemp(prefix="flatten-ab-")
    path = os.path.join(d, "ex08_unfused.py")
    with open(path, "w") as f:
        f.write(src.replace("flatten=True", "flatten=False"))
    unfused = _load(path, "ex08_unfused")
    theirs = triton_twin(EXAMPLE)
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    M = N = K = 8192
    names = sys.argv[1:] or ["float8_e4m3fn", "float16", "bfloat16", "float32"]
    rows = []
    for name in names:
        cfg = fused.CONFIGS[name]
        mods = {"fused": fused, "unfused": unfused, "triton": theirs}
        errs, times = {}, {k: [] for k in mods}
        for k, mod in mods.items():
            errs[k] = f"{fused.check(mod, name, 512, 768, 1024, 'cuda', num_sms, cfg):.2e}"
        a, b, c = fused.inputs(name, M, N, K, "cuda")
        for _ in range(ROUNDS):
            for k, mod in mods.items():
                times[k].append(median_ms(lambda mod=mod: mod.matmul(a, b, c, num_sms, cfg), "cuda"))
        tf = {k: 2 * M * N * K / (statistics.median(v) * 1e-3) / 1e12 for k, v in times.items()}
        line = (f"descriptor matmul {name} {M}^3 {cfg}: tritium fused {tf['fused']:.0f} | unfused {tf['unfused']:.0f} | "
                f"Triton {tf['triton']:.0f} TFLOP/s | fused/Triton {tf['fused'] / tf['triton']:.3f}x, unfused/Triton "
                f"{tf['unfused'] / tf['triton']:.3f}x | rel err {errs['fused']} / {errs['unfused']} / {errs['triton']}")
        print(line, flush=True)
        rows.append(line)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
