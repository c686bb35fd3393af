"""Bounds-checked compiled kernels (TRITIUM_CPU_BOUNDS_CHECK, on under TRITON_DEBUG): an access outside the
buffer of the argument its pointer came from raises OutOfBoundsError naming the kernel, the source line, the
program id, the argument and the offsets, and is not made; the default build carries no check at all."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.interpreter import OutOfBoundsError
from tritium_cpu.knobs import cpu as cpu_knobs


@pytest.fixture
def checked(fresh_cache):
    with knobs.scope(), cpu_knobs.scope():
        cpu_knobs.bounds_check = True
        yield


@triton.jit
def _copy(x_ptr, out_ptr, n, SHIFT, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + SHIFT)
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def _put(x_ptr, out_ptr, SHIFT, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs + SHIFT, tl.load(x_ptr + offs))


def _line_of(fn, text: str) -> int:
    lines = fn.src.splitlines()
    return fn.first_line + next(i for i, ln in enumerate(lines) if text in ln)


def test_unmasked_load_16_past_the_end(checked):
    x, out = np.arange(1024, dtype=np.float32), np.zeros(1024, np.float32)
    _copy[(8, )](x, out, 1024, 0, BLOCK=128)            # in bounds: runs as usual
    np.testing.assert_array_equal(out, x)
    out[:] = 0
    with pytest.raises(OutOfBoundsError) as info:
        _copy[(8, )](x, out, 1024, 16, BLOCK=128)
    msg = str(info.value)
    line = _line_of(_copy, "x = tl.load(x_ptr + offs + SHIFT)")
    assert msg.startswith(f"out-of-bounds load in kernel `_copy` at {__file__}:{line}, program id (7, 0, 0):")
    assert "\n    x = tl.load(x_ptr + offs + SHIFT)\n        ^\n" in msg   # the caret under the load
    assert "argument `x_ptr` (float32[1024], in a buffer of 4096 bytes)" in msg
    assert "lanes (the access has no mask) fall outside its buffer" in msg
    assert "element offsets from the argument's first element: 1024 to 1039 (first: 1024) (valid: 0 to 1023)" in msg
    assert isinstance(info.value, IndexError)
    np.testing.assert_array_equal(out[:896], x[16:912])   # the programs before the failing one ran


@pytest.mark.parametrize("shift", [10**9, -10**6])
def test_store_far_outside(checked, shift):
    x, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    with pytest.raises(OutOfBoundsError) as info:
        _put[(1, )](x, out, shift, BLOCK=16)
    msg = str(info.value)
    line = _line_of(_put, "tl.store(out_ptr + offs + SHIFT")
    assert f"out-of-bounds store in kernel `_put` at {__file__}:{line}, program id (0, 0, 0)" in msg
    assert "argument `out_ptr` (float32[16]" in msg
    assert f"element offsets from the argument's first element: {shift} to {shift + 15} (first: {shift}) " \
           "(valid: 0 to 15)" in msg
    np.testing.assert_array_equal(out, 0)


@pytest.mark.parametrize("shift", [10**9, -10**6])
def test_load_far_outside(checked, shift):
    x, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    with pytest.raises(OutOfBoundsError, match=rf"out-of-bounds load in kernel `_copy`(?s:.*)argument `x_ptr`"
                                               rf"(?s:.*): {shift} to {shift + 15} \(first: {shift}\)"):
        _copy[(1, )](x, out, 16, shift, BLOCK=16)


def test_masked_off_lanes_are_never_checked(checked):
    @triton.jit
    def wild(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        far = tl.where(offs < 4, offs, offs * 1000000000 - 7)
        x = tl.load(x_ptr + far, mask=offs < 4, other=-1.0)
        tl.store(out_ptr + far, x + 1, mask=offs < 4)

    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    wild[(1, )](x, out, BLOCK=16)
    np.testing.assert_array_equal(out, x + 1)


def test_wrongly_masked_store_says_the_mask_enabled_it(checked):
    @triton.jit
    def off_by_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs - 1, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    x, out = np.ones(100, np.float32), np.zeros(100, np.float32)
    with pytest.raises(OutOfBoundsError, match=r"store in kernel `off_by_one`.*program id \(0, 0, 0\)(?s:.*)lanes "
                                               r"that the mask enables fall outside its buffer\n.*: -1 \(valid: 0 to "
                                               r"99\)"):
        off_by_one[(4, )](x, out, 100, BLOCK=32)


def test_views_may_reach_their_whole_buffer_but_not_beyond(checked):
    big = np.arange(300, dtype=np.float32)
    window = big[100:200]
    out = np.zeros(128, np.float32)
    _put[(1, )](window, out, 0, BLOCK=128)     # past the view, inside the buffer it belongs to: allowed
    np.testing.assert_array_equal(out, big[100:228])
    with pytest.raises(OutOfBoundsError, match=r"argument `x_ptr` \(float32\[100\], in a buffer of 1200 bytes\)"
                                               r"(?s:.*): 100 to 127 \(first: 100\) \(valid: -200 to 99\)"):
        _put[(1, )](big[200:], np.zeros(128, np.float32), 0, BLOCK=128)


def test_strided_views_and_arrays_over_bytes_reach_their_whole_buffer(checked):
    big = np.arange(64, dtype=np.float32)
    strided = np.lib.stride_tricks.as_strided(big[8:], shape=(4, ), strides=(8, ))
    out = np.zeros(32, np.float32)
    _put[(1, )](strided, out, 0, BLOCK=32)     # past the strided view's own span, inside big
    np.testing.assert_array_equal(out, big[8:40])
    raw = bytes(range(64))
    view = np.frombuffer(raw, np.uint8)[16:24]
    got = np.zeros(32, np.uint8)
    _put[(1, )](view, got, 0, BLOCK=32)
    np.testing.assert_array_equal(got, np.arange(16, 48, dtype=np.uint8))
    with pytest.raises(OutOfBoundsError, match=r"`x_ptr` \(uint8\[8\], in a buffer of 64 bytes\)(?s:.*): 48 to 63 "
                                               r"\(first: 48\) \(valid: -16 to 47\)"):
        _put[(1, )](view, np.zeros(64, np.uint8), 0, BLOCK=64)


def test_torch_tensors_are_checked_against_their_storage(checked):
    torch = pytest.importorskip("torch")
    base = torch.arange(64, dtype=torch.float32)
    view = base[8:16]
    out = torch.zeros(32)
    _put[(1, )](view, out, 0, BLOCK=32)        # storage has 64 elements: all 32 reads are inside
    assert torch.equal(out, base[8:40])
    with pytest.raises(OutOfBoundsError, match=r"`x_ptr` \(float32\[8\], in a buffer of 256 bytes\)(?s:.*): 56 to "
                                               r"63 \(first: 56\) \(valid: -8 to 55\)"):
        _put[(1, )](view, torch.zeros(64), 0, BLOCK=64)


def test_scalar_accesses_and_atomics(checked):
    @triton.jit
    def scalar_and_atomic(p_ptr, n, KIND: tl.constexpr):
        if KIND == "load":
            v = tl.load(p_ptr + n)
            tl.store(p_ptr, v)
        elif KIND == "store":
            tl.store(p_ptr + n, 1.0)
        else:
            tl.atomic_add(p_ptr + n + tl.program_id(0), 1.0)

    p = np.zeros(4, np.float32)
    scalar_and_atomic[(2, )](p, 2, KIND="atomic")
    np.testing.assert_array_equal(p, [0, 0, 1, 1])
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds load .*\n(?s:.*)offsets from the argument's first "
                                               r"element: 4 \(valid: 0 to 3\)"):
        scalar_and_atomic[(1, )](p, 4, KIND="load")
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds store .*program id \(0, 0, 0\)"):
        scalar_and_atomic[(1, )](p, -1, KIND="store")
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds atomic_add in kernel `scalar_and_atomic`.*program id "
                                               r"\(2, 0, 0\)(?s:.*): 4 \(valid: 0 to 3\)"):
        scalar_and_atomic[(3, )](p, 2, KIND="atomic")
    np.testing.assert_array_equal(p, [0, 0, 2, 2])


def test_block_pointers_without_boundary_check(checked):
    @triton.jit
    def block(a_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, CHECK: tl.constexpr):
        p = tl.make_block_ptr(a_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
        if CHECK:
            x = tl.load(p, boundary_check=(0, 1))
        else:
            x = tl.load(p)
        q = tl.make_block_ptr(out_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
        tl.store(q, x, boundary_check=(0, 1))

    a = np.arange(20 * 12, dtype=np.float32).reshape(20, 12)
    out = np.zeros_like(a)
    block[(2, )](a, out, 20, 12, BM=16, BN=16, CHECK=True)
    np.testing.assert_array_equal(out, a)
    with pytest.raises(OutOfBoundsError, match=r"load in kernel `block`.*program id \(1, 0, 0\)(?s:.*)argument "
                                               r"`a_ptr` \(float32\[20, 12\]"):
        block[(2, )](a, out, 20, 12, BM=16, BN=16, CHECK=False)


def test_pointer_chosen_at_run_time_must_lie_in_one_of_its_arguments(checked):
    @triton.jit
    def either(a_ptr, b_ptr, out_ptr, USE_A, SHIFT, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        base = tl.where(USE_A == 1, a_ptr, b_ptr)
        tl.store(out_ptr + offs, tl.load(base + offs + SHIFT))

    a, b = np.full(16, 1, np.float32), np.full(16, 2, np.float32)
    out = np.zeros(16, np.float32)
    either[(1, )](a, b, out, 0, 0, BLOCK=16)
    np.testing.assert_array_equal(out, b)
    with pytest.raises(OutOfBoundsError, match=r"one of the arguments `a_ptr`, `b_ptr` \(chosen at run time\); lanes "
                                               r"\(the access has no mask\) fall outside all of their buffers"):
        either[(1, )](a, b, out, 0, 10**8, BLOCK=16)


@triton.jit
def _via_address(addr_ptr, out_ptr, SHIFT, BLOCK: tl.constexpr):
    # an address handed over as an integer (grouped GEMM's pointer arrays): it may point anywhere the host
    # chose, so only the null page is refused
    p = tl.load(addr_ptr).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(p + offs + SHIFT))


def test_pointers_from_integers_may_go_anywhere_but_the_null_page(checked):
    hidden = np.arange(32, dtype=np.float32)       # not an argument: reached through its address only
    out = np.zeros(16, np.float32)
    _via_address[(1, )](np.array([hidden.ctypes.data], np.int64), out, 8, BLOCK=16)
    np.testing.assert_array_equal(out, hidden[8:24])
    with pytest.raises(OutOfBoundsError, match=r"does not come from an argument \(it was loaded from memory or made "
                                               r"from an integer\) and lanes .* fall in the null page: addresses 0x40 "
                                               r"to 0x7c \(first: 0x40\)"):
        _via_address[(1, )](np.zeros(1, np.int64), out, 16, BLOCK=16)


def test_the_lowest_failing_program_is_reported_when_threads_share_the_grid(checked):
    @triton.jit
    def some_fail(x_ptr, bad_from, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        shift = tl.where(pid >= bad_from, 1 << 30, 0)
        tl.store(x_ptr + offs + shift, 1.0)

    x = np.zeros(64 * 16, np.float32)
    with knobs.runtime.scope():
        cpu_knobs.parallel_threshold = 0      # spread the grid over the threads even for this small launch
        knobs.runtime.num_threads = 4
        for _ in range(3):
            with pytest.raises(OutOfBoundsError, match=r"program id \(37, 0, 0\)"):
                some_fail[(64, )](x, 37, BLOCK=16)
    assert (x[:37 * 16] == 1).all()


def test_debug_mode_turns_it_on_and_the_knob_wins(fresh_cache):
    x, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    with knobs.scope(), cpu_knobs.scope():
        del cpu_knobs.bounds_check            # unset: follows debug
        knobs.runtime.debug = True
        with pytest.raises(OutOfBoundsError):
            _put[(1, )](x, out, 10**9, BLOCK=16)
        cpu_knobs.bounds_check = False
        k = _put[(1, )](x, out, 0, BLOCK=16)
        assert not k.metadata_dict.get("bounds_check")


def test_off_by_default_with_no_check_in_the_code(fresh_cache):
    """The default build is the unchecked one: no check, no extra argument slots, no state."""
    x, out = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    with knobs.scope(), cpu_knobs.scope():
        del cpu_knobs.bounds_check
        knobs.runtime.debug = False
        plain = _put[(1, )](x, out, 0, BLOCK=16)
        cpu_knobs.bounds_check = True
        guarded = _put[(1, )](x, out, 0, BLOCK=16)
    np.testing.assert_array_equal(out, x)
    assert not plain.metadata_dict.get("bounds_check") and guarded.metadata_dict["bounds_check"]
    for stage in ("llir", ):
        assert not re.search(r"_oob|ptrtoint", plain.asm[stage]), "the default build must carry no check"
        assert "_oob_state" in guarded.asm[stage] and "_oob(" in guarded.asm[stage]
    assert plain.hash != guarded.hash    # a different compilation, cached under a different key
