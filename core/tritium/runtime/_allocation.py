"""``triton.runtime._allocation`` under its Triton name: the allocator of kernels' global scratch memory.

The allocator itself lives in :mod:`.allocation`; this module adds the names code written for Triton imports
(``NullAllocator`` to unset it, the ``Buffer``/``Allocator`` protocols, the profiler's allocator)."""
from __future__ import annotations

from typing import Any, Optional, Protocol

from .allocation import _allocator, _no_allocator, get_allocator, set_allocator  # noqa: F401


class Buffer(Protocol):
    def data_ptr(self) -> int:
        ...


class Allocator(Protocol):
    def __call__(self, size: int, alignment: int, stream: Optional[int]) -> Buffer:
        ...


class NullAllocator:
    """The "no allocator" value: ``set_allocator(NullAllocator())`` unsets it; calling it raises."""

    def __call__(self, size: int, alignment: int, stream: Optional[int]) -> Any:
        return _no_allocator(size, alignment, stream)


_NULL_ALLOCATOR = NullAllocator()


class _ProfileAllocator:
    """A process-wide allocator slot with ContextVar's ``get``/``set``, for profilers' scratch memory."""

    def __init__(self, allocator: Any) -> None:
        self._allocator = allocator

    def get(self) -> Any:
        return self._allocator

    def set(self, allocator: Any) -> None:
        self._allocator = allocator

    def __call__(self, size: int, alignment: int, stream: Optional[int]) -> Any:
        return self._allocator(size, alignment, stream)


_profile_allocator = _ProfileAllocator(_NULL_ALLOCATOR)


def set_profile_allocator(allocator: Optional[Any]) -> None:
    """Use ``allocator`` for profilers' scratch memory; ``None`` unsets it."""
    if allocator is not None and not callable(allocator):
        raise TypeError(f"set_profile_allocator takes a callable (size, alignment, stream) -> buffer or None, "
                        f"got {allocator!r}")
    _profile_allocator.set(allocator if allocator is not None else _NULL_ALLOCATOR)
