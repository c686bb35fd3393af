"""``tl.device_print`` lines, in the compiled CPU backend's format:
``pid (x, y, z) idx (i, j) prefix: v1, v2``, one line per element, values printed like C's printf."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..language import core as tl
from .elementwise import fvalue
from .values import shape_of


def _hex_float(v: float) -> str:
    # C's %a: no trailing zeros in the fraction, "0x1p+0" rather than Python's "0x1.0000000000000p+0"
    if v != v:
        return "nan" if np.copysign(1.0, v) > 0 else "-nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    text = float(v).hex()
    mant, exp = text.split("p")
    if "." in mant:
        head, frac = mant.split(".")
        frac = frac.rstrip("0")
        mant = head + ("." + frac if frac else "")
    return f"{mant}p{exp}"


def _fmt_float(v: float) -> str:
    if v != v:
        return "nan" if np.copysign(1.0, v) > 0 else "-nan"
    return f"{v:f}"


def _formatter(t: tl.tensor, hexa: bool) -> tuple[Any, np.ndarray]:
    elt = t.dtype
    a = t.handle.a
    if elt.is_ptr():
        return (lambda v: hex(int(v) & (2**64 - 1))), a
    if elt.is_floating():
        vals = fvalue(a, elt).astype(np.float64)
        return (_hex_float if hexa else _fmt_float), vals
    if elt.is_bool():
        return (lambda v: f"{int(v):#x}" if hexa else str(int(v))), a
    if elt.is_int_signed():
        if hexa:
            return (lambda v: f"{int(v) & (2**64 - 1):#x}"), a
        return (lambda v: str(int(v))), a
    return (lambda v: f"{int(v):#x}" if hexa else str(int(v))), a.view(np.dtype(f"u{a.dtype.itemsize}"))


def format_lines(launch: Any, prefix: str, vals: list[tl.tensor], hexa: bool) -> list[tuple[int, str]]:
    """(batch index, text) for every line the print produces, in program then element order."""
    shape: tuple[int, ...] = ()
    for v in vals:
        if v.type.is_block():
            shape = shape_of(v.type)
    cols = [_formatter(v, hexa) for v in vals]
    batch = max([launch.progs.size] + [a.shape[0] for _, a in cols])
    arrays = []
    for (f, a), v in zip(cols, vals):
        full = np.broadcast_to(a.reshape((a.shape[0], ) + a.shape[1:] + (1, ) * (len(shape) - (a.ndim - 1))),
                               (batch, ) + shape) if shape_of(v.type) != shape else np.broadcast_to(a, (batch, ) + shape)
        arrays.append((f, full))
    widths = [len(str(max(s - 1, 0))) for s in shape]
    lines = []
    for b in range(batch):
        pid = launch.pid_of(b)
        for idx in np.ndindex(*shape):
            where = ", ".join(str(i).rjust(w) for i, w in zip(idx, widths))
            text = ", ".join(f(a[(b, ) + idx]) for f, a in arrays)
            lines.append((b, f"pid ({pid[0]}, {pid[1]}, {pid[2]}) idx ({where}){prefix}{text}"))
    return lines
