"""A JIT-compiled C function of cuLaunchKernel's signature for the NVIDIA launch tests on hosts without a GPU:
it records its eleven arguments, optionally counts its calls, copies the parameters kernelParams points at and
returns a result the test sets."""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence

from tritium_nvidia import cuda

_engines: list = []   # the stand-ins' code lives as long as its engine


def build(received: Any, *, result: Optional[ctypes.c_int32] = None, calls: Optional[ctypes.c_int64] = None,
          slots: Any = None, slot_types: Sequence[str] = (), kept: Optional[ctypes.c_int64] = None) -> int:
    """The stand-in's address. ``received``: 11 u64s, its arguments. ``slots``/``slot_types``: the parameter
    ``j`` read as ``slot_types[j]`` (an LLVM integer type), zero-extended into ``slots[j]``; with ``kept``, only
    the first ``kept.value`` of them (a kernel with fewer parameters has no more pointers to follow)."""
    import llvmlite.binding as llvm

    def at(buffer: Any) -> str:
        return f"inttoptr (i64 {ctypes.addressof(buffer)} to ptr)"

    params = ", ".join(f"{'i64' if k == 'u64' else 'i32'} %a{i}" for i, k in enumerate(cuda.LAUNCH_KINDS))
    body = ["entry:"]
    for i, k in enumerate(cuda.LAUNCH_KINDS):
        value = f"%a{i}"
        if k == "u32":
            body.append(f"  %z{i} = zext i32 %a{i} to i64")
            value = f"%z{i}"
        body += [f"  %q{i} = getelementptr i64, ptr {at(received)}, i64 {i}", f"  store i64 {value}, ptr %q{i}"]
    body.append("  %tab = inttoptr i64 %a9 to ptr")
    if kept is not None:
        body.append(f"  %kept = load i64, ptr {at(kept)}")
    for j, ty in enumerate(slot_types):
        if kept is not None:
            body += [f"  %in{j} = icmp ult i64 {j}, %kept", f"  br i1 %in{j}, label %s{j}, label %done", f"s{j}:"]
        body += [f"  %sp{j} = getelementptr ptr, ptr %tab, i64 {j}", f"  %p{j} = load ptr, ptr %sp{j}",
                 f"  %v{j} = load {ty}, ptr %p{j}, align 1",
                 f"  %w{j} = zext {ty} %v{j} to i64" if ty != "i64" else f"  %w{j} = add i64 %v{j}, 0",
                 f"  %t{j} = getelementptr i64, ptr {at(slots)}, i64 {j}", f"  store i64 %w{j}, ptr %t{j}"]
    body += ["  br label %done", "done:"]
    if calls is not None:
        body += [f"  %n = load i64, ptr {at(calls)}", "  %n1 = add i64 %n, 1", f"  store i64 %n1, ptr {at(calls)}"]
    body.append(f"  %r = load i32, ptr {at(result)}" if result is not None else "  %r = add i32 0, 0")
    text = f"define i32 @stand_in({params}) {{\n" + "\n".join(body) + "\n  ret i32 %r\n}\n"
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(text),
                                        llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    _engines.append(engine)
    return engine.get_function_address("stand_in")
