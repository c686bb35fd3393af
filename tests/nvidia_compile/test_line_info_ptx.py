"""Python source lines reach the PTX (``.file``/``.loc``) of a kernel compiled for sm_90, and ptxas accepts it;
TRITON_DISABLE_LINE_INFO=1 leaves none; the instructions are the same either way."""
from __future__ import annotations

import inspect
import os
import re
import shutil

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@tritium.jit
def shifted_add(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)  # line: load
    z = x * 3.0  # line: mul
    tl.store(out_ptr + offs, z, mask=m)  # line: store


SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


def source_line(tag: str) -> int:
    lines, first = inspect.getsourcelines(shifted_add.fn)
    hits = [first + i for i, text in enumerate(lines) if text.rstrip().endswith(f"# line: {tag}")]
    assert len(hits) == 1
    return hits[0]


@pytest.fixture
def nvidia(fresh_cache):
    from tritium import knobs, plugins
    registry = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(registry), knobs.compilation.scope():
        yield knobs


def compile_kernel():
    return tritium.compile(ASTSource(shifted_add, SIG, {"BLOCK": 256}), target=GPUTarget("cuda", 90, 32))


def code(ptx: str) -> list[str]:
    """The PTX instructions, without the line-table directives and debug sections."""
    ptx = re.sub(r"\.section\s+\.debug\w*\s*\{[^}]*\}", "", ptx)
    lines = [ln.split("//")[0].strip() for ln in ptx.splitlines()]   # comments number call sequences
    return [ln for ln in lines if ln and not ln.startswith((".loc", ".file", "$L__"))]


def test_ptx_has_file_and_loc_of_the_kernel_lines(nvidia):
    k = compile_kernel()
    ptx = k.asm["ptx"]
    files = dict(re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.M))
    ours = [n for n, path in files.items() if os.path.basename(path) == "test_line_info_ptx.py"]
    assert ours, files
    # each .loc applies to the instructions after it
    current, seen = None, {"ld.global": set(), "mul.": set(), "st.global": set()}
    for ln in ptx.splitlines():
        m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)\s+\d+", ln)
        if m:
            current = int(m.group(2)) if m.group(1) in ours else None
            continue
        ins = re.sub(r"^@!?%p\d+\s+", "", ln.strip())     # predicated loads and stores are inline asm
        for prefix in seen:
            if ins.startswith(prefix) and current is not None:
                seen[prefix].add(current)
    assert source_line("load") in seen["ld.global"], seen
    assert source_line("mul") in seen["mul."], seen
    assert source_line("store") in seen["st.global"], seen
    # no `.target sm_90a, debug`: that would make ptxas build an unoptimized debug cubin
    assert not re.search(r"^\.target .*debug", ptx, re.M)
    cubin = k.asm["cubin"]
    assert cubin[:4] == b"\x7fELF" and b".nv_debug_line_sass" in cubin    # ptxas accepted it, kept the lines


def test_disabled_line_info_leaves_no_loc_and_the_same_instructions(nvidia):
    with_lines = compile_kernel()
    nvidia.compilation.disable_line_info = True
    k = compile_kernel()
    assert k.hash != with_lines.hash
    ptx = k.asm["ptx"]
    assert ".loc" not in ptx and ".file" not in ptx and "!dbg" not in k.asm["llir"]
    assert code(ptx) == code(with_lines.asm["ptx"])
    assert k.asm["cubin"][:4] == b"\x7fELF" and b".debug_line" not in k.asm["cubin"]


def test_use_ir_loc_makes_the_ptx_point_at_the_ttgir_file(nvidia):
    nvidia.compilation.use_ir_loc = "ttgir"
    ptx = compile_kernel().asm["ptx"]
    path = re.search(r'^\s*\.file\s+1\s+"([^"]+)"', ptx, re.M).group(1)
    assert path.endswith(".ttgir")
    with open(path) as f:
        ir_lines = f.read().splitlines()
    current, checked = None, 0
    for ln in ptx.splitlines():
        m = re.match(r"\s*\.loc\s+1\s+(\d+)", ln)
        if m:
            current = int(m.group(1))
            continue
        ins = re.sub(r"^@!?%p\d+\s+", "", ln.strip())
        for prefix, op in (("ld.global", '"tt.load"'), ("st.global", '"tt.store"'), ("mul.f32", "arith.mulf")):
            if ins.startswith(prefix):
                assert op in ir_lines[current - 1], (ins, ir_lines[current - 1])
                checked += 1
    assert checked >= 3
