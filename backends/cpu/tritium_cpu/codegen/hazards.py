"""Stores whose value reads the memory they overwrite.

A tile's loads are lazy: ``tl.store(p + offs + 1, tl.load(p + offs))`` would be one loop that reads element
``i`` after the previous iteration overwrote it. Triton's semantics read the whole tile first, so such a
store computes its value into a buffer before writing. A load is safe to fuse when it reads another pointer
argument (arguments are taken not to overlap, as in Triton's own kernels), or reads exactly the address the
store writes at the same index (in-place updates); anything else through the same base is staged.
"""
from __future__ import annotations

from typing import Any

from tritium.dialect.pointers import UNKNOWN, pointer_root

from .tiles import Buf, Elem, Load, Node, Range, Remap, Splat

__all__ = ["UNKNOWN", "must_stage", "pointer_root"]


def must_stage(value: Node, store_ptr: Node, store_root: Any) -> bool:
    """Does computing ``value`` element by element while storing it through ``store_ptr`` risk reading an
    element the same loop already overwrote?"""
    for load, remapped in _loads(value, False):
        root = getattr(load, "root", UNKNOWN)
        if root is UNKNOWN or store_root is UNKNOWN or root == store_root:
            if remapped or not same_address(load.ptr, store_ptr):
                return True
    return False


def _loads(node: Node, remapped: bool) -> list[tuple[Load, bool]]:
    if isinstance(node, (Buf, Splat, Range)):
        return []
    out = []
    if isinstance(node, Load):
        out.append((node, remapped))
        # the pointers themselves may come from loads (indices): read at other indices than stored
        return out + [x for c in node.children() for x in _loads(c, True)]
    inner = remapped or not isinstance(node, Elem)
    for c in node.children():
        out += _loads(c, inner)
    return out


def _same_attrs(a: Elem, b: Elem) -> bool:
    try:
        return bool(a.attrs == b.attrs)
    except Exception:       # attribute objects that do not compare
        return False


def same_address(a: Node, b: Node) -> bool:
    """Do two pointer tiles hold the same address at every index (structurally)?"""
    if a is b:
        return True
    if type(a) is not type(b) or a.shape != b.shape:
        return False
    if isinstance(a, Splat):
        return a.value == b.value
    if isinstance(a, Range):
        return a.start == b.start
    if isinstance(a, Elem):
        return (a.name == b.name and a.ty == b.ty and _same_attrs(a, b) and len(a.args) == len(b.args)
                and all(map(same_address, a.args, b.args)))
    if isinstance(a, Remap):
        return a.axes is not None and a.axes == b.axes and same_address(a.src, b.src)
    return False
