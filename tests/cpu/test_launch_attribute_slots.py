"""The attributes every cached launch reads (``kernel[grid]`` and the generated frame of runtime/dispatch.py) are
slots of JITFunction: kept in the instance dict they cost ~300 instructions a read once that dict is a real dict
(which any ``__dict__`` access makes it), about a seventh of a whole cached launch for the five to seven reads.
Slots must not change what users see: setting them, copies, the hooks list and the debug/interpret switches."""
from __future__ import annotations

import copy
import types

import numpy as np

import tritium as triton
import tritium.language as tl
from tritium.runtime.jit import JITFunction

HOT = ("pre_run_hooks", "interpret", "debug", "used_globals", "device_caches", "_hot_path")


@triton.jit
def _store(out_ptr, value):
    tl.store(out_ptr, value)


def test_what_the_cached_launch_reads_are_slots():
    for name in HOT:
        assert isinstance(JITFunction.__dict__.get(name), types.MemberDescriptorType), name


def test_a_copy_launches_through_its_own_frame():
    out = np.zeros(4, dtype=np.float32)
    _store[(1, )](out, 1)
    twin = copy.copy(_store)
    assert twin._hot_path is _store._hot_path and twin.pre_run_hooks is _store.pre_run_hooks
    twin.pre_run_hooks = []                 # a slot: the copy's own from now on
    seen = []
    twin.add_pre_run_hook(lambda *a, **k: seen.append(a))
    twin[(1, )](out, 2)
    _store[(1, )](out, 3)                   # the original has no hook
    assert out[0] == 3 and seen == [(out, 2)]
    twin.pre_run_hooks.clear()
    twin[(1, )](out, 4)
    assert out[0] == 4 and twin._hot_path is not None and twin._hot_path.fn is twin


def test_switches_set_on_the_kernel_still_take_effect():
    out = np.zeros(4, dtype=np.float32)
    fn = triton.jit(_store.fn)
    fn[(1, )](out, 1)
    fn.interpret = True                     # runs in the interpreter from the next launch on
    fn[(1, )](out, 2)
    assert out[0] == 2
    fn.interpret = False
    fn.debug = True
    fn[(1, )](out, 5)
    assert out[0] == 5
    assert "interpret" not in vars(fn) and "debug" not in vars(fn)
