"""Reading the ops being lowered: result types as LLVM types, operand groups, attributes."""
from __future__ import annotations

import re
from typing import Any, Optional

from tritium._mlir import ir
from tritium.dialect.ops import ROUNDED_ALONE

from .irtext import llvm_type


class LoweringError(NotImplementedError):
    #: the message already names the kernel and the op's source line (the innermost op that failed says where)
    located = False


_type_cache: dict[str, tuple[Optional[tuple[int, ...]], str, str]] = {}


def type_info(t: Any) -> tuple[Optional[tuple[int, ...]], str, str]:
    """(shape or None for scalars, LLVM element type, MLIR element type name)."""
    key = str(t)
    info = _type_cache.get(key)
    if info is None:
        if isinstance(t, ir.RankedTensorType):
            rt = ir.RankedTensorType(t)
            elem = str(rt.element_type)
            info = (tuple(rt.shape), llvm_type(elem), elem)
        else:
            info = (None, llvm_type(key), key)
        _type_cache[key] = info
    return info


def pointee(t: Any) -> str:
    """The LLVM element type a ``!tt.ptr`` (or a tensor of them) points to."""
    s = str(t)
    inner = s[s.index("!tt.ptr<") + len("!tt.ptr<"):]
    depth, end = 1, 0
    for i, ch in enumerate(inner):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth == 0:
                end = i
                break
    return llvm_type(inner[:end])


def segments(op: Any, n_groups: int) -> list[int]:
    if "operandSegmentSizes" in op.attributes:
        return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    # without the attribute at most one group is variadic: by our op definitions, the last one
    return [1] * (n_groups - 1) + [len(op.operands) - (n_groups - 1)]


def split_operands(op: Any, names: list[str]) -> dict[str, list[Any]]:
    sizes = segments(op, len(names))
    out, i = {}, 0
    for name, n in zip(names, sizes):
        out[name] = list(op.operands)[i:i + n]
        i += n
    return out


def str_attr(op: Any, name: str, default: str = "") -> str:
    return ir.StringAttr(op.attributes[name]).value if name in op.attributes else default


def elementwise_attrs(op: Any) -> dict:
    """The attributes the scalar emitter needs: compare predicates, NaN propagation, library symbols."""
    out: dict[str, Any] = {}
    for name in ("predicate", "propagate_nan"):
        if name in op.attributes:
            out[name] = ir.IntegerAttr(op.attributes[name]).value
    if ROUNDED_ALONE in op.attributes:
        out["rounded_alone"] = True
    for name in ("symbol", "libname"):
        if name in op.attributes:
            out[name] = ir.StringAttr(op.attributes[name]).value
    return out


def is_block_ptr(value: Any) -> bool:
    return str(value.type).startswith("!tt.ptr<tensor<")


def location(op: Any) -> str:
    m = re.search(r'loc\("([^"]*)":(\d+):(\d+)\)', str(op.location))
    return f"{m.group(1)}:{m.group(2)}" if m else "<unknown>"


def uses(value: Any) -> int:
    n = 0
    for _ in value.uses:
        n += 1
    return n


#: tt.atomic_rmw / tt.descriptor_reduce kinds -> LLVM atomicrmw operations
RMW = {"add": "add", "fadd": "fadd", "and": "and", "or": "or", "xor": "xor", "xchg": "xchg", "max": "max",
       "min": "min", "umax": "umax", "umin": "umin", "fmax": "fmax", "fmin": "fmin"}
