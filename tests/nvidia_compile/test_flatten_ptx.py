"""examples/08's persistent descriptor matmul on sm_90a with ``tl.range(..., flatten=True)``: the tile loop and the K
loop are one loop (as Triton 3.6 fuses them), so the TMA loads of the next tile are issued while this tile's last
K steps run, instead of draining the pipeline and refilling it at every tile. The accumulator's wgmma stays in
flight across iterations (``wgmma.wait_group 1``); the branch that ends a tile waits for it, stores the tile and
resets it. ptxas must not serialize the wgmma instructions (its C7514/C7515 notes: registers of a running dot read
or written between them) and must not spill. Results: tests/gpu/test_flatten.py (emulator and GPU)."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

PTXAS = os.environ.get("TRITON_PTXAS_PATH") or shutil.which("ptxas")
pytestmark = pytest.mark.skipif(PTXAS is None, reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "08-persistent-matmul-descriptors.py")
CONFIGS = {"fp8e4nv": (128, 256, 128), "fp16": (128, 256, 64)}


def _compile(dt: str):
    from tritium import plugins
    spec = importlib.util.spec_from_file_location("ex08_flatten", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    BM, BN, BK = CONFIGS[dt]
    cdt = "fp16" if dt == "fp8e4nv" else dt
    sig = {"a_desc": f"tensordesc<{dt}[{BM}, {BK}]>", "b_desc": f"tensordesc<{dt}[{BN}, {BK}]>",
           "c_desc": f"tensordesc<{cdt}[{BM}, {BN}]>", "M": "i32", "N": "i32", "K": "i32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "GROUP_M": "constexpr", "NUM_SMS": "constexpr",
           "WARP_SPECIALIZE": "constexpr"}
    consts = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8, NUM_SMS=132, WARP_SPECIALIZE=False)
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        return tritium.compile(ASTSource(mod.matmul_persistent, sig, consts, {}), target=GPUTarget("cuda", 90, 32),
                               options={"num_warps": 8, "num_stages": 3})


def _dot_loops(ttgir: str) -> list[set[str]]:
    """For each innermost ``scf.for`` holding a ``tt.dot``: the names of the ops inside it."""
    from tritium._mlir import parse_module, walk_children

    def nested(op) -> list:
        out = []
        for o in walk_children(op):
            out.append(o)
            out.extend(nested(o))
        return out

    module = parse_module(ttgir)
    loops = [o for o in nested(module.operation) if o.name == "scf.for"
             and any(x.name == "tt.dot" for x in nested(o))
             and not any(x.name == "scf.for" and any(y.name == "tt.dot" for y in nested(x)) for x in nested(o))]
    return [{x.name for x in nested(o)} for o in loops]


@pytest.mark.parametrize("dt", ["fp8e4nv", "fp16"])
def test_persistent_loop_is_flattened(isolated_tritium, tmp_path, dt):
    k = _compile(dt)
    loops = _dot_loops(k.asm["ttgir"])
    # one loop over tiles and K steps: the epilogue's store is in the dot's loop, as are the tile's coordinates;
    # the unfused twin (for programs without K steps; LLVM drops its dot) keeps its K loop
    fused = [names for names in loops if "tt.descriptor_store" in names]
    assert len(loops) == 2 and len(fused) == 1, loops
    assert {"tt.descriptor_load", "arith.remsi"} <= fused[0], sorted(fused[0])
    ptx = k.asm["ptx"]
    # the dot runs on across iterations; only the tile's last K step waits for it (in the branch that stores)
    assert re.search(r"wgmma\.wait_group\.sync\.aligned 1;", ptx)
    # the stage the previous K step read is refilled before the epilogue, not after it (as Triton orders them)
    after = ptx[ptx.index("wgmma.commit_group"):]
    assert after.index("cp.async.bulk.tensor.2d.shared::cluster.global") < \
        after.index("cp.async.bulk.tensor.2d.global.shared"), "the epilogue delays the next stage's loads"
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    out = subprocess.run([PTXAS, "-v", "--gpu-name", "sm_90a", str(src), "-o", str(tmp_path / "k.cubin")],
                         capture_output=True, text=True, check=True)
    notes = out.stdout + out.stderr
    assert "C7514" not in notes and "C7515" not in notes and "serialized" not in notes, notes
    assert re.search(r"\b0 bytes spill stores", notes), notes
    # the C tile has a buffer of its own beside the three stages (the stages are live through the store)
    BM, BN, BK = CONFIGS[dt]
    stage = (BM + BN) * BK * (1 if dt == "fp8e4nv" else 2)
    assert k.metadata_dict["shared"] >= 3 * stage + BM * BN * 2
