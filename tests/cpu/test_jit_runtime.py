"""JIT semantics on the CPU, as Triton's: defaults, keywords, None, constexpr globals, device functions,
warmup/run, options, the in-memory cache and what invalidates it, hooks, and the errors of bad launches."""
from __future__ import annotations


import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs

SCALE = tl.constexpr(3)


@triton.jit
def _twice(x):
    return x * 2


@triton.jit(noinline=True)
def _plus_one(x):
    return x + 1


@triton.jit
def axpy(out_ptr, x_ptr, n, alpha=2.0, BLOCK: tl.constexpr = 16, bias=None, BIAS: tl.constexpr = None):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    y = _plus_one(_twice(tl.load(x_ptr + offs, mask=m) * alpha)) * SCALE
    # a None argument is a compile-time constant
    if bias is None:
        if BIAS is None:
            tl.store(out_ptr + offs, y, mask=m)
        else:
            tl.store(out_ptr + offs, y + BIAS, mask=m)
    else:
        tl.store(out_ptr + offs, y + bias, mask=m)


def _kernels(fn):
    return [e.kernel for state in fn.device_caches.values() for e in state.kernels.values()]


def test_defaults_keywords_none_and_device_functions():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    axpy[(1, )](out, x, 16)
    np.testing.assert_allclose(out, (x * 2.0 * 2 + 1) * 3)
    axpy[(1, )](out, x, n=8, alpha=1.0, BIAS=10.0)
    np.testing.assert_allclose(out[:8], (x[:8] * 2 + 1) * 3 + 10)
    np.testing.assert_allclose(out[8:], (x[8:] * 2.0 * 2 + 1) * 3)  # masked off: untouched
    axpy[(1, )](out, x, 16, 2.0, 16, None, 0.5)
    np.testing.assert_allclose(out, (x * 2.0 * 2 + 1) * 3 + 0.5)


def test_constexpr_global_change_recompiles():
    global SCALE
    x = np.ones(16, dtype=np.float32)
    out = np.zeros_like(x)
    try:
        axpy[(1, )](out, x, 16)
        assert out[0] == 15
        SCALE = tl.constexpr(5)
        axpy[(1, )](out, x, 16)
        assert out[0] == 25
    finally:
        SCALE = tl.constexpr(3)


def test_specializations_and_do_not_specialize():
    def body(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + n)

    x = np.zeros(16, dtype=np.float32)
    spec = triton.jit(body)
    for n in (16, 32, 17, 1):
        spec[(1, )](x, n, BLOCK=16)
    # 16 and 32 share the divisible-by-16 kernel; 17 has its own; 1 is compiled in
    kernels = _kernels(spec)
    assert len(kernels) == 3
    one = [k for k in kernels if k.src.signature["n"] == "constexpr"]
    assert len(one) == 1 and one[0].src.constants[(1, )] == 1
    assert x[0] == 16 + 32 + 17 + 1
    plain = triton.jit(body, do_not_specialize=["n"])
    for n in (16, 17, 1):
        plain[(1, )](x, n, BLOCK=16)
    assert len(_kernels(plain)) == 1 and x[0] == 66 + 34


def test_options_accepted_and_part_of_the_key():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    k8 = axpy[(1, )](out, x, 16, num_warps=8, num_stages=2)
    k4 = axpy[(1, )](out, x, 16, num_warps=4)
    assert k8.metadata.num_warps == 8 and k8.metadata.num_stages == 2 and k4.metadata.num_warps == 4
    assert k8 is not k4
    assert axpy[(1, )](out, x, 16, num_warps=8, num_stages=2) is k8


def test_warmup_compiles_without_running_and_run_launches():
    torch = pytest.importorskip("torch")
    out = torch.zeros(16)
    x = torch.arange(16, dtype=torch.float32)
    compiled = axpy.warmup(torch.float32, torch.float32, 16, grid=(1, ))
    assert "obj" in compiled.asm
    again = axpy.warmup(out, x, 16, grid=(1, ))
    assert again is compiled  # same specialization: typed stand-ins key like tensors
    assert torch.count_nonzero(out) == 0
    assert axpy.run(out, x, 16, grid=(1, ), warmup=False) is compiled
    torch.testing.assert_close(out, (x * 4 + 1) * 3)


def test_compiled_kernel_takes_all_arguments():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    kernel = axpy.warmup(out, x, 16, 3.0, 16, None, None, grid=(1, ))
    kernel._init_handles()
    assert kernel.n_regs > 0 and kernel.metadata.shared > 0
    kernel[(1, 1, 1)](out, x, 16, 3.0, 16, None, None)
    np.testing.assert_allclose(out, (x * 6 + 1) * 3)


def test_grid_callable_gets_meta_parameters():
    def body(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, offs.to(tl.float32), mask=offs < n)

    fn = triton.jit(body)
    x = np.zeros(100, dtype=np.float32)
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (triton.cdiv(meta["n"], meta["BLOCK"]), )

    fn[grid](x, 100, BLOCK=32, num_warps=2)
    np.testing.assert_array_equal(x, np.arange(100))
    assert seen["BLOCK"] == 32 and seen["num_warps"] == 2 and seen["x_ptr"] is x


def test_in_memory_cache_skips_compile(monkeypatch):
    import tritium.compiler as compiler_pkg
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    axpy[(1, )](out, x, 16)
    calls = []
    real = compiler_pkg.compile
    monkeypatch.setattr(compiler_pkg, "compile", lambda *a, **k: calls.append(1) or real(*a, **k))
    axpy[(1, )](out, x, 16)
    assert calls == []
    axpy[(1, )](out, x, 16, alpha=2.5)  # a float is not specialized on its value
    assert calls == []


def test_always_compile_bypasses_the_disk_cache(monkeypatch, fresh_cache):
    import tritium.compiler.compiler as cc
    builds = []
    real = cc.build_stages
    monkeypatch.setattr(cc, "build_stages", lambda *a, **k: builds.append(1) or real(*a, **k))

    def body(x_ptr):
        tl.store(x_ptr, 7.0)

    x = np.zeros(1, dtype=np.float32)
    triton.jit(body)[(1, )](x)
    triton.jit(body)[(1, )](x)  # a new JITFunction: compiled again, or found on disk
    assert len(builds) == 1
    with knobs.compilation.scope():
        knobs.compilation.always_compile = True
        triton.jit(body)[(1, )](x)
    assert len(builds) == 2 and x[0] == 7


def test_hooks():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    events = []

    def body(x_ptr, n):
        tl.store(x_ptr, n)

    fn = triton.jit(body)
    fn.add_pre_run_hook(lambda *a, **k: events.append(("pre", a[1])))
    with knobs.runtime.scope():
        knobs.runtime.launch_enter_hook = lambda md: events.append(("enter", md["name"], md["grid"]))
        knobs.runtime.launch_exit_hook = lambda md: events.append(("exit", md["name"]))
        knobs.runtime.jit_post_compile_hook = lambda **kw: events.append(("compiled", kw["compile"]["signature"]))
        fn[(2, )](out, 5)
        knobs.runtime.jit_cache_hook = lambda **kw: True  # a cache hook that takes over: nothing runs
        assert fn[(1, )](out, 7.5) is None
    assert events[0] == ("pre", 5)
    assert events[1][0] == "compiled" and events[1][1] == {"x_ptr": "*fp32", "n": "i32"}
    assert events[2:] == [("enter", "body", (2, 1, 1)), ("exit", "body"), ("pre", 7.5)]


def test_recursion_is_a_clear_error():
    @triton.jit
    def loop_forever(x):
        return loop_forever(x)

    def body(x_ptr):
        tl.store(x_ptr, loop_forever(1.0))

    with pytest.raises(triton.CompilationError, match="recursive call of @jit function `loop_forever`"):
        triton.jit(body)[(1, )](np.zeros(1, np.float32))


def test_calling_a_kernel_like_a_function_is_an_error():
    with pytest.raises(RuntimeError, match=r"axpy\[grid\]"):
        axpy(1, 2, 3)


def test_bad_launches_name_kernel_or_argument():
    x = np.zeros(16, dtype=np.float32)
    with pytest.raises(TypeError, match=r"axpy\(\) missing 1 required positional argument: 'n'"):
        axpy[(1, )](x, x)
    with pytest.raises(TypeError, match=r"axpy\(\) got unexpected keyword argument\(s\) 'blok'.*num_warps"):
        axpy[(1, )](x, x, 16, blok=3)

    class OnGpu:
        dtype = np.dtype(np.float32)
        __cuda_array_interface__ = {"data": (1 << 20, False), "typestr": "<f4", "shape": (16, ), "version": 3}

    with pytest.raises(TypeError, match="argument `x_ptr` of kernel `axpy` lives on device 'cuda'"):
        axpy[(1, )](x, OnGpu(), 16)
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="argument `out_ptr` of kernel `axpy` lives on device 'meta'"):
        axpy[(1, )](torch.empty(16, device="meta"), x, 16)


def test_grid_errors():
    x = np.zeros(16, dtype=np.float32)
    with pytest.raises(ValueError, match="grid of kernel `axpy` has a negative size"):
        axpy[(-1, )](x, x, 16)
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        axpy[(1, 1, 1, 1)](x, x, 16)
    axpy[(0, )](x, x, 16)  # an empty grid launches nothing
    assert not x.any()


def test_scalar_types():
    def body(out_ptr, a, b, c, d):
        tl.store(out_ptr, a)
        tl.store(out_ptr + 1, b)
        tl.store(out_ptr + 2, c)
        tl.store(out_ptr + 3, d.to(tl.float64))

    fn = triton.jit(body)
    out = np.zeros(4, dtype=np.float64)
    k = fn[(1, )](out, np.float64(0.5), np.int64(2), 2**40, True)
    assert out.tolist() == [0.5, 2, 2**40, 1]
    assert k.src.signature == {"out_ptr": "*fp64", "a": "fp32", "b": "i32", "c": "i64", "d": "u1"}


def test_cached_launch_skips_the_compiler(monkeypatch):
    """A repeated launch goes straight to the cached kernel (examples/06-launch-overhead.py times it)."""
    from tritium.runtime import launch

    def body(out_ptr, v):
        tl.store(out_ptr, v)

    fn = triton.jit(body)
    out = np.zeros(4, dtype=np.float32)
    fn[(1, )](out, 3)

    def no_compile(*args, **kwargs):
        raise AssertionError("a cached launch compiled again")
    monkeypatch.setattr(launch, "_compile", no_compile)
    for v in (4, 5):
        fn[(1, )](out, v)
        assert out[0] == v


def test_threaded_launch_matches_serial():
    """Small launches stay on one thread (thread start-up costs more than they save); forced onto several,
    every program still runs once."""
    def body(count_ptr, out_ptr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, offs.to(tl.float32) * 2)
        tl.atomic_add(count_ptr, 1)

    fn = triton.jit(body)
    for threads, threshold in ((1, 1 << 40), (3, 0)):
        count = np.zeros(1, dtype=np.int32)
        out = np.zeros(64 * 16, dtype=np.float32)
        with knobs.runtime.scope(), knobs.cpu.scope():
            knobs.runtime.num_threads = threads
            knobs.cpu.parallel_threshold = threshold
            fn[(64, )](count, out, BLOCK=16)
        assert count[0] == 64
        np.testing.assert_array_equal(out, np.arange(64 * 16) * 2)
