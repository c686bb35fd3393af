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

#: the values' slots by struct code; anything else (half, bf16 bits) is left to the launcher
SLOT_CODES = {"?": 0, "Q": 1, "q": 2, "i": 3, "h": 4, "b": 5, "B": 6, "f": 7, "d": 8}
#: (bits, lowest, highest) of the integer slots; ``Q`` is converted unsigned
_INT_SLOTS = {1: (64, None, None), 2: (64, None, None), 3: (32, -(1 << 31), (1 << 31) - 1),
              4: (16, -(1 << 15), (1 << 15) - 1), 5: (8, -128, 127), 6: (8, 0, 255)}
HEADER = struct.Struct("<5I")   # values, data size, kept slots, block, shared memory
#: the largest parameter struct and slot count the builtin's stack holds (CUDA's limit is 4 KB of parameters)
MAX_DATA, MAX_KEPT = 4096, 512


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
    if "_b_environ" not in ns:
        return (None, None, None, nv_knobs.__dict__)
    keys = []
    while f"_b_k{len(keys)}" in ns:
        keys.append(ns[f"_b_k{len(keys)}"])
    return (ns["_b_os"], ns["_b_environ"], ns["_b_data"], nv_knobs.__dict__, *keys)


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
                                         "_cuda_getCurrentRawStream")}
    names["launch_blocking"] = sys.intern("launch_blocking")
    names["environ"] = sys.intern("environ")
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
    return nc.builtin_from_ir(lambda symbol: _ir(symbol, address, api, obj, type_offset), "launch_values", keep)


def _ir(symbol: str, address: int, api: dict, obj: dict, type_offset: int) -> str:
    def type_is(value: str, tag: str, kind: str) -> list[str]:
        return [f"  %{tag}.tp = getelementptr i8, ptr {value}, i64 {type_offset}",
                f"  %{tag}.ty = load ptr, ptr %{tag}.tp",
                f"  %{tag}.is = icmp eq ptr %{tag}.ty, {obj[kind]}"]

    hdr = HEADER.size
    lines = [
        f"define ptr @{symbol}(ptr %self, ptr %args, i64 %nargs) {{",
        "entry:",
        f"  %buf = alloca [{MAX_DATA} x i8], align 16",
        f"  %tab = alloca [{MAX_KEPT} x ptr], align 16",
        "  %enough = icmp sge i64 %nargs, 2",
        "  br i1 %enough, label %c0, label %fallback",
        "c0:",
        "  %c = load ptr, ptr %args",
        *type_is("%c", "c", "tuple"),
        "  br i1 %c.is, label %c1, label %fallback",
        "c1:",
        f"  %c.n = call i64 {api['PyTuple_Size']}(ptr %c)",
        "  %c.n3 = icmp eq i64 %c.n, 3",
        "  br i1 %c.n3, label %c2, label %fallback",
        "c2:",
        f"  %hdr.o = call ptr {api['PyTuple_GetItem']}(ptr %c, i64 0)",
        f"  %handles = call ptr {api['PyTuple_GetItem']}(ptr %c, i64 1)",
        f"  %name = call ptr {api['PyTuple_GetItem']}(ptr %c, i64 2)",
        f"  %hdr = call ptr {api['PyBytes_AsString']}(ptr %hdr.o)",
        "  %hdr.null = icmp eq ptr %hdr, null",
        "  br i1 %hdr.null, label %fallback_clear, label %c3",
        "c3:",
        f"  %hdr.size = call i64 {api['PyBytes_Size']}(ptr %hdr.o)",
    ]
    for i, field in enumerate(("n", "size", "k", "block", "shared")):
        lines += [f"  %h.{field}.p = getelementptr i8, ptr %hdr, i64 {4 * i}",
                  f"  %h.{field}.32 = load i32, ptr %h.{field}.p, align 1",
                  f"  %h.{field} = zext i32 %h.{field}.32 to i64"]
    lines += [
        # the header's own length, the stack's limits and the number of values must all agree
        "  %want.n = add i64 %h.n, 2",
        "  %ok.n = icmp eq i64 %nargs, %want.n",
        "  %slots.len = shl i64 %h.n, 3",
        "  %kept.len = shl i64 %h.k, 2",
        f"  %len.a = add i64 %slots.len, {hdr}",
        "  %len = add i64 %len.a, %kept.len",
        "  %ok.len = icmp eq i64 %len, %hdr.size",
        f"  %ok.size = icmp ule i64 %h.size, {MAX_DATA - 8}",
        f"  %ok.k = icmp ule i64 %h.k, {MAX_KEPT}",
        "  %ok.1 = and i1 %ok.n, %ok.len",
        "  %ok.2 = and i1 %ok.size, %ok.k",
        "  %ok = and i1 %ok.1, %ok.2",
        "  br i1 %ok, label %g0, label %fallback",
        "g0:",
        "  %g.p = getelementptr ptr, ptr %args, i64 1",
        "  %g = load ptr, ptr %g.p",
        *type_is("%g", "g", "tuple"),
        "  br i1 %g.is, label %g1, label %fallback",
        "g1:",
        f"  %g.n = call i64 {api['PyTuple_Size']}(ptr %g)",
        "  %g.n1 = add i64 %g.n, -1",
        "  %g.n.ok = icmp ult i64 %g.n1, 3",   # one to three dimensions, the missing ones 1
        "  br i1 %g.n.ok, label %gx0, label %fallback",
    ]
    for d, nxt in (("x", "gy0"), ("y", "gz0"), ("z", "values")):
        idx = "xyz".index(d)
        lines += [f"g{d}0:",
                  f"  %g{d}.here = icmp slt i64 {idx}, %g.n",
                  f"  br i1 %g{d}.here, label %g{d}.item, label %g{d}.one",
                  f"g{d}.one:",
                  f"  br label %g{d}2",
                  f"g{d}.item:",
                  f"  %g{d}.o = call ptr {api['PyTuple_GetItem']}(ptr %g, i64 {idx})",
                  *type_is(f"%g{d}.o", f"g{d}", "int"),
                  f"  br i1 %g{d}.is, label %g{d}1, label %fallback",
                  f"g{d}1:",
                  f"  %g{d}.got = call i64 {api['PyLong_AsLong']}(ptr %g{d}.o)",
                  f"  br label %g{d}2",
                  f"g{d}2:",
                  f"  %g{d}.v = phi i64 [1, %g{d}.one], [%g{d}.got, %g{d}1]",
                  f"  %g{d}.m = add i64 %g{d}.v, -1",   # 1..2**31-1 (0, negatives and -1 on error fail it)
                  f"  %g{d}.in = icmp ult i64 %g{d}.m, 2147483647",
                  f"  %g{d} = trunc i64 %g{d}.v to i32",
                  f"  br i1 %g{d}.in, label %{nxt}, label %fallback_clear"]
    lines += [
        "values:",   # padding between parameters as struct leaves it: zero bytes
        "  call void @llvm.memset.p0.i64(ptr align 16 %buf, i8 0, i64 %h.size, i1 false)",
        "  br label %loop",
        "loop:",
        "  %i = phi i64 [0, %values], [%i.next, %next]",
        "  %more = icmp ult i64 %i, %h.n",
        "  br i1 %more, label %slot, label %kept",
        "slot:",
        "  %r.i = shl i64 %i, 3",
        f"  %r.o = add i64 %r.i, {hdr}",
        "  %r.p = getelementptr i8, ptr %hdr, i64 %r.o",
        "  %code = load i32, ptr %r.p, align 1",
        "  %off.p = getelementptr i8, ptr %r.p, i64 4",
        "  %off.32 = load i32, ptr %off.p, align 1",
        "  %off = zext i32 %off.32 to i64",
        "  %off.in = icmp ule i64 %off, %h.size",
        "  %dst = getelementptr i8, ptr %buf, i64 %off",
        "  %v.i = add i64 %i, 2",
        "  %v.p = getelementptr ptr, ptr %args, i64 %v.i",
        "  %v = load ptr, ptr %v.p",
        "  br i1 %off.in, label %dispatch, label %fallback",
        "dispatch:",
        "  switch i32 %code, label %fallback [ i32 0, label %next i32 1, label %int i32 2, label %int "
        "i32 3, label %int i32 4, label %int i32 5, label %int i32 6, label %int i32 7, label %float "
        "i32 8, label %float ]",
        # integers: an exact int, or True / False (what struct's integer codes take without __index__)
        "int:",
        "  %v.true = icmp eq ptr %v, " + obj["True"],
        "  %v.false = icmp eq ptr %v, " + obj["False"],
        "  %v.bool = or i1 %v.true, %v.false",
        "  br i1 %v.bool, label %int.bool, label %int.check",
        "int.bool:",
        "  %b.v = zext i1 %v.true to i64",
        "  br label %int.have",
        "int.check:",
        *type_is("%v", "vi", "int"),
        "  br i1 %vi.is, label %int.conv, label %fallback",
        "int.conv:",
        "  %unsigned = icmp eq i32 %code, 1",
        "  br i1 %unsigned, label %int.u, label %int.s",
        "int.u:",
        f"  %u.v = call i64 {api['PyLong_AsUnsignedLong']}(ptr %v)",
        "  br label %int.err",
        "int.s:",
        f"  %s.v = call i64 {api['PyLong_AsLong']}(ptr %v)",
        "  br label %int.err",
        "int.err:",
        "  %c.v = phi i64 [%u.v, %int.u], [%s.v, %int.s]",
        "  %c.m1 = icmp eq i64 %c.v, -1",
        "  br i1 %c.m1, label %int.occurred, label %int.have",
        "int.occurred:",
        f"  %e = call ptr {api['PyErr_Occurred']}()",
        "  %e.set = icmp ne ptr %e, null",
        "  br i1 %e.set, label %fallback_clear, label %int.have",
        "int.have:",
        "  %x = phi i64 [%b.v, %int.bool], [%c.v, %int.err], [%c.v, %int.occurred]",
        "  switch i32 %code, label %store64 [ i32 3, label %r3 i32 4, label %r4 i32 5, label %r5 "
        "i32 6, label %r6 ]",
        "store64:",
        "  store i64 %x, ptr %dst, align 1",
        "  br label %next",
    ]
    for code, (bits, low, high) in _INT_SLOTS.items():
        if low is None:
            continue
        lines += [f"r{code}:",
                  f"  %r{code}.s = sub i64 %x, {low}",
                  f"  %r{code}.in = icmp ule i64 %r{code}.s, {high - low}",
                  f"  br i1 %r{code}.in, label %w{code}, label %fallback",
                  f"w{code}:",
                  f"  %w{code}.t = trunc i64 %x to i{bits}",
                  f"  store i{bits} %w{code}.t, ptr %dst, align 1",
                  "  br label %next"]
    lines += [
        # floats: an exact float; to a float slot only where the rounding does not overflow (struct refuses it)
        "float:",
        *type_is("%v", "vf", "float"),
        "  br i1 %vf.is, label %float.conv, label %fallback",
        "float.conv:",
        f"  %d = call double {api['PyFloat_AsDouble']}(ptr %v)",
        "  %single = icmp eq i32 %code, 7",
        "  br i1 %single, label %f32, label %f64",
        "f64:",
        "  store double %d, ptr %dst, align 1",
        "  br label %next",
        "f32:",
        "  %f = fptrunc double %d to float",
        "  %f.abs = call float @llvm.fabs.f32(float %f)",
        "  %d.abs = call double @llvm.fabs.f64(double %d)",
        "  %f.inf = fcmp oeq float %f.abs, 0x7FF0000000000000",
        "  %d.inf = fcmp oeq double %d.abs, 0x7FF0000000000000",
        "  %f.over = xor i1 %f.inf, %d.inf",
        "  br i1 %f.over, label %fallback, label %f32.store",
        "f32.store:",
        "  store float %f, ptr %dst, align 1",
        "  br label %next",
        "next:",
        "  %i.next = add i64 %i, 1",
        "  br label %loop",
        # kernelParams: a pointer into the buffer per parameter
        "kept:",
        f"  %k.base = add i64 %slots.len, {hdr}",
        "  br label %kloop",
        "kloop:",
        "  %j = phi i64 [0, %kept], [%j.next, %kstore]",
        "  %kmore = icmp ult i64 %j, %h.k",
        "  br i1 %kmore, label %kbody, label %context",
        "kbody:",
        "  %k.j = shl i64 %j, 2",
        "  %k.o = add i64 %k.base, %k.j",
        "  %k.p = getelementptr i8, ptr %hdr, i64 %k.o",
        "  %k.32 = load i32, ptr %k.p, align 1",
        "  %k.off = zext i32 %k.32 to i64",
        "  %k.in = icmp ule i64 %k.off, %h.size",
        "  br i1 %k.in, label %kstore, label %fallback",
        "kstore:",
        "  %k.at = getelementptr i8, ptr %buf, i64 %k.off",
        "  %k.slot = getelementptr ptr, ptr %tab, i64 %j",
        "  store ptr %k.at, ptr %k.slot",
        "  %j.next = add i64 %j, 1",
        "  br label %kloop",
        # the launch call it was built beside is still the launcher's, torch is there
        "context:",
        f"  %pk = call ptr {api['PyDict_GetItem']}(ptr {obj['lc']}, ptr {obj['s.packed']})",
        f"  %la = call ptr {api['PyDict_GetItem']}(ptr {obj['lc']}, ptr {obj['s.launch']})",
        f"  %tc = call ptr {api['PyDict_GetItem']}(ptr {obj['drv']}, ptr {obj['s._torch_c']})",
        f"  %pk.same = icmp eq ptr %pk, {obj['packed']}",
        f"  %la.same = icmp eq ptr %la, {obj['launch']}",
        "  %tc.null = icmp eq ptr %tc, null",
        f"  %tc.none = icmp eq ptr %tc, {obj['None']}",
        "  %tc.no = or i1 %tc.null, %tc.none",
        "  %tc.yes = xor i1 %tc.no, true",
        "  %same = and i1 %pk.same, %la.same",
        "  %go = and i1 %same, %tc.yes",
        "  br i1 %go, label %blocking, label %fallback",
        # CUDA_LAUNCH_BLOCKING at its default: not in the environment, not set from Python
        "blocking:",
        f"  %b.os = call ptr {api['PyTuple_GetItem']}(ptr {obj['blocking']}, i64 0)",
        f"  %b.then = call ptr {api['PyTuple_GetItem']}(ptr {obj['blocking']}, i64 1)",
        f"  %b.data = call ptr {api['PyTuple_GetItem']}(ptr {obj['blocking']}, i64 2)",
        f"  %b.group = call ptr {api['PyTuple_GetItem']}(ptr {obj['blocking']}, i64 3)",
        f"  %b.n = call i64 {api['PyTuple_Size']}(ptr {obj['blocking']})",
        f"  %b.now = call ptr {api['PyObject_GetAttr']}(ptr %b.os, ptr {obj['s.environ']})",
        "  %b.now.null = icmp eq ptr %b.now, null",
        "  br i1 %b.now.null, label %fallback_clear, label %blocking1",
        "blocking1:",
        f"  call void {api['Py_DecRef']}(ptr %b.now)",
        "  %b.same = icmp eq ptr %b.now, %b.then",
        f"  %b.knob = call i32 {api['PyDict_Contains']}(ptr %b.group, ptr {obj['s.launch_blocking']})",
        "  %b.unset = icmp eq i32 %b.knob, 0",
        "  %b.ok = and i1 %b.same, %b.unset",
        "  br i1 %b.ok, label %b.loop, label %fallback_clear",
        "b.loop:",
        "  %bk = phi i64 [4, %blocking1], [%bk.next, %b.body]",
        "  %bk.more = icmp slt i64 %bk, %b.n",
        "  br i1 %bk.more, label %b.check, label %device",
        "b.check:",
        f"  %bk.key = call ptr {api['PyTuple_GetItem']}(ptr {obj['blocking']}, i64 %bk)",
        f"  %bk.in = call i32 {api['PyDict_Contains']}(ptr %b.data, ptr %bk.key)",
        "  %bk.unset = icmp eq i32 %bk.in, 0",
        "  br i1 %bk.unset, label %b.body, label %fallback_clear",
        "b.body:",
        "  %bk.next = add i64 %bk, 1",
        "  br label %b.loop",
        "device:",
        f"  %gd = call ptr {api['PyObject_GetAttr']}(ptr %tc, ptr {obj['s._cuda_getDevice']})",
        "  %gd.null = icmp eq ptr %gd, null",
        "  br i1 %gd.null, label %raise, label %device1",
        "device1:",
        f"  %dev = call ptr {api['PyObject_CallNoArgs']}(ptr %gd)",
        f"  call void {api['Py_DecRef']}(ptr %gd)",
        "  %dev.null = icmp eq ptr %dev, null",
        "  br i1 %dev.null, label %raise, label %handle",
        "handle:",
        f"  %ho = call ptr {api['PyDict_GetItem']}(ptr %handles, ptr %dev)",
        "  %ho.null = icmp eq ptr %ho, null",
        "  br i1 %ho.null, label %drop_dev, label %handle1",
        "handle1:",
        *type_is("%ho", "ho", "int"),
        "  br i1 %ho.is, label %handle2, label %drop_dev",
        "handle2:",
        f"  %fn = call i64 {api['PyLong_AsUnsignedLong']}(ptr %ho)",
        "  %fn.bad = icmp eq i64 %fn, -1",
        "  br i1 %fn.bad, label %drop_dev_clear, label %stream",
        "stream:",
        f"  %gs = call ptr {api['PyObject_GetAttr']}(ptr %tc, ptr {obj['s._cuda_getCurrentRawStream']})",
        "  %gs.null = icmp eq ptr %gs, null",
        "  br i1 %gs.null, label %raise_drop_dev, label %stream1",
        "stream1:",
        f"  %so = call ptr {api['PyObject_CallOneArg']}(ptr %gs, ptr %dev)",
        f"  call void {api['Py_DecRef']}(ptr %gs)",
        f"  call void {api['Py_DecRef']}(ptr %dev)",
        "  %so.null = icmp eq ptr %so, null",
        "  br i1 %so.null, label %raise, label %stream2",
        "stream2:",
        *type_is("%so", "so", "int"),
        "  br i1 %so.is, label %stream3, label %drop_so",
        "stream3:",
        f"  %st = call i64 {api['PyLong_AsUnsignedLong']}(ptr %so)",
        f"  call void {api['Py_DecRef']}(ptr %so)",
        "  %st.m1 = icmp eq i64 %st, -1",
        "  br i1 %st.m1, label %stream4, label %launch",
        "stream4:",
        f"  %st.e = call ptr {api['PyErr_Occurred']}()",
        "  %st.err = icmp ne ptr %st.e, null",
        "  br i1 %st.err, label %fallback_clear, label %launch",
        "launch:",
        "  %block = trunc i64 %h.block to i32",
        "  %shared = trunc i64 %h.shared to i32",
        "  %tab.i = ptrtoint ptr %tab to i64",
        f"  %ts = call ptr {api['PyEval_SaveThread']}()",
        f"  %err = call i32 inttoptr (i64 {address} to ptr)(i64 %fn, i32 %gx, i32 %gy, i32 %gz, i32 %block, "
        "i32 1, i32 1, i32 %shared, i64 %st, i64 %tab.i, i64 0)",
        f"  call void {api['PyEval_RestoreThread']}(ptr %ts)",
        "  %failed = icmp ne i32 %err, 0",
        "  br i1 %failed, label %fallback, label %record",
        "record:",
        f"  %rec = call ptr {api['PyObject_CallOneArg']}(ptr {obj['recent']}, ptr %name)",
        "  %rec.null = icmp eq ptr %rec, null",
        "  br i1 %rec.null, label %raise, label %done",
        "done:",
        f"  call void {api['Py_DecRef']}(ptr %rec)",
        f"  call void {api['Py_IncRef']}(ptr {obj['zero']})",
        f"  ret ptr {obj['zero']}",
        "drop_so:",
        f"  call void {api['Py_DecRef']}(ptr %so)",
        "  br label %fallback",
        "drop_dev_clear:",
        f"  call void {api['PyErr_Clear']}()",
        "  br label %drop_dev",
        "drop_dev:",
        f"  call void {api['Py_DecRef']}(ptr %dev)",
        "  br label %fallback",
        "raise_drop_dev:",
        f"  call void {api['Py_DecRef']}(ptr %dev)",
        "  br label %raise",
        "raise:",
        "  ret ptr null",
        "fallback_clear:",
        f"  call void {api['PyErr_Clear']}()",
        "  br label %fallback",
        "fallback:",
        f"  call void {api['Py_IncRef']}(ptr {obj['one']})",
        f"  ret ptr {obj['one']}",
        "}",
        "declare float @llvm.fabs.f32(float)",
        "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)",
        "declare double @llvm.fabs.f64(double)",
    ]
    return "\n".join(lines) + "\n"
