"""``tritium.knobs.nanfinder``: read from TRITIUM_NANFINDER_* (the plugin's own prefix)."""
from __future__ import annotations

from tritium.knobs import BoolKnob, KnobGroup, ListKnob, StrKnob


class nanfinder_knobs(KnobGroup):
    group_name = "nanfinder"
    enable = BoolKnob("TRITIUM_NANFINDER_ENABLE", False, doc="Instrument kernels: the first NaN/Inf raises")
    mode = StrKnob("TRITIUM_NANFINDER_MODE", "stores", choices=("stores", "loads", "all"),
                   doc="stores: check values written to memory; loads: also values read; all: every float op")
    kernels = ListKnob("TRITIUM_NANFINDER_KERNELS", doc="Only instrument these kernels (names; empty: all)")


nanfinder = nanfinder_knobs()
