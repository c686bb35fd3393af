"""Hook implementations: wrap the tile-IR stage to measure it, report after compilation."""
from __future__ import annotations

import sys

from tritium.hookspecs import PLUGIN_API, hookimpl

TRITIUM_PLUGIN_API = PLUGIN_API
#: the layout of metadata["opstats"]; kernels cached with another layout are recompiled, not reused
SCHEMA = 1
STAGE = "ttir"


@hookimpl
def tritium_knobs():
    from .knobs import opstats
    return [opstats]


@hookimpl
def tritium_add_stages(stages):
    if STAGE not in stages:
        return  # a backend without a tile-IR stage: nothing to measure

    def measured(original, src, metadata):
        module = original(src, metadata)
        from .analysis import analyze
        metadata["opstats"] = analyze(module)
        return module

    stages.wrap(STAGE, measured)


@hookimpl
def tritium_cache_key():
    return f"schema={SCHEMA}"


@hookimpl
def tritium_kernel_compiled(kernel):
    from .knobs import opstats
    stats = getattr(kernel.metadata, "opstats", None)
    if opstats.print and stats:
        print(f"[opstats] {kernel.name}: {sum(stats['ops'].values())} ops, {stats['flops']} flops, "
              f"{stats['load_bytes']} B loaded, {stats['store_bytes']} B stored per program"
              + (f" ({stats['dynamic_loops']} loop(s) of unknown trip count counted once)"
                 if stats["dynamic_loops"] else ""), file=sys.stderr)
