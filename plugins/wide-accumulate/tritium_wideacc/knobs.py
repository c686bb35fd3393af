"""``tritium.knobs.wideacc``: read from TRITIUM_WIDEACC_* (the plugin's own prefix)."""
from __future__ import annotations

from tritium.knobs import BoolKnob, KnobGroup, StrKnob


class wideacc_knobs(KnobGroup):
    group_name = "wideacc"
    enable = BoolKnob("TRITIUM_WIDEACC_ENABLE", False,
                      doc="Insert wide-accumulate into every kernel's ttir pipeline")
    types = StrKnob("TRITIUM_WIDEACC_TYPES", "f16,bf16",
                    doc="Comma-separated element types whose reductions are widened to f32")
    scans = BoolKnob("TRITIUM_WIDEACC_SCANS", True, doc="Widen scans (cumsum, cumprod) too, not only reductions")


wideacc = wideacc_knobs()
