"""``tritium.knobs.opstats``: read from TRITIUM_OPSTATS_*."""
from __future__ import annotations

from tritium.knobs import BoolKnob, KnobGroup


class opstats_knobs(KnobGroup):
    group_name = "opstats"
    #: printing changes no generated code: toggling it must not recompile every kernel
    not_in_cache_key = ("print",)
    print = BoolKnob("TRITIUM_OPSTATS_PRINT", False, doc="Print one line of statistics per compiled kernel")


opstats = opstats_knobs()
