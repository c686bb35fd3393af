"""Checking a launch grid before it reaches native code.

A launcher hands the grid to C (ctypes, a driver call) as 32-bit integers: a float there is reinterpreted and a
size past 2**32 silently wraps, so a grid that is not exactly what the user meant must be refused here, with the
kernel's name. Limits per axis come from the driver (``DriverBase.max_grid``); the interpreter, which has no
driver, uses the same defaults, so both modes accept the same grids.
"""
from __future__ import annotations

import operator
from typing import Any

from ..backends.driver import DEFAULT_MAX_GRID
_AXES = "xyz"


def grid3(name: str, grid: Any, limits: tuple[int, int, int] = DEFAULT_MAX_GRID) -> tuple[int, int, int]:
    """A grid (an int, or a tuple of 1 to 3 ints) as three ints, each in ``0..limits[axis]``; errors name the
    kernel. Booleans and floats are refused (``(2.9,)`` is not a grid); numpy integers are accepted."""
    if type(grid) is tuple:
        # the common grid, a tuple of ints in range, answered without the loop below (launches compute
        # their grids afresh, so this runs on every launch of a 2-D or 3-D grid)
        n = len(grid)
        if n == 2:
            x, y = grid
            if type(x) is int and type(y) is int and 0 <= x <= limits[0] and 0 <= y <= limits[1] and \
                    x * y < 2**63:
                return (x, y, 1)
        elif n == 3:
            x, y, z = grid
            if type(x) is int and type(y) is int and type(z) is int and 0 <= x <= limits[0] and \
                    0 <= y <= limits[1] and 0 <= z <= limits[2] and x * y * z < 2**63:
                return (x, y, z)
        elif n == 1:
            x = grid[0]
            if type(x) is int and 0 <= x <= limits[0] and x < 2**63:
                return (x, 1, 1)
    if not isinstance(grid, (tuple, list)):
        grid = (grid, )
    if not 1 <= len(grid) <= 3:
        raise ValueError(f"the grid of kernel `{name}` must have 1 to 3 dimensions, got {tuple(grid)!r}")
    out = []
    for axis, x in enumerate(grid):
        if isinstance(x, bool) or type(x).__name__ == "bool_":
            raise TypeError(f"the grid of kernel `{name}` must hold integers, got {x!r} on axis "
                            f"{_AXES[axis]} in {tuple(grid)!r}")
        try:
            n = operator.index(x)
        except TypeError:
            hint = " (use triton.cdiv(n, BLOCK) or int(...) to round)" if isinstance(x, float) or \
                type(x).__name__.startswith("float") else ""
            raise TypeError(f"the grid of kernel `{name}` must be a tuple of 1 to 3 integers or a callable returning "
                            f"one; got {x!r} ({type(x).__name__}) on axis {_AXES[axis]} in {tuple(grid)!r}{hint}"
                            ) from None
        if n < 0:
            raise ValueError(f"the grid of kernel `{name}` has a negative size on axis {_AXES[axis]}: "
                             f"{tuple(grid)!r}")
        if n > limits[axis]:
            raise ValueError(f"the grid of kernel `{name}` has {n} programs on axis {_AXES[axis]}, more than this "
                             f"device allows ({limits[axis]}): use fewer, larger programs (a bigger BLOCK), or "
                             f"loop inside the kernel over what one axis cannot hold")
        out.append(n)
    if out and out[0] * (out[1] if len(out) > 1 else 1) * (out[2] if len(out) > 2 else 1) >= 2**63:
        raise ValueError(f"the grid of kernel `{name}` has 2**63 programs or more: {tuple(out)!r}")
    return tuple(out) + (1, ) * (3 - len(out))  # type: ignore[return-value]
