"""The NVIDIA cached launch end to end on a host without a GPU: ``kernel[grid](...)`` through core's generated
frame and the launcher's ``hot_call`` down to cuLaunchKernel, whose place is taken by a JIT-compiled C function of
its signature that records its arguments (called through the same native builtin as on a GPU). Every argument
kind must land in the parameter buffer with the bits the kernel's parameter types ask for, on the first launch
and on cached ones; the failure paths (no current context, wrong arguments, bad grids) must still work."""
from __future__ import annotations

import ctypes
import os
import shutil
import struct
import sys
import types

import pytest

pytest.importorskip("tritium_nvidia", reason="the NVIDIA backend is not installed")
pytest.importorskip("cuda.bindings", reason="cuda-bindings is not installed")
torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

import tritium  # noqa: E402
import tritium.language as tl  # noqa: E402
from tritium_nvidia import cuda, driver, launch_call  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder's helpers
import launch_stand_in  # noqa: E402

_received = (ctypes.c_uint64 * 11)()
_seen = (ctypes.c_uint64 * 6)()   # many_kinds' parameters as the driver would read them through kernelParams
_SEEN_TYPES = ("i64", "i32", "i64", "i32", "i8", "i32")   # ptr, i32, i64, float (its bits), i1, i32
_calls = ctypes.c_int64(0)
_HANDLE = 0x7000_0000_1230
_STREAM = 0x7F00_AB00


@tritium.jit
def many_kinds(x_ptr, small, big, scale, flag, neg, one, nothing, C: tl.constexpr):
    v = (small + neg + one + C).to(tl.float32) + big.to(tl.float32) + flag.to(tl.float32)
    tl.store(x_ptr, v * scale)


@pytest.fixture(scope="module")
def stand_in() -> int:
    """cuLaunchKernel's stand-in: stores its 11 arguments in _received and many_kinds' parameters in _seen, counts
    its calls, returns CUDA_SUCCESS."""
    return launch_stand_in.build(_received, calls=_calls, slots=_seen, slot_types=_SEEN_TYPES)


@pytest.fixture
def host_driver(stand_in, monkeypatch, tmp_path):
    """A CudaDriver for sm_90 that accepts CPU tensors, with the native launch call targeting the stand-in."""
    from tritium import plugins
    from tritium.runtime.driver import driver as active

    HostCudaDriver = launch_stand_in.host_cuda_driver(any_device=True)
    monkeypatch.setenv("TRITIUM_HOME", str(tmp_path))
    launch_stand_in.route_launches(monkeypatch, stand_in, _STREAM)
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        active.set_active(HostCudaDriver())
        try:
            many_kinds.device_caches.clear()
            yield
        finally:
            active.reset_active()
            many_kinds.device_caches.clear()


def _params(launcher: driver.CudaLauncher) -> list:
    """The parameters the stand-in read through kernelParams at the last launch, by the C type of each."""
    assert launcher.types == ["ptr addrspace(1)", "i32", "i64", "float", "i1", "i32"]
    s = list(_seen)
    as_i32 = [struct.unpack("<i", struct.pack("<I", v & 0xFFFFFFFF))[0] for v in s]
    return [s[0], as_i32[1], struct.unpack("<q", struct.pack("<Q", s[2]))[0],
            struct.unpack("<f", struct.pack("<I", s[3] & 0xFFFFFFFF))[0], s[4], as_i32[5]]


def _launcher() -> driver.CudaLauncher:
    (state, ) = many_kinds.device_caches.values()
    (entry, ) = state.kernels.values()
    return entry.kernel._launcher


def test_every_argument_kind_reaches_the_driver(host_driver):
    x, y = torch.zeros(4), torch.zeros(8)
    many_kinds.warmup(x, 5, 2**40, 1.5, True, -3, 1, None, C=7, grid=(1, ))
    launcher = _launcher()
    launcher.functions[0] = _HANDLE  # as if loaded on device 0
    # what the kernel takes at run time: the pointer, the ints (1 and None are compiled in), the float, the bool
    assert launcher.types == ["ptr addrspace(1)", "i32", "i64", "float", "i1", "i32"]
    before = _calls.value
    many_kinds[(3, )](x, 5, 2**40, 1.5, True, -3, 1, None, C=7)
    assert _calls.value == before + 1
    # kernelParams: the launcher's own buffer, or (the native call's packing variant) one the builtin made
    assert list(_received)[:9] + list(_received)[10:] == [_HANDLE, 3, 1, 1, launcher.block, 1, 1, launcher.shared,
                                                          _STREAM, 0]
    assert _params(launcher) == [x.data_ptr(), 5, 2**40, 1.5, 1, -3]
    assert _received[9] == launcher.params_addr  # chosen at this launch: the launcher's buffer
    assert launch_call.packed[0] is launch_call.launch and launch_call.packed[1] is not None
    # the same specialization again, other values: the cached frame, no compilation, the new values packed
    many_kinds[(2, 4, 6)](y, 9, -(2**40), 0.25, False, -1, 1, None, C=7)
    assert _launcher() is launcher  # no new specialization
    assert _calls.value == before + 2
    assert list(_received)[1:4] == [2, 4, 6]
    assert _params(launcher) == [y.data_ptr(), 9, -(2**40), 0.25, 0, -1]
    assert _received[9] != launcher.params_addr  # the packing variant's table
    # a float past float's range becomes infinity, as C's conversion makes it
    many_kinds[(1, )](y, 2**31 - 1, 2**41, 1e300, True, 1 - 2**31, 1, None, C=7)
    assert _launcher() is launcher and _calls.value == before + 3
    assert _params(launcher) == [y.data_ptr(), 2**31 - 1, 2**41, float("inf"), 1, 1 - 2**31]
    # without the packing variant (not built, or dropped): the launcher's buffer, under its lock
    launch_call.packed = (None, None)
    many_kinds[(1, )](x, 6, 2**42, -2.5, False, -4, 1, None, C=7)
    assert _received[9] == launcher.params_addr and _calls.value == before + 4
    assert _params(launcher) == [x.data_ptr(), 6, 2**42, -2.5, 0, -4]
    assert launch_call.is_native


@tritium.jit
def ones_between(x_ptr, small, one, big, scale, nothing, flag, neg, C: tl.constexpr):
    v = (small + neg + one + C).to(tl.float32) + big.to(tl.float32) + flag.to(tl.float32)
    tl.store(x_ptr, v * scale)


@pytest.mark.parametrize("native", [False, True], ids=["python-frame", "native-front"])
def test_cached_launch_runs_in_cores_frame_alone(host_driver, native):
    """The driver's launch is written into core's frame (hot_launch.INLINE_BODY): a cached launch does not enter
    the launcher's function, and values compiled in between kept ones (1, None) are skipped in the packed
    bytes. With the native front (runtime/native_front.py) no Python frame runs after __getitem__ at all."""
    import sys
    from tritium import knobs
    x = torch.zeros(4)
    with knobs.runtime.scope():
        knobs.runtime.native_dispatch = native
        ones_between.device_caches.clear()
        ones_between.warmup(x, 5, 1, 2**40, 1.5, None, True, -3, C=7, grid=(1, ))
        (state, ) = ones_between.device_caches.values()
        (entry, ) = state.kernels.values()
        launcher = entry.kernel._launcher
        assert launcher.types == ["ptr addrspace(1)", "i32", "i64", "float", "i1", "i32"]
        assert entry.inline is not None
        launcher.functions[0] = _HANDLE
        ones_between[(2, )](x, 5, 1, 2**40, 1.5, None, True, -3, C=7)  # loads the handle, chooses the native call
        ones_between[(2, )](x, 5, 1, 2**40, 1.5, None, True, -3, C=7)  # remembered again with the native step
        frames: list = []
        before = _calls.value
        sys.setprofile(lambda frame, event, arg: frames.append(frame.f_code.co_filename) if event == "call" else None)
        try:
            ones_between[(3, )](x, 6, 1, -(2**40), 0.25, None, False, -1, C=7)
        finally:
            sys.setprofile(None)
        assert _calls.value == before + 1
        # the launcher's function ("<tritium_nvidia launch>") was not entered and the launch was not handed to
        # the full path (runtime/launch.py); the generated frame ran, or (native front) nothing but __getitem__
        assert ("<launch of ones_between>" in frames) != native, frames
        assert not [f for f in frames if f == "<tritium_nvidia launch>" or f.endswith("launch.py")], frames
        if native:  # (launch_stand_in.py's frames: the stand-in torch device and stream functions)
            assert [f for f in frames if not f.endswith(("jit.py", "launch_stand_in.py"))] == [], frames
        assert _received[1] == 3 and _received[9] != launcher.params_addr
        assert _params(launcher) == [x.data_ptr(), 6, -(2**40), 0.25, 0, -1]
        ones_between.device_caches.clear()


def test_cached_launch_calls_the_launchers_function(host_driver):
    """Core's cache entry calls the launcher's plain function (``hot_call``), not the object."""
    x = torch.zeros(4)
    many_kinds.warmup(x, 5, 2**40, 1.5, True, -3, 1, None, C=7, grid=(1, ))
    (state, ) = many_kinds.device_caches.values()
    (entry, ) = state.kernels.values()
    assert entry.launcher == entry.kernel._launcher.hot_call
    assert type(entry.launcher) is types.FunctionType


def test_no_current_context_is_retried_with_the_primary_one(host_driver, monkeypatch):
    x = torch.zeros(4)
    many_kinds.warmup(x, 5, 2**40, 1.5, True, -3, 1, None, C=7, grid=(1, ))
    launcher = _launcher()
    launcher.functions[0] = _HANDLE
    calls, made_current = [], []

    def first_without_context(*args):
        calls.append(args)
        return launch_call.INVALID_CONTEXT if len(calls) == 1 else 0
    monkeypatch.setattr(launch_call, "launch", first_without_context)
    monkeypatch.setattr(cuda, "ensure_context", made_current.append)
    many_kinds[(2, )](x, 5, 2**40, 1.5, True, -3, 1, None, C=7)
    assert made_current == [0] and len(calls) == 2 and calls[0] == calls[1]
    assert calls[0][:4] == (_HANDLE, 2, 1, 1)


def test_launcher_errors_name_the_kernel(host_driver):
    x = torch.zeros(4)
    many_kinds.warmup(x, 5, 2**40, 1.5, True, -3, 1, None, C=7, grid=(1, ))
    launcher = _launcher()
    launcher.functions[0] = _HANDLE
    before = _calls.value
    with pytest.raises(TypeError, match=r"kernel `many_kinds` takes 6 run-time arguments"):
        launcher((1, 1, 1), (x.data_ptr(), 5))
    with pytest.raises(TypeError, match=r"argument `small` of kernel `many_kinds` must be a i32 value"):
        launcher((1, 1, 1), (x.data_ptr(), "five", 2**40, 1.5, True, -3))
    with pytest.raises(ValueError, match=r"kernel `many_kinds`: negative grid"):
        launcher((1, -1, 1), (x.data_ptr(), 5, 2**40, 1.5, True, -3))
    with pytest.raises(ValueError, match=r"kernel `many_kinds`: grid \(4294967296, 1, 1\) must be integers"):
        launcher((1 << 32, 1, 1), (x.data_ptr(), 5, 2**40, 1.5, True, -3))
    launcher((0, 1, 1), (x.data_ptr(), 5, 2**40, 1.5, True, -3))   # an empty grid launches nothing
    assert _calls.value == before
    launcher((1, 1, 1), (x.data_ptr(), 5, 2**40, 1.5, True, -3))   # and the launcher still works
    assert _calls.value == before + 1


@tritium.jit
def desc_copy(a_desc, out_ptr, n, BM: tl.constexpr, BN: tl.constexpr):
    v = a_desc.load([0, 0]) + n
    tl.store(out_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], v)


def test_host_descriptor_maps_reach_the_driver(host_driver, monkeypatch):
    """A kernel taking a host TensorDescriptor: its encoded map lands in the launcher's buffer at every launch
    (under the lock, without ArgumentBuffer.pack's frames), descriptors made per call with the same fields encode
    nothing again, another tensor gets its own map, and the scalar parameters are right beside it. The driver's
    encoding is replaced by one writing the fields it was given (no libcuda here)."""
    from tritium.tools.tensor_descriptor import TensorDescriptor
    from tritium_nvidia import tensor_maps
    encoded = []

    def encode(spec, base, dims, stride_bytes):
        encoded.append((base, tuple(dims)))
        return struct.pack("<4Q", base, *dims, *stride_bytes).ljust(128, b"\0"), ""
    monkeypatch.setattr(tensor_maps, "_encode", encode)
    a, b = torch.zeros(64, 64, dtype=torch.float16), torch.zeros(32, 64, dtype=torch.float16)
    out = torch.zeros(16 * 32, dtype=torch.float16)
    desc_copy.warmup(TensorDescriptor(a, [64, 64], [64, 1], [16, 32]), out, 5, BM=16, BN=32, grid=(1, ))
    (state, ) = desc_copy.device_caches.values()
    (entry, ) = state.kernels.values()
    launcher = entry.kernel._launcher
    launcher.functions[0] = _HANDLE
    args = launcher.arguments
    assert args.maps is not None, "no host tensor map: the kernel was not compiled for sm_90's parameter maps"
    slot = ctypes.addressof(args.buffer) + args.maps.offsets[0]

    def launched() -> tuple:
        """(the map's fields in its slot, the scalar parameters before it) as the driver reads them."""
        assert _received[9] == launcher.params_addr   # the launcher's own buffer
        return struct.unpack("<4Q", ctypes.string_at(slot, 32)), args.packer.unpack_from(args.buffer, 0)

    before = _calls.value
    desc_copy[(1, )](TensorDescriptor(a, [64, 64], [64, 1], [16, 32]), out, 5, BM=16, BN=32)
    assert _calls.value == before + 1
    assert launched() == ((a.data_ptr(), 64, 64, 128), (a.data_ptr(), 64, 64, 64, out.data_ptr(), 5))
    n = len(encoded)
    for value in (6, 7, 8):     # examples/08's way: a new descriptor in every call
        desc_copy[(1, )](TensorDescriptor(a, [64, 64], [64, 1], [16, 32]), out, value, BM=16, BN=32)
    assert len(encoded) == n and _calls.value == before + 4
    assert launched() == ((a.data_ptr(), 64, 64, 128), (a.data_ptr(), 64, 64, 64, out.data_ptr(), 8))
    desc_copy[(1, )](TensorDescriptor(b, [32, 64], [64, 1], [16, 32]), out, 9, BM=16, BN=32)
    assert launched() == ((b.data_ptr(), 32, 64, 128), (b.data_ptr(), 32, 64, 64, out.data_ptr(), 9))
    desc_copy[(1, )](TensorDescriptor(a, [64, 64], [64, 1], [16, 32]), out, 10, BM=16, BN=32)
    assert launched() == ((a.data_ptr(), 64, 64, 128), (a.data_ptr(), 64, 64, 64, out.data_ptr(), 10))
    assert len(encoded) == n + 1 and _calls.value == before + 6   # a's map came from the cache


@tritium.jit
def keyed(x_ptr, n, big, scale, flag, p5, p6, p7, C: tl.constexpr):
    v = (n + C + p5 + p6 + p7).to(tl.float32) * scale + big.to(tl.float32) + flag.to(tl.float32)
    tl.store(x_ptr, v)


def test_native_front_launches_exactly_what_the_python_frame_launches(host_driver, monkeypatch):
    """Random launches over every key class the native front checks (tensor dtype and alignment, int classes
    1 / multiple of 16 / other / int64, float, bool, constexpr values, keywords or positions) and some it hands on
    (a bool or a float where an int was, launch options, grids it leaves to the frame): with the front armed
    each launch must return the kernel the Python binder's key names, reach the driver with the same grid and
    parameters as with the Python frame alone, and raise the same errors; and the front must have taken most
    of them itself."""
    import random
    from tritium import knobs
    monkeypatch.setattr(driver.CudaLauncher, "load", lambda self, device: _HANDLE)
    rng = random.Random(20031)
    base = torch.zeros(64)
    tensors = [base, base[1:], base.half(), base.half()[1:]]
    ints = [1, 16, 17, -5, 32, 2**40, 2**40 + 16, -(2**40) - 3]
    bigs = [5, 2**41 + 1, -(2**35)]

    grid_calls: list = []

    def by_meta(meta):   # a grid function: called once per launch with every parameter by name
        grid_calls.append(sorted(meta))
        return (meta["p5"] + (meta["C"] == 4), )

    def as_list(meta):
        grid_calls.append(None)
        return [2, 1]

    def empty(meta):
        grid_calls.append(None)
        return (0, )

    def draw():
        args = [rng.choice(tensors), rng.choice(ints), rng.choice(bigs), rng.choice([0.5, -2.0, 1e300]),
                rng.choice([True, False]), 7, 9, 11, rng.choice([3, 4])]
        r = rng.random()
        if r < 0.04:
            args[1] = True                      # a bool where the plan has an int: another key
        elif r < 0.08:
            args[1] = 2.0
        grid = rng.choice([(1, ), (3, 2), (2, 1, 4), (2**31, ), (0, ), (1, 70000), by_meta, as_list, empty])
        how = rng.choice(["positional", "keyword", "options"] if r > 0.9 else ["positional", "keyword"])
        return args, grid, how

    same_class = {1: [1], 16: [16, 32], 32: [16, 32], 17: [17, -5], -5: [17, -5], 2**40: [2**40, 2**40 + 16],
                  2**40 + 16: [2**40, 2**40 + 16], -(2**40) - 3: [-(2**40) - 3]}
    calls = [draw()]
    while len(calls) < 300:   # mostly the previous key again with other values, as a launch loop does
        (args, _, how), (fresh, grid, fresh_how) = calls[-1], draw()
        if rng.random() < 0.3 or type(args[1]) is not int:
            calls.append((fresh, grid, fresh_how))
        else:
            again = list(args)
            again[1] = rng.choice(same_class[args[1]])
            again[3] = fresh[3]
            calls.append((again, grid, how))

    def launch(args, grid, how):
        x, n, big, scale, flag, p5, p6, p7, c = args
        if how == "positional":
            return keyed[grid](x, n, big, scale, flag, p5, p6, p7, c), {}
        if how == "keyword":
            return keyed[grid](x, n, big, scale, flag, p5, p6, p7=p7, C=c), {}
        return keyed[grid](x, n, big, scale, flag, p5, p6, p7, C=c, num_warps=2), {"num_warps": 2}

    def run(native: bool, handed: list) -> list:
        out = []
        with knobs.runtime.scope():
            knobs.runtime.native_dispatch = native
            keyed.device_caches.clear()
            for args, grid, how in calls:
                before, before_handed = _calls.value, len(handed)
                grid_calls.clear()
                try:
                    kernel, options = launch(args, grid, how)
                except Exception as exc:  # noqa: BLE001 - compared between the two runs
                    out.append(("raised", type(exc).__name__, str(exc)[:60], list(grid_calls)))
                    continue
                (state, ) = keyed.device_caches.values()
                key, _, _, _ = state.binder(*args)
                full = (key, tuple(sorted(options.items())) if options else None, False, state.settings)
                assert kernel is state.kernels[full].kernel, (args, grid, how)
                launched = _calls.value - before
                out.append((launched, list(_received)[:4] if launched else None, list(_seen) if launched else None,
                            list(grid_calls), len(handed) == before_handed))
                hp = keyed._hot_path
                if native and hp.front_state is not None and not getattr(hp.front_state[0], "counted", False):
                    frame = hp.front_state[0]

                    def counting(*a, frame=frame, **k):
                        handed.append(1)
                        return frame(*a, **k)
                    counting.counted = True
                    hp.front_state[0] = counting
        return out

    with_python = run(False, [])
    handed: list = []
    with_front = run(True, handed)
    hp = keyed._hot_path
    assert hp.front_state is not None and hp.call is hp.front, "the front was never armed"
    for i, (a, b) in enumerate(zip(with_python, with_front)):
        assert a[:4] == b[:4], (i, calls[i], a, b)
    # launches the front made itself: the driver was called and the Python frame was not entered
    by_front = sum(1 for r in with_front if r[0] == 1 and r[4])
    by_front_with_grid_function = sum(1 for r in with_front if r[0] == 1 and r[4] and r[3])
    assert by_front >= 30, (by_front, len(calls))   # the front plans the last compiled key
    assert by_front_with_grid_function >= 3, by_front_with_grid_function
    keyed.device_caches.clear()


def test_native_front_keeps_no_references(host_driver, monkeypatch):
    """A thousand launches through the front (and a thousand it hands to the Python frame) leave every object's
    reference count as it was: the tensor, the kernel it returns, its plan, the values."""
    monkeypatch.setattr(driver.CudaLauncher, "load", lambda self, device: _HANDLE)
    x = torch.zeros(16)
    big = 2**40 + 3
    keyed.device_caches.clear()
    for _ in range(3):
        kernel = keyed[(2, )](x, 17, big, 0.5, True, 7, 9, 11, C=3)
    hp = keyed._hot_path
    assert hp.call is hp.front
    plan = hp.front_state[1]
    counts = lambda: [sys.getrefcount(o) for o in (x, kernel, plan, big)]  # noqa: E731
    before, calls = counts(), _calls.value
    for _ in range(1000):
        assert keyed[(2, )](x, 17, big, 0.5, True, 7, 9, 11, C=3) is kernel
        keyed[(2, )](x, 17, big, 0.5, True, 7, 9, 11, C=3, num_warps=2)   # launch options: the Python frame
    assert _calls.value == calls + 2000
    assert counts() == before
    keyed.device_caches.clear()


@tritium.jit
def kw_only(x_ptr, n, a, b, c, d, *, C: tl.constexpr):   # six run-time values: what the stand-in reads
    tl.store(x_ptr, (n + a + b + c + d + C).to(tl.float32))


def test_native_front_keeps_pythons_binding_errors(host_driver, monkeypatch):
    """What Python refuses to bind (a keyword-only parameter given by position, an unknown keyword, a missing
    argument) raises the same TypeError with the front armed as without it."""
    monkeypatch.setattr(driver.CudaLauncher, "load", lambda self, device: _HANDLE)
    x = torch.zeros(4)
    kw_only.device_caches.clear()
    for _ in range(3):
        kw_only[(1, )](x, 5, 3, 3, 3, 3, C=2)
    hp = kw_only._hot_path
    assert hp.call is hp.front
    before = _calls.value
    with pytest.raises(TypeError, match="keyword-only argument: 'C'"):   # C given by position
        kw_only[(1, )](x, 5, 3, 3, 3, 3, 2)
    with pytest.raises(TypeError):
        kw_only[(1, )](x, 5, 3, 3, 3, d=3, C=2, D=3)
    with pytest.raises(TypeError):
        kw_only[(1, )](x, 5, 3, 3, 3, C=2)
    assert _calls.value == before
    kw_only[(1, )](x, 6, 3, 3, 3, 3, C=2)
    assert _calls.value == before + 1
    kw_only.device_caches.clear()


def test_native_front_under_threads(host_driver, monkeypatch):
    """Four threads launching through the front (the step releases the GIL around the driver call) while a fifth
    keeps compiling other specializations, which replaces the kernel's plan under them: every launch reaches the
    driver once, each thread gets the kernel of its own key back."""
    import threading
    monkeypatch.setattr(driver.CudaLauncher, "load", lambda self, device: _HANDLE)
    x = torch.zeros(16)
    keyed.device_caches.clear()
    for _ in range(3):
        want = keyed[(2, )](x, 17, 5, 0.5, True, 7, 9, 11, C=3)
    hp = keyed._hot_path
    assert hp.call is hp.front
    before, errors, got = _calls.value, [], []

    def launcher_thread():
        try:
            for _ in range(500):
                got.append(keyed[(2, )](x, 17, 5, 0.5, True, 7, 9, 11, C=3) is want)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def compiling_thread():
        try:
            for c in range(10, 16):
                keyed[(1, )](x, 32, 5, 0.5, False, 7, 9, 11, C=c)   # new keys: compiled, then planned
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=launcher_thread) for _ in range(4)] + [threading.Thread(target=compiling_thread)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(got) == 2000 and all(got)
    assert _calls.value == before + 2000 + 6
    keyed.device_caches.clear()
