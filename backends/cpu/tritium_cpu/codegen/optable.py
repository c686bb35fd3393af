"""The CPU code generator's op table: each handler says which ops it lowers where it is defined
(``@CPU_OPS.lowers("tt.x")``); :mod:`.lower` declares the generic elementwise family, the refusals and the
dispatch. A leaf module, so that every handler module can import it."""
from __future__ import annotations

from tritium.op_registry import OpTable

CPU_OPS = OpTable("the CPU backend")
