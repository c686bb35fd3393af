"""The NVIDIA backend's big modules were split along their seams (pure moves); every old import path must keep
working and name the same object, so that a caller or a test patching the old module still reaches the code
that runs (tests/unit/test_module_splits.py holds core's; vendor names stay out of the shared tests)."""
from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("module, part, names", [
    ("tritium_nvidia.wgmma", "tritium_nvidia.wgmma_operands",
     ["_SWIZZLE_MODE", "_compatible", "_descriptor", "_operand_tile", "_last_later_loop", "_loop_invariant_tile",
      "_pinned", "_desc_for"]),
    ("tritium_nvidia.wgmma", "tritium_nvidia.wgmma_wait", ["_CONSTRAINT", "wait_group", "wait_lines"]),
])
def test_split_out_names_keep_their_import_path(module, part, names):
    old, new = importlib.import_module(module), importlib.import_module(part)
    for name in names:
        assert getattr(old, name) is getattr(new, name), name
