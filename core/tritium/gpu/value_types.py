"""What the MLIR type of a GPU kernel value says: its tensor shape, its element type and their sizes in bytes
(the layout assignment, the target policies and the lowering all ask)."""
from __future__ import annotations

from typing import Any, Optional

from .._mlir import ir


def tensor_shape(t: Any) -> Optional[tuple[int, ...]]:
    if isinstance(t, ir.RankedTensorType):
        return tuple(ir.RankedTensorType(t).shape)
    return None


def element_type(t: Any) -> str:
    if isinstance(t, ir.RankedTensorType):
        return str(ir.RankedTensorType(t).element_type)
    return str(t)


def element_bytes(elem: str) -> int:
    if elem.startswith("!tt.ptr"):
        return 8
    return {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}.get(elem, 1)


def pointee_bytes(ptr_elem: str) -> int:
    inner = ptr_elem.split("!tt.ptr<", 1)[1].rsplit(">", 1)[0]
    return element_bytes(inner)
