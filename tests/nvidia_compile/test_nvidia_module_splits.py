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
    ("tritium_nvidia.target", "tritium_nvidia.ptx_words", ["_evict", "_words", "_to_words", "_from_words"]),
])
def test_split_out_names_keep_their_import_path(module, part, names):
    old, new = importlib.import_module(module), importlib.import_module(part)
    for name in names:
        assert getattr(old, name) is getattr(new, name), name


@pytest.mark.parametrize("hook", ["bulk_tensor_copies", "bulk_loads_in_loops", "bulk_tensor_every_rank",
                                  "build_tensor_map", "param_tensor_map", "kernel_metadata", "bulk_barrier_init",
                                  "bulk_barrier_inval", "bulk_expect", "bulk_wait", "bulk_tensor_load",
                                  "bulk_store_fence", "bulk_tensor_store", "bulk_tensor_reduce",
                                  "bulk_store_wait_read"])
def test_the_nvidia_target_still_overrides_the_tma_hooks(hook):
    # the TMA hooks moved to a base class of NvidiaTarget: it must still answer them itself, not with
    # TargetHooks' defaults (which turn bulk copies off)
    from tritium.gpu.target import TargetHooks
    from tritium_nvidia.target import NvidiaTarget
    from tritium_nvidia.target_tma import TmaHooks
    assert getattr(NvidiaTarget, hook) is getattr(TmaHooks, hook) is not getattr(TargetHooks, hook)
