"""Lowering of a kernel's ``ttgir`` (tile IR with layouts) to LLVM IR text for a :class:`TargetHooks`."""
from __future__ import annotations

import re
from typing import Any

from ... import line_info
from ..._mlir import ir, walk_children
from ...llvmir.text import Module
from ..assign import element_type
from .kernel import KernelLowering
from .regs import estimate_registers
from .values import LoweringError

__all__ = ["lower_module", "LoweringError", "kernel_function"]


def kernel_function(module: Any) -> Any:
    funcs = [op for op in walk_children(module.operation) if op.name == "func.func"]
    public = [f for f in funcs if "sym_visibility" not in f.attributes
              or str(f.attributes["sym_visibility"]).strip('"') == "public"]
    if len(public) != 1:
        raise LoweringError(f"expected one kernel function in the module, found {len(public)}")
    return public[0]


def lower_module(module: Any, target: Any, options: Any, name: str) -> tuple[str, dict]:
    """LLVM IR text of the kernel, and metadata for the launcher: ``shared`` (bytes of dynamic shared
    memory), ``num_warps``, ``arg_types``, ``has_print``, ``has_assert``, ``assert_messages``, ``regs_estimate``
    (registers per thread, estimated from the layouts: see regs.py; for targets that cannot report the real count)."""
    attrs = module.operation.attributes
    num_warps = ir.IntegerAttr(attrs["ttg.num_warps"]).value if "ttg.num_warps" in attrs else \
        getattr(options, "num_warps", 4)
    func = kernel_function(module)
    # a first lowering may spend shared memory on speed (``roomy``: pipeline_prefetch.py, descriptor stores
    # whose reads are waited for late); where that does not fit, the kernel is lowered again without
    for roomy in (True, False):
        out = Module(target.triple, target.datalayout)
        start = line_info.function_start(func) if line_info.enabled() else None
        if start is not None:
            kind = line_info.FULL if line_info.variables() else getattr(target, "line_table_kind",
                                                                        line_info.LINE_TABLES)
            out.line_table = line_info.LineTable(out.next_metadata_id, kind)
        lowering = KernelLowering(out, target, func, num_warps, options, name)
        lowering.roomy, lowering.roomy_used = roomy, False
        entry = func.regions[0].blocks[0]
        params = [lowering.llty(element_type(a.type)) for a in entry.arguments]
        fn = lowering.lower(params)
        # buffers whose lifetimes do not overlap share bytes (less shared memory per program: more programs per
        # multiprocessor, and configurations that fit at all)
        shared = (lowering.smem.assign() + 127) // 128 * 128
        if not lowering.roomy_used or shared <= target.max_shared_bytes:
            break
    out.functions.append(fn)
    offsets = lowering.smem.offsets()
    if offsets:
        pattern = re.compile(r"__SMEM_OFFSET_\d+__")
        fn.prologue = [pattern.sub(lambda m: str(offsets[m.group(0)]), line) for line in fn.prologue]
    target.finish_kernel(out, fn, num_warps, shared)
    if start is not None:
        out.metadata += out.line_table.metadata()
    meta = {"shared": shared, "num_warps": num_warps, "arg_types": params, "has_print": lowering.has_print,
            "has_assert": lowering.has_assert,
            "assert_messages": list(lowering.assert_messages),
            "regs_estimate": estimate_registers(lowering, func)}
    meta.update(target.kernel_metadata())
    return out.text(), meta
