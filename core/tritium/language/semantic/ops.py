"""What the parts of the semantic layer share: the :class:`SemanticOps` interface they call each other through.

:class:`~.Semantic` (the object builtins, the frontend and the interpreter hold) delegates each operation to
the collaborator that implements it: arithmetic and comparisons (:mod:`.arith`), casts (:mod:`.casts`),
shapes (:mod:`.shape`), memory (:mod:`.memory`), math, dots, reductions and debug ops (:mod:`.misc`), tensor
descriptors (:mod:`.descriptor`) and region ops (:mod:`.regions`). A collaborator holds the semantic object
as a :class:`SemanticOps` (through :class:`Part`) and reaches the others only through the methods declared here.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Protocol, Sequence

from .. import core as tl

T = tl.tensor


class SemanticOps(Protocol):
    builder: Any                    # compiler.builder.Builder (or the interpreter's): creates the ops
    options: Any                    # the backend's compile options (None outside a compilation)
    capabilities: frozenset[str]

    # hooks a subclass of Semantic overrides (the interpreter's): every caller, the collaborator that defines
    # them included, goes through self.sem, or the override would be bypassed
    def ir_type(self, ty: tl.dtype) -> Any: ...

    def _region_op(self, kind: str, inputs: Sequence[T], axis: Optional[int],
                   combine: Callable[[list[T], list[T]], Sequence[T]], reverse: bool = False) -> tuple[T, ...]: ...

    # the operations the collaborators share
    def _check_shape(self, shape: Sequence[int]) -> list[int]: ...

    def binary_op_type_checking(self, lhs: Any, rhs: Any, allow_lhs_ptr: bool = False, allow_rhs_ptr: bool = False,
                                arithmetic_check: bool = True, div_or_mod: bool = False) -> tuple[T, T]: ...

    def broadcast_impl_shape(self, x: T, shape: Sequence[int]) -> T: ...

    def broadcast_impl_value(self, lhs: T, rhs: T) -> tuple[T, T]: ...

    def broadcast_tensors(self, *inputs: T) -> list[T]: ...

    def cast(self, x: Any, dst: tl.dtype, fp_downcast_rounding: Optional[str] = None) -> T: ...

    def device_assert(self, cond: T, msg: str, mask: Optional[T] = None) -> T: ...

    def full(self, shape: Sequence[int], value: Any, dtype: tl.dtype) -> T: ...

    def not_(self, a: Any) -> T: ...

    def not_equal(self, a: Any, b: Any) -> T: ...

    def or_(self, a: Any, b: Any) -> T: ...

    def precise(self, name: str, *args: Any) -> T: ...

    def reshape(self, x: T, shape: Sequence[int], can_reorder: bool = False) -> T: ...

    def scalar_constant(self, value: Any, ty: tl.dtype) -> T: ...

    def to_tensor(self, x: Any, check_type: bool = True) -> Any: ...


class Part:
    """A collaborator of the semantic object: the builder and options are the semantic object's."""

    def __init__(self, sem: SemanticOps) -> None:
        self.sem = sem

    @property
    def builder(self) -> Any:
        return self.sem.builder

    @property
    def options(self) -> Any:
        return self.sem.options
