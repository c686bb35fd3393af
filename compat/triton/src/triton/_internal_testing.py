"""``triton._internal_testing``: the helpers Triton's own test-suite imports (dtype lists, device predicates,
random inputs, conversions between numpy, torch and reinterpreted tensors), written for tritium so that the
suite can be run against it. Needs numpy, torch and pytest, as the suite does."""
from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np
import pytest
import torch
from numpy.random import RandomState

import tritium
import tritium.language as tl
from tritium.runtime.specialize import TensorWrapper, reinterpret

int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
integral_dtypes = int_dtypes + uint_dtypes
float_dtypes = ["float16", "float32", "float64"]
float_dtypes_with_bfloat16 = float_dtypes + ["bfloat16"]
dtypes = integral_dtypes + float_dtypes
dtypes_with_bfloat16 = dtypes + ["bfloat16"]
torch_float8_dtypes = ["float8_e4m3fn", "float8_e5m2"]
torch_dtypes = ["bool"] + int_dtypes + ["uint8"] + float_dtypes + ["bfloat16"]
tma_dtypes = sorted(set(dtypes_with_bfloat16) - {"int64", "uint64", "float64"})

#: dtype names the suite uses -> tl dtypes (torch/numpy spellings and Triton's short ones)
_TL_DTYPES = {
    "bool": tl.int1, "int1": tl.int1, "float8_e4m3fn": tl.float8e4nv, "float8e4nv": tl.float8e4nv,
    "float8_e5m2": tl.float8e5, "float8e5": tl.float8e5, "float8e4b15": tl.float8e4b15,
    "float8_e4m3fnuz": tl.float8e4b8, "float8e4b8": tl.float8e4b8, "float8_e5m2fnuz": tl.float8e5b16,
    "float8e5b16": tl.float8e5b16, "half": tl.float16, "float": tl.float32, "double": tl.float64,
    **{name: getattr(tl, name) for name in dtypes_with_bfloat16},
}


def is_interpreter() -> bool:
    return tritium.knobs.runtime.interpret


def get_current_target() -> Any:
    return None if is_interpreter() else tritium.runtime.driver.active.get_current_target()


def _backend_is(name: str) -> bool:
    target = get_current_target()
    return target is not None and target.backend == name


def _arch() -> str:
    target = get_current_target()
    return "" if target is None else str(target.arch)


def _cuda_major() -> int:
    return torch.cuda.get_device_capability()[0] if _backend_is("cuda") else -1


def is_cuda() -> bool:
    return _backend_is("cuda")


def is_hip() -> bool:
    return _backend_is("hip")


def is_xpu() -> bool:
    return _backend_is("xpu")


def is_ampere_or_newer() -> bool:
    return _cuda_major() >= 8


def is_hopper_or_newer() -> bool:
    return _cuda_major() >= 9


def is_hopper() -> bool:
    return _cuda_major() == 9


def is_blackwell() -> bool:
    return _cuda_major() == 10


def is_sm12x() -> bool:
    return _cuda_major() == 12


def is_hip_cdna2() -> bool:
    return is_hip() and _arch() == "gfx90a"


def is_hip_cdna3() -> bool:
    return is_hip() and _arch() == "gfx942"


def is_hip_cdna4() -> bool:
    return is_hip() and _arch() == "gfx950"


def is_hip_cdna() -> bool:
    return is_hip_cdna2() or is_hip_cdna3() or is_hip_cdna4()


def is_hip_gfx11() -> bool:
    return is_hip() and "gfx11" in _arch()


def is_hip_gfx12() -> bool:
    return is_hip() and "gfx12" in _arch()


def is_hip_gfx1250() -> bool:
    return is_hip() and "gfx1250" in _arch()


def get_hip_lds_size() -> int:
    return 163840 if is_hip_cdna4() else 65536


def get_arch() -> str:
    return _arch()


def numpy_random(shape: Any, dtype_str: str, rs: Optional[RandomState] = None, low: Any = None,
                 high: Any = None) -> np.ndarray:
    """Deterministic random test data (seed 17 unless ``rs`` is given); integers are never 0, so that division
    tests do not divide by zero; bfloat16 values are float32 with the low 16 bits cleared."""
    shape = (shape, ) if isinstance(shape, int) else shape
    rs = RandomState(seed=17) if rs is None else rs
    if dtype_str in integral_dtypes:
        info = np.iinfo(getattr(np, dtype_str))
        lo = info.min if low is None else max(low, info.min)
        hi = info.max if high is None else min(high, info.max)
        out = rs.randint(lo, hi, shape, dtype=getattr(np, dtype_str))
        out[out == 0] = 1
        return out
    if dtype_str and "float8" in dtype_str:
        return rs.randint(20, 40, shape, dtype=np.int8)  # bit patterns of small finite fp8 values
    if dtype_str in float_dtypes:
        return rs.normal(0, 1, shape).astype(dtype_str)
    if dtype_str == "bfloat16":
        bits = rs.normal(0, 1, shape).astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
        return bits.view(np.float32)
    if dtype_str in ("bool", "int1", "bool_"):
        return rs.normal(0, 1, shape) > 0.0
    raise RuntimeError(f"numpy_random: unknown dtype {dtype_str!r}")


def to_triton(x: np.ndarray, device: Any, dst_type: Optional[str] = None) -> Any:
    """A kernel argument holding ``x`` on ``device``: unsigned integers and fp8 go as torch tensors of the same
    width reinterpreted to the tl type (torch lacks them); float32 data becomes bfloat16 when asked."""
    name = x.dtype.name
    if name in uint_dtypes:
        signed = x.astype(getattr(np, name[1:]))
        return reinterpret(torch.tensor(signed, device=device), getattr(tl, name))
    if dst_type and "float8" in dst_type:
        return reinterpret(torch.tensor(x, device=device), _TL_DTYPES[dst_type])
    if name == "float32" and dst_type == "bfloat16":
        return torch.tensor(x, device=device).bfloat16()
    return torch.tensor(x, device=device)


def str_to_triton_dtype(name: str) -> Any:
    try:
        return _TL_DTYPES[name]
    except KeyError:
        raise TypeError(f"str_to_triton_dtype: unknown dtype {name!r}") from None


def torch_dtype_name(dtype: Any) -> str:
    if isinstance(dtype, tl.dtype):
        return dtype.name
    if isinstance(dtype, torch.dtype):
        return str(dtype).split(".", 1)[1]
    raise TypeError(f"not a tl or torch dtype: {type(dtype)}")


def to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, TensorWrapper):
        return x.base.cpu().numpy().astype(getattr(np, torch_dtype_name(x.dtype)))
    if isinstance(x, torch.Tensor):
        return x.cpu().float().numpy() if x.dtype is torch.bfloat16 else x.cpu().numpy()
    raise ValueError(f"not a kernel tensor: {x!r}")


def unwrap_tensor(t: Any) -> Any:
    return t.base if isinstance(t, TensorWrapper) else t


def supports_tma(byval_only: bool = False) -> bool:
    return is_interpreter() or is_hopper_or_newer()


def supports_ws() -> bool:
    return is_interpreter() or is_hopper_or_newer()


def tma_skip_msg(byval_only: bool = False) -> str:
    return "needs tensor-memory-accelerator support (NVIDIA Hopper or newer)"


requires_tma = pytest.mark.skipif(not supports_tma(), reason=tma_skip_msg())


def default_alloc_fn(size: int, align: int, stream: Any) -> Any:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.empty(size, dtype=torch.int8, device=device)


def _fresh_knobs_impl(skipped_attr: Any = None) -> Any:
    """Triton's ``fresh_knobs`` fixture: (fresh, reset). ``fresh()`` puts every knob group (but those named in
    ``skipped_attr``) back to its defaults, with the knobs' environment variables unset, and returns the knobs
    module; ``reset()`` restores the values and the environment as they were."""
    import contextlib

    from tritium import knobs
    skipped = set(skipped_attr or ())
    stack = contextlib.ExitStack()
    env = pytest.MonkeyPatch()

    def fresh() -> Any:
        stack.enter_context(knobs.scope())
        for name, group in knobs.groups().items():
            if name in skipped:
                continue
            for knob in type(group).descriptors().values():
                for var in knob.env:
                    env.delenv(var, raising=False)
            group.reset()
        return knobs

    def reset() -> None:
        env.undo()
        stack.close()

    return fresh, reset
