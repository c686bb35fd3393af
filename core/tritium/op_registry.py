"""One way to say how a lowering handles an op: a table per lowering, filled by decorators beside the handlers.

Each lowering (the CPU code generator, the GPU lowering, the interpreter) owns one :class:`OpTable`. A handler
is registered where it is written::

    CPU_OPS = OpTable("the CPU backend")

    class Shapes:
        @CPU_OPS.lowers("tt.splat")
        def splat(self, op): ...

    CPU_OPS.refuse("tt.descriptor_gather", "gathers through a descriptor need a TMA-like unit; use tl.load")

A method's owner is recorded when its class is created (``__set_name__``), so a table can bind each handler
to the collaborator object that implements it (:meth:`OpTable.bind`). A module-level function is called with
the context object given to :meth:`bind`. Families of ops that one generic handler covers (``arith.*``,
``math.*``) are declared with :meth:`OpTable.family`, so coverage can be checked by name: every ``tt`` op has a
handler, a family or an explicit refusal in every lowering (``tests/ir/test_op_coverage.py``).

Some handlers are called by their own name, not through a table's dispatch: the interpreter's builder API
(``load``, ``splat``...) is called by the semantic directly. ``lowers(..., dispatch=False)`` records such a
handler, so that coverage and the guide see it, and :meth:`OpTable.bind` leaves it out.

Registering one name twice in one table is an error naming both handlers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Entry:
    name: str
    fn: Callable[..., Any]
    #: the class whose instances implement it; None for a module-level function
    owner: Optional[type] = None
    attr: str = ""
    #: False: the lowering calls it by its own name (bind() leaves it out)
    dispatch: bool = True

    def where(self) -> str:
        owner = f"{self.owner.__module__}.{self.owner.__qualname__}." if self.owner else f"{self.fn.__module__}."
        return owner + (self.attr or self.fn.__name__)


class _Method:
    """A decorated method until its class exists: then it records its owner and puts the plain function back."""

    def __init__(self, table: "OpTable", names: tuple[str, ...], fn: Callable[..., Any], dispatch: bool):
        self.table, self.names, self.fn, self.dispatch = table, names, fn, dispatch

    def __set_name__(self, owner: type, attr: str) -> None:
        for name in self.names:
            self.table._add(Entry(name, self.fn, owner, attr, self.dispatch))
        setattr(owner, attr, self.fn)


class OpTable:
    """The ops one lowering handles, the op families it covers generically and the ops it refuses."""

    def __init__(self, lowering: str):
        #: who lowers, for messages: "the CPU backend", "the interpreter"
        self.lowering = lowering
        self.entries: dict[str, Entry] = {}
        self.refusals: dict[str, str] = {}
        self.families: list[tuple[str, Callable[[str], bool]]] = []

    # -- declaring --------------------------------------------------------------------------------------
    def lowers(self, *names: str, dispatch: bool = True) -> Callable[[F], F]:
        """Decorator: the function or method handles ops ``names``. ``dispatch=False``: the lowering calls it by
        its own name, not through :meth:`bind` (it still counts as handling the ops)."""
        if not names:
            raise TypeError("OpTable.lowers needs at least one op name")

        def register(fn: F) -> F:
            scope = getattr(fn, "__qualname__", "").split(".")
            if len(scope) > 1 and scope[-2] != "<locals>":   # defined in a class body
                return _Method(self, names, fn, dispatch)  # type: ignore[return-value]  # fn again in __set_name__
            for name in names:
                self._add(Entry(name, fn, dispatch=dispatch))
            return fn
        return register

    def refuse(self, name: str, reason: str) -> None:
        """``name`` is deliberately not lowered here; ``reason`` says why and what to do instead."""
        if name in self.entries:
            raise ValueError(f"{self.lowering}: {name} is both lowered ({self.entries[name].where()}) and refused")
        self.refusals[name] = reason

    def family(self, description: str, predicate: Callable[[str], bool]) -> None:
        """Ops for which ``predicate(name)`` holds are handled by one generic path (``description``)."""
        self.families.append((description, predicate))

    def _add(self, entry: Entry) -> None:
        old = self.entries.get(entry.name)
        if old is not None and old.fn is not entry.fn:
            raise ValueError(f"{self.lowering}: {entry.name} is registered twice: by {old.where()} and by "
                             f"{entry.where()}; remove one")
        if entry.name in self.refusals:
            raise ValueError(f"{self.lowering}: {entry.name} is both refused and lowered by {entry.where()}")
        self.entries[entry.name] = entry

    # -- asking -----------------------------------------------------------------------------------------
    def handles(self, name: str) -> Optional[str]:
        """How ``name`` is covered: a handler's place, a family's description; None if not at all."""
        entry = self.entries.get(name)
        if entry is not None:
            return entry.where()
        for description, predicate in self.families:
            if predicate(name):
                return description
        return None

    def refusal(self, name: str) -> Optional[str]:
        return self.refusals.get(name)

    def unsupported(self, name: str) -> str:
        """The message for an op this lowering cannot handle."""
        reason = self.refusals.get(name)
        if reason is not None:
            return f"{self.lowering} does not support {name}: {reason}"
        return f"{self.lowering} does not support {name} yet"

    def bind(self, *parts: Any, context: Any = None) -> dict[str, Callable[[Any], Any]]:
        """Op name -> callable(op): each method bound to the part that is an instance of its owner (the first
        one given wins), each module-level function to ``context``; entries declared ``dispatch=False`` are left
        out."""
        out: dict[str, Callable[[Any], Any]] = {}
        for name, entry in self.entries.items():
            if not entry.dispatch:
                continue
            if entry.owner is None:
                if context is None:
                    raise TypeError(f"{self.lowering}: {entry.where()} is a function; bind() needs context=")
                fn, ctx = entry.fn, context
                out[name] = (lambda f, c: (lambda op: f(c, op)))(fn, ctx)
                continue
            for part in parts:
                if isinstance(part, entry.owner):
                    out[name] = getattr(part, entry.attr)
                    break
            else:
                raise TypeError(f"{self.lowering}: no object given to bind() implements {entry.where()}")
        return out
