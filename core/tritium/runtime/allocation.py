"""``tritium.set_allocator``: where kernels that need global scratch memory (tensor descriptors built inside a
kernel, on GPU backends) get it. ``allocator(size, alignment, stream)`` returns an object with
``data_ptr()``. The CPU backend needs none and never calls it; a GPU backend reads :func:`get_allocator`."""
from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable, Optional

Allocator = Callable[[int, int, Optional[int]], Any]


def _no_allocator(size: int, alignment: int, stream: Optional[int]) -> Any:
    raise RuntimeError(f"a kernel asked for {size} bytes of global scratch memory, but no allocator is set: call "
                       "tritium.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, "
                       "device=...)) first")


_allocator: ContextVar[Allocator] = ContextVar("tritium_allocator", default=_no_allocator)


def set_allocator(allocator: Allocator) -> None:
    """Use ``allocator`` for kernels' global scratch memory in this context (thread, task)."""
    if not callable(allocator):
        raise TypeError(f"set_allocator takes a callable (size, alignment, stream) -> buffer, got {allocator!r}")
    _allocator.set(allocator)


def get_allocator() -> Allocator:
    return _allocator.get()
