"""Launches that Ctrl-C can stop.

Python runs signal handlers only in the main thread and only between bytecodes, so a main thread that sits
in a long native call ignores Ctrl-C until the call returns. But CPython's C-level handler, which runs at
once, also writes the signal's number to the "wakeup fd" (``signal.set_wakeup_fd``). During a launch that may
run long, that fd is a pipe read by a watcher thread: on SIGINT it sets the launch's cancel flag, which the
native code reads between programs and at its loops' back-edges (codegen/frame.py). The kernel's threads
stop, the native call returns, and the main thread raises KeyboardInterrupt at its next bytecode through
Python's own handler. The kernel itself runs on the calling thread: an earlier design ran it on a helper
thread and waited for it, and on two cores the kernel's two native threads then ran one after the other (same
CPU time, 1.7x the wall time; probably the scheduler placing the new thread beside its creator, not verified).

Only when SIGINT has Python's default handler (which raises KeyboardInterrupt) is a launch cancelled: a
program that installed its own handler gets its handler, and the kernel runs to the end. Launches from other
threads never receive signals and run as they are.
"""
from __future__ import annotations

import ctypes
import os
import signal
import threading
from typing import Callable, Optional

#: passed to launches that nobody can cancel
NEVER = ctypes.c_int32(0)
NEVER_PTR = ctypes.c_void_p(ctypes.addressof(NEVER))


class _Watcher:
    def __init__(self) -> None:
        self.flag = ctypes.c_int32(0)
        self.flag_ptr = ctypes.c_void_p(ctypes.addressof(self.flag))
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)   # set_wakeup_fd requires it
        self.forward = -1   # the wakeup fd someone else (asyncio) had set: signals are passed on to it
        threading.Thread(target=self._serve, name="tritium-cpu-sigwatch", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                data = os.read(self.read_fd, 64)
            except OSError:
                return
            if not data:
                return
            if signal.SIGINT in data:
                self.flag.value = 1
            if self.forward >= 0:
                try:
                    os.write(self.forward, data)
                except OSError:
                    pass

    def run(self, fn: Callable, args: tuple) -> None:
        self.flag.value = 0
        previous = signal.set_wakeup_fd(self.write_fd, warn_on_full_buffer=False)
        self.forward = previous if previous != self.write_fd else -1
        try:
            fn(*args, self.flag_ptr)
        finally:
            signal.set_wakeup_fd(previous)
            self.forward = -1


_watcher: Optional[_Watcher] = None
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
    """Call ``fn(*args, cancel_flag)`` on this (the main) thread, so that Ctrl-C cancels it."""
    global _watcher
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        fn(*args, NEVER_PTR)   # the program handles SIGINT itself: do not cut the kernel short behind its back
        return
    if _watcher is None:
        _watcher = _Watcher()
    _watcher.run(fn, args)


def _forget_watcher() -> None:
    # a forked child has no watcher thread: start a new one on its first launch
    global _watcher, _main_ident
    _watcher = None
    _main_ident = threading.main_thread().ident


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_watcher)
