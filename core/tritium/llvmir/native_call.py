"""Calling a C function pointer from Python at the cost of a builtin call.

``native_function(address, ("u64", "u32", ...), "i32")`` returns a real builtin (``builtin_function_or_method``)
that converts its integer arguments, calls the C function at ``address`` and returns its result as an int.
ctypes spends several microseconds per call on its generic argument handling and a Cython wrapper still builds
Python objects around every handle; a hot loop that launches tiny kernels pays that on every launch.

The builtin is a few dozen instructions of LLVM IR with CPython's METH_FASTCALL signature
``PyObject *f(PyObject *self, PyObject *const *args, Py_ssize_t nargs)``, JIT-compiled in process with
llvmlite (no C compiler at install or run time) and wrapped with one ``PyCFunction_NewEx`` call. Every address
it uses (the target, the CPython API functions, exception types, message strings) is an integer constant in
the code, so the object has no relocations and no symbol the JIT linker must resolve: it links the same under
any code model, however far the JIT's memory lies from libpython.

Errors raise, never crash: a wrong argument count raises TypeError, a non-integer TypeError, a value out of its
C type's range OverflowError (CPython's own conversions; ``__index__`` is honoured), before the target runs.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import Any, Callable, Sequence

#: argument kinds: C integer types (pointers and handles are ``u64``), by (bits, signed); ``bytes``: a
#: ``bytes`` object, passed as a pointer to its contents (valid for the call: the caller holds the object);
#: ``offsets`` then ``ptrs``, two Python arguments for one C argument: a ``bytes`` of native 64-bit offsets and a
#: ``bytes`` of data, passed as a pointer to an array (on the builtin's stack) of pointers into the data at those
#: offsets (what cuLaunchKernel's ``kernelParams`` is), each offset checked to lie inside the data
ARG_KINDS = {"u64": (64, False), "i64": (64, True), "u32": (32, False), "i32": (32, True), "bytes": (0, False),
             "offsets": (0, False), "ptrs": (0, False)}
#: result kinds: ``void`` returns None
RESULT_KINDS = ("u64", "i64", "u32", "i32", "void")

_METH_FASTCALL = 0x0080
_METH_KEYWORDS = 0x0002


class NativeCallUnavailable(RuntimeError):
    """This interpreter or platform cannot host a JIT-compiled builtin; the message says why."""


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


_lock = threading.Lock()
_engine: Any = None
_built: dict[tuple, Callable[..., Any]] = {}
#: what the builtins point at must live as long as the process: method definitions, names, messages, modules
_keep: list[Any] = []
#: each builtin made from IR (kept alive in _keep) to its method definition, for bind_builtin
_defs: dict[int, Any] = {}


def _renew_lock() -> None:
    # a thread of the parent may have held it at fork(); the child has only the forking thread
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_lock)


def check_available() -> None:
    """Raise NativeCallUnavailable unless this process can host native builtins."""
    if sys.implementation.name != "cpython":
        raise NativeCallUnavailable(f"needs CPython's C API; this is {sys.implementation.name}")
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        raise NativeCallUnavailable("needs a 64-bit process")
    if not hasattr(ctypes, "pythonapi"):
        raise NativeCallUnavailable("ctypes.pythonapi is missing")
    try:
        import llvmlite.binding  # noqa: F401
    except ImportError as exc:
        raise NativeCallUnavailable(f"llvmlite cannot be imported: {exc}") from exc


def native_function(address: int, args: Sequence[str], result: str = "i64", *, name: str = "native_call",
                    release_gil: bool = True) -> Callable[..., Any]:
    """A builtin ``f(a0, a1, ...)`` that calls the C function at ``address`` with the arguments converted to
    the C integer types ``args`` names (see ARG_KINDS) and returns its ``result`` as an int (None for void).
    ``release_gil`` lets other Python threads run while the C function runs (it must then not touch Python
    objects). Built once per signature and address; raises NativeCallUnavailable where it cannot be."""
    if not isinstance(address, int) or not 0 < address < 1 << 64:
        raise ValueError(f"address must be a non-null 64-bit integer, got {address!r}")
    return _get(address, args, result, name, release_gil)


def native_caller(args: Sequence[str], result: str = "i64", *, name: str = "native_call",
                  release_gil: bool = True) -> Callable[..., Any]:
    """Like ``native_function``, for every C function of one signature: the builtin's first argument is the
    address of the function to call (a null one raises ValueError; any other must be a function of this
    signature, as with ctypes), then the arguments. One build serves all of them."""
    return _get(0, args, result, name, release_gil)


def _get(address: int, args: Sequence[str], result: str, name: str, release_gil: bool) -> Callable[..., Any]:
    kinds = tuple(args)
    for i, k in enumerate(kinds):
        if k not in ARG_KINDS:
            raise ValueError(f"argument kind {k!r} is not one of {sorted(ARG_KINDS)}")
        if (k == "offsets") != (i + 1 < len(kinds) and kinds[i + 1] == "ptrs") or \
                (k == "ptrs" and (i == 0 or kinds[i - 1] != "offsets")):
            raise ValueError("argument kind 'offsets' must come right before 'ptrs', and only there")
    if result not in RESULT_KINDS:
        raise ValueError(f"result kind {result!r} is not one of {RESULT_KINDS}")
    if not name.isidentifier():
        raise ValueError(f"name must be an identifier, got {name!r}")
    key = (address, kinds, result, release_gil, name)
    fn = _built.get(key)
    if fn is not None:
        return fn
    check_available()
    with _lock:
        fn = _built.get(key)
        if fn is None:
            fn = _built[key] = _build(address, kinds, result, release_gil, name)
    return fn


# -- building ---------------------------------------------------------------------------------------------

def _api(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value or 0


def _c_string(text: str) -> int:
    buf = ctypes.create_string_buffer(text.encode())
    _keep.append(buf)
    return ctypes.addressof(buf)


def _fn(address: int) -> str:
    return f"inttoptr (i64 {address} to ptr)"


def _ir(address: int, kinds: tuple, result: str, release_gil: bool, symbol: str, name: str) -> str:
    """The builtin's code; ``address`` 0: the target's address is the first argument."""
    if not address:
        kinds = ("u64", ) + kinds
    n = len(kinds)
    # on LP64 the `long` conversions are the fast ones (digit loops; the `long long` ones go through a byte
    # array for values of more than one digit): ~3x cheaper for 64-bit handles and addresses
    lp64 = ctypes.sizeof(ctypes.c_long) == 8
    as_signed, as_unsigned = ("PyLong_AsLong", "PyLong_AsUnsignedLong") if lp64 else \
        ("PyLong_AsLongLong", "PyLong_AsUnsignedLongLong")
    api = {k: _fn(_api(k)) for k in ("PyNumber_Index", as_signed, as_unsigned, "Py_DecRef", "PyBytes_AsString",
                                     "PyBytes_Size",
                                     "PyErr_Occurred", "PyErr_Format", "PyEval_SaveThread", "PyEval_RestoreThread",
                                     "PyLong_FromLongLong", "PyLong_FromUnsignedLongLong", "Py_IncRef")}
    type_offset = _ob_type_offset()
    count_msg = _c_string(f"{name}() takes exactly {n} argument{'' if n == 1 else 's'} (%zd given)")
    range_msg = _c_string(f"{name}(): argument %zd does not fit in its C type (%s)")
    kind_names = {k: _c_string(k) for k in set(kinds)}
    outside_msg = _c_string(f"{name}(): an offset of argument %zd lies outside its data (%zd bytes)")
    lines = [f"define ptr @{symbol}(ptr %self, ptr %args, i64 %nargs) {{",
             "entry:",
             f"  %count_ok = icmp eq i64 %nargs, {n}",
             "  br i1 %count_ok, label %arg0, label %bad_count",
             "bad_count:",
             f"  call ptr (ptr, ptr, ...) {api['PyErr_Format']}(ptr {_fn(id(TypeError))}, "
             f"ptr {_fn(count_msg)}, i64 %nargs)",
             "  ret ptr null",
             "fail:",
             "  ret ptr null"]
    values = []
    for i, kind in enumerate(kinds):
        bits, signed = ARG_KINDS[kind]
        conv = api[as_signed if signed else as_unsigned]
        nxt = f"arg{i + 1}" if i + 1 < n else "call"
        lines += [f"arg{i}:",
                  f"  %p{i} = getelementptr inbounds ptr, ptr %args, i64 {i}",
                  f"  %o{i} = load ptr, ptr %p{i}"]
        if kind in ("bytes", "offsets"):  # NULL with a TypeError set for anything but bytes
            lines += [f"  %v{i} = call ptr {api['PyBytes_AsString']}(ptr %o{i})",
                      f"  %nb{i} = icmp eq ptr %v{i}, null",
                      f"  br i1 %nb{i}, label %fail, label %{nxt}"]
            if kind != "offsets":
                values.append(f"ptr %v{i}")
            continue
        if kind == "ptrs":
            lines += _pointer_table(i, nxt, api, outside_msg)
            values.append(f"ptr %tab{i}")
            continue
        if type_offset is not None:  # an exact int is converted as it is
            lines += [f"  %tp{i} = getelementptr i8, ptr %o{i}, i64 {type_offset}",
                      f"  %ty{i} = load ptr, ptr %tp{i}",
                      f"  %exact{i} = icmp eq ptr %ty{i}, {_fn(id(int))}",
                      f"  br i1 %exact{i}, label %fast{i}, label %index{i}",
                      f"fast{i}:",
                      f"  %vf{i} = call i64 {conv}(ptr %o{i})",
                      f"  br label %check{i}"]
        else:
            lines.append(f"  br label %index{i}")
        # anything else goes through __index__, as CPython's own int() (an int subclass, a bool, numpy's ints)
        lines += [f"index{i}:",
                  f"  %x{i} = call ptr {api['PyNumber_Index']}(ptr %o{i})",
                  f"  %nx{i} = icmp eq ptr %x{i}, null",
                  f"  br i1 %nx{i}, label %fail, label %conv{i}",
                  f"conv{i}:",
                  f"  %vs{i} = call i64 {conv}(ptr %x{i})",
                  f"  call void {api['Py_DecRef']}(ptr %x{i})",
                  f"  br label %check{i}",
                  f"check{i}:",
                  f"  %v{i} = phi i64 [%vs{i}, %conv{i}]"
                  + (f", [%vf{i}, %fast{i}]" if type_offset is not None else ""),
                  f"  %m{i} = icmp eq i64 %v{i}, -1",
                  f"  br i1 %m{i}, label %err{i}, label %range{i}",
                  f"err{i}:",  # -1 is also a value: only a pending exception says it failed
                  f"  %e{i} = call ptr {api['PyErr_Occurred']}()",
                  f"  %ne{i} = icmp ne ptr %e{i}, null",
                  f"  br i1 %ne{i}, label %fail, label %range{i}",
                  f"range{i}:"]
        if bits == 64:
            lines.append(f"  br label %{nxt}")
            values.append(f"i64 %v{i}")
            continue
        if signed:
            lines += [f"  %s{i} = add i64 %v{i}, 2147483648", f"  %out{i} = icmp ugt i64 %s{i}, 4294967295"]
        else:
            lines.append(f"  %out{i} = icmp ugt i64 %v{i}, 4294967295")
        lines += [f"  %t{i} = trunc i64 %v{i} to i32",
                  f"  br i1 %out{i}, label %overflow{i}, label %{nxt}",
                  f"overflow{i}:",
                  f"  call ptr (ptr, ptr, ...) {api['PyErr_Format']}(ptr {_fn(id(OverflowError))}, "
                  f"ptr {_fn(range_msg)}, i64 {i}, ptr {_fn(kind_names[kind])})",
                  "  br label %fail"]
        values.append(f"i32 %t{i}")
    ret_ty = {"void": "void", "i32": "i32", "u32": "i32"}.get(result, "i64")
    lines.append("call:")
    if address:
        callee = _fn(address)
    else:
        null_msg = _c_string(f"{name}(): the function's address is null")
        lines += ["  %null = icmp eq i64 %v0, 0",
                  "  br i1 %null, label %null_address, label %call_target",
                  "null_address:",
                  f"  call ptr (ptr, ptr, ...) {api['PyErr_Format']}(ptr {_fn(id(ValueError))}, "
                  f"ptr {_fn(null_msg)})",
                  "  ret ptr null",
                  "call_target:",
                  "  %target = inttoptr i64 %v0 to ptr"]
        callee, values = "%target", values[1:]
    call = f"call {ret_ty} {callee}({', '.join(values)})"
    if release_gil:
        lines.append(f"  %ts = call ptr {api['PyEval_SaveThread']}()")
    lines.append(f"  %r = {call}" if ret_ty != "void" else f"  {call}")
    if release_gil:
        lines.append(f"  call void {api['PyEval_RestoreThread']}(ptr %ts)")
    if result == "void":
        lines += [f"  call void {api['Py_IncRef']}(ptr {_fn(id(None))})", f"  ret ptr {_fn(id(None))}"]
    else:
        if result == "i32":
            lines.append("  %w = sext i32 %r to i64")
        elif result == "u32":
            lines.append("  %w = zext i32 %r to i64")
        boxed = api["PyLong_FromLongLong" if result in ("i32", "i64") else "PyLong_FromUnsignedLongLong"]
        lines += [f"  %b = call ptr {boxed}(i64 {'%w' if result in ('i32', 'u32') else '%r'})", "  ret ptr %b"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _pointer_table(i: int, nxt: str, api: dict, outside_msg: int) -> list[str]:
    """IR of a ``ptrs`` argument (Python argument ``i``; ``%v{i-1}`` holds the preceding ``offsets``' contents,
    ``%o{i-1}`` that object): ``%tab{i}``, a stack array of the data's address plus each offset."""
    k = i - 1
    return [f"  %d{i} = call ptr {api['PyBytes_AsString']}(ptr %o{i})",
            f"  %nd{i} = icmp eq ptr %d{i}, null",
            f"  br i1 %nd{i}, label %fail, label %size{i}",
            f"size{i}:",
            f"  %ds{i} = call i64 {api['PyBytes_Size']}(ptr %o{i})",
            f"  %os{i} = call i64 {api['PyBytes_Size']}(ptr %o{k})",
            f"  %n{i} = lshr i64 %os{i}, 3",
            f"  %tab{i} = alloca ptr, i64 %n{i}",
            f"  br label %head{i}",
            f"head{i}:",
            f"  %j{i} = phi i64 [0, %size{i}], [%j1_{i}, %body{i}]",
            f"  %more{i} = icmp ult i64 %j{i}, %n{i}",
            f"  br i1 %more{i}, label %load{i}, label %{nxt}",
            f"load{i}:",
            f"  %op{i} = getelementptr i64, ptr %v{k}, i64 %j{i}",
            f"  %off{i} = load i64, ptr %op{i}, align 1",
            f"  %in{i} = icmp ult i64 %off{i}, %ds{i}",
            f"  br i1 %in{i}, label %body{i}, label %outside{i}",
            f"outside{i}:",
            f"  call ptr (ptr, ptr, ...) {api['PyErr_Format']}(ptr {_fn(id(ValueError))}, "
            f"ptr {_fn(outside_msg)}, i64 {i}, i64 %ds{i})",
            "  br label %fail",
            f"body{i}:",
            f"  %at{i} = getelementptr i8, ptr %d{i}, i64 %off{i}",
            f"  %slot{i} = getelementptr ptr, ptr %tab{i}, i64 %j{i}",
            f"  store ptr %at{i}, ptr %slot{i}",
            f"  %j1_{i} = add i64 %j{i}, 1",
            f"  br label %head{i}"]


def _ob_type_offset() -> Any:
    """Where an object's type pointer lies in its header (8 in CPython's usual builds; more with reference
    tracing or free threading), found by looking at objects of known types; None if no candidate fits all."""
    probes: tuple[object, ...] = (1 << 40, 3, 2.5, [], "s", None)
    for offset in (8, 24, 16, 32):
        if all(ctypes.c_void_p.from_address(id(p) + offset).value == id(type(p)) for p in probes):
            return offset
    return None


def _engine_for_host() -> Any:
    global _engine
    if _engine is None:
        import llvmlite.binding as llvm
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        # the engine owns (and frees with itself) the machine it is given: a fresh one, never a shared one.
        # opt=0: the code is a chain of calls, as fast per call at -O0 and built 3x sooner (~10 ms on this host)
        machine = llvm.Target.from_default_triple().create_target_machine(opt=0)
        _engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    return _engine


def _build(address: int, kinds: tuple, result: str, release_gil: bool, name: str) -> Callable[..., Any]:
    symbol = f"{name}_{len(_keep)}"  # unique in the engine: every build adds a module to the same one
    return _builtin_from_ir(_ir(address, kinds, result, release_gil, symbol, name), symbol, name)


# -- for other builtins written in LLVM IR (a backend's launch, say) ---------------------------------------

def api_address(name: str) -> int:
    """The address of a function of CPython's C API in this process (AttributeError where it lacks it)."""
    return _api(name)


def object_type_offset() -> int:
    """Where an object's type pointer lies in its header; NativeCallUnavailable where it cannot be found."""
    offset = _ob_type_offset()
    if offset is None:
        raise NativeCallUnavailable("the object header's layout is not CPython's usual one")
    return offset


def builtin_from_ir(ir_for: Callable[[str], str], name: str, keep: Sequence[Any] = (), *,
                    keywords: bool = False) -> Callable[..., Any]:
    """A builtin named ``name`` from LLVM IR: ``ir_for(symbol)`` is the text defining ``symbol`` with CPython's
    METH_FASTCALL signature (``keywords``: METH_FASTCALL | METH_KEYWORDS, the function then also takes the
    keyword names), JIT-compiled in this process. ``keep``: objects whose addresses the code holds, kept alive
    with it. Raises NativeCallUnavailable where builtins cannot be hosted."""
    check_available()
    with _lock:
        symbol = f"{name}_{len(_keep)}"
        fn = _builtin_from_ir(ir_for(symbol), symbol, name, _METH_KEYWORDS if keywords else 0)
        _keep.extend(keep)
    return fn


def bind_builtin(builtin: Callable[..., Any], self_object: Any) -> Callable[..., Any]:
    """Another builtin running ``builtin``'s code with ``self_object`` as its first C argument (``self``)."""
    method = _defs[id(builtin)]
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]
    return new(ctypes.addressof(method), self_object, None)


def _builtin_from_ir(text: str, symbol: str, name: str, extra_flags: int = 0) -> Callable[..., Any]:
    import llvmlite.binding as llvm
    engine = _engine_for_host()
    module = llvm.parse_assembly(text)
    module.verify()
    engine.add_module(module)
    engine.finalize_object()
    code = engine.get_function_address(symbol)
    if not code:
        raise NativeCallUnavailable(f"the JIT did not produce {symbol}")
    method = _MethodDef(name.encode(), code, _METH_FASTCALL | extra_flags, None)
    _keep.extend((module, method))
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    fn = new(ctypes.addressof(method), None, None)
    _keep.append(fn)
    _defs[id(fn)] = method
    return fn
