"""Dot products on AMD GPUs: the layout policy of the ``ttgir`` stage. (MFMA strategies: see below.)"""
from __future__ import annotations

from typing import Any

from tritium.gpu.assign import LayoutPolicy


class AmdPolicy(LayoutPolicy):
    def __init__(self, num_warps: int, warp_size: int, chip: Any, options: Any) -> None:
        super().__init__(num_warps, warp_size)
        self.chip = chip
        self.options = options
