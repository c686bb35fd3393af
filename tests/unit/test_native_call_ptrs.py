"""tritium.llvmir.native_call's ``offsets``/``ptrs`` argument pair (cuLaunchKernel's ``kernelParams`` built by the
builtin from packed bytes): the callee gets an array of pointers into the data at the given offsets, for the call's
duration; offsets outside the data and objects that are not bytes raise before the callee runs."""
from __future__ import annotations

import ctypes
import struct

import pytest

from tritium.llvmir import native_call as nc

_received = (ctypes.c_int64 * 4)()


@pytest.fixture(scope="module")
def probe() -> int:
    """``i32 probe(i64 tag, ptr table, i64 extra)``: stores tag, *(i64*)table[0], *(i32*)table[1], *(i8*)table[2]
    and returns extra truncated."""
    import llvmlite.binding as llvm
    out = ctypes.addressof(_received)
    lines = ["define i32 @ptrs_probe(i64 %tag, ptr %tab, i64 %extra) {",
             f"  store i64 %tag, ptr inttoptr (i64 {out} to ptr)"]
    for j, ty in enumerate(("i64", "i32", "i8")):
        lines += [f"  %s{j} = getelementptr ptr, ptr %tab, i64 {j}",
                  f"  %p{j} = load ptr, ptr %s{j}",
                  f"  %v{j} = load {ty}, ptr %p{j}, align 1"]
        if ty != "i64":
            lines.append(f"  %w{j} = sext {ty} %v{j} to i64")
        lines += [f"  %q{j} = getelementptr i64, ptr inttoptr (i64 {out} to ptr), i64 {j + 1}",
                  f"  store i64 {'%v' if ty == 'i64' else '%w'}{j}, ptr %q{j}"]
    lines += ["  %r = trunc i64 %extra to i32", "  ret i32 %r", "}"]
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly("\n".join(lines) + "\n"),
                                        llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    probe.engine = engine  # type: ignore[attr-defined]  # the code lives as long as its engine
    return engine.get_function_address("ptrs_probe")


LAYOUT = struct.Struct("@qib")                       # as a kernel's parameters: i64, i32, i8
OFFSETS = struct.pack("@3Q", 0, 8, 12)


def test_pointers_into_the_data(probe):
    f = nc.native_function(probe, ("u64", "offsets", "ptrs", "u64"), "i32", name="ptrs_probe")
    assert f(77, OFFSETS, LAYOUT.pack(-(2**40), -5, 9), 3) == 3
    assert list(_received) == [77, -(2**40), -5, 9]
    assert f(78, OFFSETS, LAYOUT.pack(2**62, 2**31 - 1, -128), 0) == 0   # fresh data each call
    assert list(_received) == [78, 2**62, 2**31 - 1, -128]


def test_refusals_before_the_call(probe):
    f = nc.native_function(probe, ("u64", "offsets", "ptrs", "u64"), "i32", name="ptrs_probe")
    _received[0] = 0
    with pytest.raises(ValueError, match="lies outside its data"):
        f(5, struct.pack("@3Q", 0, 8, LAYOUT.size), LAYOUT.pack(1, 2, 3), 0)
    with pytest.raises(TypeError):
        f(5, OFFSETS, bytearray(LAYOUT.pack(1, 2, 3)), 0)
    with pytest.raises(TypeError):
        f(5, list(OFFSETS), LAYOUT.pack(1, 2, 3), 0)
    with pytest.raises(TypeError, match="takes exactly 4 arguments"):
        f(5, OFFSETS, LAYOUT.pack(1, 2, 3))
    assert _received[0] == 0   # the callee never ran


def test_offsets_only_right_before_ptrs():
    for kinds in (("offsets", "u64"), ("ptrs", "u64"), ("u64", "ptrs", "offsets"), ("offsets", "offsets", "ptrs")):
        with pytest.raises(ValueError, match="'offsets' must come right before 'ptrs'"):
            nc.native_function(0x1000, kinds, "i32")
