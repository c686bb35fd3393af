"""A whole kernel module: the program function, the grid loop, and the multi-threaded launcher."""
from __future__ import annotations

from typing import Any

from tritium import line_info
from tritium._mlir import walk_children

from . import softfloat
from .context import NO_LIBCALLS
from .frame import grid_arena
from .irtext import Function, Module, next_metadata_id
from .lower import KernelLowering
from .oob import grid_stop
from .opinfo import LoweringError
from .scalar import MathLibrary

# args, grid, programs per grab, programs in all, cancel flag, next program to grab (shared by the threads)
TASK = "{ ptr, i32, i32, i32, i64, i64, ptr, ptr }"


def _kernel_func(module: Any) -> Any:
    funcs = [op for op in walk_children(module.operation) if op.name == "func.func"]
    public = [f for f in funcs if "sym_visibility" not in f.attributes
              or str(f.attributes["sym_visibility"]).strip('"') == "public"]
    if len(public) != 1:
        raise LoweringError(f"expected one kernel function in the module, found {len(public)}")
    return public[0]


def lower_to_llvm(mlir_module: Any, symbol: str, options: Any, triple: str, datalayout: str,
                  vector_bits: int) -> tuple[str, dict]:
    """LLVM IR text defining ``<symbol>_launch(args, n0, n1, n2, nthreads, cancel)`` and its metadata.

    ``cancel`` points to an i32 that the launcher sets to stop the launch (checked between programs and at
    the kernel's loop back-edges, see frame.py)."""
    module = Module(triple, datalayout)
    math = MathLibrary()
    kernel = _kernel_func(mlir_module)
    start = line_info.function_start(kernel) if line_info.enabled() else None
    if start is not None:
        module.line_table = line_info.LineTable(
            next_metadata_id, line_info.FULL if line_info.variables() else line_info.LINE_TABLES)
    lowering = KernelLowering(module, math, kernel, symbol, options, vector_bits)
    module.functions.append(lowering.lower())
    checker = lowering.bounds
    drivers = _grid_and_launch(module, symbol, lowering.streaming.used and triple,
                               checker.state if checker is not None else "", lowering.frame.heap_bytes)
    module.functions += drivers
    if start is not None:
        # the program is inlined into the grid loop (and that maybe into the launcher): functions without a
        # subprogram get no line table, so these get one too, all at the kernel's first line; the inlined
        # program's instructions keep their own lines
        table = module.line_table
        for f in drivers:
            f.subprogram = table.subprogram(f.name, f.name, start)
            f.locate_rest(table.at(start, f.subprogram))
    lib = math.ir()
    if lib:
        module.extra.append(lib)
    if start is not None:
        module.metadata += module.line_table.metadata()
    text = module.text()
    if softfloat.needed(text):
        module.extra.append(softfloat.library_ir())
    meta = {"cpu_work": max(1, lowering.work), "has_print": lowering.has_print, "has_assert": lowering.has_assert,
            "arg_types": lowering.arg_types, "symbol": symbol, "cpu_heap_bytes": lowering.frame.heap_bytes,
            "cpu_may_loop": _may_loop(kernel)}
    if checker is not None:
        meta.update(checker.metadata())
    return module.text(), meta


def _may_loop(kernel: Any) -> bool:
    """Whether a program may run for an unknown time: a while loop, or a for loop with bounds not constant."""
    def visit(op: Any) -> bool:
        if op.name == "scf.while":
            return True
        if op.name == "scf.for" and any(getattr(v.owner, "name", "") != "arith.constant"
                                        for v in list(op.operands)[:3]):
            return True
        return any(visit(o) for o in walk_children(op))
    return visit(kernel)


def _grid_and_launch(module: Module, s: str, fence_for: str = "", oob_state: str = "",
                     heap_bytes: int = 0) -> list[Function]:
    grid = Function(f"{s}_grid", "void", [("ptr", "%args"), ("i32", "%n0"), ("i32", "%n1"), ("i32", "%n2"),
                                          ("i64", "%start"), ("i64", "%end"), ("ptr", "%cancel")],
                    attrs=f"nounwind {NO_LIBCALLS}")
    g = grid
    nomem = grid_arena(module, g, s, heap_bytes)
    g.emit("%empty0 = icmp uge i64 %start, %end")
    g.emit(f"%empty = or i1 %empty0, {nomem}")
    g.emit("br i1 %empty, label %done, label %loop")
    g.start_block("loop")
    g.emit("%lin = phi i64 [%start, %entry], [%next, %loop]")
    g.emit("%n0w = zext i32 %n0 to i64")
    g.emit("%n1w = zext i32 %n1 to i64")
    g.emit("%p0w = urem i64 %lin, %n0w")
    g.emit("%rest = udiv i64 %lin, %n0w")
    g.emit("%p1w = urem i64 %rest, %n1w")
    g.emit("%p2w = udiv i64 %rest, %n1w")
    g.emit("%p0 = trunc i64 %p0w to i32")
    g.emit("%p1 = trunc i64 %p1w to i32")
    g.emit("%p2 = trunc i64 %p2w to i32")
    arena = "%arena" if heap_bytes else "null"
    g.emit(f"call void @{s}_program(ptr %args, i32 %p0, i32 %p1, i32 %p2, i32 %n0, i32 %n1, i32 %n2, "
           f"ptr %cancel, ptr {arena})")
    g.emit("%next = add nuw i64 %lin, 1")
    more = g.inst("icmp ult i64 %next, %end")
    # the launcher asks to stop (Ctrl-C): no further program starts
    go = g.inst(f"icmp eq i32 {g.inst('load atomic i32, ptr %cancel monotonic, align 4')}, 0")
    more = g.inst(f"and i1 {more}, {go}")
    if oob_state:
        stop = grid_stop(g, oob_state)
        more = g.inst(f"and i1 {more}, {g.inst(f'xor i1 {stop}, true')}")
    g.emit(f"br i1 {more}, label %loop, label %done")
    g.start_block("done")
    if fence_for:
        # non-temporal stores (streaming.py) are weakly ordered: make them visible before the thread ends.
        # x86 compiles a seq_cst fence to a locked instruction, which need not order them: sfence does
        if fence_for.startswith(("x86_64", "i386", "i686")):
            module.declare("llvm.x86.sse.sfence", "declare void @llvm.x86.sse.sfence()")
            g.emit("call void @llvm.x86.sse.sfence()")
        else:
            g.emit("fence seq_cst")
    if heap_bytes:
        g.emit("call void @free(ptr %arena)")
    g.emit("ret void")

    # Threads grab chunks of programs from a shared counter until none is left: a split fixed in advance
    # waited for the slowest thread, and on a shared machine one core is often slower than the other
    thread = Function(f"{s}_thread", "ptr", [("ptr", "%task")], attrs="nounwind", linkage="internal")
    t = thread
    fields = []
    for k, ty in enumerate(["ptr", "i32", "i32", "i32", "i64", "i64", "ptr", "ptr"]):
        p = t.inst(f"getelementptr inbounds {TASK}, ptr %task, i32 0, i32 {k}")
        fields.append(t.inst(f"load {ty}, ptr {p}"))
    args, n0, n1, n2, chunk, total, cancel, counter = fields
    t.emit("br label %grab")
    t.start_block("grab")
    st = t.inst(f"atomicrmw add ptr {counter}, i64 {chunk} monotonic, align 8")
    left = t.inst(f"icmp ult i64 {st}, {total}")
    go = t.inst(f"icmp eq i32 {t.inst(f'load atomic i32, ptr {cancel} monotonic, align 4')}, 0")
    t.emit(f"br i1 {t.inst(f'and i1 {left}, {go}')}, label %work, label %out")
    t.start_block("work")
    en = t.inst(f"call i64 @llvm.umin.i64(i64 {t.inst(f'add i64 {st}, {chunk}')}, i64 {total})")
    t.emit(f"call void @{s}_grid(ptr {args}, i32 {n0}, i32 {n1}, i32 {n2}, i64 {st}, i64 {en}, ptr {cancel})")
    t.emit("br label %grab")
    t.start_block("out")
    t.emit("ret ptr null")

    module.declare("pthread_create", "declare i32 @pthread_create(ptr, ptr, ptr, ptr)")
    module.declare("pthread_join", "declare i32 @pthread_join(i64, ptr)")
    launch = Function(f"{s}_launch", "void", [("ptr", "%args"), ("i32", "%n0"), ("i32", "%n1"), ("i32", "%n2"),
                                              ("i32", "%nthreads"), ("ptr", "%cancel")], attrs="nounwind")
    L = launch
    L.emit("%a = zext i32 %n0 to i64")
    L.emit("%b = zext i32 %n1 to i64")
    L.emit("%c = zext i32 %n2 to i64")
    L.emit("%ab = mul i64 %a, %b")
    L.emit("%total = mul i64 %ab, %c")
    L.emit("%nt = sext i32 %nthreads to i64")
    L.emit("%few = icmp ult i64 %total, 2")
    L.emit("%one = icmp sle i32 %nthreads, 1")
    L.emit("%serial = or i1 %few, %one")
    L.emit("br i1 %serial, label %serial_run, label %par")
    L.start_block("serial_run")
    L.emit(f"call void @{s}_grid(ptr %args, i32 %n0, i32 %n1, i32 %n2, i64 0, i64 %total, ptr %cancel)")
    L.emit("ret void")
    L.start_block("par")
    L.emit("%ntc = call i64 @llvm.umin.i64(i64 %nt, i64 %total)")
    module.declare("llvm.umin.i64", "declare i64 @llvm.umin.i64(i64, i64)")
    L.emit(f"%tasks = alloca {TASK}, i64 %ntc, align 8")
    L.emit("%tids = alloca i64, i64 %ntc, align 8")
    L.emit("%counter = alloca i64, align 8")
    L.emit("store i64 0, ptr %counter, align 8")
    if oob_state:
        # bounds-checked: one chunk per thread as before (a program past a failure is not started, and
        # each grid call starts its first program before it looks)
        L.emit("%chunk0 = add i64 %total, %ntc")
        L.emit("%chunk1 = sub i64 %chunk0, 1")
        L.emit("%chunk = udiv i64 %chunk1, %ntc")
    else:
        # 2 grabs per thread: a busy core's share still moves to the idle one, while each chunk stays a long
        # contiguous run of programs (8 grabs per thread cut a persistent softmax's row blocks into pieces the
        # hardware prefetcher streamed worse: 0.88x -> 0.79x torch on an idle host)
        L.emit("%grabs = mul i64 %ntc, 2")
        L.emit("%chunk0 = udiv i64 %total, %grabs")
        L.emit("%chunk = call i64 @llvm.umax.i64(i64 %chunk0, i64 1)")
        module.declare("llvm.umax.i64", "declare i64 @llvm.umax.i64(i64, i64)")
    L.emit("br label %spawn")
    L.start_block("spawn")
    L.emit("%t = phi i64 [1, %par], [%tn, %spawned]")
    L.emit(f"%task = getelementptr inbounds {TASK}, ptr %tasks, i64 %t")
    task_fields = [("ptr", "%args"), ("i32", "%n0"), ("i32", "%n1"), ("i32", "%n2"), ("i64", "%chunk"),
                   ("i64", "%total"), ("ptr", "%cancel"), ("ptr", "%counter")]
    for k, (ty, v) in enumerate(task_fields):
        L.emit(f"%f{k} = getelementptr inbounds {TASK}, ptr %task, i32 0, i32 {k}")
        L.emit(f"store {ty} {v}, ptr %f{k}")
    L.emit("%tid = getelementptr inbounds i64, ptr %tids, i64 %t")
    L.emit(f"%rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @{s}_thread, ptr %task)")
    L.emit("%failed = icmp ne i32 %rc, 0")
    L.emit("br i1 %failed, label %inline, label %spawned")
    L.start_block("inline")
    # no thread could be started: run that chunk here, and mark it as not needing a join
    L.emit(f"%ignored = call ptr @{s}_thread(ptr %task)")
    L.emit("store i64 0, ptr %tid")
    L.emit("br label %spawned")
    L.start_block("spawned")
    L.emit("%tn = add i64 %t, 1")
    L.emit("%more = icmp ult i64 %tn, %ntc")
    L.emit("br i1 %more, label %spawn, label %own")
    L.start_block("own")
    for k, (ty, v) in enumerate(task_fields):
        L.emit(f"%o{k} = getelementptr inbounds {TASK}, ptr %tasks, i64 0, i32 {k}")
        L.emit(f"store {ty} {v}, ptr %o{k}")
    L.emit(f"%own_ran = call ptr @{s}_thread(ptr %tasks)")
    L.emit("br label %join")
    L.start_block("join")
    L.emit("%j = phi i64 [1, %own], [%jn, %joined]")
    L.emit("%jtid = getelementptr inbounds i64, ptr %tids, i64 %j")
    L.emit("%tidv = load i64, ptr %jtid")
    L.emit("%ran_inline = icmp eq i64 %tidv, 0")
    L.emit("br i1 %ran_inline, label %joined, label %dojoin")
    L.start_block("dojoin")
    L.emit("%jr = call i32 @pthread_join(i64 %tidv, ptr null)")
    L.emit("br label %joined")
    L.start_block("joined")
    L.emit("%jn = add i64 %j, 1")
    L.emit("%jmore = icmp ult i64 %jn, %ntc")
    L.emit("br i1 %jmore, label %join, label %end")
    L.start_block("end")
    L.emit("ret void")
    return [grid, thread, launch]
