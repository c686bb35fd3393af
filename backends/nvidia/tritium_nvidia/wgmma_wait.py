"""``wgmma.wait_group`` as inline assembly that passes the finished accumulators through it (so that nothing
reads them before the wait) and takes the registers the dots still read as inputs (so that nothing reuses them
before it): emitted at once (wait_group) or as lines the caller places (wait_lines: a wait written at the end
of a loop body, once the registers it must cover are known)."""
from __future__ import annotations

from typing import Any, Optional

from .fragment import unpack_half2


_CONSTRAINT = {"float": "f", "i32": "r", "half": "h", "bfloat": "h"}


def wait_group(fn: Any, pending: int, regs: list[str], keep: Optional[list[str]] = None,
               ty: str = "float") -> list[str]:
    """``wgmma.wait_group pending``, passing the finished accumulators (LLVM type ``ty``) through so that
    nothing reads them earlier; ``keep`` (i32 registers the dots read) are inputs of the wait, so they stay
    untouched until it."""
    keep = keep or []
    kcons = "".join(",r" for _ in keep)
    kargs = [f"i32 {x}" for x in keep]
    if not regs:
        fn.emit(f'call void asm sideeffect "wgmma.wait_group.sync.aligned {pending};", '
                f'"{kcons[1:]}{"," if keep else ""}~{{memory}}"({", ".join(kargs)})')
        return []
    out = []
    for i in range(0, len(regs), 32):
        chunk = regs[i:i + 32]
        n = len(chunk)
        st = "{ " + ", ".join([ty] * n) + " }"
        cons = ",".join([f"={_CONSTRAINT[ty]}"] * n + [str(k) for k in range(n)]) + (kcons if i == 0 else "")
        body = f"wgmma.wait_group.sync.aligned {pending};" if i == 0 else ""
        args = [f"{ty} {x}" for x in chunk] + (kargs if i == 0 else [])
        r = fn.inst(f'call {st} asm sideeffect "{body}", "{cons},~{{memory}}"({", ".join(args)})')
        out += [fn.inst(f"extractvalue {st} {r}, {k}") for k in range(n)]
    return out


def wait_with_pending(fn: Any, regs: list[str], keep: list[str], ty: str, pending: list) -> list[str]:
    """``wait_group 0`` for ``regs`` (returned as waited) and for the dots left running for this wait
    (``pending``: (their registers, the registers they read, the names their results were given)), whose names
    are bound to their waited registers; ``pending`` is emptied."""
    waited = wait_group(fn, 0, regs + [r for p in pending for r in p[0]], keep + [k for p in pending for k in p[1]],
                        ty)
    out, rest = waited[:len(regs)], waited[len(regs):]
    for _, _, names in pending:
        for name in names:
            fn.emit(f"{name} = bitcast {ty} {rest.pop(0)} to {ty}")
    pending.clear()
    return out


def wait_half2(fn: Any, words: list, regs: list[str], keep: list[str]) -> list[str]:
    """``wait_group 0`` for dots accumulating in f16x2 registers (``words``: (the element registers of an
    instruction tile, its f16x2 registers)); ``regs`` (one per element) with those elements replaced by the
    waited halves."""
    out = list(regs)
    waited = wait_group(fn, 0, [w for _, ws in words for w in ws], keep, "i32")
    for idx, ws in words:
        halves = [h for w in waited[:len(ws)] for h in unpack_half2(fn, w)]
        del waited[:len(ws)]
        for i, h in zip(idx, halves):
            out[i] = h
    return out


def wait_lines(fn: Any, regs: list[str], keep: list[str], ty: str = "float") -> tuple[list[str], list[str]]:
    """The lines of ``wait_group(fn, 0, regs, keep, ty)`` and its result names, to be placed by the caller."""
    lines, out = [], []
    kcons = "".join(",r" for _ in keep)
    kargs = [f"i32 {x}" for x in keep]
    for i in range(0, len(regs), 32):
        chunk = regs[i:i + 32]
        n = len(chunk)
        st = "{ " + ", ".join([ty] * n) + " }"
        cons = ",".join([f"={_CONSTRAINT[ty]}"] * n + [str(k) for k in range(n)]) + (kcons if i == 0 else "")
        body = "wgmma.wait_group.sync.aligned 0;" if i == 0 else ""
        args = [f"{ty} {x}" for x in chunk] + (kargs if i == 0 else [])
        r = fn.tmp("w")
        lines.append(f'{r} = call {st} asm sideeffect "{body}", "{cons},~{{memory}}"({", ".join(args)})')
        for k in range(n):
            out.append(fn.tmp("w"))
            lines.append(f"{out[-1]} = extractvalue {st} {r}, {k}")
    return lines, out
