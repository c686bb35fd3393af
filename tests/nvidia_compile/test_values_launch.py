"""The cached launch's native last step (tritium_nvidia/values_launch.py) against a recording stand-in for
cuLaunchKernel: every slot kind lands in kernelParams with struct's bits, and everything it must leave to the
launcher (values struct would refuse, grids, a replaced launch call, no torch, a device not loaded, a failed
launch) answers 1 without calling the driver and without leaving an exception; torch's own errors propagate;
nothing leaks a reference."""
from __future__ import annotations

import ctypes
import os
import struct
import sys
import types

import pytest

pytest.importorskip("tritium_nvidia", reason="the NVIDIA backend is not installed")
pytest.importorskip("llvmlite", reason="llvmlite is not installed")

from tritium_nvidia import values_launch  # noqa: E402
from tritium_nvidia.knobs import nvidia as nv_knobs  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder's helpers
import launch_stand_in  # noqa: E402

_received = (ctypes.c_uint64 * 11)()
_slots = (ctypes.c_uint64 * 16)()   # the first 8 bytes behind each kernelParams pointer
_kept = ctypes.c_int64(0)        # how many of them the stand-in reads (the test's kept slots)
_calls = ctypes.c_int64(0)
_result = ctypes.c_int32(0)
_HANDLE, _STREAM = 0x7000_0000_1230, 0x7F00_AB00


@pytest.fixture(scope="module")
def address() -> int:
    return launch_stand_in.build(_received, result=_result, calls=_calls, slots=_slots, slot_types=["i64"] * len(_slots),
                 kept=_kept)


class Setup:
    """A built launch_values with its own launch_call/driver namespaces, which the tests change."""

    def __init__(self, address: int) -> None:
        self.packed, self.launch = ("packed", ), object()
        self.lc = {"packed": self.packed, "launch": self.launch}
        self.device = int("1234567")   # an int object of its own, to count its references
        self.stream = int("98765432109876")
        self.torch_c = types.SimpleNamespace(_cuda_getDevice=lambda: self.device,
                                             _cuda_getCurrentRawStream=self.stream_of)
        self.drv = {"_torch_c": self.torch_c}
        self.names: list = []
        self.go = values_launch.build(address, self.packed, self.launch, self.lc, self.drv, self.names.append,
                                      values_launch.blocking_objects())
        self.handles = {self.device: _HANDLE}

    def stream_of(self, device: int) -> int:
        assert device is self.device
        return self.stream

    def c(self, layout: str, keep: list[int], block: int = 128, shared: int = 0, name: str = "k") -> tuple:
        c = values_launch.constants(list(layout), keep, self.handles, block, shared, name)
        assert c is not None
        _kept.value = len(keep)
        return c


@pytest.fixture
def setup(address) -> Setup:
    _result.value = 0
    return Setup(address)


def _slot(j: int, code: str) -> object:
    raw = struct.pack("<Q", _slots[j])
    return struct.unpack("<" + code, raw[:struct.calcsize(code)])[0]


def test_every_slot_kind_reaches_the_driver(setup):
    layout = "Q?qihbBfd"
    c = setup.c(layout, [0, 2, 3, 4, 5, 6, 7, 8], block=256, shared=4096, name="kern")
    values = (0xDEAD_BEEF_CAFE, None, -(2**40), -5, -300, -7, True, 1.5, 2.25)
    before = _calls.value
    assert setup.go(c, (3, 2, 1), *values) == 0
    assert _calls.value == before + 1
    assert list(_received)[:9] + [_received[10]] == [_HANDLE, 3, 2, 1, 256, 1, 1, 4096, setup.stream, 0]
    codes = [code for code in layout if code != "?"]
    assert [_slot(j, code) for j, code in enumerate(codes)] == [0xDEAD_BEEF_CAFE, -(2**40), -5, -300, -7, 1, 1.5,
                                                                 2.25]
    assert setup.names == ["kern"]
    # extremes of every integer slot, and False / a bool into a wide slot
    c2 = setup.c("QqihbB", list(range(6)))
    assert setup.go(c2, (1, 1, 1), 2**64 - 1, -(2**63), 2**31 - 1, -(2**15), 127, 255) == 0
    assert [_slot(j, code) for j, code in enumerate("QqihbB")] == [2**64 - 1, -(2**63), 2**31 - 1, -(2**15), 127, 255]
    assert setup.go(c2, (1, 1, 1), True, False, 0, 0, 0, False) == 0
    assert [_slot(j, code) for j, code in enumerate("QqihbB")] == [1, 0, 0, 0, 0, 0]


class Sub(int):
    pass


@pytest.mark.parametrize("layout, values", [
    ("i", (2**31, )), ("i", (-(2**31) - 1, )), ("h", (2**15, )), ("b", (-129, )), ("B", (256, )), ("B", (-1, )),
    ("Q", (-1, )), ("Q", (2**64, )), ("q", (2**63, )),
    ("i", (Sub(3), )), ("i", (None, )), ("i", (2.0, )), ("f", (1, )), ("d", (3, )),
    ("f", (1e300, )), ("f", (-3.5e38, )),
])
def test_values_struct_would_refuse_are_left_to_the_launcher(setup, layout, values):
    c = setup.c(layout, [0])
    before = _calls.value
    assert setup.go(c, (1, 1, 1), *values) == 1
    assert _calls.value == before and setup.names == []


def test_float_slot_keeps_infinities_and_the_largest_float(setup):
    c = setup.c("f", [0])
    for v in (float("inf"), float("-inf"), 3.4028234663852886e38, 1e-50):
        assert setup.go(c, (1, 1, 1), v) == 0
        assert _slot(0, "f") == struct.unpack("f", struct.pack("f", v))[0]


@pytest.mark.parametrize("grid", [(0, 1, 1), (1, 0, 1), (-1, 1, 1), (2**31, 1, 1), (), (1, 1, 1, 1), [1, 1, 1],
                                  (1, 1, 1.0), (2**70, 1, 1), (0, ), (True, 1, 1)])
def test_grids_it_does_not_launch(setup, grid):
    before = _calls.value
    assert setup.go(setup.c("i", [0]), grid, 5) == 1
    assert _calls.value == before


def test_everything_else_is_left_to_the_launcher(setup):
    c = setup.c("i", [0])
    before = _calls.value
    assert setup.go(c, (1, 1, 1)) == 1                       # a value short
    assert setup.go(c, (1, 1, 1), 1, 2) == 1                 # a value too many
    assert setup.go(c) == 1
    assert setup.go((c[0], c[1]), (1, 1, 1), 5) == 1         # not its constants
    assert setup.go((b"\0" * 3, c[1], c[2]), (1, 1, 1), 5) == 1
    setup.lc["packed"] = ("another", )                       # the launch call was replaced
    assert setup.go(c, (1, 1, 1), 5) == 1
    setup.lc["packed"] = setup.packed
    setup.lc["launch"] = object()
    assert setup.go(c, (1, 1, 1), 5) == 1
    setup.lc["launch"] = setup.launch
    setup.drv["_torch_c"] = None                             # no torch
    assert setup.go(c, (1, 1, 1), 5) == 1
    setup.drv["_torch_c"] = setup.torch_c
    setup.handles.clear()                                    # the device's function is not loaded
    assert setup.go(c, (1, 1, 1), 5) == 1
    setup.handles[setup.device] = "not a handle"
    assert setup.go(c, (1, 1, 1), 5) == 1
    setup.handles[setup.device] = _HANDLE
    setup.stream = "not a stream"
    assert setup.go(c, (1, 1, 1), 5) == 1
    assert _calls.value == before and setup.names == []
    _result.value = 1                                        # the driver refuses: the launcher retries, reports
    setup.stream = 7
    assert setup.go(c, (1, 1, 1), 5) == 1
    assert _calls.value == before + 1 and setup.names == []
    _result.value = 0
    assert setup.go(c, (1, 1, 1), 5) == 0 and setup.names == ["k"]


def test_launch_blocking_leaves_the_launch_to_the_launcher(setup, monkeypatch):
    """CUDA_LAUNCH_BLOCKING from the environment or set from Python: the launcher launches (and synchronizes)."""
    c = setup.c("i", [0])
    before = _calls.value
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "0")   # set at all, whatever its value: the launcher reads it
    assert setup.go(c, (1, 1, 1), 5) == 1
    monkeypatch.delenv("CUDA_LAUNCH_BLOCKING")
    with nv_knobs.scope():
        nv_knobs.launch_blocking = False   # set from Python at all: the launcher reads it
        assert setup.go(c, (1, 1, 1), 5) == 1
    assert _calls.value == before
    assert setup.go(c, (1, 1, 1), 5) == 0 and _calls.value == before + 1


def test_grids_of_one_to_three_dimensions(setup):
    c = setup.c("i", [0])
    for grid, want in (((7, ), [7, 1, 1]), ((7, 5), [7, 5, 1]), ((7, 5, 3), [7, 5, 3])):
        assert setup.go(c, grid, 5) == 0
        assert list(_received)[1:4] == want


def test_torch_errors_propagate(setup):
    c = setup.c("i", [0])

    def no_device():
        raise RuntimeError("no CUDA here")
    setup.torch_c._cuda_getDevice = no_device
    with pytest.raises(RuntimeError, match="no CUDA here"):
        setup.go(c, (1, 1, 1), 5)
    setup.torch_c._cuda_getDevice = lambda: setup.device
    del setup.torch_c._cuda_getCurrentRawStream
    with pytest.raises(AttributeError):
        setup.go(c, (1, 1, 1), 5)


def test_no_reference_leaks(setup):
    c = setup.c("Qif", [0, 1, 2], name=sys.intern("leak_check"))
    big, flt = 2**50, 1.25
    counts = lambda: [sys.getrefcount(o) for o in (setup.device, setup.stream, big, flt, c, c[0], c[1], c[2])]
    setup.go(c, (1, 1, 1), big, 3, flt)
    setup.names.clear()
    before = counts()
    for _ in range(1000):
        assert setup.go(c, (2, 1, 1), big, 3, flt) == 0
        assert setup.go(c, (2, 1, 1), big, 2**40, flt) == 1
    setup.names.clear()
    assert counts() == before


def test_constants_refuse_what_the_builtin_cannot_take():
    assert values_launch.constants(["e"], [0], {}, 32, 0, "k") is None     # half: the launcher converts it
    assert values_launch.constants(["Q"] * 600, list(range(600)), {}, 32, 0, "k") is None
