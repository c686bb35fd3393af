"""Python source lines reach the CPU backend's LLVM IR (``!dbg``/DILocation) and its object (``.debug_line``);
TRITON_DISABLE_LINE_INFO=1 leaves no debug metadata; the machine code is the same either way."""
from __future__ import annotations

import inspect
import re
import struct

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs


@triton.jit
def shifted_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)  # line: load
    z = x + 1.5  # line: add
    tl.store(out_ptr + offs, z, mask=m)  # line: store


def source_line(tag: str) -> int:
    lines, first = inspect.getsourcelines(shifted_add.fn)
    hits = [first + i for i, text in enumerate(lines) if text.rstrip().endswith(f"# line: {tag}")]
    assert len(hits) == 1
    return hits[0]


def run():
    x = np.arange(300, dtype=np.float32)
    out = np.zeros_like(x)
    k = shifted_add[(3, )](x, x, out, 300, BLOCK=128)
    np.testing.assert_array_equal(out, x + 1.5)
    return k


def elf_sections(obj: bytes) -> dict[str, bytes]:
    """Section name -> contents of a 64-bit little-endian ELF relocatable object."""
    assert obj[:4] == b"\x7fELF" and obj[4] == 2 and obj[5] == 1
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", obj, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    names_at, names_size = heads[shstrndx][4], heads[shstrndx][5]
    names = obj[names_at:names_at + names_size]
    out = {}
    for h in heads:
        name = names[h[0]:names.index(b"\0", h[0])].decode()
        out[name] = b"" if h[1] == 8 else obj[h[4]:h[4] + h[5]]   # SHT_NOBITS holds no bytes
    return out


@pytest.fixture
def scoped(fresh_cache):
    with knobs.scope():
        yield


def locations(llir: str) -> dict[str, int]:
    """``!N`` -> line of every DILocation in the module."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(!\d+) = !DILocation\(line: (\d+)", llir, re.M)}


def test_llir_instructions_carry_the_kernel_lines(scoped):
    llir = run().asm["llir"]
    lines = locations(llir)
    assert lines, "no DILocation in the LLVM IR"
    patterns = (("load", r"= load <?\d*\s*x?\s*float"), ("add", r"= fadd "),
                ("store", r"\bstore <?\d*\s*x?\s*float"))
    for tag, pattern in patterns:
        found = {lines.get(ref) for ref in re.findall(rf"{pattern}.*, !dbg (!\d+)", llir)}
        assert source_line(tag) in found, (tag, source_line(tag), found)
    sps = re.findall(r'!DISubprogram\(name: "([^"]+)"', llir)
    assert "shifted_add" in sps
    cu = re.search(r"!DICompileUnit\(.*emissionKind: LineTablesOnly", llir)
    assert cu and re.search(r'!DIFile\(filename: "test_line_info.py"', llir)
    assert '!"Debug Info Version", i32 3' in llir and '!"Dwarf Version"' in llir


def test_object_has_a_line_table_and_runs(scoped):
    k = run()                         # the object loaded by MCJIT and computed the right values
    sections = elf_sections(k.asm["obj"])
    assert sections.get(".debug_line"), sorted(sections)


def test_disabled_line_info_leaves_no_debug_metadata(scoped):
    with_lines = run()
    knobs.compilation.disable_line_info = True     # part of the cache key: never served the build above
    k = run()
    assert k.hash != with_lines.hash
    llir = k.asm["llir"]
    assert "!dbg" not in llir and "DILocation" not in llir and "llvm.dbg.cu" not in llir
    assert ".debug_line" not in elf_sections(k.asm["obj"])


def test_machine_code_is_the_same_with_and_without_line_info(scoped):
    # debug locations must not change optimization: same instructions, only debug sections added
    text_on = elf_sections(run().asm["obj"])[".text"]
    knobs.compilation.disable_line_info = True
    text_off = elf_sections(run().asm["obj"])[".text"]
    assert text_on == text_off


def test_outlined_loops_keep_line_info_and_stay_out_of_line(scoped):
    # a big kernel's loops become noinline functions (outline.py); their DISubprogram must not stop that
    from tritium_cpu.knobs import cpu as cpu_knobs
    with cpu_knobs.scope():
        cpu_knobs.outline_threshold = 1
        llir = run().asm["llir"]
    assert re.search(r"^attributes #\d+ = \{ noinline", llir, re.M)
    refs = re.findall(r"\bstore <?\d*\s*x?\s*float.*, !dbg (!\d+)", llir)
    assert source_line("store") in {locations(llir).get(r) for r in refs}


def test_inlined_helper_from_another_file_keeps_its_file_and_line(scoped, tmp_path):
    import importlib.util
    path = tmp_path / "line_info_helper.py"
    path.write_text("import tritium as triton\n\n\n@triton.jit\ndef twice(v):\n    return v * 2.0\n")
    spec = importlib.util.spec_from_file_location("line_info_helper", path)
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    twice = helper.twice

    @triton.jit
    def doubled(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, twice(tl.load(x_ptr + offs)))

    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    k = doubled[(1, )](x, out, BLOCK=64)
    np.testing.assert_array_equal(out, 2 * x)
    llir = k.asm["llir"]
    # a location's file is its scope's: the helper's lines live in a lexical block of the kernel's subprogram
    f = re.search(r'^(!\d+) = !DIFile\(filename: "line_info_helper.py"', llir, re.M).group(1)
    block = re.search(rf"^(!\d+) = !DILexicalBlockFile\(scope: !\d+, file: {f}\b", llir, re.M).group(1)
    mul = re.findall(r"= fmul .*, !dbg (!\d+)", llir)
    assert mul and all(re.search(rf"^{r} = !DILocation\(line: 6, column: \d+, scope: {block}\b", llir, re.M)
                       for r in mul), mul
    assert b"line_info_helper.py" in elf_sections(k.asm["obj"])[".debug_line"]


def test_source_position_unwraps_names_call_sites_and_fusions():
    from tritium._mlir import ir
    from tritium.line_info import source_position
    with ir.Context():
        inner, outer = ir.Location.file("helper.py", 6, 12), ir.Location.file("kernel.py", 20, 5)
        assert source_position(inner) == ("helper.py", 6, 12)
        assert source_position(ir.Location.name("x", inner)) == ("helper.py", 6, 12)
        # a call site: the innermost frame, where the code is written
        assert source_position(ir.Location.callsite(inner, [outer])) == ("helper.py", 6, 12)
        assert source_position(ir.Location.fused([ir.Location.unknown(), outer])) == ("kernel.py", 20, 5)
        assert source_position(ir.Location.unknown()) is None
