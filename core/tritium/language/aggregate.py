"""Aggregates: Python classes whose instances are values inside kernels (Triton's ``tl.core._aggregate``).

``@_aggregate`` on a class with annotated fields makes a class whose instances are built inside kernels (its
``__init__`` runs at compile time, like a builtin, with ``_semantic`` when it asks for it), passed to and
returned from @jit functions, carried through loops and branches, and whose methods are called there:
``@jit`` methods are device functions that get the instance as ``self``; plain methods and
``@constexpr_function`` methods run at compile time.

An aggregate is a tuple with field names, a class and methods: it is a :class:`~.core.tuple_value` whose
``values`` are its fields in annotation order, so the frontend flattens, specializes and carries it as it does a
tuple, and rebuilding a tuple of an :class:`aggregate_type` makes an instance of the class again. Fields hold
tensors, constexprs, tuples or other aggregates; assigning one checks the field's annotation, as Triton does. In a
@jit function an aggregate's fields cannot be assigned (Triton refuses it too); a plain method may change them,
and a loop or branch that does carries the changed aggregate out.
"""
from __future__ import annotations

import inspect
import sys
from typing import Any, Sequence

from .constexpr_function import ConstexprFunction
from .core import TRITON_BUILTIN, _ambient_semantic, _unwrap, base_value, constexpr, tuple_value
from .device_function import DeviceFunction
from .dtypes import constexpr_type, dtype, tuple_type


class aggregate_type(tuple_type):
    """The type of an aggregate: its class and each field's name and type."""

    def __init__(self, base_cls: type, fields: Sequence[tuple[str, Any]]) -> None:
        super().__init__([t for _, t in fields], [n for n, _ in fields])
        self.base_cls = base_cls
        self.name = f"{base_cls.__qualname__}<" + ", ".join(f"{n}: {t}" for n, t in fields) + ">"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, aggregate_type) and other.base_cls is self.base_cls and \
            self.types == other.types and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(("aggregate", id(self.base_cls), tuple(map(str, self.types))))

    def mangle(self) -> str:
        cls = self.base_cls
        return f"{cls.__module__}.{cls.__qualname__}<{', '.join(t.mangle() for t in self.types)}>"


class BoundJITMethod:
    """``instance.method`` for a ``@jit`` method: calling it calls the device function with the instance first."""

    __slots__ = ("__self__", "__func__")

    def __init__(self, instance: Any, fn: DeviceFunction) -> None:
        self.__self__ = instance
        self.__func__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__func__(self.__self__, *args, **kwargs)  # the interpreter (a launch calls the function)

    def __repr__(self) -> str:
        return f"<bound @jit method {self.__func__.__name__} of {self.__self__!r}>"


class _JITMethod:
    """A ``@jit`` function on an aggregate class: bound on instances, itself on the class (so functions
    without ``self``, and ``Class.method(instance)``, work as in Triton)."""

    def __init__(self, fn: DeviceFunction) -> None:
        self.fn = fn

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self.fn if obj is None else BoundJITMethod(obj, self.fn)


def is_aggregate(v: Any) -> bool:
    return isinstance(v, aggregate_value)


def is_aggregate_method(fn: Any) -> bool:
    """A plain function of an aggregate class (a method or a static method), which kernels call at compile time."""
    return getattr(getattr(fn, "__func__", fn), "__triton_aggregate_method__", False)


def compile_time_kwargs(fn: Any, semantic: Any, generator: Any) -> dict:
    """``_semantic``/``_generator`` for a function that declares them (what Triton passes methods of values)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    extra = {}
    if "_semantic" in params:
        extra["_semantic"] = semantic
    if "_generator" in params:
        extra["_generator"] = generator
    return extra


class aggregate_value(tuple_value):
    """The base of every aggregate class (what ``@_aggregate`` makes derives from it)."""

    __triton_aggregate__ = True
    #: the decorated class: its annotations are the fields, its ``__init__`` the constructor
    _user_cls: type
    _field_names: tuple = ()
    _field_types: dict = {}
    _init: Any = None

    @classmethod
    def _get_instance(cls) -> "aggregate_value":
        return object.__new__(cls)

    @classmethod
    def _from_values(cls, values: Sequence[Any]) -> "aggregate_value":
        """An instance whose fields are ``values`` in order (a value rebuilt from IR: nothing to check)."""
        inst = cls._get_instance()
        for name, v in zip(cls._field_names, values):
            object.__setattr__(inst, name, v)
        return inst

    def __new__(cls, *args: Any, _semantic: Any = None, _generator: Any = None, **kwargs: Any) -> Any:
        if cls is aggregate_value:
            raise TypeError("aggregate_value is the base of @_aggregate classes; decorate a class instead")
        if _semantic is None:
            _semantic = _ambient_semantic.get()   # the interpreter, or host code
        if _generator is None and _semantic is not None:
            _generator = getattr(getattr(_semantic, "launch", None), "generator", None)
        inst = cls._get_instance()
        init = cls._init
        if isinstance(init, DeviceFunction):
            raise TypeError(f"{cls.__name__}.__init__ cannot be a @jit function: it runs while the kernel compiles; "
                            "write it as a plain method (taking _semantic=None to call builtins), or make a @jit "
                            "static method that calls the constructor")
        if init is None:
            init = _default_init(cls)
        if isinstance(init, ConstexprFunction):
            init.fn(inst, *[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})
        else:
            init(inst, *args, **compile_time_kwargs(init, _semantic, _generator), **kwargs)
        for name in cls._field_names:
            if name not in inst.__dict__:
                raise AttributeError(f"constructor for {cls.__name__} did not initialize attribute '{name}'")
        return inst

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # __new__ built the instance (tuple_value's constructor, when rebuilding, did too)

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        if name not in cls._field_types:
            raise AttributeError(f"{cls.__name__} has no attribute '{name}'; its fields are "
                                 f"{', '.join(cls._field_names) or 'none'}")
        ann = cls._field_types[name]
        if ann is None or ann is constexpr or ann is tuple_value:
            # plain Python values where the field takes them: numbers, None, dtypes, strings, tuples of them
            value = _as_language_value(value)
        if isinstance(ann, type) and not isinstance(value, ann):
            raise TypeError(f"Expected {_ann_name(ann)} for attribute '{name}' of {cls.__name__}, got "
                            f"{_value_name(value)}")
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # only reached when normal lookup failed: a field not set yet, or no such attribute
        raise AttributeError(f"{type(self).__name__} has no attribute '{name}'")

    # -- what makes it a tuple to the frontend -----------------------------------------------------
    @property
    def values(self) -> list[Any]:  # type: ignore[override]
        return [self.__dict__[n] for n in type(self)._field_names]

    @property
    def type(self) -> aggregate_type:  # type: ignore[override]
        cls = type(self)
        return aggregate_type(cls, [(n, _type_of(self.__dict__[n])) for n in cls._field_names])

    def mapped(self, fn: Any) -> "aggregate_value":
        return self   # its fields were checked when assigned: assignment has nothing to convert

    def with_values(self, values: Sequence[Any]) -> "aggregate_value":
        return type(self)._from_values(values)

    # -- what a tuple has and an aggregate does not (unless its class defines them) ----------------
    def __getitem__(self, idx: Any) -> Any:
        raise TypeError(f"{type(self).__name__} is not subscriptable; define __getitem__ on the class")

    def __setitem__(self, idx: Any, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} does not support item assignment")

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} has no len(); read its fields by name")

    def __iter__(self):
        raise TypeError(f"cannot unpack or iterate over an aggregate ({type(self).__name__}); read its fields by "
                        "name")

    def __add__(self, other: Any) -> Any:
        return NotImplemented

    __mul__ = __add__

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self is other

    __hash__ = object.__hash__  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={self.__dict__.get(n, '<unset>')!r}" for n in type(self)._field_names)
        return f"{type(self).__name__}({fields})"


def _type_of(v: Any) -> Any:
    return v.type if isinstance(v, base_value) else constexpr_type(v)   # a field annotated with a Python class


def _as_language_value(v: Any) -> Any:
    if isinstance(v, base_value):
        return v
    if type(v) is tuple:
        return tuple_value([_as_language_value(x) for x in v])
    if v is None or isinstance(v, (bool, int, float, str, dtype)):
        return constexpr(v)
    return v


def _ann_name(ann: Any) -> str:
    return f"{ann.__module__}.{ann.__qualname__}" if isinstance(ann, type) else repr(ann)


def _value_name(v: Any) -> str:
    return f"{type(v).__name__} {v!r}" if isinstance(v, (constexpr, int, float, bool, str)) else type(v).__name__


def _default_init(cls: type) -> Any:
    names = cls._field_names  # type: ignore[attr-defined]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__}() takes {len(names)} fields but {len(args)} were given")
        for n, v in zip(names, args):
            setattr(self, n, v)
        for n, v in kwargs.items():
            setattr(self, n, v)
    return __init__


def _resolve(ann: Any, cls: type) -> Any:
    """An annotation as a class to check values against (strings are evaluated in the class's module); None
    when it names no class (then the field is not checked)."""
    if isinstance(ann, str):
        module = sys.modules.get(cls.__module__)
        try:
            ann = eval(ann, dict(vars(module)) if module else {})  # noqa: S307  (the user's own annotation)
        except Exception:
            return None
    return ann if isinstance(ann, type) else None


def _definitions(cls: type) -> tuple[dict, dict]:
    """The fields (annotations) and members ``cls`` defines or inherits, bases first; an aggregate base
    contributes its decorated class's."""
    annotations: dict[str, Any] = {}
    members: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if klass in (object, base_value, tuple_value, aggregate_value):
            continue
        klass = klass.__dict__.get("_user_cls", klass)   # a generated aggregate class: what it was made from
        annotations.update(klass.__dict__.get("__annotations__", {}))
        members.update(klass.__dict__)
    return annotations, members


def _aggregate(cls: type) -> type:
    """Make ``cls`` an aggregate: see the module's documentation."""
    annotations, members = _definitions(cls)
    namespace: dict[str, Any] = {
        "_user_cls": cls,
        "_field_names": tuple(annotations),
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
        TRITON_BUILTIN: True,   # the code generator calls the class like a builtin: with _semantic
        "__wants_generator__": True,
    }
    for name, raw in members.items():
        if name in ("__init__", "__dict__", "__weakref__", "__annotations__", "__module__", "__qualname__",
                    "__doc__", "_user_cls"):
            continue
        target = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
        if isinstance(target, DeviceFunction):
            namespace[name] = raw if isinstance(raw, staticmethod) else _JITMethod(target)
        elif inspect.isfunction(target):
            target.__triton_aggregate_method__ = True  # type: ignore[attr-defined]
            namespace[name] = raw
        else:
            namespace[name] = raw
    # the decorated class is a base too, so that its methods' super() and isinstance(x, cls) work
    namespace["__init__"] = aggregate_value.__init__
    bases = (cls, ) if issubclass(cls, aggregate_value) else (aggregate_value, cls)
    new_cls = type(cls.__name__, bases, namespace)
    new_cls._field_types = {n: _resolve(a, cls) for n, a in annotations.items()}  # type: ignore[attr-defined]
    #: what a kernel's cache key covers besides the class's name (Triton's hash_attrs)
    new_cls._init = members.get("__init__")  # type: ignore[attr-defined]
    new_cls.hash_attrs = [new_cls._init] + [  # type: ignore[attr-defined]
        getattr(v, "__func__", v) for n, v in members.items() if n != "__init__" and
        (isinstance(getattr(v, "__func__", v), (DeviceFunction, ConstexprFunction)) or
         inspect.isfunction(getattr(v, "__func__", v)))]
    return new_cls


def cache_key(cls: type, jit_key: Any) -> str:
    """What a kernel that uses aggregate class ``cls`` must be recompiled for: its fields' annotations, the code of
    its constructor and plain methods, and each ``@jit`` method's own key (``jit_key(fn)``, the runtime's
    dependency hash). The runtime's dependency hash of a kernel adds this for every aggregate class it names."""
    import hashlib
    parts = [f"{cls.__module__}.{cls.__qualname__}", repr(_definitions(cls._user_cls)[0])]  # type: ignore[attr-defined]
    for attr in cls.hash_attrs:  # type: ignore[attr-defined]
        if attr is None:
            continue
        if isinstance(attr, DeviceFunction):
            parts.append(f"{attr.__name__}:{jit_key(attr)}")
            continue
        code = getattr(getattr(attr, "fn", attr), "__code__", None)
        if code is not None:
            consts = tuple(c for c in code.co_consts if not inspect.iscode(c))  # a nested code's repr has its address
            parts.append(f"{code.co_name}:{code.co_code.hex()}:{consts!r}:{code.co_names!r}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def clone(v: Any) -> Any:
    """A copy of ``v`` whose aggregates (at any depth) are new objects with the same fields, so that a block of
    code changing them in place leaves the original as it was; other values are shared."""
    if isinstance(v, aggregate_value):
        return v._from_values([clone(x) for x in v.values])
    if isinstance(v, tuple_value) and any(_holds_aggregate(x) for x in v.values):
        return v.with_values([clone(x) for x in v.values])
    return v


def _holds_aggregate(v: Any) -> bool:
    return isinstance(v, aggregate_value) or (isinstance(v, tuple_value) and any(map(_holds_aggregate, v.values)))


def changed_in_place(before: Any, after: Any) -> bool:
    """Whether ``after`` (a clone of ``before`` that a block of code ran with) had fields changed in place."""
    if not _holds_aggregate(before) or not isinstance(after, tuple_value):
        return False
    return _leaves(before) != _leaves(after)


def _leaves(v: Any) -> list[Any]:
    if isinstance(v, tuple_value):
        out: list[Any] = [type(v)]
        for x in v.values:
            out += _leaves(x)
        return out
    return [_Ident(v)]


class _Ident:
    """Compares by identity (tensors compare elementwise, constexprs by value)."""
    __slots__ = ("v", )

    def __init__(self, v: Any) -> None:
        self.v = v

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Ident) and self.v is other.v

    __hash__ = None  # type: ignore[assignment]
