"""The cached launch's last step as one native call: ``launch_values(c, grid, *values) -> 0 | 1``.

Core's cached-launch frame ends in the launch statements this backend writes into it (hot_launch.INLINE_BODY).
Written in Python those statements were ~130 of the frame's ~310 bytecodes for a two-argument kernel: reading
torch's device and stream, the device's function handle, struct-packing the values, a twelve-argument call of the
packing builtin, recording the kernel's name. This builtin does the same in one call: it packs the values into a
buffer on its stack by the kernel's layout (``c``, made once per compiled kernel by :func:`constants`), builds
``kernelParams`` from it, asks torch for the current device and stream, releases the GIL around cuLaunchKernel
and appends the name to the record of recent launches (faults._recent).

It answers 0 when it launched. It answers 1, having queued nothing and left no exception, wherever it is not
certain to do exactly what the launcher's own path would: a value that is not an exact int, bool or float or
does not fit its slot (struct's rules: ints in the slot's range, floats that do not overflow a float), a grid
value outside 1..2**31-1, no torch, a device whose function is not loaded yet, a failed launch (the launcher then
retries and reports it), or a launch call that is no longer the one it was built beside (``launch_call.packed``
or ``launch`` replaced: a test's recorder, the fallback to cuda-bindings). The frame then calls the launcher,
which does it all again. Exceptions raised by torch's own calls propagate, as they did from the Python
statements.

Built once per process, next to the native launch call it shares the cuLaunchKernel address with
(launch_call.choose); every address it uses is a constant of its code (native_call.builtin_from_ir).
"""
from __future__ import annotations

import struct
import sys
from typing import Any, Callable, Optional

from .arguments import field_offsets
from .values_launch_ir import HEADER, MAX_DATA, MAX_KEPT, SLOT_CODES, ir


def constants(layout: list[str], keep: list[int], handles: dict, block: int, shared: int,
              name: str) -> Optional[tuple]:
    """``c`` for a kernel whose values are ``layout`` (struct codes, ``?`` for a value compiled in) of which
    ``keep`` (indices) are its parameters, in order; None where the builtin cannot take it."""
    if any(code not in SLOT_CODES for code in layout):
        return None
    starts = field_offsets(layout)
    size = struct.calcsize("@" + "".join(layout))
    if size > MAX_DATA or len(keep) > MAX_KEPT:
        return None
    head = HEADER.pack(len(layout), size, len(keep), block, shared)
    slots = b"".join(struct.pack("<2I", SLOT_CODES[code], start) for code, start in zip(layout, starts))
    kept = struct.pack(f"<{len(keep)}I", *(starts[i] for i in keep))
    return (head + slots + kept, handles, name)


def blocking_objects() -> tuple:
    """What the builtin reads to tell that CUDA_LAUNCH_BLOCKING is off: (os, os.environ, its backing dict, the
    knob group's dict, the environment names...); no mapping where os.environ is not the usual one (the builtin
    then never launches: the launcher reads the knob)."""
    from tritium import knobs
    from .knobs import nvidia as nv_knobs
    ns: dict = {}
    knobs.unset_check(type(nv_knobs).launch_blocking, ns=ns, prefix="_b")
    env_os, environ, data, *keys = ns.get("_b_objects", (None, None, None))
    return (env_os, environ, data, nv_knobs.__dict__, *keys)


def build(address: int, packed: tuple, launch: Any, launch_call_globals: dict, driver_globals: dict,
          recent: Callable[[str], Any], blocking: tuple) -> Callable[..., int]:
    """The builtin, calling the cuLaunchKernel at ``address`` while ``launch_call.packed is packed`` and
    ``launch_call.launch is launch``; torch's ``_C`` is read from ``driver_globals['_torch_c']`` at each call.
    ``blocking``: (os, os.environ, its backing dict, the knob group's dict, names...): it launches only while
    ``os.environ`` is that mapping, none of the names is in its dict and ``launch_blocking`` was not set from
    Python (CUDA_LAUNCH_BLOCKING's default, off: the launcher synchronizes after each launch otherwise)."""
    from tritium.llvmir import native_call as nc
    # interned: the dict lookups compare by identity first and find the hash cached
    names = {k: sys.intern(k) for k in ("packed", "launch", "_torch_c", "_cuda_getDevice",
                                         "_cuda_getCurrentRawStream", "launch_blocking", "environ")}
    keep = [packed, launch, launch_call_globals, driver_globals, recent, blocking, *names.values()]
    api = {k: f"inttoptr (i64 {nc.api_address(k)} to ptr)" for k in (
        "PyTuple_Size", "PyTuple_GetItem", "PyBytes_AsString", "PyBytes_Size", "PyLong_AsLong",
        "PyLong_AsUnsignedLong", "PyFloat_AsDouble", "PyErr_Occurred", "PyErr_Clear", "PyDict_GetItem",
        "PyObject_GetAttr", "PyObject_CallNoArgs", "PyObject_CallOneArg", "Py_DecRef", "Py_IncRef",
        "PyEval_SaveThread", "PyEval_RestoreThread", "PyDict_Contains")}
    obj = {k: f"inttoptr (i64 {id(v)} to ptr)" for k, v in {
        "int": int, "float": float, "tuple": tuple, "True": True, "False": False, "None": None, "zero": 0,
        "one": 1, "packed": packed, "launch": launch, "lc": launch_call_globals, "drv": driver_globals,
        "recent": recent, "blocking": blocking, **{f"s.{k}": v for k, v in names.items()}}.items()}
    type_offset = nc.object_type_offset()
    return nc.builtin_from_ir(lambda symbol: ir(symbol, address, api, obj, type_offset), "launch_values", keep)
