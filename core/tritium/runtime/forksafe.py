"""Forking while another thread compiles.

A child process gets a copy of every lock as it was at ``fork()``, but only the thread that forked. A lock
another thread held then stays held in the child forever: the next compile there hangs (llvmlite guards
all of LLVM with one process-wide lock; MLIR and LLVM have C++ mutexes of their own). So every compile and
every launcher build runs under :data:`compile_lock`, and a fork first takes that lock (waiting for a compile
in flight to finish) and llvmlite's, then releases both on each side. Locks of ours that a thread may hold
outside a compile (the autotuner's per-key locks, the driver selection) are made new in the child.

Cached launches take no lock. ``subprocess`` does not run fork handlers (its child execs at once) and needs
none.
"""
from __future__ import annotations

import os
import sys
import threading
import weakref
from typing import Any

#: held by every compilation (re-entrant: a stage hook may launch another kernel); one compile at a time per
#: process, which also makes concurrent launches of one new specialization compile it once
compile_lock = threading.RLock()

_renew: "weakref.WeakSet[Any]" = weakref.WeakSet()
_held: list[Any] = []


def renew_in_child(obj: Any) -> None:
    """Call ``obj._renew_locks()`` in a forked child (a thread of the parent may have held them)."""
    _renew.add(obj)


def _llvm_lock() -> Any:
    ffi = sys.modules.get("llvmlite.binding.ffi")  # only if something loaded it: never import it here
    return getattr(getattr(getattr(ffi, "lib", None), "_lock", None), "_lock", None)


def _before() -> None:
    compile_lock.acquire()
    lock = _llvm_lock()
    if lock is not None:
        lock.acquire()
    _held.append(lock)


def _release() -> None:
    lock = _held.pop() if _held else None
    if lock is not None:
        lock.release()
    compile_lock.release()


def _after_in_child() -> None:
    _release()
    for obj in list(_renew):
        obj._renew_locks()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before, after_in_parent=_release, after_in_child=_after_in_child)
