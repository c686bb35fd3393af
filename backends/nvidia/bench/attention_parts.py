"""Where examples/07's attention time goes, kernel by kernel and part by part, tritium beside Triton 3.6 in one
process (B4 H32 N4096 fp16, D64 by default; CUDA-event medians, the two sides taking turns, reversed every other
round).

The kernels are launched directly (not through examples/07's forward()/backward(), whose torch work - the scaled K,
the empty outputs - is the same on both sides and is timed once, apart):

- bwd_pre: attn_bwd_preprocess (Delta = rowsum(O * dO)), the tutorial's grid (N / 128, B * H);
- bwd: attn_bwd, grid (N / BLOCK_N1, 1, B * H) as the tutorial's; and parts of it from a patched copy of the
  example whose attn_bwd takes a constexpr PARTS (bit 1: the dK/dV diagonal (masked) loop, 2: the dK/dV loop below
  it, 4: the dQ diagonal (masked) loop, 8: the dQ loop left of it; PARTS=15 is the example's kernel; dK, dV and dQ
  are stored whatever runs);
- fwd: attn_fwd at the tutorial's fixed config, causal, whole (FPARTS=3), the blocks left of the diagonal only
  (FPARTS=1) and the diagonal only (FPARTS=2), and the non-causal kernel for reference.

A part's time is what a kernel running only that part takes (its own prologue and epilogue included), so parts do
not add up to the whole exactly; what they show is which part the ratio to Triton comes from. A part kernel needs
fewer registers than the whole and may run more CTAs per SM on one side than on the other (tritium's dQ-only
backward: 162 registers, 3 CTAs per SM; Triton's 170, 2): each line prints registers / shared memory / CTAs per SM
of both sides, and a part's ratio speaks for the whole kernel only where those match. The patched copy is
written afresh from examples/07 on every run, so it follows the example.

    TRITON_CACHE_DIR=/tmp/attn-parts python3 backends/nvidia/bench/attention_parts.py
env: HB_D=64  HB_ROUNDS=5  HB_MIN_T=0.1  HB_ONLY=<comma-separated case names>  HB_CHECK=1 (compare outputs)
     HB_VARIANTS="name:knob=value+knob=value,..." (tritium_nvidia knobs; each variant its own load of the copy,
     timed beside the defaults and Triton)  HB_VCASES=<case names the variants run on; default all>
"""
from __future__ import annotations

import math
import os
import sys
import tempfile
from typing import Any, Callable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EX = os.path.join(ROOT, "examples", "07-fused-attention.py")
Z, H, N = 4, 32, 4096

# (old, new) text replacements that turn examples/07 into the patched copy; each must match exactly once
_BWD_CALLS = [
    ("        dk, dv = _bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, MASK_BLOCK_M1,", 1),
    ("    dk, dv = _bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, BLOCK_M1, BLOCK_N1,", 2),
    ("        dq = _bwd_dq(dq, q, K, V, do, m, D, stride_tok, BLOCK_M2, MASK_BLOCK_N2,", 4),
    ("    dq = _bwd_dq(dq, q, K, V, do, m, D, stride_tok, BLOCK_M2, BLOCK_N2, HEAD_DIM, start_m,", 8),
]
_PATCHES = [
    ("HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr):",
     "HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, PARTS: tl.constexpr = 15):"),
    ("BLOCK_N: tl.constexpr, STAGE: tl.constexpr):",
     "BLOCK_N: tl.constexpr, STAGE: tl.constexpr, FPARTS: tl.constexpr = 3):"),
    ("    if STAGE & 1:\n        acc, l_i, m_i", "    if STAGE & FPARTS & 1:\n        acc, l_i, m_i"),
    ("    if STAGE & 2:\n        acc, l_i, m_i", "    if STAGE & FPARTS & 2:\n        acc, l_i, m_i"),
] + [(call, " " * (len(call) - len(call.lstrip())) + f"if PARTS & {bit}:\n    " + call) for call, bit in _BWD_CALLS]


def patched_source() -> str:
    src = open(EX).read()
    for old, new in _PATCHES:
        assert src.count(old) == 1, f"examples/07 changed: {old!r} found {src.count(old)} times"
        src = src.replace(old, new)
    return src


def write_copy() -> str:
    d = tempfile.mkdtemp(prefix="attn-parts-")
    path = os.path.join(d, "ex07_parts.py")
    with open(path, "w") as f:
        f.write(patched_source())
    return path


def load(path: str, tag: str) -> Any:
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"ex07_parts_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def parse_variants(text: str) -> dict[str, dict[str, Any]]:
    """"carry:carry_dots=1,cra:carry_register_a=1" -> {"carry": {"carry_dots": True}, ...} (typed by the knob)."""
    from tritium_nvidia.knobs import nvidia
    out: dict[str, dict[str, Any]] = {}
    for item in filter(None, text.split(",")):
        name, _, settings = item.partition(":")
        out[name] = {}
        for kv in filter(None, settings.split("+")):
            k, _, v = kv.partition("=")
            cur = getattr(nvidia, k)
            out[name][k] = (v in ("1", "true", "True")) if isinstance(cur, bool) else type(cur)(v) \
                if cur is not None else v
    return out


def scoped(settings: dict[str, Any], f: Callable[[], Any]) -> Callable[[], Any]:
    from tritium_nvidia.knobs import nvidia

    def g() -> Any:
        with nvidia.scope():
            for k, v in settings.items():
                setattr(nvidia, k, v)
            return f()
    return g


def cases(D: int, q, k, v, do, o, M, causal_o, causal_M):
    """name -> (function of the module that launches it, outputs to compare)."""
    import torch
    sm = 1 / math.sqrt(D)
    ks = k * (sm * 1.4426950408889634)
    out: dict[str, tuple[Callable[[Any], Any], Any]] = {}

    def pre(m, o=o):
        delta = torch.empty_like(M)
        LAST[id(m)] = m.attn_bwd_preprocess[(N // 128, Z * H)](o, do, delta, N, BLOCK_M=128, HEAD_DIM=D)
        return delta
    out["bwd_pre"] = pre
    bufs = {}
    for causal in (False, True):
        oo, MM = (causal_o, causal_M) if causal else (o, M)
        delta = torch.empty_like(MM)

        def bwd(m, parts, causal=causal, MM=MM, delta=delta, oo=oo):
            if id(m) not in bufs:
                bufs[id(m)] = tuple(torch.empty_like(q) for _ in range(3))
            dq, dk, dv = bufs[id(m)]
            bw = dict(m.BWD)
            LAST[id(m)] = m.attn_bwd[(N // bw["BLOCK_N1"], 1, Z * H)](
                q, ks, v, sm, do, dq, dk, dv, MM, delta, q.stride(0), q.stride(1), q.stride(2), H, N, HEAD_DIM=D,
                CAUSAL=causal, PARTS=parts, **bw)
            return dq, dk, dv
        # Delta from the tritium-independent torch formula, so both sides read the same
        delta.copy_((oo.float() * do.float()).sum(-1))
        c = "c" if causal else ""
        out[f"bwd{c}"] = lambda m, bwd=bwd: bwd(m, 15)
        if causal:
            for name, parts in (("dkdv_diag", 1), ("dkdv_rest", 2), ("dq_diag", 4), ("dq_rest", 8)):
                out[f"bwdc_{name}"] = lambda m, bwd=bwd, p=parts: bwd(m, p)
        else:
            out["bwd_dkdv"] = lambda m, bwd=bwd: bwd(m, 2)
            out["bwd_dq"] = lambda m, bwd=bwd: bwd(m, 8)

    def fwd(m, stage, parts):
        BM, BN, warps, stages = m.FWD_CONFIGS[D]
        o2 = torch.empty_like(q)
        M2 = torch.empty((Z, H, N), device=q.device, dtype=torch.float32)
        LAST[id(m)] = m.attn_fwd[(triton_cdiv(N, BM), Z * H)](
            q, k, v, sm, M2, o2, q.stride(0), q.stride(1), q.stride(2), H, N_CTX=N, HEAD_DIM=D, BLOCK_M=BM,
            BLOCK_N=BN, STAGE=stage, FPARTS=parts, num_warps=warps, num_stages=stages)
        return o2, M2
    out["fwd"] = lambda m: fwd(m, 1, 3)
    out["fwdc"] = lambda m: fwd(m, 3, 3)
    out["fwdc_left"] = lambda m: fwd(m, 3, 1)
    out["fwdc_diag"] = lambda m: fwd(m, 3, 2)
    return out


#: module id -> the kernel its last launch returned (registers and shared memory are printed per case)
LAST: dict[int, Any] = {}


def occupancy(k: Any, warps: int = 4) -> str:
    """"regs/smem B/CTAs per SM" of a launched kernel (H200: 64K registers, allocated per warp in 256s; 227 KiB
    of shared memory per SM). A part kernel may run more CTAs per SM than the whole: its time then is not the
    part's share of the whole kernel's."""
    regs = int(getattr(k, "n_regs", 0) or 0)
    md = getattr(k, "metadata", None)
    smem = int(getattr(md, "shared", 0) or 0)
    if not regs:
        return "?"
    warps = int(getattr(md, "num_warps", warps) or warps)
    by_regs = 65536 // (-(-regs // 8) * 8 * 32 * warps)
    by_smem = 232448 // (smem + 1024) if smem else 32
    return f"{regs}r/{smem}B/{min(by_regs, by_smem)}"


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def main() -> None:
    import torch
    D = int(os.environ.get("HB_D", "64"))
    rounds, min_t = int(os.environ.get("HB_ROUNDS", "5")), float(os.environ.get("HB_MIN_T", "0.1"))
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from _bench import interleaved, triton_twin
    path = write_copy()
    tt, tr = load(path, "tritium"), triton_twin(path)
    variants = parse_variants(os.environ.get("HB_VARIANTS", ""))
    vmods = {n: load(path, n) for n in variants}
    vcases = [c for c in os.environ.get("HB_VCASES", "").split(",") if c]
    torch.manual_seed(D)
    q, k, v, do = (torch.randn((Z, H, N, D), device="cuda", dtype=torch.float16) for _ in range(4))
    sm = 1 / math.sqrt(D)
    o, M = tr.forward(q, k, v, False, sm)
    co, cM = tr.forward(q, k, v, True, sm)
    only = [c for c in os.environ.get("HB_ONLY", "").split(",") if c]
    allc = cases(D, q, k, v, do, o, M, co, cM)
    flops = 4 * Z * H * N * N * D
    for name, f in allc.items():
        if only and name not in only:
            continue
        got_tt, got_tr = f(tt), f(tr)
        torch.cuda.synchronize()
        if os.environ.get("HB_CHECK", "1") == "1":
            pairs = zip(got_tt, got_tr) if isinstance(got_tt, tuple) else [(got_tt, got_tr)]
            err = max((x.float() - y.float()).abs().max().item() for x, y in pairs)
        else:
            err = float("nan")
        fns = {"tritium": lambda f=f: f(tt), "triton": lambda f=f: f(tr)}
        for vn, settings in variants.items():
            if not vcases or name in vcases:
                fns[vn] = scoped(settings, lambda f=f, m=vmods[vn]: f(m))
                try:
                    got_v = fns[vn]()
                except Exception as e:          # a variant that does not compile is reported, not timed
                    print(f"  {name} {vn}: {type(e).__name__}: {e}", flush=True)
                    del fns[vn]
                    continue
                torch.cuda.synchronize()
                pairs = zip(got_v, got_tr) if isinstance(got_v, tuple) else [(got_v, got_tr)]
                err = max([err] + [(x.float() - y.float()).abs().max().item() for x, y in pairs])
        med = interleaved(fns, "cuda", rounds, min_t)
        a, b = med["tritium"] * 1e3, med["triton"] * 1e3
        extra = "".join(f" | {vn} {med[vn] * 1e3:9.1f} us ({b / (med[vn] * 1e3):.3f})" for vn in fns if vn in variants)
        occ = f"{occupancy(LAST.get(id(tt)))} vs {occupancy(LAST.get(id(tr)))}"
        print(f"D{D} {name:14s}: tritium {a:9.1f} us | Triton {b:9.1f} us | ratio {b / a:.3f} | diff {a - b:+7.1f} us"
              f" | max abs diff from Triton's {err:.1e} | regs/smem/CTAs per SM {occ}{extra}", flush=True)
    # the torch work examples/07's backward() does around the two kernels (the same on both sides)
    if not only or "torch" in only:
        def torch_side():
            k * (sm * 1.4426950408889634)
            torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), torch.empty_like(M)
        from _bench import median_ms
        print(f"D{D} torch (scaled K, outputs): {median_ms(torch_side, 'cuda') * 1e3:.1f} us; "
              f"whole-bwd FLOP {flops * 2.5 / 1e12:.3f} T (non-causal), fwd {flops / 1e12:.3f} T", flush=True)


if __name__ == "__main__":
    main()
