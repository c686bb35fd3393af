"""LLVM_EXTRACT_DI_LOCAL_VARIABLES on the CPU: values bound to Python names get ``loc("name"(...))`` in the tile
IR, and the LLVM IR describes them as DILocalVariable records (declared at the line of the first binding) with
an ``llvm.dbg.value`` after each definition (a tile: its first element); the object carries them in its DWARF
and still computes the right answer. Without the knob: none of it, and another cache entry."""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import debug_knobs, knobs

from .test_line_info import elf_sections


@triton.jit
def scaled_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # var: pid
    acc = tl.zeros((BLOCK, ), tl.float32)  # var: acc
    for i in range(0, n, BLOCK):
        offsets = i + tl.arange(0, BLOCK)  # var: offsets
        x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)  # var: x
        acc += x * 2
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


@triton.jit
def unnamed(x_ptr, out_ptr):
    tl.store(out_ptr + tl.arange(0, 16), tl.load(x_ptr + tl.arange(0, 16)) + 1)


def line_of(tag: str) -> int:
    lines, first = inspect.getsourcelines(scaled_sum.fn)
    hits = [first + i for i, text in enumerate(lines) if text.rstrip().endswith(f"# var: {tag}")]
    assert len(hits) == 1
    return hits[0]


def run():
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(16, np.float32)
    k = scaled_sum[(1, )](x, out, 100, BLOCK=16)
    np.testing.assert_allclose(out, [2 * x[j::16].sum() for j in range(16)])
    return k


@pytest.fixture
def scoped(fresh_cache):
    debug_knobs._said.clear()
    with knobs.scope():
        yield


def variables(llir: str) -> dict[str, tuple[str, int, str]]:
    """name -> (ref, line, DWARF type name) of every DILocalVariable."""
    types = dict(re.findall(r'^(!\d+) = !DIBasicType\(name: "(\w+)"', llir, re.M))
    return {m.group(2): (m.group(1), int(m.group(3)), types.get(m.group(4), "?")) for m in re.finditer(
        r'^(!\d+) = !DILocalVariable\(name: "(\w+)", scope: !\d+, file: !\d+, line: (\d+), type: (!\d+)\)', llir, re.M)}


def dbg_values(llir: str) -> list[tuple[str, str]]:
    """(value, variable ref) of every dbg.value, as an intrinsic call or as a debug record (LLVM >= 19 prints
    the optimized module's with records)."""
    calls = re.findall(r"call void @llvm\.dbg\.value\(metadata \S+ ([^,]+), metadata (!\d+)", llir)
    records = re.findall(r"#dbg_value\(\S+ ([^,]+), (!\d+), !DIExpression\(\)", llir)
    return calls + records


def test_named_values_become_variables_with_their_lines(scoped):
    knobs.compilation.dump_ir_extract_di_local_variables = True
    with debug_knobs.warnings.catch_warnings():
        debug_knobs.warnings.simplefilter("error", debug_knobs.DebugKnobWarning)   # variables made: no warning
        k = run()
    assert re.search(r'loc\("offsets"\(', k.asm["ttir"]) and re.search(r'loc\("x"\(', k.asm["ttir"])
    llir = k.asm["llir"]
    got = variables(llir)
    for name, dwarf_type in (("pid", "int32"), ("acc", "fp32"), ("offsets", "int32"), ("x", "fp32")):
        assert name in got, (name, sorted(got))
        assert got[name][1:] == (line_of(name), dwarf_type), (name, got[name])
    described = {ref for _, ref in dbg_values(llir)}
    for name in ("pid", "acc", "offsets", "x"):
        assert got[name][0] in described, (name, described)
    assert re.search(r"!DICompileUnit\(.*emissionKind: FullDebug", llir)
    info = elf_sections(k.asm["obj"]).get(".debug_info", b"") + elf_sections(k.asm["obj"]).get(".debug_str", b"")
    for name in (b"pid", b"acc", b"offsets", b"x"):
        assert name + b"\0" in info, name


def test_unoptimized_module_describes_every_variable_by_a_value(scoped):
    # O3 may drop a value only the debugger would read (``x``'s first element reads as poison); unoptimized,
    # every dbg.value names a real value
    knobs.compilation.dump_ir_extract_di_local_variables = True
    knobs.compilation.disable_llvm_opt = "1"
    llir = run().asm["llir"]
    got = variables(llir)
    pairs = dbg_values(llir)
    by_ref = {ref: name for name, (ref, _, _) in got.items()}
    named = {by_ref[ref] for _, ref in pairs}
    assert {"pid", "acc", "offsets", "x"} <= named, named
    assert not any(v in ("poison", "undef") for v, _ in pairs), pairs
    # acc: the zeros' first element, then each iteration's sum: two dbg.values of one variable
    assert sum(1 for _, ref in pairs if ref == got["acc"][0]) >= 2


def test_without_the_knob_there_are_no_variables_and_another_cache_entry(scoped):
    plain = run()
    knobs.compilation.dump_ir_extract_di_local_variables = True
    described = run()
    assert plain.hash != described.hash
    for text in (plain.asm["ttir"], plain.asm["llir"]):
        assert "DILocalVariable" not in text and "dbg.value" not in text and "dbg_value" not in text
    assert not re.search(r'loc\("\w+"\(', plain.asm["ttir"])
    assert "emissionKind: LineTablesOnly" in plain.asm["llir"]


def test_a_kernel_without_named_values_warns_once(scoped):
    knobs.compilation.dump_ir_extract_di_local_variables = True
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    with pytest.warns(debug_knobs.DebugKnobWarning, match="LLVM_EXTRACT_DI_LOCAL_VARIABLES.*no variables"):
        unnamed[(1, )](x, out)
    np.testing.assert_array_equal(out, x + 1)
