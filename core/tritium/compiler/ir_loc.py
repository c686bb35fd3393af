"""USE_IR_LOC=<stage>: after that stage, its IR is written to a file and every operation's location is
replaced by that operation's line in the file (MLIR's ``snapshot-op-locations``), so the stages after it
point at IR lines instead of Python lines: a profile or a later stage's debug info maps back to the IR."""
from __future__ import annotations

import os
from typing import Any, Iterable

from .. import knobs
from ..debug_knobs import warn_once


def check_stage(stage_names: Iterable[str]) -> None:
    want = knobs.compilation.use_ir_loc
    names = list(stage_names)
    if want and want not in names:
        warn_once(f"USE_IR_LOC={want}", f"USE_IR_LOC={want}: this backend has no stage {want!r} (its stages: "
                  f"{', '.join(names)}); locations stay Python source lines")


def snapshot_locations(module: Any, path: str) -> bool:
    """Whether the module's locations now point at ``path`` (False: the stage is not MLIR, said once)."""
    if getattr(module, "operation", None) is None:
        want = knobs.compilation.use_ir_loc
        warn_once(f"USE_IR_LOC={want}", f"USE_IR_LOC={want}: stage {want!r} is not MLIR; only an MLIR stage "
                  "(ttir, ttgir) can become the locations of later stages")
        return False
    from .._mlir import passmanager
    os.makedirs(os.path.dirname(path), exist_ok=True)
    quoted = path.replace("\\", "\\\\").replace('"', '\\"')
    with module.context:
        passmanager.PassManager.parse(f'builtin.module(snapshot-op-locations{{filename="{quoted}"}})').run(
            module.operation)
    return True
