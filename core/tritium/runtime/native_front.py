"""The cached launch without a Python frame: ``kernel[grid](*args)`` answered by native code (llvmir/front_ir.py)
for the kernel's most recently compiled specialization.

The generated Python frame (dispatch.py) costs ~300 bytecodes per launch before the driver is called: the
snapshot and environment checks, keying every argument, a tuple hash and compare, the grid. Where the driver's
launch statements come as a native *step* (``InlineLaunch.step``: ``step(constants, grid, *values) -> 0`` when it
launched), the same checks can run in native code against a *plan*: the one specialization the kernel last
compiled or found, written down per parameter (a tensor of this dtype, on this device, aligned or not; an int of
this class; a float; a constexpr equal to this value...). A launch whose arguments match the plan, under the
same snapshot, goes straight to the step (a grid function is called once, with the parameters by name, as the
frame calls it); anything else -- another specialization, launch options, defaults left out, hooks, debug, the
interpreter, a changed knob or environment variable, a step that did not launch -- is handed, as the same call
(with a grid function's result in its place), to the Python frame, which decides everything again. So the native code
only ever takes launches the frame would have launched the same way, and never raises an error of its own.

The front is one JIT-compiled function per process; each kernel gets a builtin bound to its own ``[dispatch,
plan]`` list. It is armed when the full path remembers a kernel (:func:`arm`, from dispatch.remember) and only
while the step is native (a driver whose native launch call is chosen later bumps ``knobs.generation``, so
kernels are remembered again then). ``TRITIUM_NATIVE_DISPATCH=0`` (``knobs.runtime.native_dispatch``) keeps every
launch in the Python frame.
"""
from __future__ import annotations

import inspect
import struct
import sys
import threading
import types
from typing import Any, Optional

from .. import knobs
from ..llvmir import front_args_ir as F
from .binder import CONSTEXPR_VALUE_TYPES, own_type_test

_build_lock = threading.Lock()
_front: Any = None
_failed = False
#: why the front could not be built in this process (the Python frame then launches everything)
failure: Optional[str] = None
_NAMES = ("_hot", "generation", "pre_run_hooks", "interpret", "debug", "used_globals", "device_caches", "inline",
          "environ", "dtype", "data_ptr")


def front() -> Any:
    """The process's native front (built once), or None where it cannot be built."""
    global _front, _failed, failure
    if _front is not None or _failed:
        return _front
    with _build_lock:
        if _front is None and not _failed:
            try:
                _front = _build()
            except Exception as exc:  # noqa: BLE001 - the Python frame launches everything without it
                _failed, failure = True, f"{type(exc).__name__}: {exc}"
    return _front


def _build() -> Any:
    from ..llvmir import front_ir, native_call as nc
    strings = {f"s.{n}": sys.intern(n) for n in _NAMES}
    objects = {"None": None, "True": True, "False": False, "int": int, "float": float, "bool": bool,
               "list": list, "tuple": tuple, "zero": 0, "knobs": vars(knobs), **strings}
    api = lambda name: f"inttoptr (i64 {nc.api_address(name)} to ptr)"  # noqa: E731
    obj = lambda name: f"inttoptr (i64 {id(objects[name])} to ptr)"  # noqa: E731
    offset = nc.object_type_offset()
    return nc.builtin_from_ir(lambda symbol: front_ir.ir(symbol, api, obj, offset), "cached_launch",
                              list(objects.values()), keywords=True)


def arm(fn: Any, hp: Any, hot: Any, key: tuple, options: dict, entry: Any) -> None:
    """After the full path remembered ``entry`` for ``key``: make it the kernel's plan where the front can take
    it, else leave the kernel's launches to its Python frame."""
    plan = _plan(fn, hp, hot, key, options, entry)
    state = getattr(hp, "front_state", None)
    if plan is None:
        # a key the front does not take (launch options, say) leaves the plan it has: that one still checks
        # everything at every launch. Turned off, the front takes nothing.
        if state is not None and not knobs.runtime.native_dispatch:
            state[1] = None
        return
    if state is None:
        builtin = front()
        if builtin is None:
            return
        from ..llvmir.native_call import bind_builtin
        state = [hp.call, None]
        hp.front_state = state
        hp.front = bind_builtin(builtin, state)
    state[1] = plan
    if hp.call is not hp.front:
        hp.call = hp.front
        hp.bound = (object(), None)   # __getitem__'s cached bound call was the frame's


def _plan(fn: Any, hp: Any, hot: Any, key: tuple, options: dict, entry: Any) -> Optional[tuple]:
    inline = hp.inline
    step = getattr(inline, "step", None)
    if options or step is None or entry.inline is None or not hot.plain or not knobs.runtime.native_dispatch:
        return None
    step_ns, step_name = step
    if type(step_ns.get(step_name)) is not types.BuiltinFunctionType or fn.used_globals:
        return None
    gen = knobs.generation
    if gen != hot.gen:
        return None
    ns = hp.ns
    env = ns.get("_env_objects")   # what the frame's environment check reads (knob_types.unset_check)
    tensor = ns.get("_Tensor")     # the frame's tensor class: without it, no tensor has a branch of its own
    if env is None:
        return None
    params = _params(fn, key, hp.device_type, tensor, hp.pinned_apart)
    if params is None:
        return None
    header, objects, n_runtime = params
    if n_runtime > F.MAX_VALUES or len(fn.params) > F.MAX_PARAMS:
        return None
    limits = struct.pack("<3Q", *(max(0, min(int(m), 2**63 - 1)) for m in hot.max_grid))
    return (header, objects, ns, hot, fn, hot.driver, hot.state, gen, env, step_ns, sys.intern(step_name),
            entry.inline, entry, entry.kernel, tensor, limits, tuple(sys.intern(p.name) for p in fn.params))


def _params(fn: Any, key: tuple, device_type: Optional[str], tensor: Any,
            pinned_apart: bool = False) -> Optional[tuple[bytes, tuple, int]]:
    """The header's parameter records and the objects they point at, or None where a parameter's key is one the
    front does not check (the Python frame then launches)."""
    if len(key) != len(fn.params):
        return None
    records, objects, n_runtime = [], [], 0
    kinds = [p._param.kind for p in fn.params]
    # how many may come by position (Python refuses more: keyword-only parameters), and a name no keyword
    # matches for positional-only ones (Python refuses them by keyword)
    max_positional = next((i for i, kind in enumerate(kinds) if kind == inspect.Parameter.KEYWORD_ONLY), len(kinds))
    for p, k in zip(fn.params, key):
        name_index = len(objects)
        objects.append(object() if p._param.kind == inspect.Parameter.POSITIONAL_ONLY else sys.intern(p.name))
        record = _record(p, k, device_type, tensor, objects, pinned_apart)
        if record is None:
            return None
        kind, mode, obj_index = record
        n_runtime += kind != F.CONST
        records.append(struct.pack("<BBHI", kind, mode, name_index, obj_index))
    if len(objects) >= 1 << 16:
        return None
    header = struct.pack("<3I", len(fn.params), n_runtime, max_positional)
    return header + b"".join(records), tuple(objects), n_runtime


def _record(p: Any, k: Any, device_type: Optional[str], tensor: Any,
            objects: list, pinned_apart: bool = False) -> Optional[tuple[int, int, int]]:
    if p.is_constexpr:
        if type(k) is tuple and len(k) == 3 and k[0] == "C" and k[1] in CONSTEXPR_VALUE_TYPES:
            objects += [k[1], k[2]]
            return F.CONST, 0, len(objects) - 2
        return None
    if p.annotation_type:
        return None
    spec = not p.do_not_specialize
    align = spec and not p.do_not_specialize_on_alignment
    if k == ("C", int, 1) and type(k[2]) is int:
        return (F.INT32, F.INT_ONE, 0) if spec else None
    for ty, kind in (("i32", F.INT32), ("i64", F.INT64)):
        if k == (ty, "D"):
            return (kind, F.INT_DIV16, 0) if align else None
        if k == (ty, ""):
            return kind, (F.INT_ANY if not spec else F.INT_NOT_1_UNALIGNED if align else F.INT_NOT_1), 0
    if k == ("fp32", ""):
        return F.FLOAT, 0, 0
    if k == ("u1", ""):
        return F.BOOL, 0, 0
    if k == ("C", type(None), None):
        return F.NONE, 0, 0
    if type(k) is tuple and len(k) == 4 and k[0] == "*":
        where = _location(k[2], device_type, tensor, pinned_apart)
        if where is None or type(k[3]) is not bool or (not align and k[3]):
            return None
        objects += [k[1], *where]
        mode = (F.ALIGN_YES if k[3] else F.ALIGN_NO) if align else F.ALIGN_ANY
        return F.TENSOR, mode, len(objects) - 3
    return None


def _location(loc: Any, device_type: Optional[str], tensor: Any, pinned_apart: bool = False) -> Optional[tuple]:
    """(attribute that must be True, attribute that must be False or None): how binder.py's location test
    arrives at ``loc`` for a torch tensor."""
    if tensor is None:
        return None
    own_first = own_type_test(tensor, device_type)
    if own_first and loc == device_type:
        return sys.intern(f"is_{device_type}"), None
    if loc == "cpu" and not pinned_apart:
        return sys.intern("is_cpu"), (sys.intern(f"is_{device_type}") if own_first else None)
    return None     # a CPU tensor that binder.py tests for pinned memory (a call the front does not make)
