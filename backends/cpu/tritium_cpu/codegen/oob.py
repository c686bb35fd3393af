"""Bounds-checked code (``TRITIUM_CPU_BOUNDS_CHECK``, on under ``TRITON_DEBUG``): every load, store and atomic of
user memory is checked, on the lanes that execute it, against the buffer extent of the argument its pointer was
derived from. None of this is emitted unless the option is on.

The launcher appends two address slots per kernel argument to the argument block (``[lo, hi)``: the bytes
the argument's buffer owns; 0 and 2**64-1 where it cannot tell). A lane outside its extent calls ``<kernel>_oob``
(cold, out of line), which keeps the first violation of the lowest-numbered program in ``<kernel>_oob_state``,
and then touches a private dummy instead of the bad address, so nothing is read or written out of bounds. The
grid loop stops starting programs past a program that failed; the launcher turns the state into the error.
A pointer selected between arguments (``tl.where``, ``if``) must lie in one of theirs. A pointer the compiler
cannot trace to arguments (loaded from memory, made from an integer: grouped GEMM's pointer arrays) may point
anywhere the host gave it, so only the null page is refused for it: a check must not reject correct kernels.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from tritium._mlir import ir

from .irtext import Function, Module

#: { lock, failed, site, pid0, pid1, pid2, linear program id, first address, lowest, highest }
STATE = "{ i32, i32, i32, i32, i32, i32, i64, i64, i64, i64 }"
#: addresses below this are a null pointer plus an offset, never memory a kernel was given
NULL_PAGE = 4096
#: ops whose result points into the memory of their first operand
_DERIVED = ("tt.addptr", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans", "tt.advance",
            "tt.make_block_ptr", "tt.make_tensor_descriptor", "tt.bitcast")


def pointer_roots(value: Any) -> Optional[list[int]]:
    """The kernel arguments a pointer (block pointer, descriptor) may derive from, following offsets, shape ops,
    selects, ``if`` results and loop-carried updates; None when some path leads elsewhere (memory, integers)."""
    found: set[int] = set()
    seen: set[Any] = set()
    work = [value]
    while work:
        v = work.pop().maybe_downcast()
        if v in seen:
            continue
        seen.add(v)
        if len(seen) > 256:
            return None
        if isinstance(v, ir.BlockArgument):
            parent = v.owner.owner
            name = parent.operation.name if parent is not None else ""
            if name == "func.func":
                found.add(v.arg_number)
            elif name == "scf.for" and v.arg_number >= 1:
                k = v.arg_number - 1
                work.append(parent.operands[3 + k])                                       # initial value
                work.append(list(parent.regions[0].blocks[0].operations)[-1].operands[k])  # next iteration's
            else:
                return None
            continue
        owner = v.owner
        name = owner.operation.name
        if name in _DERIVED:
            work.append(owner.operands[0])
        elif name == "arith.select":
            work += [owner.operands[1], owner.operands[2]]
        elif name == "scf.if":
            k = v.result_number
            for region in owner.regions:
                blocks = list(region.blocks)
                if not blocks:
                    return None
                work.append(list(blocks[0].operations)[-1].operands[k])
        else:
            return None
    return sorted(found)


def source_location(op: Any) -> tuple[str, int, int]:
    """(file, line, column) of an op, the innermost location MLIR gives (inlined calls name the callee)."""
    m = re.search(r'loc\("([^"]*)":(\d+):(\d+)\)', str(op.location))
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else ("<unknown>", 0, 0)


class BoundsChecker:
    """Emits the checks of one kernel and records its access sites (for the launcher's message)."""

    def __init__(self, module: Module, fn: Function, symbol: str, n_args: int) -> None:
        self.module, self.fn, self.symbol, self.n_args = module, fn, symbol, n_args
        self.sites: list[list[Any]] = []
        self.extents: dict[int, tuple[str, str]] = {}
        self.state = f"@{symbol}_oob_state"
        self.dummy = f"@{symbol}_oob_dummy"
        self.report = f"@{symbol}_oob"
        module.globals.append(f"{self.state} = global {STATE} zeroinitializer, align 8")
        # large enough for any element a lane touches; what a redirected store writes here is never read
        module.globals.append(f"{self.dummy} = internal global [64 x i8] zeroinitializer, align 64")
        module.functions.append(_report_function(self.report[1:], self.state))
        for op in ("umin", "umax"):
            module.declare(f"llvm.{op}.i64", f"declare i64 @llvm.{op}.i64(i64, i64)")

    def site(self, op: Any, kind: str, masked: bool, size: int) -> int:
        """Register an access through ``op``'s first operand (a pointer, block pointer or descriptor)."""
        file, line, col = source_location(op)
        roots = pointer_roots(op.operands[0])
        ptr_type = str(op.operands[0].type)
        scalar = ptr_type.startswith("!tt.ptr<") and not ptr_type.startswith("!tt.ptr<tensor")
        self.sites.append([kind, file, line, col, roots, bool(masked), int(size), scalar])
        return len(self.sites) - 1

    def _extent(self, k: int) -> tuple[str, str]:
        """The extent of argument k, loaded once at the top of the program (hoisted with the allocas)."""
        got = self.extents.get(k)
        if got is None:
            fn = self.fn
            lo, hi = fn.tmp("oob_lo"), fn.tmp("oob_hi")
            plo, phi_ = fn.tmp("oob_plo"), fn.tmp("oob_phi")
            fn.allocas += [f"{plo} = getelementptr inbounds i64, ptr %args, i64 {self.n_args + 2 * k}",
                           f"{lo} = load i64, ptr {plo}, align 8",
                           f"{phi_} = getelementptr inbounds i64, ptr %args, i64 {self.n_args + 2 * k + 1}",
                           f"{hi} = load i64, ptr {phi_}, align 8"]
            got = self.extents[k] = (lo, hi)
        return got

    def _inside(self, addr: str, k: int, size: int) -> str:
        fn = self.fn
        lo, hi = self._extent(k)
        end = fn.inst(f"add i64 {addr}, {size}")
        a = fn.inst(f"icmp uge i64 {addr}, {lo}")
        b = fn.inst(f"icmp ule i64 {end}, {hi}")
        return fn.inst(f"and i1 {a}, {b}")

    def guard(self, fn: Function, ptr: str, site: int) -> str:
        """Emit the check of one lane's access at ``ptr`` (where it executes) and return the pointer to use."""
        size = self.sites[site][6]
        roots = self.sites[site][4]
        addr = fn.inst(f"ptrtoint ptr {ptr} to i64")
        if roots is None:
            ok = fn.inst(f"icmp uge i64 {addr}, {NULL_PAGE}")
        else:
            ok = "false"
            for k in roots:
                inside = self._inside(addr, k, size)
                ok = inside if ok == "false" else fn.inst(f"or i1 {ok}, {inside}")
        bad, cont = fn.label("oob"), fn.label("inb")
        fn.cond_br(ok, cont, bad)
        fn.start_block(bad)
        fn.emit(f"call void {self.report}(i32 {site}, i64 {addr}, i32 %pid0, i32 %pid1, i32 %pid2, i32 %npid0, "
                "i32 %npid1)")
        fn.br(cont)
        fn.start_block(cont)
        return fn.inst(f"select i1 {ok}, ptr {ptr}, ptr {self.dummy}")

    def metadata(self) -> dict:
        return {"bounds_check": True, "oob_sites": [list(s) for s in self.sites]}


def _report_function(name: str, state: str) -> Function:
    """``name(site, address, pid0, pid1, pid2, npid0, npid1)``: under a spin lock (violations are rare), keep
    the violation of the lowest linear program id; within it, the first site, widened to every later lane of
    that site (its lowest and highest address)."""
    f = Function(name, "void", [("i32", "%site"), ("i64", "%addr"), ("i32", "%p0"), ("i32", "%p1"), ("i32", "%p2"),
                                ("i32", "%n0"), ("i32", "%n1")], attrs="noinline cold nounwind", linkage="internal")

    def field(k: int) -> str:
        return f.inst(f"getelementptr inbounds {STATE}, ptr {state}, i32 0, i32 {k}")

    f.emit("%w0 = zext i32 %p0 to i64")
    f.emit("%w1 = zext i32 %p1 to i64")
    f.emit("%w2 = zext i32 %p2 to i64")
    f.emit("%m0 = zext i32 %n0 to i64")
    f.emit("%m1 = zext i32 %n1 to i64")
    f.emit("%r2 = mul i64 %w2, %m1")
    f.emit("%r12 = add i64 %r2, %w1")
    f.emit("%r3 = mul i64 %r12, %m0")
    f.emit("%lin = add i64 %r3, %w0")
    f.br("spin")
    f.start_block("spin")
    lock = field(0)
    pair = f.inst(f"cmpxchg weak ptr {lock}, i32 0, i32 1 acquire monotonic")
    won = f.inst(f"extractvalue {{ i32, i1 }} {pair}, 1")
    f.cond_br(won, "locked", "spin")
    f.start_block("locked")
    failed_p, site_p, lin_p = field(1), field(2), field(6)
    failed = f.inst(f"load i32, ptr {failed_p}, align 4")
    fresh = f.inst("icmp eq i32 " + failed + ", 0")
    f.cond_br(fresh, "take", "older")
    f.start_block("older")
    rlin = f.inst(f"load i64, ptr {lin_p}, align 8")
    lower = f.inst(f"icmp ult i64 %lin, {rlin}")
    f.cond_br(lower, "take", "same")
    f.start_block("same")
    rsite = f.inst(f"load i32, ptr {site_p}, align 4")
    s1 = f.inst(f"icmp eq i64 %lin, {rlin}")
    s2 = f.inst(f"icmp eq i32 %site, {rsite}")
    both = f.inst(f"and i1 {s1}, {s2}")
    f.cond_br(both, "widen", "unlock")
    f.start_block("widen")
    lo_p, hi_p = field(8), field(9)
    lo = f.inst(f"load i64, ptr {lo_p}, align 8")
    hi = f.inst(f"load i64, ptr {hi_p}, align 8")
    nlo = f.inst(f"call i64 @llvm.umin.i64(i64 {lo}, i64 %addr)")
    nhi = f.inst(f"call i64 @llvm.umax.i64(i64 {hi}, i64 %addr)")
    f.emit(f"store i64 {nlo}, ptr {lo_p}, align 8")
    f.emit(f"store i64 {nhi}, ptr {hi_p}, align 8")
    f.br("unlock")
    f.start_block("take")
    for k, (ty, v) in enumerate([("i32", "%site"), ("i32", "%p0"), ("i32", "%p1"), ("i32", "%p2"), ("i64", "%lin"),
                                 ("i64", "%addr"), ("i64", "%addr"), ("i64", "%addr")], start=2):
        f.emit(f"store {ty} {v}, ptr {field(k)}, align {4 if ty == 'i32' else 8}")
    f.emit(f"store atomic i32 1, ptr {failed_p} release, align 4")
    f.br("unlock")
    f.start_block("unlock")
    f.emit(f"store atomic i32 0, ptr {lock} release, align 4")
    f.emit("ret void")
    return f


def grid_stop(g: Function, state: str) -> str:
    """In the grid loop, after the program at linear id ``%lin``: an i1 that is true once a program at or
    before it failed (later programs are not started; earlier ones still run, so the lowest failing one is
    the one reported, as when the grid runs in order)."""
    failed_p = g.inst(f"getelementptr inbounds {STATE}, ptr {state}, i32 0, i32 1")
    failed = g.inst(f"load atomic i32, ptr {failed_p} acquire, align 4")
    any_ = g.inst(f"icmp ne i32 {failed}, 0")
    lin_p = g.inst(f"getelementptr inbounds {STATE}, ptr {state}, i32 0, i32 6")
    rlin = g.inst(f"load atomic i64, ptr {lin_p} monotonic, align 8")
    before = g.inst(f"icmp ule i64 {rlin}, %lin")
    return g.inst(f"and i1 {any_}, {before}")
