"""A driver's launch written into core's generated cached-launch frame (``DriverBase.inline_launch``).

Without it a cached launch runs two Python frames: core's generated one (dispatch.py), which keys the
arguments and finds the compiled kernel, and the launcher's call, which packs the arguments and calls the
driver. Pushing and clearing a frame, building the run-time argument tuple and unpacking it again cost about as
much as the packing itself (~2k of ~18k instructions per launch, callgrind). A driver that offers an
:class:`InlineLaunch` has its launch statements written into core's frame instead, for the kernels whose
launcher offers ``inline_constants``; everything the statements do not handle falls through to the launcher's
own call, which must then do the whole launch (so the statements may try the common case and give up).

The statements are Python source with these placeholders (``string.Template``):

- ``$grid``: a local holding the grid as three ints, each in ``0..max_grid`` (checked; zero allowed);
- ``$args``: the kernel's run-time values in signature order, comma-separated (arrays as integer addresses),
  exactly what the launcher's call would receive as its tuple; empty for a kernel without any;
- ``$c``: a local holding the launcher's ``inline_constants`` tuple;
- ``$result``: the expression the frame returns after a launch (``return $result`` ends a launch that is done).

Their globals come from ``names``; the statements' own locals and globals must start with ``prefix`` so that
they cannot meet core's (core's locals start with ``__``; a global that collides is refused when the frame is
generated). The statements run only while no launch enter/exit hook is set and only for entries without a
bounds guard or an argument selection; ``condition``, evaluated first, may refuse more (a debug knob that wants
the launcher's own checks, say).

``step``, optional: ``(namespace, name)`` of a builtin ``step(constants, grid, *args) -> 0 | 1`` (looked up at
every launch, so the driver may replace it) that does all the statements do, ``condition`` included, for a grid
tuple of one to three ints: 0 when it launched, 1 when it queued nothing and raised nothing (the launcher must
launch). Core's native front (runtime/native_front.py) then calls it without running the Python frame at all.
"""
from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class InlineLaunch:
    #: the launch statements (see the module docstring), without indentation
    body: str
    #: an expression over the names below that must be true for the statements to run
    condition: str = "True"
    #: globals the statements and the condition read
    names: Mapping[str, Any] = field(default_factory=dict)
    #: what every local and global of the statements starts with
    prefix: str = "_il_"
    #: (namespace, name) of the native step doing what the statements do (see the module docstring), or None
    step: Any = None

    def lines(self, grid: str, args: str, constants: str, result: str) -> list[str]:
        """The statements with the placeholders filled, one line each."""
        text = string.Template(self.body).substitute(grid=grid, args=args, c=constants, result=result)
        return text.strip("\n").splitlines()

    def check_names(self, taken: Mapping[str, Any]) -> None:
        for name in self.names:
            if not name.startswith(self.prefix):
                raise ValueError(f"inline launch: global {name!r} does not start with the prefix {self.prefix!r}")
            if name in taken:
                raise ValueError(f"inline launch: global {name!r} is already a name of core's launch frame")
