"""examples/07's attention (forward at the tutorial's fixed configs, backward at its settings), B4 H32 N4096 fp16,
under several tritium knob settings beside Triton 3.6 in one process: CUDA-event medians, the variants taking
turns (reversed every other round), TFLOP/s and the ratio to Triton's. Each variant is its own load of the example
(its JIT functions keep the kernel compiled under its settings). Run it with a cache directory of its own (the
"nosplit" variant patches the lowering, which the cache key cannot see):

    TRITON_CACHE_DIR=/tmp/attn-ab python3 backends/nvidia/bench/attention_ab.py
env: H3_CASES=64:0,64:1,128:0,128:1 (head dim:causal)  H3_WHAT=fwd,bwd  H3_FVARIANTS / H3_BVARIANTS (names from
VARIANTS)  H3_ROUNDS=5  H3_MIN_T=0.12
"""
from __future__ import annotations

import importlib.util
import math
import os
import sys
from typing import Any, Callable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EX = os.path.join(ROOT, "examples", "07-fused-attention.py")

# name -> NVIDIA knob settings. new: the defaults; lsr1: LLVM's loop strength reduction kept (before 3382fe7);
# uw0: wgmma's warpgroup index from tid >> 5; s2: the fixed config at 2 stages; nosplit: the shared-offset split of
# 5967ae5 patched out; carry: P @ V left running into the next iteration; cra1: the backward's last register-A dots
# (dK, dQ) left running into the next iteration in every loop (TRITIUM_NVIDIA_CARRY_REGISTER_A=1); er: the staged row
# vectors (M, Di) read before the dot ahead of their use (TRITIUM_NVIDIA_EARLY_ROW_READS); cra1er: both (the default
# since the eighth session); bwd0: both off (the backward before it); dec8 / dec4: the forward's loops on barriers per
# stage, copies one iteration ahead, in kernels of >= 8 / >= 4 warps (TRITIUM_NVIDIA_DECOUPLED_STAGES); dec8t: dec8 with
# the two warpgroups taking turns at the dots (TRITIUM_NVIDIA_WARPGROUP_TURNS); dec0: the stage barriers off (the
# forward before the ninth session; dec8 is the default since)
VARIANTS = {"new": {}, "lsr1": {"lsr": "1"}, "uw0": {"uniform_warp": False},
            "lsr1uw0": {"lsr": "1", "uniform_warp": False}, "s2": {}, "s2lsr1": {"lsr": "1"},
            "nosplit": {}, "carry": {"carry_dots": True}, "cra1": {"carry_register_a": 1},
            "er": {"early_row_reads": True}, "cra1er": {"carry_register_a": 1, "early_row_reads": True},
            "bwd0": {"carry_register_a": 0, "early_row_reads": False},
            "dec8": {"decoupled_stages": 8}, "dec4": {"decoupled_stages": 4},
            "dec8t": {"decoupled_stages": 8, "warpgroup_turns": True}, "dec0": {"decoupled_stages": 0}}
STAGES = {"s2": 2, "s2lsr1": 2}
Z, H, N = 4, 32, 4096


def load(tag: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"ex07_{tag}", EX)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _without_split(f: Callable[[], Any]) -> Any:
    # compiled afresh with tiles.split_offset patched out (no knob for it; not in the cache key)
    import tritium
    import tritium.gpu.lower.tiles as tiles
    keep, calls = tiles.split_offset, []
    tiles.split_offset = lambda *a: calls.append(1)
    try:
        with tritium.knobs.compilation.scope():
            tritium.knobs.compilation.always_compile = True
            return f()
    finally:
        tiles.split_offset = keep
        print(f"  nosplit: compiled with the split patched out ({len(calls)} tile addresses)", flush=True)


def scoped(tag: str, f: Callable[[], Any]) -> Callable[[], Any]:
    from tritium_nvidia.knobs import nvidia
    first = [True]

    def g() -> Any:
        if tag == "tri":
            return f()
        if tag == "nosplit" and first[0]:
            first[0] = False
            return _without_split(f)
        with nvidia.scope():
            for k, v in VARIANTS[tag].items():
                setattr(nvidia, k, v)
            return f()
    return g


def main() -> None:
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from _bench import triton_twin
    fv = os.environ.get("H3_FVARIANTS", "new,lsr1,uw0,lsr1uw0,s2,nosplit,carry").split(",")
    bv = os.environ.get("H3_BVARIANTS", "new,lsr1").split(",")
    mods = {t: load(t) for t in dict.fromkeys(fv + bv)}
    tw = triton_twin(EX)
    rounds, min_t = int(os.environ.get("H3_ROUNDS", "5")), float(os.environ.get("H3_MIN_T", "0.12"))
    for case in os.environ.get("H3_CASES", "64:0,64:1,128:0,128:1").split(","):
        run_case(int(case.split(":")[0]), case.split(":")[1] == "1", mods, tw, fv, bv, rounds, min_t)


def run_case(D: int, causal: bool, mods: dict, tw: Any, fv: list, bv: list, rounds: int, min_t: float) -> None:
    import torch
    torch.manual_seed(D + causal)
    q, k, v, do = (torch.randn((Z, H, N, D), device="cuda", dtype=torch.float16) for _ in range(4))
    sm = 1 / math.sqrt(D)
    flops = 4 * Z * H * N * N * D * (0.5 if causal else 1.0)
    o, M = tw.forward(q, k, v, causal, sm)

    def bwd(m):
        return m.backward(q, k, v, o, M, do, causal, sm)

    def fwd(m, cfg):
        return m.forward(q, k, v, causal, sm, cfg)[0]

    for what in os.environ.get("H3_WHAT", "fwd,bwd").split(","):
        allm = {t: mods[t] for t in (fv if what == "fwd" else bv)}
        allm["tri"] = tw
        fns = {}
        for t, m in allm.items():
            cfg = tuple(m.FWD_CONFIGS[D][:3]) + (STAGES[t],) if t in STAGES else None
            call = (lambda m=m: bwd(m)) if what == "bwd" else (lambda m=m, cfg=cfg: fwd(m, cfg))
            fns[t] = scoped(t, call)
        ref = fns["tri"]()
        for t, f in fns.items():
            got = f()
            pairs = zip(got, ref, strict=True) if what == "bwd" else [(got, ref)]
            err = max((x.float() - y.float()).abs().max().item() for x, y in pairs)
            print(f"  D{D} causal={int(causal)} {what} {t}: max abs difference from Triton's {err:.1e}", flush=True)
        from _bench import interleaved
        med = interleaved(fns, "cuda", rounds, min_t)
        fl = flops * (2.5 if what == "bwd" else 1.0)
        tri = fl / med["tri"] / 1e9
        print(f"{what} D{D} causal={int(causal)}: " + " | ".join(
            f"{n} {fl / med[n] / 1e9:6.1f} ({fl / med[n] / 1e9 / tri:.3f})" for n in fns), flush=True)

if __name__ == "__main__":
    main()
