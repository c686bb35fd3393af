"""The GPU lowering's op table: each handler in this package says which ops it lowers where it is defined
(``@GPU_OPS.lowers("tt.x")``); :mod:`.kernel` declares the generic families, the refusals and the dispatch.
A leaf module, so that every handler module can import it."""
from __future__ import annotations

from ...op_registry import OpTable

GPU_OPS = OpTable("the GPU lowering")
