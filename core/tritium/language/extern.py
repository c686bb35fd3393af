"""Helpers of ``triton.language.core`` that library code written for Triton uses: ``extern`` and
``extern_elementwise`` (calls of functions of a device library), ``to_tensor``, ``get_int_dtype``,
``must_use_result``, ``binary_op_type_legalization``, ``validate_block_shape``."""
from __future__ import annotations

import math
from typing import Any

from . import core
from .constexpr_function import constexpr_function
from .core import CompileTimeError, _unwrap, builtin, must_use_result  # noqa: F401 (tl.core.must_use_result)


def extern(fn: Any) -> Any:
    """Mark a function that calls a device library (its body calls :func:`extern_elementwise`)."""
    return builtin(fn)


@builtin
def to_tensor(x, _semantic=None):
    return _semantic.to_tensor(_unwrap(x))


@constexpr_function  # as Triton's: kernels call it (torch inductor's triton_helpers.select_one, sorts)
def get_int_dtype(bitwidth: int, signed: bool) -> core.dtype:
    names = {(1, True): "int1", (1, False): "int1", (8, True): "int8", (8, False): "uint8", (16, True): "int16",
             (16, False): "uint16", (32, True): "int32", (32, False): "uint32", (64, True): "int64",
             (64, False): "uint64"}
    try:
        return getattr(core, names[(int(bitwidth), bool(signed))])
    except KeyError:
        raise ValueError(f"no integer type of {bitwidth} bits") from None


def is_negative_zero(x: float) -> bool:
    return x == 0.0 and math.copysign(1.0, x) < 0


def validate_block_shape(shape: Any) -> int:
    numel = 1
    for i, d in enumerate(shape):
        d = _unwrap(d)
        if not isinstance(d, int):
            raise TypeError(f"shape element {i} must have type `constexpr[int]`, got {type(d)}")
        if d & (d - 1) or d <= 0:
            raise ValueError(f"shape element {i} must be a power of 2, got {d}")
        numel *= d
    if numel > core.TRITON_MAX_TENSOR_NUMEL:
        raise ValueError(f"numel ({numel}) exceeds triton maximum tensor numel ({core.TRITON_MAX_TENSOR_NUMEL})")
    return numel


def binary_op_type_legalization(lhs: Any, rhs: Any, semantic: Any) -> Any:
    """Convert both operands to their common type (and shape), as a binary operator would."""
    return semantic.binary_op_type_checking(lhs, rhs)


def dispatch(func: Any, lib_name: str, lib_path: str, args: list, arg_type_symbol_dict: dict, ret_type: Any,
             is_pure: bool, _semantic: Any) -> Any:
    types = tuple(a.dtype for a in args)
    if types not in arg_type_symbol_dict:
        accepted = ", ".join(str(k) for k in arg_type_symbol_dict)
        raise CompileTimeError(f"no variant of this external function takes {types}; it takes {accepted}")
    symbol = arg_type_symbol_dict[types][0]
    return _semantic.extern_elementwise(lib_name, lib_path, list(args), symbol, ret_type.scalar, is_pure)


@builtin
def extern_elementwise(lib_name, lib_path, args, arg_type_symbol_dict, is_pure, _semantic=None):
    """Call an elementwise function of a device library, chosen by the argument types:
    ``arg_type_symbol_dict`` maps a tuple of argument dtypes to ``(symbol, result dtype)``. Backends resolve
    ``symbol`` in ``lib_name``; for portable code use :mod:`tritium.language.extra.libdevice`."""
    s = _semantic
    vals = [s.to_tensor(_unwrap(a)) for a in args]
    types = tuple(v.dtype for v in vals)
    if types not in arg_type_symbol_dict:
        accepted = ", ".join(str(k) for k in arg_type_symbol_dict)
        raise CompileTimeError(f"no variant of this external function takes {types}; it takes {accepted}")
    symbol, ret = arg_type_symbol_dict[types]
    if len(vals) > 1:
        vals = list(s.broadcast_tensors(*vals))
    return s.extern_elementwise(_unwrap(lib_name), _unwrap(lib_path), vals, symbol, ret, bool(_unwrap(is_pure)))
