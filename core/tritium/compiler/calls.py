"""Calls from a kernel to @jit device functions.

Each distinct combination of argument types and compile-time values becomes one private
``func.func``; the ``inline`` pass later inlines it unless the function was declared ``noinline``.
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Any, Iterator, Optional, Sequence

from .._mlir import func as func_d
from .._mlir import ir
from ..language import core as tl
from ..language.aggregate import clone
from ..language.core import constexpr, tensor, tuple_value
from ..language.descriptor import tensor_descriptor, tensor_descriptor_base
from ..language.device_function import DeviceFunction
from .carried import descriptor_padding
from .errors import CompilationError
from .frontend import Generator, ReturnSignal
from .mangle import callee_name


def _flatten(v: Any, out: list[tensor]) -> Any:
    """Replace tensors inside ``v`` with placeholders (their index in ``out``)."""
    if isinstance(v, tensor):
        out.append(v)
        return ("T", len(out) - 1, v.type)
    if isinstance(v, tuple_value):
        return ("tuple", [_flatten(x, out) for x in v.values], v.type)
    if isinstance(v, tensor_descriptor_base):
        # a descriptor travels as its IR value plus its shape and strides (scalars)
        parts = [_flatten(tensor(v.handle, v.type), out)]
        if isinstance(v, tensor_descriptor):
            parts += [_flatten(v.shape, out), _flatten(v.strides, out)]
        # the padding travels too, so the callee's control flow can refuse mixing paddings (carried.py)
        return ("D", parts, v.block_type, descriptor_padding(v))
    return ("C", v)


def _build_descriptor(block: Any, parts: list[Any], padding: Optional[str] = None) -> Any:
    handle = parts[0].handle
    if len(parts) == 1:
        d = tensor_descriptor_base(handle, block)
    else:
        d = tensor_descriptor(handle, parts[1].values, parts[2].values, block)
    d._carried_padding = padding  # type: ignore[attr-defined]
    return d


def _spec_key(spec: Any) -> Any:
    kind = spec[0]
    if kind == "T":
        return ("T", spec[2])
    if kind == "tuple":
        # the kind of tuple too: an aggregate's class (its methods differ), a namedtuple's field names
        ty = spec[2]
        return (kind, tuple(_spec_key(s) for s in spec[1]), getattr(ty, "base_cls", None),
                tuple(getattr(ty, "fields", None) or ()))
    if kind == "D":
        return (kind, tuple(_spec_key(s) for s in spec[1]), spec[3])
    v = tl._unwrap(spec[1])
    try:
        hash(v)
        return ("C", type(v).__name__, v)
    except TypeError:
        return ("C", type(v).__name__, repr(v))


def _rebuild(spec: Any, handles: Sequence[Any]) -> Any:
    kind = spec[0]
    if kind == "T":
        return tensor(handles[spec[1]], spec[2])
    if kind == "tuple":
        return tuple_value([_rebuild(s, handles) for s in spec[1]], spec[2])
    if kind == "D":
        return _build_descriptor(spec[2], [_rebuild(s, handles) for s in spec[1]], spec[3])
    v = spec[1]
    return v if isinstance(v, (constexpr, tuple_value)) else constexpr(v)


def _inline_call(gen: Generator, fn: DeviceFunction, bound: inspect.BoundArguments) -> Any:
    """Generate ``fn``'s body at the current insertion point. Used inside the regions of tile ops (combine
    functions of reduce/scan, map_elementwise), where MLIR's inliner cannot reach calls."""
    sub = gen.spawn(fn, "")
    sub.inline_calls = True
    for name, v in bound.arguments.items():
        # the callee gets its own aggregates, as a called function does (changing one leaves the caller's)
        sub.lscope[name] = clone(v) if isinstance(v, (tensor, tuple_value, constexpr)) else constexpr(tl._unwrap(v))
    try:
        sub.visit_compound(fn.parse().body[0].body)
    except ReturnSignal:
        pass
    rets = sub.ret_values or []
    if sub.ret_is_tuple:
        return _returned_tuple(rets, sub.ret_fields)
    return rets[0] if rets else constexpr(None)


def _returned_tuple(values: list[Any], fields: Optional[list[str]]) -> tuple_value:
    t = tuple_value(values)
    if fields:
        t.type = tl.tuple_type([getattr(v, "type", None) for v in t.values], fields)
    return t


@contextlib.contextmanager
def _seen_from(gen: Generator, node: Any) -> Iterator[None]:
    """An error inside a called @jit function also shows the call that led there, up to the kernel."""
    try:
        yield
    except CompilationError as err:
        # the error in the callee stays reachable as the cause (Triton's test_err_in_nested_call)
        raise err.called_from(gen.fn.__name__, gen.src, node, gen.filename, gen.first_line) from err


def call_jit_function(gen: Generator, fn: DeviceFunction, args: Sequence[Any], kwargs: dict[str, Any],
                      node: Any = None, inline: bool = False) -> Any:
    """Call a @jit device function: build (or reuse) a specialized ``func.func`` and call it; with
    ``inline``, generate its body in place (inside the regions of tile ops). The code generator's method
    ``call_jit_function``, which the language's builtins call on ``_generator``, is this function."""
    if node is None:   # called from a builtin (tl.reduce's combine, elementwise helpers): the call being visited
        node = gen.last_node
    def refuse_recursion() -> CompilationError:
        chain = " -> ".join(f.__name__ for f in gen.call_stack + (fn, ))
        return gen.error(node, f"recursive call of @jit function `{fn.__name__}` ({chain}) with the same argument "
                               "types and compile-time values; kernels cannot recurse without end: rewrite it as a "
                               "loop, or make each call's specialization differ (e.g. halve a block's shape)")
    sig = fn.signature
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise gen.error(node, f"bad arguments for `{fn.__name__}`: {exc}") from None
    bound.apply_defaults()
    if inline or gen.inline_calls:
        if fn in gen.call_stack:
            raise refuse_recursion()
        with _seen_from(gen, node):
            return _inline_call(gen, fn, bound)
    tensors: list[tensor] = []
    specs = []
    for name, param in sig.parameters.items():
        v = bound.arguments[name]
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise gen.error(node, f"`{fn.__name__}` takes *args or **kwargs, which @jit functions cannot")
        # As in Triton, a tl.constexpr annotation on a device function's parameter does not refuse a
        # run-time tensor (Triton's fused-attention tutorial passes offsets that way): the tensor is passed
        # as a run-time argument and the annotation only matters for compile-time values.
        if fn.is_constexpr_param(name) and not isinstance(v, tensor):
            specs.append(("C", v if isinstance(v, constexpr) else constexpr(tl._unwrap(v))))
        else:
            passthrough = (tensor, tuple_value, constexpr, tensor_descriptor_base)
            specs.append(_flatten(v if isinstance(v, passthrough) else constexpr(v), tensors))
    key = (fn.cache_key, fn, tuple(_spec_key(s) for s in specs))   # two functions of one source: two names
    entry = gen.function_cache.get(key)
    if isinstance(entry, _Generating):
        # as in Triton, a function may call itself with another specialization (a shape halved each time:
        # test_frontend.py::test_specialized_recursion); the same one again would never end
        raise refuse_recursion()
    if entry is None:
        taken = {e[0] for e in gen.function_cache.values()}
        fname = callee_name(fn, [bound.arguments[n] for n in sig.parameters], taken)
        # parameters are flattened: each tensor becomes one IR argument
        flat_params = list(zip(sig.parameters, specs))
        sub = gen.spawn(fn, fname)
        gen.function_cache[key] = _Generating(fname)
        try:
            with _seen_from(gen, node):
                entry_spec = _generate_callee(sub, [t.type for t in tensors], flat_params)
        except BaseException:
            del gen.function_cache[key]
            raise
        gen.function_cache[key] = entry = (fname, entry_spec)
    fname, ret_spec = entry
    b = gen.builder
    attrs = {"callee": ir.FlatSymbolRefAttr.get(fname, context=b.context)}
    if fn.noinline:
        attrs["no_inline"] = ir.UnitAttr.get(b.context)
    result_types = [gen.semantic.ir_type(s[2]) for s in _tensor_specs(ret_spec)]
    call = b.op("func.call", [t.handle for t in tensors], result_types, attrs)
    handles = list(call.results)
    return _rebuild_return(ret_spec, handles)


#: the function_cache entry of a specialization being generated (a call to it now would recurse without end)
class _Generating(tuple):
    def __new__(cls, name: str) -> "_Generating":
        return super().__new__(cls, (name, None))


def _tensor_specs(spec: Any) -> list[Any]:
    if spec is None:
        return []
    if spec[0] == "T":
        return [spec]
    if spec[0] in ("tuple", "D"):
        out = []
        for s in spec[1]:
            out += _tensor_specs(s)
        return out
    return []


def _rebuild_return(spec: Any, handles: list[Any]) -> Any:
    if spec is None:
        return constexpr(None)
    pos = [0]

    def build(s: Any) -> Any:
        if s[0] == "T":
            h = handles[pos[0]]
            pos[0] += 1
            return tensor(h, s[2])
        if s[0] == "tuple":
            return tuple_value([build(x) for x in s[1]], s[2])  # s[2]: the type, with a namedtuple's fields
        if s[0] == "D":
            return _build_descriptor(s[2], [build(x) for x in s[1]], s[3])
        return s[1]
    return build(spec)


def _generate_callee(sub: Generator, arg_types: list[Any], params: list[tuple[str, Any]]) -> Any:
    """Generate the callee; returns the spec of its return value (tensors, tuples, constants)."""
    b = sub.builder
    ir_args = [sub.semantic.ir_type(t) for t in arg_types]
    with b.context, b.loc:
        with ir.InsertionPoint(sub.module.body):   # after its caller, in the order first called (as Triton)
            fop = func_d.FuncOp(sub.func_name, ir.FunctionType.get(ir_args, []), visibility="private")
        entry = fop.add_entry_block()
    handles = list(entry.arguments)
    for name, s in params:
        sub.lscope[name] = _rebuild(s, handles)
    tree = sub.fn.parse()
    body = tree.body[0].body
    saved_ip = b._ip
    b._ip = []
    try:
        with b.at(entry):
            try:
                sub.visit_compound(body)
            except ReturnSignal:
                pass
            rets = sub.ret_values or []
            value: Any = _returned_tuple(rets, sub.ret_fields) if sub.ret_is_tuple else (rets[0] if rets else None)
            flat: list[tensor] = []
            spec = _flatten(value, flat) if value is not None else None
            b.op("func.return", [t.handle for t in flat], [])
    finally:
        b._ip = saved_ip
    with b.context:
        fop.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(ir_args, [t.handle.type for t in flat]))
    return spec
