"""The NVIDIA launcher's parameter buffer (needs neither a GPU nor ptxas): every argument lands at its C-ABI
offset with the bits the kernel expects, on the fast path (struct packs the Python value) and the slow one
(wrapping ints, bf16, floats past float's range), and what cannot be passed is refused, not truncated."""
from __future__ import annotations

import ctypes
import struct

import pytest

pytest.importorskip("tritium_nvidia", reason="the NVIDIA backend is not installed")
from tritium_nvidia.driver import ArgumentBuffer  # noqa: E402

TYPES = ["i1", "ptr addrspace(1)", "i8", "half", "i32", "double", "i16", "float", "i64", "bfloat"]
C_TYPES = [ctypes.c_uint8, ctypes.c_uint64, ctypes.c_int8, ctypes.c_uint16, ctypes.c_int32, ctypes.c_double,
           ctypes.c_int16, ctypes.c_float, ctypes.c_int64, ctypes.c_uint16]


def read(buf: ArgumentBuffer, i: int, ctype) -> object:
    pointer = ctypes.cast(buf.params[i], ctypes.POINTER(ctype))
    return pointer.contents.value


def test_offsets_follow_the_c_layout():
    class Params(ctypes.Structure):
        _fields_ = [(f"a{i}", t) for i, t in enumerate(C_TYPES)]

    buf = ArgumentBuffer(TYPES)
    assert buf.offsets == [getattr(Params, f"a{i}").offset for i in range(len(TYPES))]
    base = ctypes.addressof(buf.buffer)
    assert [p - base for p in buf.params] == buf.offsets


@pytest.mark.parametrize("with_bf16", [False, True], ids=["fast path", "slow path"])
def test_values_land_with_their_bits(with_bf16):
    types = TYPES if with_bf16 else TYPES[:-1]
    buf = ArgumentBuffer(types)
    args = (True, 0xDEAD_BEEF_0000, -5, 1.5, -(2**31), 2.0**-1074, 32767, 3.25, -(2**63), 1.0)[:len(types)]
    assert buf.pack(args)
    assert read(buf, 0, ctypes.c_uint8) == 1
    assert read(buf, 1, ctypes.c_uint64) == 0xDEAD_BEEF_0000
    assert read(buf, 2, ctypes.c_int8) == -5
    assert read(buf, 3, ctypes.c_uint16) == 0x3E00              # 1.5 in fp16
    assert read(buf, 4, ctypes.c_int32) == -(2**31)
    assert read(buf, 5, ctypes.c_double) == 2.0**-1074
    assert read(buf, 6, ctypes.c_int16) == 32767
    assert read(buf, 7, ctypes.c_float) == 3.25
    assert read(buf, 8, ctypes.c_int64) == -(2**63)
    if with_bf16:
        assert read(buf, 9, ctypes.c_uint16) == 0x3F80          # 1.0 in bf16


def test_slow_path_converts_as_c_does():
    buf = ArgumentBuffer(["i32", "half", "float", "i1", "ptr addrspace(1)"])
    # 2**32 - 1 wraps to -1 in an i32 parameter; 1e6 rounds to fp16 infinity; 1e300 to float infinity
    assert buf.pack((2**32 - 1, 1e6, 1e300, 7, -1))
    assert read(buf, 0, ctypes.c_int32) == -1
    assert read(buf, 1, ctypes.c_uint16) == 0x7C00
    assert read(buf, 2, ctypes.c_float) == float("inf")
    assert read(buf, 3, ctypes.c_uint8) == 1
    assert read(buf, 4, ctypes.c_uint64) == 2**64 - 1
    # and the fast path still holds afterwards
    assert buf.pack((3, -2.0, 0.5, False, 16))
    assert [read(buf, 0, ctypes.c_int32), read(buf, 1, ctypes.c_uint16)] == [3, 0xC000]


def test_numpy_scalars_pass():
    np = pytest.importorskip("numpy")
    buf = ArgumentBuffer(["i64", "float", "i1"])
    assert buf.pack((np.int64(-3), np.float32(0.25), np.bool_(True)))
    assert [read(buf, 0, ctypes.c_int64), read(buf, 1, ctypes.c_float), read(buf, 2, ctypes.c_uint8)] == [-3, .25, 1]


@pytest.mark.parametrize("args", [("x", 1.0), (1, ), (1, 2.0, 3), (None, 1.0)], ids=["str", "too few", "too many",
                                                                                    "None"])
def test_what_cannot_be_passed_is_refused(args):
    buf = ArgumentBuffer(["i32", "float"])
    assert not buf.pack(args)
    assert struct.calcsize("@if") == buf.packer.size
