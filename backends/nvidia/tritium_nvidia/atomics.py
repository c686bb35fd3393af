"""Global atomics as PTX ``atom`` instructions that carry their memory order and scope, written as Triton writes
them (``atom.global.gpu.acq_rel.add.u32``).

Why not LLVM's ``atomicrmw``: the NVPTX backend of LLVM 22 (llvmlite 0.50) selects every ``atomicrmw`` as a relaxed
``atom`` and drops its ordering, ``acq_rel`` and ``seq_cst`` included, without a fence. A lock released by
``tl.atomic_xchg`` (acq_rel by default) then did not publish the stores made before it, and an acquiring
``atomic_add`` did not order the loads after it. ``cmpxchg`` keeps its ordering there; it is written here too so
that both read the same way in the PTX. What PTX has no instruction for (8- and 16-bit integer operations, float
max/min, a 16-bit exchange) stays an LLVM ``atomicrmw`` (a compare-and-swap loop), relaxed, between the fences
the PTX memory model prescribes for its order.
"""
from __future__ import annotations

from typing import Callable, Optional

from tritium.gpu.target import guarded_value
from tritium.llvmir.text import Function

#: Triton's ``sem`` (empty: the default) -> PTX's
SEM = {"acquire": "acquire", "release": "release", "acq_rel": "acq_rel", "relaxed": "relaxed", "": "acq_rel"}
#: Triton's ``scope`` (empty: the default) -> PTX's
SCOPE = {"gpu": "gpu", "cta": "cta", "sys": "sys", "": "gpu"}
#: LLVM element type -> (inline-asm constraint, bits)
_REG = {"i32": ("r", 32), "float": ("f", 32), "i64": ("l", 64), "double": ("d", 64), "half": ("h", 16),
        "bfloat": ("h", 16), "i16": ("h", 16)}
_INT_OPS = {"add": "add.u", "and": "and.b", "or": "or.b", "xor": "xor.b", "xchg": "exch.b", "max": "max.s",
            "umax": "max.u", "min": "min.s", "umin": "min.u"}


def rmw_instruction(kind: str, elem: str, capability: int) -> Optional[str]:
    """The PTX operation and type of ``atomic_rmw`` ``kind`` on ``elem`` (``add.u32``), or None where PTX has none
    on this GPU."""
    if elem in ("i32", "i64") and kind in _INT_OPS:
        return _INT_OPS[kind] + elem[1:]
    if elem in ("float", "double"):
        bits = _REG[elem][1]
        return {"fadd": f"add.f{bits}", "xchg": f"exch.b{bits}"}.get(kind)
    if kind == "fadd" and elem == "half" and capability >= 70:
        return "add.noftz.f16"
    if kind == "fadd" and elem == "bfloat" and capability >= 90:
        return "add.noftz.bf16"
    return None


def _asm(fn: Function, text: str, elem: str, ptr_ty: str, ptr: str, operands: list[str]) -> str:
    cons = _REG[elem][0]
    constraint = ",".join([f"={cons}", "l"] + [cons] * len(operands) + ["~{memory}"])
    args = ", ".join([f"{ptr_ty} {ptr}"] + [f"{elem} {v}" for v in operands])
    return fn.inst(f'call {elem} asm sideeffect "{text}", "{constraint}"({args})')


def _fence(fn: Function, scope: str) -> None:
    fn.emit(f'call void asm sideeffect "fence.acq_rel.{scope};", "~{{memory}}"()')


def atomic_rmw(fn: Function, ptr_ty: str, capability: int, kind: str, ptr: str, elem: str, value: str,
               pred: Optional[str], sem: str, scope: str, syncscope: Callable[[str], str]) -> str:
    """The old value (``kind`` is also the LLVM ``atomicrmw`` operation's name, used where PTX has none, with the
    target's ``syncscope`` of the PTX scope)."""
    order, where = SEM[sem], SCOPE[scope]
    inst = rmw_instruction(kind, elem, capability)
    if inst is not None:
        text = f"atom.global.{where}.{order}.{inst} $0, [$1], $2;"
        return guarded_value(fn, pred, elem, lambda: _asm(fn, text, elem, ptr_ty, ptr, [value]))
    sync = syncscope(where)
    align = {"i8": 1, "i16": 2, "half": 2, "bfloat": 2, "i32": 4, "float": 4}.get(elem, 8)

    def fenced() -> str:
        if order in ("release", "acq_rel"):
            _fence(fn, where)
        old = fn.inst(f"atomicrmw {kind} {ptr_ty} {ptr}, {elem} {value} {sync}monotonic, align {align}")
        if order in ("acquire", "acq_rel"):
            _fence(fn, where)
        return old

    return guarded_value(fn, pred, elem, fenced)


def cas_type(elem: str, capability: int) -> Optional[str]:
    """The ``atom.cas`` type of ``elem``, or None where PTX has none on this GPU."""
    if elem in ("i32", "float", "i64", "double"):
        return f"b{_REG[elem][1]}"
    if elem in ("i16", "half", "bfloat") and capability >= 70:
        return "b16"
    return None


def atomic_cas(fn: Function, ptr_ty: str, capability: int, ptr: str, elem: str, cmp: str, value: str,
               pred: Optional[str], sem: str, scope: str) -> Optional[str]:
    """The old value, or None where PTX has no ``atom.cas`` for ``elem`` (LLVM's ``cmpxchg`` keeps its order)."""
    ty = cas_type(elem, capability)
    if ty is None:
        return None
    text = f"atom.global.{SEM[sem]}.{SCOPE[scope]}.cas.{ty} $0, [$1], $2, $3;"
    return guarded_value(fn, pred, elem, lambda: _asm(fn, text, elem, ptr_ty, ptr, [cmp, value]))
