"""LLVM IR of the native cached launch (runtime/native_front.py): one function for every kernel, driven by the
kernel's *plan* (a tuple its ``self`` list holds), with CPython's METH_FASTCALL | METH_KEYWORDS signature.

``self`` is ``[dispatch, plan]``. The function checks what the generated Python frame would check (the plan's
snapshot still current, no debug or interpreter setting, the same arguments' key as the plan's entry), passes
the run-time values to the driver's launch step and returns the compiled kernel; wherever anything differs, or
the step did not launch, it hands the very same call to ``dispatch`` (the Python frame), which does everything
again and gives every error message.

Plan (a tuple, built by native_front._plan; the header's layout and kinds: front_args_ir.py):
  0 header (bytes): u32 params, u32 run-time values, u32 how many may be positional, then per parameter u8
    kind, u8 mode, u16 name index, u32 object index
  1 objects (tuple) the header's indices point into          8 the environment: (os, os.environ, its
  2 the dispatch frame's globals     3 its Hot snapshot        backing dict, names that must be unset...)
  4 the JITFunction                  5 the snapshot's driver   9 the step's namespace  10 the step's name
  6 its device cache                 7 knobs.generation then  11 the step's constants 12 the Entry
  13 the compiled kernel (returned)  14 torch.Tensor (or None) 15 the grid's limits (bytes: 3 x u64)
"""
from __future__ import annotations

from typing import Callable

from .front_args_ir import MAX_VALUES, argument_checks


def ir(symbol: str, api: Callable[[str], str], obj: Callable[[str], str], type_offset: int) -> str:
    """``api(name)``: a CPython API function as an IR constant; ``obj(name)``: an object's address (``True``,
    ``False``, ``None``, ``int``, ``float``, ``bool``, ``list``, ``zero`` and interned strings ``s.<text>``)."""
    def type_of(value: str, tag: str) -> list[str]:
        return [f"  %{tag}.tp = getelementptr i8, ptr {value}, i64 {type_offset}",
                f"  %{tag}.ty = load ptr, ptr %{tag}.tp"]

    def item(n: int) -> str:
        return f"  %p{n} = call ptr {api('PyTuple_GetItem')}(ptr %plan, i64 {n})"

    def getattr_(dst: str, owner: str, name: str) -> str:
        return f"  %{dst} = call ptr {api('PyObject_GetAttr')}(ptr {owner}, ptr {obj('s.' + name)})"

    dec = api("Py_DecRef")
    lines = [
        f"define ptr @{symbol}(ptr %self, ptr %args, i64 %nargsf, ptr %kwnames) {{",
        "entry:",
        f"  %vals = alloca [{MAX_VALUES + 2} x ptr], align 16",
        f"  %owned = alloca [{MAX_VALUES} x ptr], align 16",
        "  %n.owned = alloca i64",
        "  store i64 0, ptr %n.owned",
        "  %nargs = and i64 %nargsf, 9223372036854775807",
        f"  %plan = call ptr {api('PyList_GetItem')}(ptr %self, i64 1)",
        "  %plan.null = icmp eq ptr %plan, null",
        "  br i1 %plan.null, label %forward_noplan_clear, label %e1",
        "e1:",
        f"  %plan.none = icmp eq ptr %plan, {obj('None')}",
        "  br i1 %plan.none, label %forward_noplan, label %snapshot",
        # -- the snapshot the plan was made under still holds ------------------------------------------
        # the plan is held for the whole launch: the step releases the GIL, and another thread may plan anew
        "snapshot:",
        f"  call void {api('Py_IncRef')}(ptr %plan)",
        *[item(n) for n in range(16)],
        f"  %hot.now = call ptr {api('PyDict_GetItem')}(ptr %p2, ptr {obj('s._hot')})",
        "  %hot.same = icmp eq ptr %hot.now, %p3",
        f"  %gen.now = call ptr {api('PyDict_GetItem')}(ptr {obj('knobs')}, ptr {obj('s.generation')})",
        "  %gen.same = icmp eq ptr %gen.now, %p7",
        "  %snap.ok = and i1 %hot.same, %gen.same",
        "  br i1 %snap.ok, label %hooks, label %forward",
        "hooks:",
        getattr_("hk.o", "%p4", "pre_run_hooks"),
        "  %hk.null = icmp eq ptr %hk.o, null",
        "  br i1 %hk.null, label %forward_clear, label %hooks1",
        "hooks1:",
        *type_of("%hk.o", "hk"),
        f"  %hk.list = icmp eq ptr %hk.ty, {obj('list')}",
        f"  %hk.n = call i64 {api('PyObject_Size')}(ptr %hk.o)",
        f"  call void {dec}(ptr %hk.o)",
        "  %hk.empty = icmp eq i64 %hk.n, 0",
        "  %hk.ok = and i1 %hk.list, %hk.empty",
        "  br i1 %hk.ok, label %flags, label %forward_clear",
        "flags:",
    ]
    # interpret / debug on the function: None or False (anything else: the Python frame decides)
    for name, nxt in (("interpret", "flag_debug"), ("debug", "globals")):
        lines += [getattr_(f"f.{name}", "%p4", name),
                  f"  %f.{name}.none = icmp eq ptr %f.{name}, {obj('None')}",
                  f"  %f.{name}.false = icmp eq ptr %f.{name}, {obj('False')}",
                  f"  %f.{name}.ok = or i1 %f.{name}.none, %f.{name}.false",
                  f"  %f.{name}.null = icmp eq ptr %f.{name}, null",
                  f"  br i1 %f.{name}.null, label %forward_clear, label %f.{name}.got",
                  f"f.{name}.got:",
                  f"  call void {dec}(ptr %f.{name})",
                  f"  br i1 %f.{name}.ok, label %{nxt}, label %forward"]
        if nxt == "flag_debug":
            lines.append("flag_debug:")
    lines += [
        "globals:",
        getattr_("ug", "%p4", "used_globals"),
        "  %ug.null = icmp eq ptr %ug, null",
        "  br i1 %ug.null, label %forward_clear, label %globals1",
        "globals1:",
        f"  %ug.true = call i32 {api('PyObject_IsTrue')}(ptr %ug)",
        f"  call void {dec}(ptr %ug)",
        "  %ug.none = icmp eq i32 %ug.true, 0",
        "  br i1 %ug.none, label %caches, label %forward_clear",
        "caches:",
        getattr_("dc", "%p4", "device_caches"),
        "  %dc.null = icmp eq ptr %dc, null",
        "  br i1 %dc.null, label %forward_clear, label %caches1",
        "caches1:",
        f"  %dc.state = call ptr {api('PyDict_GetItem')}(ptr %dc, ptr %p5)",
        f"  call void {dec}(ptr %dc)",
        "  %dc.same = icmp eq ptr %dc.state, %p6",
        "  br i1 %dc.same, label %entry_inline, label %forward",
        # a launcher replaced after the fact drops the entry's constants (Entry.__setattr__)
        "entry_inline:",
        getattr_("ei", "%p12", "inline"),
        "  %ei.null = icmp eq ptr %ei, null",
        "  br i1 %ei.null, label %forward_clear, label %entry_inline1",
        "entry_inline1:",
        f"  call void {dec}(ptr %ei)",
        "  %ei.same = icmp eq ptr %ei, %p11",
        "  br i1 %ei.same, label %env, label %forward",
        # the environment: os.environ is still the one read, and none of the names is set
        "env:",
        f"  %env.os = call ptr {api('PyTuple_GetItem')}(ptr %p8, i64 0)",
        f"  %env.then = call ptr {api('PyTuple_GetItem')}(ptr %p8, i64 1)",
        f"  %env.data = call ptr {api('PyTuple_GetItem')}(ptr %p8, i64 2)",
        f"  %env.n = call i64 {api('PyTuple_Size')}(ptr %p8)",
        getattr_("env.now", "%env.os", "environ"),
        "  %env.now.null = icmp eq ptr %env.now, null",
        "  br i1 %env.now.null, label %forward_clear, label %env1",
        "env1:",
        f"  call void {dec}(ptr %env.now)",
        "  %env.same = icmp eq ptr %env.now, %env.then",
        "  br i1 %env.same, label %env.loop, label %forward",
        "env.loop:",
        "  %ek = phi i64 [3, %env1], [%ek.next, %env.body]",
        "  %ek.more = icmp slt i64 %ek, %env.n",
        "  br i1 %ek.more, label %env.check, label %params",
        "env.check:",
        f"  %ek.key = call ptr {api('PyTuple_GetItem')}(ptr %p8, i64 %ek)",
        f"  %ek.in = call i32 {api('PyDict_Contains')}(ptr %env.data, ptr %ek.key)",
        "  %ek.unset = icmp eq i32 %ek.in, 0",
        "  br i1 %ek.unset, label %env.body, label %forward_clear",
        "env.body:",
        "  %ek.next = add i64 %ek, 1",
        "  br label %env.loop",
        *argument_checks(api, obj, type_of, getattr_),
        # -- the driver's step: (constants, grid, *values) -> 0 when it launched -------------------------
        "step:",
        "  %r.same = icmp eq i64 %r, %hdr.nr",
        "  br i1 %r.same, label %step1, label %forward_drop",
        "step1:",
        # the grid: a tuple of one to three ints, each in 1..the driver's limit (zero, a grid function, a list or
        # a grid past the limits: the Python frame, which launches nothing or names the axis)
        "  %grid = load ptr, ptr %args",
        *type_of("%grid", "gr"),
        f"  %gr.tuple = icmp eq ptr %gr.ty, {obj('tuple')}",
        "  br i1 %gr.tuple, label %grid1, label %forward_drop",
        "grid1:",
        f"  %gr.n = call i64 {api('PyTuple_Size')}(ptr %grid)",
        "  %gr.n1 = add i64 %gr.n, -1",
        "  %gr.n.ok = icmp ult i64 %gr.n1, 3",
        f"  %gr.max = call ptr {api('PyBytes_AsString')}(ptr %p15)",
        "  br i1 %gr.n.ok, label %grid.loop, label %forward_drop",
        "grid.loop:",
        "  %gd = phi i64 [0, %grid1], [%gd.next, %grid.ok]",
        "  %gd.more = icmp slt i64 %gd, %gr.n",
        "  br i1 %gd.more, label %grid.item, label %step1b",
        "grid.item:",
        f"  %gd.o = call ptr {api('PyTuple_GetItem')}(ptr %grid, i64 %gd)",
        *type_of("%gd.o", "gdt"),
        f"  %gd.int = icmp eq ptr %gdt.ty, {obj('int')}",
        "  br i1 %gd.int, label %grid.value, label %forward_drop",
        "grid.value:",
        f"  %gd.v = call i64 {api('PyLong_AsLong')}(ptr %gd.o)",
        "  %gd.max.p = getelementptr i64, ptr %gr.max, i64 %gd",
        "  %gd.max = load i64, ptr %gd.max.p, align 1",
        "  %gd.v1 = add i64 %gd.v, -1",   # 1..max (0, negatives and -1 on an error fail it)
        "  %gd.in = icmp ult i64 %gd.v1, %gd.max",
        "  br i1 %gd.in, label %grid.ok, label %forward_drop_clear",
        "grid.ok:",
        "  %gd.next = add i64 %gd, 1",
        "  br label %grid.loop",
        "step1b:",
        f"  %step.fn = call ptr {api('PyDict_GetItem')}(ptr %p9, ptr %p10)",
        "  %step.null = icmp eq ptr %step.fn, null",
        "  br i1 %step.null, label %forward_drop, label %step2",
        "step2:",
        "  store ptr %p11, ptr %vals",
        "  %vals.1 = getelementptr ptr, ptr %vals, i64 1",
        "  store ptr %grid, ptr %vals.1",
        "  %n.vals = add i64 %r, 2",
        f"  %res = call ptr {api('PyObject_Vectorcall')}(ptr %step.fn, ptr %vals, i64 %n.vals, ptr null)",
        "  call void @drop(ptr %owned, ptr %n.owned)",
        "  %res.null = icmp eq ptr %res, null",
        "  br i1 %res.null, label %raise, label %step3",
        "step3:",
        f"  call void {dec}(ptr %res)",
        f"  %launched = icmp eq ptr %res, {obj('zero')}",
        "  br i1 %launched, label %done, label %forward",
        "done:",
        f"  call void {api('Py_IncRef')}(ptr %p13)",
        f"  call void {dec}(ptr %plan)",
        "  ret ptr %p13",
        "raise:",
        f"  call void {dec}(ptr %plan)",
        "  ret ptr null",
        "forward_drop:",
        "  call void @drop(ptr %owned, ptr %n.owned)",
        "  br label %forward",
        "forward_drop_clear:",
        f"  call void {api('PyErr_Clear')}()",
        "  br label %forward_drop",
        "forward_clear:",
        "  call void @drop(ptr %owned, ptr %n.owned)",
        f"  call void {api('PyErr_Clear')}()",
        "  br label %forward",
        # -- anything else: the Python frame, with the same arguments ----------------------------------
        "forward:",
        f"  call void {dec}(ptr %plan)",
        "  br label %forward_noplan",
        "forward_noplan_clear:",
        f"  call void {api('PyErr_Clear')}()",
        "  br label %forward_noplan",
        "forward_noplan:",
        f"  %dispatch = call ptr {api('PyList_GetItem')}(ptr %self, i64 0)",
        f"  %out = call ptr {api('PyObject_Vectorcall')}(ptr %dispatch, ptr %args, i64 %nargsf, ptr %kwnames)",
        "  ret ptr %out",
        "}",
        "",
        # the addresses data_ptr() returned, released once the step has run (or the launch is handed on)
        "define internal void @drop(ptr %owned, ptr %n.owned) {",
        "entry:",
        "  %n = load i64, ptr %n.owned",
        "  store i64 0, ptr %n.owned",
        "  br label %loop",
        "loop:",
        "  %k = phi i64 [0, %entry], [%k.next, %body]",
        "  %more = icmp ult i64 %k, %n",
        "  br i1 %more, label %body, label %out",
        "body:",
        "  %p = getelementptr ptr, ptr %owned, i64 %k",
        "  %o = load ptr, ptr %p",
        f"  call void {dec}(ptr %o)",
        "  %k.next = add i64 %k, 1",
        "  br label %loop",
        "out:",
        "  ret void",
        "}",
    ]
    return "\n".join(lines) + "\n"
