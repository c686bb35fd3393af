"""The knob machinery: typed settings read from Python or the environment, and the groups that hold them.

A knob is a descriptor on a :class:`KnobGroup`. Reading one returns the value set from Python if there is one,
otherwise the first of its environment variables that is set, otherwise its default. ``TRITON_X`` is also read
as ``TRITIUM_X``, which wins when both are set. The declarations (tritium's groups, the registry of every group,
the change counter caches compare against) are in :mod:`tritium.knobs`; this module reads the environment on
its behalf and knows nothing of which groups exist.
"""
from __future__ import annotations

import os
import re
from contextlib import contextmanager
from typing import Any, Callable, Generic, Iterator, Optional, TypeVar

T = TypeVar("T")
_UNSET: Any = object()

_TRUE = {"1", "true", "on", "yes", "y"}
_FALSE = {"0", "false", "off", "no", "n", ""}


class KnobError(ValueError):
    """A knob's value (from Python or the environment) or a group's declaration is invalid."""


def parse_bool(text: str, name: str) -> bool:
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise KnobError(f"{name}={text!r}: expected a boolean (1/0, true/false, on/off)")


_ENVIRON_TYPE = type(os.environ)
_CLASS_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")

# Called whenever a knob is set, deleted or restored from Python. The machinery does not know who caches
# knob values; tritium.knobs subscribes and bumps the counter the runtime's caches compare against.
_change_listeners: list[Callable[[], None]] = []


def on_change(listener: Callable[[], None]) -> None:
    """Call ``listener()`` after every change to a knob made from Python (set, delete, reset, scope exit)."""
    _change_listeners.append(listener)


def _changed() -> None:
    for listener in _change_listeners:
        listener()


def _encode_env_key(name: str) -> object:
    encode = getattr(os.environ, "encodekey", None)
    return encode(name) if encode is not None else name


def _env_names(name: str) -> tuple[str, ...]:
    """TRITON_X is also read as TRITIUM_X (which wins); other names are read as written."""
    if name.startswith("TRITON_"):
        return ("TRITIUM_" + name[len("TRITON_"):], name)
    return (name, )


class Knob(Generic[T]):
    """One typed setting. ``env`` lists the variable names in priority order."""

    kind = "str"

    def __init__(self, env: str | tuple[str, ...] | None, default: T, doc: str = "",
                 parse: Optional[Callable[[str, str], T]] = None) -> None:
        names: tuple[str, ...] = ()
        for n in ((env, ) if isinstance(env, str) else (env or ())):
            names += _env_names(n)
        self.env = names
        self._env_pairs = tuple((n, _encode_env_key(n)) for n in names)
        self.default = default
        self.doc = doc
        self._parse = parse
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def parse(self, text: str, var: str) -> T:
        if self._parse is not None:
            return self._parse(text, var)
        return text  # type: ignore[return-value]

    def from_env(self) -> T:
        env = os.environ
        if type(env) is _ENVIRON_TYPE:
            # os.environ.get raises and catches KeyError for an unset variable (~2 us); knobs are read on
            # every kernel launch, so look the pre-encoded name up in its backing dict instead
            get = env._data.get  # type: ignore[attr-defined]
            for var, key in self._env_pairs:
                raw = get(key)
                if raw is not None:
                    return self.parse(env.decodevalue(raw), var)  # type: ignore[attr-defined]
            return self.default
        for var in self.env:
            text = env.get(var)
            if text is not None:
                return self.parse(text, var)
        return self.default

    def __get__(self, group: Any, owner: type | None = None) -> Any:
        if group is None:
            return self
        value = group.__dict__.get(self.name, _UNSET)
        return self.from_env() if value is _UNSET else value

    def __set__(self, group: Any, value: Any) -> None:
        group.__dict__[self.name] = self.check(value)
        _changed()

    def __delete__(self, group: Any) -> None:
        group.__dict__.pop(self.name, None)
        _changed()

    def check(self, value: Any) -> Any:
        return value


class BoolKnob(Knob[bool]):
    kind = "bool"

    def __init__(self, env: str | tuple[str, ...] | None, default: bool = False, doc: str = "") -> None:
        super().__init__(env, default, doc)

    def parse(self, text: str, var: str) -> bool:
        return parse_bool(text, var)

    def check(self, value: Any) -> bool:
        if isinstance(value, str):
            return parse_bool(value, self.name)
        return bool(value)


class IntKnob(Knob[int]):
    kind = "int"

    def parse(self, text: str, var: str) -> int:
        try:
            return int(text.strip())
        except ValueError:
            raise KnobError(f"{var}={text!r}: expected an integer") from None

    def check(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise KnobError(f"knob {self.name} takes an int, got {value!r}")
        return value


class StrKnob(Knob[Optional[str]]):
    kind = "str"

    def __init__(self, env: str | tuple[str, ...] | None, default: Optional[str] = None, doc: str = "",
                 choices: tuple[str, ...] = ()) -> None:
        super().__init__(env, default, doc)
        self.choices = choices

    def parse(self, text: str, var: str) -> Optional[str]:
        return self.check(text, var)

    def check(self, value: Any, var: str = "") -> Optional[str]:
        if value is None:
            return None
        if not isinstance(value, str):
            raise KnobError(f"knob {self.name} takes a string, got {value!r}")
        if self.choices and value not in self.choices:
            raise KnobError(f"{var or self.name}={value!r}: expected one of {', '.join(self.choices)}")
        return value


def unset_check(*knobs: Knob, ns: dict, prefix: str = "_env") -> str:
    """A Python expression, for code generated per kernel launch, that is true when none of these knobs'
    environment variables is set, so that each knob holds its value set from Python or its default: a few
    dict lookups and no call, where reading the knobs costs a few hundred nanoseconds each. The names it reads
    go into ``ns``. It is false once ``os.environ`` was replaced by another mapping (the caller then reads the
    knobs). ``ns[prefix + "_objects"]`` holds the same objects for native code: ``(os, os.environ, its backing
    dict, the encoded names...)``; it is absent with "False"."""
    env = os.environ
    if type(env) is not _ENVIRON_TYPE:
        return "False"
    # os.environ keeps its backing dict (encoded names) up to date in place: setenv, del, monkeypatch
    ns[f"{prefix}_os"], ns[f"{prefix}_environ"], ns[f"{prefix}_data"] = os, env, env._data  # type: ignore
    parts = [f"{prefix}_os.environ is {prefix}_environ"]
    keys = [key for k in knobs for _, key in k._env_pairs]
    for i, key in enumerate(keys):
        ns[f"{prefix}_k{i}"] = key
        parts.append(f"{prefix}_k{i} not in {prefix}_data")
    ns[f"{prefix}_objects"] = (os, env, env._data, *keys)  # type: ignore
    return "(" + " and ".join(parts) + ")"


def _bool_or_none(text: str) -> Optional[bool]:
    """True/False for the spellings of a boolean, None for any other text (a name or a list)."""
    low = text.strip().lower()
    return True if low in _TRUE else False if low in _FALSE else None


class DumpKnob(Knob[object]):
    """``1``/``0`` or a kernel name (MLIR_ENABLE_DUMP=1 dumps every kernel, =name only that one)."""
    kind = "bool|kernel-name"

    def __init__(self, env: str, doc: str = "") -> None:
        super().__init__(env, False, doc)

    def parse(self, text: str, var: str) -> object:
        flag = _bool_or_none(text)
        return text.strip() if flag is None else flag

    def check(self, value: Any) -> object:
        return value if isinstance(value, str) else bool(value)

    @staticmethod
    def wants(value: object, kernel_name: str) -> bool:
        return value is True or (isinstance(value, str) and value == kernel_name)


class ListKnob(Knob[tuple[str, ...]]):
    kind = "list"

    def __init__(self, env: str | tuple[str, ...] | None, sep: str = ",", doc: str = "") -> None:
        super().__init__(env, (), doc)
        self.sep = sep

    def parse(self, text: str, var: str) -> tuple[str, ...]:
        return tuple(p.strip() for p in text.split(self.sep) if p.strip())

    def check(self, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            return self.parse(value, self.name)
        return tuple(value or ())


class FlagsKnob(Knob[object]):
    """A boolean, or else a list of names (DISABLE_LLVM_OPT=1 turns all LLVM optimization off;
    DISABLE_LLVM_OPT=disable-lsr sets only LLVM's boolean option -disable-lsr)."""
    kind = "bool|list"

    def __init__(self, env: str, doc: str = "") -> None:
        super().__init__(env, False, doc)

    def parse(self, text: str, var: str) -> object:
        flag = _bool_or_none(text)
        return tuple(p.strip() for p in text.split(",") if p.strip()) if flag is None else flag

    def check(self, value: Any) -> object:
        if isinstance(value, str):
            return self.parse(value, self.name)
        if isinstance(value, (list, tuple)):
            return tuple(str(v).strip() for v in value if str(v).strip())
        return bool(value)


class ObjectKnob(Knob[Any]):
    """A Python-only setting (hooks, callables): no environment variable."""
    kind = "object"

    def __init__(self, default: Any = None, doc: str = "") -> None:
        super().__init__(None, default, doc)

    def __get__(self, group: Any, owner: type | None = None) -> Any:
        # no environment to consult: hooks are read on every launch, so keep this to one dict lookup
        if group is None:
            return self
        return group.__dict__.get(self.name, self.default)


class KnobGroup:
    """A set of knobs. Subclass it and declare knobs as class attributes."""

    group_name = ""

    @classmethod
    def descriptors(cls) -> dict[str, Knob]:
        out: dict[str, Knob] = {}
        for klass in reversed(cls.__mro__):
            out.update({k: v for k, v in vars(klass).items() if isinstance(v, Knob)})
        return out

    def values(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.descriptors()}

    def reset(self) -> None:
        """Forget values set from Python; the environment and defaults apply again."""
        for k in self.descriptors():
            self.__dict__.pop(k, None)
        _changed()

    @contextmanager
    def scope(self) -> Iterator["KnobGroup"]:
        """Values set inside the block are undone when it ends."""
        saved = dict(self.__dict__)
        try:
            yield self
        finally:
            self.__dict__.clear()
            self.__dict__.update(saved)
            _changed()

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self.values().items())
        return f"<knobs.{self.group_name}: {body}>"


class ClassKnob(Knob[Any]):
    """A class: set from Python as the class itself, or in the environment as ``"module:Class"`` (imported by
    whoever uses it, not here: the module may be heavy or absent)."""
    kind = "module:Class"

    def __init__(self, env: str | tuple[str, ...] | None, doc: str = "") -> None:
        super().__init__(env, None, doc)

    def parse(self, text: str, var: str) -> Any:
        text = text.strip()
        if not text:
            return None
        if not _CLASS_SPEC.fullmatch(text):
            raise KnobError(f"{var}={text!r}: expected module:Class, e.g. "
                            "tritium.cache_redis:RedisRemoteCacheBackend")
        return text

    def check(self, value: Any) -> Any:
        if value is None or isinstance(value, type):
            return value
        if isinstance(value, str):
            return self.parse(value, self.name)
        raise KnobError(f"knob {self.name} takes a class or a 'module:Class' string, got {value!r}")
