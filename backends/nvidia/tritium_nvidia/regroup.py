"""The order of the PTX, chosen by what ptxas makes of it (``TRITIUM_NVIDIA_REGROUP``, PERF.md).

The GPU lowering emits a tile's elementwise work op-major (all subtractions, then all multiplies, ...) and NVPTX's
cost model vectorizes no f32 ops, so the PTX keeps that order. Triton's IR is element-major (its O3 runs SLP
without a target machine). ptxas allocates registers differently from the two orders, and which one needs fewer
is only known after ptxas: layer norm at 4 warps needs 62 registers op-major and 56 element-major (8 -> 9
programs of 4 warps per multiprocessor), the persistent softmax 60 op-major and 64 element-major (ptxas 13.0).

``regroup`` makes the element-major order: a second O3 run with SLP under a generic x86-64 (128-bit) cost model,
whose vectors the NVPTX code generator splits back element by element. In ``auto`` mode (the default),
``fewer_registers`` assembles both orders and keeps the element-major one only where it lowers the registers a
program needs (in the 8-register steps the hardware allocates), so no kernel gets more registers than before;
kernels that already fit the most warps a multiprocessor holds are not tried.
Kernels on tensor cores keep the op-major order without a trial: their accumulators decide their registers, one or
two programs fill a multiprocessor whatever the order, and ptxas on them costs the most.
"""
from __future__ import annotations

import functools
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional

from .toolchain import PTXASError

#: whose cost model the regrouping pass's SLP vectorizer uses (128-bit vectors; only the IR is affected)
REGROUP_TRIPLE = "x86_64-unknown-linux-gnu"

#: instructions that mark a kernel on tensor cores (the trial is skipped for it)
_TENSOR_CORE = re.compile(r"\b(wgmma|mma\.sync|mma\.sp|tcgen05)")


@functools.lru_cache(maxsize=None)
def _regroup_machine() -> Any:
    import llvmlite.binding as llvm
    try:
        return llvm.Target.from_triple(REGROUP_TRIPLE).create_target_machine(cpu="x86-64", opt=3)
    except RuntimeError:
        return None


def regroup(mod: Any) -> None:
    """Make ``mod`` element-major in place (see the module's doc); without the x86-64 target, nothing is done."""
    import llvmlite.binding as llvm
    machine = _regroup_machine()
    if machine is None:
        return
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(machine, pto)
    pb.getModulePassManager().run(mod, pb)


#: registers per thread at which a multiprocessor's 65536 hold its 64 resident warps
FULL_OCCUPANCY_REGISTERS = 65536 // (64 * 32)


def allocated(registers: int) -> int:
    """Registers a thread is given: the hardware allocates them per warp in steps of 256 (8 per thread)."""
    return -(-max(registers, 1) // 8) * 8


def fewer_registers(text: str, to_ptx: Callable[[str], str],
                    assemble: Callable[[str], Any]) -> tuple[str, Optional[str]]:
    """The optimized LLVM IR ``text`` or its element-major form, whichever ptxas allocates fewer registers for (ties
    and spills keep ``text``), and which was kept (``"element-major"``, ``"op-major"``, or None when no trial ran).
    ``to_ptx`` and ``assemble`` are the backend's next two stages (memoized there, so the kept variant is not
    compiled again). A kernel that needs at most 32 registers op-major is not tried: 64 warps per multiprocessor
    fit then, the most there can be, so fewer registers could not run more programs."""
    import llvmlite.binding as llvm
    if _TENSOR_CORE.search(text) or _regroup_machine() is None:
        return text, None
    ptx = to_ptx(text)
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(assemble, ptx)      # ptxas runs while LLVM makes the other order (one thread: LLVM's
        mod = llvm.parse_assembly(text)         # global context is not thread-safe)
        regroup(mod)
        other = str(mod)
        other_ptx = to_ptx(other) if other != text else None
        base = first.result()
    if other_ptx is None or allocated(base.registers) <= FULL_OCCUPANCY_REGISTERS:
        return text, None
    try:
        alt = assemble(other_ptx)
    except PTXASError:      # the order the user did not ask for must not fail a kernel that assembles
        return text, "op-major"
    if alt.spill_bytes <= base.spill_bytes and allocated(alt.registers) < allocated(base.registers):
        return other, "element-major"
    return text, "op-major"
