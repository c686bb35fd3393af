"""Launches that Ctrl-C can stop.

Python runs signal handlers only in the main thread and only between bytecodes, so a main thread that sits
in a long native call ignores Ctrl-C until the call returns. A launch that may run long is therefore made
by a helper thread while the main thread waits on a lock, which a signal interrupts: the handler's
KeyboardInterrupt then sets the launch's cancel flag, which the native code reads between programs and at
its loops' back-edges (codegen/frame.py), the main thread waits for the native threads to stop (they may
still be writing the caller's arrays) and re-raises. Launches known to be short, and launches from other
threads (which never receive signals), call the native code directly: a hand-off costs a few microseconds.
"""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Callable, Optional

#: passed to launches that nobody can cancel
NEVER = ctypes.c_int32(0)
NEVER_PTR = ctypes.c_void_p(ctypes.addressof(NEVER))


class _Helper:
    def __init__(self) -> None:
        self.flag = ctypes.c_int32(0)
        self.flag_ptr = ctypes.c_void_p(ctypes.addressof(self.flag))
        self.go = threading.Lock()
        self.go.acquire()
        self.done = threading.Lock()
        self.done.acquire()
        self.job: Optional[tuple[Callable, tuple]] = None
        self.error: Optional[BaseException] = None
        self.busy = False
        threading.Thread(target=self._serve, name="tritium-cpu-launch", daemon=True).start()

    def _serve(self) -> None:
        while True:
            self.go.acquire()
            fn, args = self.job  # type: ignore[misc]
            try:
                fn(*args, self.flag_ptr)
            except BaseException as e:  # handed to the launching thread
                self.error = e
            self.job = None
            self.done.release()

    def run(self, fn: Callable, args: tuple) -> None:
        self.flag.value = 0
        self.error = None
        self.job = (fn, args)
        self.busy = True
        try:
            self.go.release()
            try:
                self.done.acquire()
            except BaseException:
                # KeyboardInterrupt (or whatever a signal handler raised): stop the kernel, and return only
                # once no native thread touches the arguments any more
                self.flag.value = 1
                _wait_ignoring_interrupts(self.done)
                raise
        finally:
            self.busy = False
        if self.error is not None:
            raise self.error


def _wait_ignoring_interrupts(lock: Any) -> None:
    while True:
        try:
            lock.acquire()
            return
        except KeyboardInterrupt:
            continue   # a second Ctrl-C while the kernel stops: it stops at its next check anyway


_helper: Optional[_Helper] = None
_helper_lock = threading.Lock()
_main_ident = threading.main_thread().ident


def on_main_thread() -> bool:
    return threading.get_ident() == _main_ident


def launch(fn: Callable, args: tuple, may_block: bool) -> None:
    """Call ``fn(*args, cancel_flag)``; interruptible by Ctrl-C when ``may_block`` and on the main thread."""
    if not may_block or threading.get_ident() != _main_ident:
        fn(*args, NEVER_PTR)
        return
    wait_interruptibly(fn, args)


def wait_interruptibly(fn: Callable, args: tuple) -> None:
    """Call ``fn(*args, cancel_flag)`` on the helper thread (main thread only)."""
    global _helper
    h = _helper
    if h is None:
        with _helper_lock:
            if _helper is None:
                _helper = _Helper()
            h = _helper
    if h.busy:   # a launch from a signal handler that runs during another launch's wait
        fn(*args, NEVER_PTR)
        return
    h.run(fn, args)


def _forget_helper() -> None:
    # a forked child has no helper thread: start a new one on its first launch
    global _helper, _helper_lock, _main_ident
    _helper = None
    _helper_lock = threading.Lock()
    _main_ident = threading.main_thread().ident


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helper)
