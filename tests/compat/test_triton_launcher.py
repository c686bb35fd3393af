"""The pieces of Triton's API that torch inductor's Triton backend calls, with Triton's semantics and without
torch: ``CompiledKernel.run`` with Triton's launcher protocol and ``launch_metadata``, dtype methods
(``x.dtype.is_floating()``) inside kernels, ``ConstexprFunction``, and the JITFunction attributes inductor
saves and restores around pickling (``used_global_vals``, ``repr``)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import knobs
from tritium.compiler import ASTSource


@tritium.jit
def _nan_max(a, b):
    # as inductor's triton_helpers.maximum: NaN-propagating only for floating-point types
    mask = a > b
    if a.dtype.is_floating():
        mask |= a != a
    return tl.where(mask, a, b)


@tritium.jit
def nan_max_kernel(X, Y, OUT, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(OUT + o, _nan_max(tl.load(X + o, mask=m), tl.load(Y + o, mask=m)), mask=m)


def _inputs(dtype):
    x = np.array([1, 5, np.nan, 2, 7, 0, 3, 9, 4, 8] if dtype == np.float32 else [1, 5, 6, 2, 7, 0, 3, 9, 4, 8],
                 dtype=dtype)
    return x, np.arange(10).astype(dtype)[::-1].copy(), np.zeros(10, dtype)


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_dtype_methods_inside_kernels(dtype, interpret):
    x, y, out = _inputs(dtype)
    k = tritium.JITFunction(nan_max_kernel.fn)
    k.interpret = interpret
    k[(3, )](x, y, out, 10, BLOCK=4)
    expected = np.where((x > y) | (x != x), x, y)  # NaN where x is NaN, only possible for floats
    np.testing.assert_array_equal(out, expected)


def _compiled():
    src = ASTSource(nan_max_kernel, {"X": "*fp32", "Y": "*fp32", "OUT": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                    constexprs={"BLOCK": 4})
    return tritium.compile(src)


def test_compiled_kernel_run_takes_tritons_launcher_protocol():
    kernel = _compiled()
    x, y, out = _inputs(np.float32)
    seen = []
    # run(gx, gy, gz, stream, function, packed_metadata, launch_metadata, enter_hook, exit_hook, *all args)
    kernel.run(3, 1, 1, None, kernel.function, kernel.metadata, "md", lambda m: seen.append(("enter", m)),
               lambda m: seen.append(("exit", m)), x, y, out, 10, 4)
    np.testing.assert_array_equal(out, np.where((x > y) | (x != x), x, y))
    assert seen == [("enter", "md"), ("exit", "md")]
    out[:] = 0
    kernel.run(2, 1, 1, None, None, None, None, None, None, x, y, out, 10, 4)  # two programs: 8 elements
    np.testing.assert_array_equal(out[8:], 0)
    assert np.isnan(out[2]) and out[7] == 9


def test_launch_metadata_only_with_an_enter_hook():
    kernel = _compiled()
    x, y, out = _inputs(np.float32)
    assert kernel.launch_metadata((1, 1, 1), None, x, y, out, 10, 4) is None
    calls = []

    def per_launch(grid, metadata, args):
        calls.append(grid)
        return {"elements": args["n"], "block": metadata.name}

    kernel.src.fn.launch_metadata = per_launch
    try:
        with knobs.runtime.scope():
            knobs.runtime.launch_enter_hook = lambda md: None
            md = kernel.launch_metadata((3, 1, 1), "s", x, y, out, 10, 4)
    finally:
        kernel.src.fn.launch_metadata = None
    assert calls == []  # computed only when a hook asks for it
    assert md.get() == {"name": kernel.name, "function": kernel.function, "stream": "s", "elements": 10,
                        "block": kernel.name}
    assert calls == [(3, 1, 1)]


def test_constexpr_function_is_tritons_class_with_source():
    from tritium.runtime.jit import ConstexprFunction

    @tritium.constexpr_function
    def twice(v):
        return 2 * v

    assert isinstance(twice, ConstexprFunction) and twice(4) == 8 and twice.__name__ == "twice"
    assert twice.src.startswith("def twice(v):") and "constexpr_function" not in twice.src


def test_used_global_vals_and_repr_round_trip_for_pickling():
    k = tritium.JITFunction(nan_max_kernel.fn)
    k.warmup(tl.float32, tl.float32, tl.float32, 10, BLOCK=4, grid=(1, ))
    assert k.repr(k) == "nan_max_kernel"
    saved = k.used_global_vals
    assert any(name == "_nan_max" for name, _ in saved)
    # what inductor's prepare_for_pickle / restore_after_unpickle do
    k.used_global_vals = None
    assert k.used_global_vals == {} and k.used_globals == []
    k.repr = lambda _: "fixed"
    assert k.repr(k) == "fixed"
    k.used_global_vals = saved
    assert k.used_global_vals == saved
    # a compiled kernel's state pickles once its handles are dropped, as inductor's TritonCompileResult does
    kernel = _compiled()
    state = {**kernel.__dict__, "metadata": kernel.metadata._asdict(), "module": None, "function": None,
             "_launcher": None, "src": None}
    assert pickle.loads(pickle.dumps(state))["name"] == kernel.name


def test_src_starts_at_def_and_first_line_is_its_line():
    # inductor copies a kernel's src under its own @triton.jit, and parses it as "def " + src when it does not
    # start with def: Triton's src has no decorators
    import inspect
    assert nan_max_kernel.src.startswith("def nan_max_kernel(X, Y, OUT, n, BLOCK: tl.constexpr):")
    lines, start = inspect.getsourcelines(nan_max_kernel.fn)
    assert nan_max_kernel.first_line == start + 1  # one decorator line


def test_classes_written_into_generated_code_have_importable_triton_names():
    # inductor writes `annotation.__module__ + "." + annotation.__name__` into code that imports only triton
    import importlib
    import triton
    for cls in (triton.language.constexpr, triton.language.dtype):
        assert cls.__module__.startswith("triton.")
        assert getattr(importlib.import_module(cls.__module__), cls.__name__) is cls
    assert pickle.loads(pickle.dumps(tl.constexpr(3))).value == 3


@tritium.jit
def _bits_kernel(X, OUT, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    # as inductor's triton_helpers.select_one: the unsigned type of the value's width, chosen at compile time
    tl.store(OUT + tl.arange(0, BLOCK), x.to(tl.core.get_int_dtype(x.dtype.primitive_bitwidth, signed=False),
                                              bitcast=True))


@pytest.mark.parametrize("interpret", [False, True])
def test_get_int_dtype_is_a_constexpr_function(interpret):
    x, out = np.array([1.0, -2.0, 0.5, 3.0], np.float32), np.zeros(4, np.uint32)
    k = tritium.JITFunction(_bits_kernel.fn)
    k.interpret = interpret
    k[(1, )](x, out, BLOCK=4)
    np.testing.assert_array_equal(out, x.view(np.uint32))
