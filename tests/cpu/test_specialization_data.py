"""A compilation described as text (Triton's ``specialization_data``) and compiled again from it without
arguments (Triton's ``JITFunction.preload``): the same kernel (same hash) comes back, and it runs."""

import json

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.compiler.specialization import preload, serialize


@triton.jit
def _fill(X, n, t, scale: tl.constexpr, DT: tl.constexpr, B: tl.constexpr):
    tl.static_assert(t[1][0] == 2)
    v = tl.zeros((B, ), DT) + n * scale
    tl.store(X + tl.arange(0, B), v.to(X.dtype.element_ty))


@triton.jit
def _other(X):
    pass


def _compiled_with_hook(*args):
    seen = {}

    def hook(**kwargs):
        seen.update(kwargs["compile"])

    with knobs.runtime.scope():
        knobs.runtime.jit_cache_hook = hook
        kernel = _fill.run(*args, grid=(1, ), warmup=True)   # warmup() would take a dtype for an array
    return kernel, seen


def test_preload_gives_the_same_kernel_and_it_runs():
    x = np.zeros(8, np.float32)
    args = (x, 3, ((1, ), (tl.constexpr(2), )), 0.5, tl.float64, 8)
    warm, info = _compiled_with_hook(*args)
    data = serialize(_fill, info["signature"], info["constants"], info["attrs"], info["options"], info["key"])
    obj = json.loads(data)
    assert obj["name"].endswith("test_specialization_data._fill")
    # the dtype and the nested tuple's compile-time values survive the text
    assert {"dtype": "fp64"} in obj["constant_vals"]
    kernel = preload(_fill, data)
    assert kernel.hash == warm.hash
    kernel[(1, 1, 1)](x, 3, ((1, ), (2, )))
    np.testing.assert_array_equal(x, np.full(8, 1.5, np.float32))


def test_preload_refuses_another_kernels_text():
    x = np.zeros(8, np.float32)
    _, info = _compiled_with_hook(x, 3, ((1, ), (tl.constexpr(2), )), 0.5, tl.float32, 8)
    data = serialize(_fill, info["signature"], info["constants"], info["attrs"], info["options"], info["key"])
    with pytest.raises(RuntimeError, match="Specialization data is for .*_fill but trying to preload for .*_other"):
        preload(_other, data)
    with pytest.raises(ValueError, match="not the JSON text"):
        preload(_fill, "{not json")
