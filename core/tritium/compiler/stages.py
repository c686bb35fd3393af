"""The stage pipeline: an ordered mapping from a stage's name (its file extension) to the function
that produces it, ``fn(src, metadata) -> artifact``. Plugins and the seed's inspection hook edit it."""
from __future__ import annotations

import hashlib
import inspect
import marshal
from typing import Any, Callable, Optional

StageFn = Callable[[Any, dict], Any]


class StageDict(dict):
    """``dict`` of stages in order, remembering who added or wrapped each one (for error messages)."""

    def __init__(self) -> None:
        super().__init__()
        self.owner = "backend"
        self.owners: dict[str, list[str]] = {}

    def __setitem__(self, name: str, fn: StageFn) -> None:
        if not callable(fn):
            raise TypeError(f"stage {name!r} must be a callable fn(src, metadata), got {fn!r}")
        self.owners.setdefault(name, [])
        if self.owner not in self.owners[name]:
            self.owners[name].append(self.owner)
        super().__setitem__(name, fn)

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name)
        self.owners.pop(name, None)

    def _rebuild(self, items: list[tuple[str, StageFn]], owners: dict[str, list[str]]) -> None:
        dict.clear(self)
        for k, v in items:
            dict.__setitem__(self, k, v)
        self.owners = owners

    def _insert(self, anchor: str, name: str, fn: StageFn, after: bool) -> None:
        if anchor not in self:
            raise KeyError(f"cannot insert stage {name!r} {'after' if after else 'before'} {anchor!r}: no such "
                           f"stage (stages: {', '.join(self)})")
        items = [(k, v) for k, v in self.items() if k != name]
        i = [k for k, _ in items].index(anchor) + (1 if after else 0)
        items.insert(i, (name, fn))
        owners = dict(self.owners)
        owners.setdefault(name, [])
        if self.owner not in owners[name]:
            owners[name].append(self.owner)
        self._rebuild(items, owners)

    def insert_after(self, anchor: str, name: str, fn: StageFn) -> None:
        self._insert(anchor, name, fn, True)

    def insert_before(self, anchor: str, name: str, fn: StageFn) -> None:
        self._insert(anchor, name, fn, False)

    def wrap(self, name: str, wrapper: Callable[[StageFn, Any, dict], Any]) -> None:
        """Replace stage ``name`` with ``wrapper(original, src, metadata)``."""
        original = self[name]
        self[name] = lambda src, metadata: wrapper(original, src, metadata)

    def remove(self, name: str) -> None:
        del self[name]

    def describe(self, name: str) -> str:
        return ", ".join(self.owners.get(name, ["backend"]))


def callable_fingerprint(fn: Any) -> str:
    """A digest of what a Python callable does: its source if available, else its code object."""
    target = getattr(fn, "__func__", fn)
    try:
        text = inspect.getsource(target).encode()
    except (OSError, TypeError):
        code = getattr(target, "__code__", None)
        text = marshal.dumps(code) if code is not None else repr(target).encode()
    closure = getattr(target, "__closure__", None) or ()
    extra = []
    for cell in closure:
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        # settings captured by the hook change what it does; mutable state (a log list) does not
        if _is_setting(value):
            extra.append(repr(value))
    return hashlib.sha256(text + "\0".join(extra).encode()).hexdigest()


def _is_setting(v: Any) -> bool:
    if isinstance(v, (int, float, str, bool, bytes, type(None))):
        return True
    return isinstance(v, (tuple, frozenset)) and all(_is_setting(x) for x in v)


def inspection_hook_key(hook: Optional[Callable]) -> str:
    """Cache key of ``knobs.runtime.add_stages_inspection_hook``.

    Triton also calls the hook with no arguments and expects ``(key, hash)``; a hook that supports that form
    decides its own key. The seed's form (five positional parameters) is keyed by its source code.
    """
    if hook is None:
        return ""
    try:
        sig = inspect.signature(hook)
        takes_none = all(p.default is not inspect.Parameter.empty or
                         p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values())
    except (TypeError, ValueError):
        takes_none = False
    if takes_none:
        result = hook()
        if isinstance(result, tuple) and len(result) == 2:
            return f"{result[0]}:{result[1]}"
    return "src:" + callable_fingerprint(hook)
