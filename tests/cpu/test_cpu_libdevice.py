"""``tl.extra.cpu.libdevice`` (Triton's CPU backend's ``triton.language.extra.cpu.libdevice``): its elementary
functions take fp16/bf16 and compute them in fp32, rounding the result back, as triton-cpu does; the CUDA set
(``tl.extra.libdevice``) keeps refusing them. Code written for a CPU Triton (FlagGems' CPU vendor: gelu calls
``erf`` on fp16 tiles) depends on the former."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.language.extra import libdevice as cuda_set
from tritium.language.extra.cpu import libdevice


@triton.jit
def _unary(x_ptr, y_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if FN == "erf":
        y = libdevice.erf(x)
    elif FN == "exp":
        y = libdevice.exp(x)
    elif FN == "tanh":
        y = libdevice.tanh(x)
    elif FN == "log1p":
        y = libdevice.log1p(x)
    elif FN == "rsqrt":
        y = libdevice.rsqrt(x)
    else:
        y = libdevice.isnan(x) | libdevice.isinf(x)
    tl.store(y_ptr + offs, y, mask=mask)


def _run(x, fn, out_dtype=None):
    y = np.zeros(x.shape, dtype=out_dtype or x.dtype)
    _unary[(triton.cdiv(x.size, 1024), )](x, y, x.size, FN=fn, BLOCK=1024)
    return y


def _all_fp16():
    x = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16).view(np.float16)
    return np.ascontiguousarray(x[np.isfinite(x)])


@pytest.mark.parametrize("fn", ["erf", "exp", "tanh", "log1p", "rsqrt"])
def test_fp16_is_fp32_rounded_back(fn):
    x = _all_fp16()
    with np.errstate(all="ignore"):
        want = _run(x.astype(np.float32), fn).astype(np.float16)
    got = _run(x, fn)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.view(np.int16)[~np.isnan(want)], want.view(np.int16)[~np.isnan(want)])
    assert np.isnan(got[np.isnan(want)]).all()


def test_bf16_is_fp32_rounded_back():
    torch = pytest.importorskip("torch")
    x = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)
    x = x[torch.isfinite(x)].contiguous()
    y = torch.empty_like(x)
    _unary[(triton.cdiv(x.numel(), 1024), )](x, y, x.numel(), FN="erf", BLOCK=1024)
    y32 = torch.empty(x.shape, dtype=torch.float32)
    _unary[(triton.cdiv(x.numel(), 1024), )](x.float(), y32, x.numel(), FN="erf", BLOCK=1024)
    assert torch.equal(y, y32.to(torch.bfloat16))


def test_float_tests_take_fp16():
    x = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 65504.0], dtype=np.float16)
    got = _run(x, "special", out_dtype=np.bool_)
    np.testing.assert_array_equal(got, [False, False, True, True, True, False])


@triton.jit
def _cuda_erf(x_ptr, y_ptr):
    tl.store(y_ptr, cuda_set.erf(tl.load(x_ptr)))


def test_cuda_set_still_refuses_fp16():
    x = np.ones(1, dtype=np.float16)
    with pytest.raises(Exception, match="no variant for"):
        _cuda_erf[(1, )](x, np.zeros_like(x))


def test_triton_name_resolves_here():
    src = Path(__file__).resolve().parents[2] / "compat" / "triton" / "src"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]))
    code = ("import importlib, tritium.language.extra.cpu.libdevice as mine\n"
            "assert importlib.import_module('triton.language.extra.cpu.libdevice') is mine\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
