"""The block of a block type: ``!tt.tensordesc<tensor<64x32xf16>>`` (a tensor descriptor) and
``!tt.ptr<tensor<64x32xf16>>`` (a block pointer) carry their block's shape and element type in the type's text;
the passes and the GPU lowering read them from here."""
from __future__ import annotations

import re
from typing import Any, Optional

_BLOCK = re.compile(r"!tt\.(tensordesc|ptr)<tensor<((?:\d+x)+)([^,<>]+)>(?:,\s*\d+)?>")


def block_of(t: Any) -> Optional[tuple[tuple[int, ...], str]]:
    """(block shape, element type) of a tensor descriptor or block pointer type, else None."""
    m = _BLOCK.fullmatch(str(t))
    return (tuple(int(x) for x in m.group(2).split("x")[:-1]), m.group(3)) if m else None


def is_descriptor(t: Any) -> bool:
    return str(t).startswith("!tt.tensordesc<")


def descriptor_type(shape: list[int], elem: str) -> str:
    """The text of the tensor descriptor type of blocks of ``shape`` and ``elem``."""
    return f"!tt.tensordesc<tensor<{'x'.join(map(str, shape))}x{elem}>>"
