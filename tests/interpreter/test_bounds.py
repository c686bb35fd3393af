"""Bounds checking: an access outside the memory of the argument its pointer came from raises an error that
names the kernel, the source line, the program id, the argument and the offsets; masked-off lanes never
count; the check can be switched off."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.interpreter import OutOfBoundsError


@triton.jit
def _copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr, MASK_LOAD: tl.constexpr, SHIFT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if MASK_LOAD:
        x = tl.load(x_ptr + offs, mask=offs < n)
    else:
        x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs + SHIFT, x, mask=offs < n)


def _line_of(fn, text: str) -> int:
    lines = fn.src.splitlines()
    return fn.first_line + next(i for i, ln in enumerate(lines) if text in ln)


def test_unmasked_load_names_kernel_line_program_argument_and_offsets(interpret):
    x, out = np.ones(1000, np.float32), np.zeros(1000, np.float32)
    with pytest.raises(OutOfBoundsError) as info:
        _copy[(8, )](x, out, 1000, BLOCK=128, MASK_LOAD=False, SHIFT=0)
    msg = str(info.value)
    line = _line_of(_copy, "x = tl.load(x_ptr + offs)")
    assert msg.startswith("out-of-bounds load in kernel `_copy`")
    assert f"test_bounds.py:{line}, program id (7, 0, 0)" in msg
    assert "x = tl.load(x_ptr + offs)" in msg
    assert "argument `x_ptr` (float32[1000])" in msg
    assert "24 of the 128 lanes (the access has no mask)" in msg
    assert "element offsets from the argument's first element: 1000, 1001, 1002" in msg
    assert "up to 1023) (valid: 0 to 999)" in msg
    assert isinstance(info.value, IndexError)
    assert np.all(out[:896] == 1)  # the programs before the failing one ran


def test_wrongly_masked_store_reports_negative_offset(interpret):
    x, out = np.ones(1000, np.float32), np.zeros(1000, np.float32)
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds store in kernel `_copy`.* program id \(0, 0, 0\)"
                       r"(?s:.*)argument `out_ptr`.*1 of the 128 lanes that the mask enables falls outside it\n.*offsets from the "
                       r"argument's first element: -1 \(valid: 0 to 999\)"):
        _copy[(8, )](x, out, 1000, BLOCK=128, MASK_LOAD=True, SHIFT=-1)


def test_masked_off_lanes_never_count(interpret):
    x, out = np.arange(1000, dtype=np.float32), np.zeros(1000, np.float32)
    _copy[(8, )](x, out, 1000, BLOCK=128, MASK_LOAD=True, SHIFT=0)
    np.testing.assert_array_equal(out, x)


@triton.jit
def _garbage_masked(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    far = tl.where(offs < 4, offs, offs * 1000000000 - 7)  # wild offsets on the masked-off lanes
    x = tl.load(x_ptr + far, mask=offs < 4, other=-1.0)
    tl.store(out_ptr + far, x + 1, mask=offs < 4)


def test_wild_offsets_on_masked_off_lanes_are_fine(interpret):
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    _garbage_masked[(1, )](x, out, BLOCK=16)
    np.testing.assert_array_equal(out, x + 1)


@triton.jit
def _read_past(a_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(a_ptr + offs))


def test_overrun_into_a_neighbouring_argument_still_names_the_source(interpret):
    buf = np.arange(256, dtype=np.float32)
    a, b = buf[:100], buf[100:228]   # a's overrun lands inside b's memory
    with pytest.raises(OutOfBoundsError, match=r"argument `a_ptr` \(float32\[100\]\); 28 of the 128 lanes"):
        _read_past[(1, )](a, b, BLOCK=128)


@triton.jit
def _scalar_and_atomic(p_ptr, n, KIND: tl.constexpr):
    if KIND == "load":
        v = tl.load(p_ptr + n)
        tl.store(p_ptr, v)
    else:
        tl.atomic_add(p_ptr + n + tl.program_id(0), 1.0)


def test_scalar_loads_and_atomics_are_checked(interpret):
    p = np.zeros(4, np.float32)
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds load .*\n.*\n.*1 of the 1 lane \(the access has no "
                                               r"mask\)(?s:.*)offsets from the argument's first element: 4 "):
        _scalar_and_atomic[(1, )](p, 4, KIND="load")
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds atomic_add in kernel `_scalar_and_atomic`.*program "
                                               r"id \(2, 0, 0\)"):
        _scalar_and_atomic[(3, )](p, 2, KIND="atomic")


@triton.jit
def _block_ptr(a_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, CHECK: tl.constexpr):
    p = tl.make_block_ptr(a_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    if CHECK:
        x = tl.load(p, boundary_check=(0, 1))
    else:
        x = tl.load(p)
    q = tl.make_block_ptr(out_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    tl.store(q, x, boundary_check=(0, 1))


def test_block_pointers_are_checked_unless_boundary_checked(interpret):
    a = np.arange(20 * 12, dtype=np.float32).reshape(20, 12)
    out = np.zeros_like(a)
    _block_ptr[(2, )](a, out, 20, 12, BM=16, BN=16, CHECK=True)
    np.testing.assert_array_equal(out, a)
    with pytest.raises(OutOfBoundsError, match=r"program id \(1, 0, 0\)(?s:.*)argument `a_ptr` \(float32\[20, 12\]\)"):
        _block_ptr[(2, )](a, out, 20, 12, BM=16, BN=16, CHECK=False)


def test_strided_arguments_span_their_strides(interpret):
    torch = pytest.importorskip("torch")
    base = torch.arange(64, dtype=torch.float32).reshape(8, 8)
    view = base[:, ::2]                          # spans 8 * 8 - 1 elements of base's memory
    out = torch.zeros(57)
    _read_past[(1, )](view, out, BLOCK=32)       # reading the gaps inside the span is allowed
    assert torch.equal(out[:32], torch.arange(32, dtype=torch.float32))
    out = torch.zeros(64)
    with pytest.raises(OutOfBoundsError, match=r"argument `a_ptr` \(float32\[8, 4\] with strides \[8, 2\]\); 1 of the "
                                               r"64 lanes \(the access has no mask\) falls outside it\n.*: 63 "
                                               r"\(valid: 0 to 62\)"):
        _read_past[(1, )](view, out, BLOCK=64)


def test_the_check_can_be_switched_off(interpret):
    big = np.arange(300, dtype=np.float32)
    window = big[100:200]
    out = np.zeros(128, np.float32)
    with pytest.raises(OutOfBoundsError):
        _read_past[(1, )](window, out, BLOCK=128)
    with knobs.interpreter.scope():
        knobs.interpreter.bounds_check = False
        _read_past[(1, )](window, out, BLOCK=128)  # reads past the view into the rest of ``big``, as compiled code
    np.testing.assert_array_equal(out, big[100:228])


def test_the_first_failing_program_is_reported_in_batched_and_single_mode(interpret):
    x, out = np.ones(1000, np.float32), np.zeros(1000, np.float32)
    messages = []
    for batch in (True, False):
        with knobs.interpreter.scope():
            knobs.interpreter.batch = batch
            with pytest.raises(OutOfBoundsError) as info:
                _copy[(8, )](x, out, 1000, BLOCK=128, MASK_LOAD=False, SHIFT=0)
        messages.append(re.sub(r"\s+", " ", str(info.value)))
    assert messages[0] == messages[1]


@triton.jit
def _through_address(addrs_ptr, out_ptr, n, BLOCK: tl.constexpr, SHIFT: tl.constexpr):
    # Triton's grouped GEMM pattern: host addresses (a.ctypes.data) kept in an int64 array, typed again here
    src = tl.load(addrs_ptr).to(tl.pointer_type(tl.float32))
    dst = tl.load(addrs_ptr + 1).to(tl.pointer_type(tl.float32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) + SHIFT
    x = tl.load(src + offs, mask=offs < n)
    tl.store(dst + offs, x * 2, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)


def test_host_addresses_of_live_arrays_are_checked_like_arguments(interpret):
    """Addresses of arrays that are no argument (held in a tuple, which the garbage collector does not track, and
    in a dict) work as in Triton's interpreter, and every access through them is checked against their memory."""
    held = (np.arange(100, dtype=np.float32), )
    outputs = {"dst": np.zeros(100, np.float32)}
    out = np.zeros(100, np.float32)
    addrs = np.array([held[0].ctypes.data, outputs["dst"].ctypes.data], np.int64)
    _through_address[(4, )](addrs, out, 100, BLOCK=32, SHIFT=0)
    np.testing.assert_array_equal(out, held[0])
    np.testing.assert_array_equal(outputs["dst"], held[0] * 2)
    with pytest.raises(OutOfBoundsError) as info:
        _through_address[(4, )](addrs, out, 101, BLOCK=32, SHIFT=0)   # one element past both arrays
    msg = str(info.value)
    assert f"host memory at {held[0].ctypes.data:#x} (400 bytes of a live array" in msg
    assert "element offsets from the argument's first element: 100 (valid: 0 to 99)" in msg
    # read-only memory stays read-only
    outputs["dst"].flags.writeable = False
    with pytest.raises(triton.UnsafeArgumentError, match="read-only"):
        _through_address[(1, )](addrs, out, 100, BLOCK=32, SHIFT=0)


def test_host_addresses_of_no_live_array_are_refused(interpret):
    out = np.zeros(32, np.float32)
    gone = np.ones(1 << 24, np.float32)   # 64 MB: mapped for it alone, and unmapped when it is freed
    addrs = np.array([gone.ctypes.data, out.ctypes.data], np.int64)
    del gone
    with pytest.raises(OutOfBoundsError, match="point into no argument and no live array"):
        _through_address[(1, )](addrs, out, 32, BLOCK=32, SHIFT=0)
    with knobs.interpreter.scope():
        knobs.interpreter.bounds_check = False
        with pytest.raises(RuntimeError, match="belongs to no argument and to no live array"):
            _through_address[(1, )](addrs, out, 32, BLOCK=32, SHIFT=0)
