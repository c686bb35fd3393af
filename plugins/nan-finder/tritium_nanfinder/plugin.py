"""Hook implementations: the pass, its knobs, and its place at the end of the ``ttir`` pipeline."""
from __future__ import annotations

from tritium.hookspecs import PLUGIN_API, PassSpec, hookimpl, lazy

TRITIUM_PLUGIN_API = PLUGIN_API
PASS = "nonfinite-check"


@hookimpl
def tritium_passes():
    return [PassSpec(PASS, lazy("tritium_nanfinder.nonfinite_check:nonfinite_check"),
                     "assert that stored (and optionally loaded or computed) floats are finite, naming the op and "
                     "source line that produced a NaN or Inf")]


@hookimpl
def tritium_knobs():
    from .knobs import nanfinder
    return [nanfinder]


@hookimpl
def tritium_pipeline(stage, pipeline, options):
    from .knobs import nanfinder
    if stage != "ttir" or not nanfinder.enable or PASS in pipeline:
        return
    # last: the optimizations before it must not move or delete the checks, and the checks must see the
    # values the kernel really stores
    pipeline.append(PASS)
