"""Array arguments a kernel cannot address safely are refused, compiled and interpreted alike: views with a
negative stride, and read-only memory that the kernel stores to. Read-only arrays that are only loaded, and
non-contiguous views with positive strides (the user's layout, as in Triton), keep working."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.runtime.safety import UnsafeArgumentError
from tritium.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def copy(x, y, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    m = o < n
    tl.store(y + o, tl.load(x + o, mask=m), mask=m)


@triton.jit
def _store_through(p, v, o):
    tl.store(p + o, v)


@triton.jit
def copy_via_call_and_loop(x, y, total, n: tl.constexpr, B: tl.constexpr):
    o = tl.arange(0, B)
    q = y
    for i in range(n):  # a loop-carried pointer, stored to by a device function
        q += 0
    _store_through(q, tl.load(x + o), o)
    tl.atomic_add(total, 1)


@triton.jit
def scale_desc(d, k):
    d.store([0, 0], d.load([0, 0]) * k)


@triton.jit
def copy_pair(pair, n, B: tl.constexpr):
    o = tl.arange(0, B)
    m = o < n
    tl.store(pair[1] + o, tl.load(pair[0] + o, mask=m), mask=m)


KERNELS = (copy, copy_via_call_and_loop, scale_desc, copy_pair)


@pytest.fixture(params=["compiled", "interpreted"])
def mode(request):
    for k in KERNELS:
        k.interpret = request.param == "interpreted"
    yield request.param
    for k in KERNELS:
        k.interpret = False


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def test_negative_stride_view_is_refused(mode):
    x = np.arange(1000, dtype=np.float32)
    y = np.zeros(1000, np.float32)
    with pytest.raises(UnsafeArgumentError) as info:
        copy[(4, )](x[::-1], y, 1000, B=256)  # was: garbage (SIGSEGV at 16M elements)
    msg = str(info.value)
    assert "argument `x` of kernel `copy`" in msg and "negative stride" in msg
    assert "np.ascontiguousarray(x)" in msg
    assert not y.any()
    # as an output too, and in 2-D (one negative axis is enough)
    with pytest.raises(UnsafeArgumentError, match="argument `y` of kernel `copy`"):
        copy[(4, )](x, np.zeros(1000, np.float32)[::-1], 1000, B=256)
    with pytest.raises(UnsafeArgumentError, match="argument `x`"):
        copy[(1, )](np.zeros((4, 8), np.float32)[:, ::-1], y, 32, B=32)
    # the advice works
    copy[(4, )](np.ascontiguousarray(x[::-1]), y, 1000, B=256)
    assert (y == x[::-1]).all()


def test_error_is_exported_at_the_top_level(mode):
    """Users catch it as ``triton.UnsafeArgumentError`` without knowing tritium's module layout."""
    assert triton.UnsafeArgumentError is UnsafeArgumentError and "UnsafeArgumentError" in triton.__all__
    with pytest.raises(triton.UnsafeArgumentError, match="argument `y` of kernel `copy` is read-only"):
        copy[(1, )](np.zeros(8, np.float32), _read_only(np.zeros(8, np.float32)), 8, B=8)


def test_positive_stride_views_are_the_users_layout(mode):
    x = np.arange(2000, dtype=np.float32)
    y = np.zeros(1000, np.float32)
    copy[(4, )](x[::2], y, 1000, B=256)  # the kernel reads x's memory from the data pointer on
    assert (y == x[:1000]).all()
    z = np.zeros((8, 125), np.float32).T  # Fortran order: accepted as is
    copy[(4, )](x, z, 1000, B=256)
    assert (z.T.ravel() == x[:1000]).all()


@pytest.mark.parametrize("make", ["flag", "frombuffer"])
def test_read_only_output_is_refused(mode, make):
    x = np.arange(1000, dtype=np.float32)
    if make == "flag":
        y = _read_only(np.zeros(1000, np.float32))
    else:
        raw = bytes(4000)
        y = np.frombuffer(raw, np.float32)
    with pytest.raises(UnsafeArgumentError) as info:
        copy[(4, )](x, y, 1000, B=256)  # was: silently modified (an immutable bytes object mutated)
    msg = str(info.value)
    assert "argument `y` of kernel `copy` is read-only" in msg and "y.copy()" in msg
    assert "tl.store(y + o" in msg and "^" in msg  # the store that writes it, with a caret
    assert not y.any()
    if make == "frombuffer":
        assert raw == bytes(4000)


def test_read_only_input_is_accepted(mode):
    x = _read_only(np.arange(1000, dtype=np.float32))
    y = np.zeros(1000, np.float32)
    copy[(4, )](x, y, 1000, B=256)
    assert (y == x).all()


def test_writes_are_traced_through_calls_loops_and_atomics(mode):
    x = _read_only(np.arange(16, dtype=np.float32))
    y = np.zeros(16, np.float32)
    total = np.zeros(1, np.int32)
    copy_via_call_and_loop[(1, )](x, y, total, n=3, B=16)
    assert (y == x).all() and total[0] == 1
    with pytest.raises(UnsafeArgumentError, match="argument `y` of kernel `copy_via_call_and_loop`"):
        copy_via_call_and_loop[(1, )](x, _read_only(np.zeros(16, np.float32)), total, n=3, B=16)
    with pytest.raises(UnsafeArgumentError, match="argument `total` of kernel `copy_via_call_and_loop`"):
        copy_via_call_and_loop[(1, )](x, y, _read_only(np.zeros(1, np.int32)), n=3, B=16)


def test_tuple_and_descriptor_arguments_are_checked(mode):
    x = _read_only(np.arange(16, dtype=np.float32))
    y = np.zeros(16, np.float32)
    copy_pair[(1, )]((x, y), 16, B=16)
    assert (y == x).all()
    with pytest.raises(UnsafeArgumentError, match=r"argument `pair\[1\]` of kernel `copy_pair` is read-only"):
        copy_pair[(1, )]((x, _read_only(np.zeros(16, np.float32))), 16, B=16)
    with pytest.raises(UnsafeArgumentError, match=r"argument `pair\[0\]`.*negative stride"):
        copy_pair[(1, )]((np.arange(32, dtype=np.float32)[::-2], y), 16, B=16)
    d = _read_only(np.ones((16, 16), np.float32))
    with pytest.raises(UnsafeArgumentError, match=r"argument `d.base` of kernel `scale_desc` is read-only"):
        scale_desc[(1, )](TensorDescriptor.from_tensor(d, [16, 16]), 3.0)
    assert (d == 1).all()


def test_written_args_metadata():
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    total = np.zeros(1, np.int32)
    kernel = copy_via_call_and_loop[(1, )](x, y, total, n=3, B=16)
    # IR arguments: x, y, total (n and B are compile-time)
    assert kernel.metadata.written_args == [1, 2]
    k2 = copy[(1, )](x, y, 16, B=16)
    assert k2.metadata.written_args == [1]
    assert k2.metadata.written_at["1"].split(":")[-2] == str(copy.first_line + 3)  # first_line is the `def` line


@triton.jit
def store_through_loaded_pointer(table, x):
    p = tl.load(table).to(tl.pointer_type(tl.float32))  # a pointer read from memory: provenance is lost
    tl.store(p, tl.load(x))


def test_unprovable_provenance_counts_as_written():
    x = _read_only(np.ones(1, np.float32))
    target = np.zeros(1, np.float32)
    table = np.array([target.ctypes.data], np.int64)
    with pytest.raises(UnsafeArgumentError, match="argument `x`"):
        store_through_loaded_pointer[(1, )](table, x)
    assert target[0] == 0
    kernel = store_through_loaded_pointer[(1, )](table, np.ones(1, np.float32))
    assert kernel.metadata.written_args is None and target[0] == 1


def test_compiled_kernel_launched_directly_is_checked():
    x = np.arange(16, dtype=np.float32)
    kernel = copy.warmup(x, x, 16, B=16, grid=(1, ))
    with pytest.raises(UnsafeArgumentError, match="argument `y` of kernel `copy`"):
        kernel[(1, )](x, _read_only(np.zeros(16, np.float32)), 16, 16)
    with pytest.raises(UnsafeArgumentError, match="argument `x` of kernel `copy`"):
        kernel[(1, )](x[::-1], np.zeros(16, np.float32), 16, 16)


def test_torch_views():
    torch = pytest.importorskip("torch")
    x = torch.arange(1000, dtype=torch.float32)
    y = torch.zeros(1000)
    copy[(4, )](x.flip(0), y, 1000, B=256)  # flip copies: nothing to refuse
    assert torch.equal(y, x.flip(0))
    y2 = torch.zeros(500)
    copy[(2, )](x[::2], y2, 500, B=256)  # a strided view: the user's layout
    assert torch.equal(y2, x[:500])


@pytest.mark.parametrize("interpret", [False, True])
def test_read_only_memmap_output_is_refused_not_a_crash(tmp_path, interpret):
    """Stores to a ``mode="r"`` memmap used to kill the process (SIGSEGV); run in a child so a crash fails."""
    script = textwrap.dedent(f"""
        import numpy as np, tritium as triton, tritium.language as tl
        from tritium.runtime.safety import UnsafeArgumentError

        @triton.jit
        def copy(x, y, n, B: tl.constexpr):
            o = tl.program_id(0) * B + tl.arange(0, B)
            tl.store(y + o, tl.load(x + o, mask=o < n), mask=o < n)

        copy.interpret = {interpret}
        path = {str(tmp_path / "data.bin")!r}
        np.arange(1000, dtype=np.float32).tofile(path)
        mm = np.memmap(path, np.float32, mode="r")
        y = np.zeros(1000, np.float32)
        copy[(4, )](mm, y, 1000, B=256)  # reading from it is fine
        assert (y == np.arange(1000)).all()
        try:
            copy[(4, )](y, mm, 1000, B=256)
        except UnsafeArgumentError as exc:
            assert "argument `y` of kernel `copy` is read-only" in str(exc), exc
            print("refused")
    """)
    (tmp_path / "probe.py").write_text(script)
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, str(tmp_path / "probe.py")], capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "refused"


class _DLPackOnly:
    """An array seen only through DLPack (as JAX's are), with an optional read-only flag."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dlpack_producers_read_only_flag_and_strides_are_honoured():
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    copy[(1, )](_DLPackOnly(_read_only(x.copy())), y, 16, B=16)  # read-only input: fine
    assert (y == x).all()
    out = np.zeros(16, np.float32)
    copy[(1, )](x, _DLPackOnly(out), 16, B=16)
    assert (out == x).all()
    with pytest.raises(UnsafeArgumentError, match="argument `y` of kernel `copy` is read-only"):
        copy[(1, )](x, _DLPackOnly(_read_only(np.zeros(16, np.float32))), 16, B=16)
    with pytest.raises(UnsafeArgumentError, match="argument `x` of kernel `copy`.*negative stride"):
        copy[(1, )](_DLPackOnly(np.arange(32, dtype=np.float32)[::-2]), y, 16, B=16)
