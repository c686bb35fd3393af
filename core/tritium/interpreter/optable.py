"""The interpreter's op table. Most of its handlers are the builder API the semantic calls by name (``load``,
``splat``, registered ``dispatch=False``) or the semantic's own methods (reductions, printing); the rest are
reached through ``NumpyBuilder.tt(name, ...)``, which dispatches through this table. :mod:`.builder` declares
the families and the refusals. A leaf module, so that every handler module can import it."""
from __future__ import annotations

from ..op_registry import OpTable

INTERPRETER_OPS = OpTable("the interpreter")
