"""examples/07's attention forward and backward compiled for sm_90a at the tutorial's settings under chosen NVIDIA
knobs, and the PTX loops that issue an instruction: the attention PTX tests (test_attention_*.py,
test_wgmma_joined_wait.py) share this instead of each loading the example and spelling its signature."""
from __future__ import annotations

import re
from typing import Any

from example_modules import example

BWD_SIGNATURE = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "DO": "*fp16", "DQ": "*fp16",
                 "DK": "*fp16", "DV": "*fp16", "M": "*fp32", "D": "*fp32", "stride_z": "i32", "stride_h": "i32",
                 "stride_tok": "i32", "H": "i32", "N_CTX": "i32"}
# the launch's specialization: every pointer, stride and the sequence length a multiple of 16
BWD_ATTRS = {name: [["tt.divisibility", 16]] for name in ("Q", "K", "V", "DO", "DQ", "DK", "DV", "M", "D",
                                                          "stride_z", "stride_h", "stride_tok", "N_CTX")}
FWD_SIGNATURE = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "M": "*fp32", "Out": "*fp16",
                 "stride_z": "i32", "stride_h": "i32", "stride_tok": "i32", "H": "i32"}
FWD_ATTRS = {name: [["tt.divisibility", 16]] for name in ("Q", "K", "V", "M", "Out", "stride_z", "stride_h",
                                                          "stride_tok")}


def example07() -> Any:
    """The example's module (loaded once)."""
    return example("07-fused-attention.py")


def compile_bwd(D: int = 64, causal: bool = False, **knobs: Any) -> Any:
    """attn_bwd at head dim ``D`` with the example's BWD settings and the NVIDIA ``knobs`` (names of
    tritium_nvidia.knobs.nvidia) set for this compile only."""
    ex = example07()
    consts = dict(ex.BWD, HEAD_DIM=D, CAUSAL=causal)
    opts = {"num_warps": consts.pop("num_warps"), "num_stages": consts.pop("num_stages")}
    sig = dict(BWD_SIGNATURE, **{k: "constexpr" for k in consts})
    return _compile(ex.attn_bwd, sig, consts, BWD_ATTRS, opts, knobs)


def compile_fwd(D: int = 64, causal: bool = False, stages: int | None = None, **knobs: Any) -> Any:
    """attn_fwd at head dim ``D`` over N_CTX 4096 with the example's fixed config for ``D`` (``stages`` instead of
    its stage count if given) and the NVIDIA ``knobs`` set for this compile only."""
    ex = example07()
    BM, BN, warps, S = ex.FWD_CONFIGS[D]
    consts = {"N_CTX": 4096, "HEAD_DIM": D, "BLOCK_M": BM, "BLOCK_N": BN, "STAGE": 3 if causal else 1}
    sig = dict(FWD_SIGNATURE, **{k: "constexpr" for k in consts})
    return _compile(ex.attn_fwd, sig, consts, FWD_ATTRS, {"num_warps": warps, "num_stages": stages or S}, knobs)


def _compile(fn: Any, sig: dict, consts: dict, attrs: dict, opts: dict, knobs: dict) -> Any:
    import tritium
    from tritium import plugins
    from tritium.backends.compiler import GPUTarget
    from tritium.compiler import ASTSource
    from tritium_nvidia.knobs import nvidia
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        for name, value in knobs.items():
            setattr(nvidia, name, value)
        return tritium.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", 90, 32), options=opts)


def loops_issuing(ptx: str, instruction: str) -> list[str]:
    """The bodies of the PTX's loops (label .. backward branch to it) that issue ``instruction``."""
    out = []
    for m in re.finditer(r"^\s*@%p\d+ bra\s+(\$L__BB\d+_\d+);", ptx, re.M):
        start = ptx.find(m.group(1) + ":")
        if 0 <= start < m.start() and instruction in ptx[start:m.end()]:
            out.append(ptx[start:m.end()])
    return out


def dot_loops(ptx: str) -> list[str]:
    """The loops that issue wgmma."""
    return loops_issuing(ptx, "wgmma.mma_async")
