"""Dropping CTA barriers that follow another with no memory access between them.

The lowering asks for a barrier wherever one part of it needs one (a pipeline's drain at a loop's exit, a
shared scratch buffer about to be reused, the next loop's prologue), without knowing whether the part before
it just issued one. Two ``bar.sync`` in a row, separated only by register arithmetic, order nothing the first
did not: every thread passed the first, and none touched memory since. The second costs a CTA-wide wait
(the causal attention forward had four back to back between its loops; Triton has one), so it goes.

Conservative: only within one basic block (a label may be reached from elsewhere), and any instruction that
may read or write memory, call a function other than a special-register read, or run inline assembly
(``cp.async`` waits, proxy fences, mbarriers) keeps the next barrier.
"""
from __future__ import annotations

import re

# the lowering's barrier, and the form LLVM's optimizer upgrades it to
_BARRIER = re.compile(r"^(?:tail\s+)?call void @llvm\.nvvm\.(?:barrier0\(\)|barrier\.cta\.sync\.aligned\.all\(i32 0\))")

# instructions that neither touch memory nor synchronize: register arithmetic, casts and address computation
_PURE = frozenset("""add sub mul shl lshr ashr and or xor icmp fcmp select getelementptr zext sext trunc bitcast
ptrtoint inttoptr addrspacecast fadd fsub fmul fdiv fneg fptrunc fpext sitofp uitofp fptosi fptoui udiv sdiv
urem srem extractelement insertelement shufflevector extractvalue insertvalue freeze""".split())
_PURE_CALLS = ("@llvm.nvvm.read.ptx.sreg.", "@llvm.dbg.")
_OPCODE = re.compile(r"^\s*(?:%[-\w.$]+\s*=\s*)?(?:tail\s+|notail\s+|musttail\s+)?([a-z]+)")


def _pure(line: str) -> bool:
    m = _OPCODE.match(line)
    if m is None:
        return False
    op = m.group(1)
    if op == "call":
        return any(c in line for c in _PURE_CALLS) and " asm " not in line
    # `add nuw`, `fmul fast`...: the opcode is the first word after the result
    return op in _PURE


def drop_repeated_barriers(text: str) -> str:
    """``text`` (LLVM IR) without the barriers that repeat the one before them in their block."""
    out = []
    clean = False       # a barrier was passed in this block, and nothing since touched memory
    in_function = False
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("define "):
            in_function, clean = True, False
        elif not in_function or not s or s.startswith(";"):
            pass
        elif s == "}":
            in_function, clean = False, False
        elif s.endswith(":") or re.match(r"^[-\w.$]+:\s*(;.*)?$", s):
            clean = False
        elif _BARRIER.match(s):
            if clean:
                continue
            clean = True
        elif not _pure(s):
            clean = False
        out.append(line)
    return "\n".join(out)
