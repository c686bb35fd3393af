"""Hook implementations: the pass, its knobs, and its place in the ``ttir`` pipeline."""
from __future__ import annotations

from tritium.hookspecs import PLUGIN_API, PassSpec, hookimpl, lazy

TRITIUM_PLUGIN_API = PLUGIN_API
PASS = "wide-accumulate"


@hookimpl
def tritium_passes():
    return [PassSpec(PASS, lazy("tritium_wideacc.wide_accumulate:wide_accumulate"),
                     "accumulate fp16/bf16 tt.reduce and tt.scan in f32 (extend, reduce, truncate)")]


@hookimpl
def tritium_knobs():
    from .knobs import wideacc
    return [wideacc]


@hookimpl
def tritium_pipeline(stage, pipeline):
    from .knobs import wideacc
    if stage != "ttir" or not wideacc.enable or PASS in pipeline:
        return
    # after inlining, so that reductions written in @jit helper functions are seen; before the cleanups,
    # which fold the extend/truncate pairs this pass adds
    if "inline" in pipeline:
        pipeline.insert_after("inline", PASS)
    else:
        pipeline.prepend(PASS)
