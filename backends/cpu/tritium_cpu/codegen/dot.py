"""``acc += a @ b`` on buffers, with a register-blocked vector microkernel for fp32.

The microkernel keeps an MR x NR block of the accumulator in vector registers across the whole K loop
(MR rows, NR = NV vectors per row), loading one row of b and broadcasting one element of a per step, the
way BLAS kernels do. Other types and shapes use a plain (i, k, j) loop nest that LLVM vectorizes on j.
"""
from __future__ import annotations

from .irtext import SIZES, Function, Module, intrinsic
from .tiles import Buf


def emit_dot(fn: Function, module: Module, a: Buf, b: Buf, acc: Buf, ty: str, vector_bits: int) -> None:
    batched = len(acc.shape) == 3
    B = acc.shape[0] if batched else 1
    M, N = acc.shape[-2], acc.shape[-1]
    K = a.shape[-1]
    vl = max(1, vector_bits // (8 * SIZES[ty]))
    blocking = _blocking(M, N, vl, vector_bits) if ty in ("float", "double") and vl > 1 else None
    for batch in range(B):
        offs = (batch * M * K, batch * K * N, batch * M * N)
        if blocking:
            mr, nv = blocking
            main = M - M % mr
            if main:
                _micro(fn, module, a.ptr, b.ptr, acc.ptr, offs, (0, main), N, K, ty, vl, mr, nv)
            if M % mr:
                _micro(fn, module, a.ptr, b.ptr, acc.ptr, offs, (main, M), N, K, ty, vl, M % mr, nv)
        else:
            _generic(fn, a.ptr, b.ptr, acc.ptr, offs, M, N, K, ty)


def _blocking(M: int, N: int, vl: int, vector_bits: int) -> tuple[int, int] | None:
    """(MR, NV) for the microkernel, or None: the register block that does the most FMAs per load.

    Per K step a block loads NV vectors of b and broadcasts MR elements of a for MR * NV FMAs, and needs
    MR * NV accumulators + NV + 1 registers (x86: 32 with AVX-512, 16 below). At least 8 accumulators keep
    the FMA units busy across their latency. Rows past the last full block get a block of M % MR rows.
    """
    if N % vl:
        return None
    regs = 32 if vector_bits >= 512 else 16
    best, best_score = None, 0.0
    for nv in (1, 2, 3, 4, 6, 8):
        if (N // vl) % nv:
            continue
        mr = min((regs - nv - 1) // nv, M)
        if mr < 1 or mr * nv < min(8, M * (N // vl)):
            continue
        score = mr * nv / (mr + nv)
        if score > best_score:
            best, best_score = (mr, nv), score
    return best


def _counted(fn: Function, count: int, step: int, body, carried: list[tuple[str, str]] | None = None) -> list[str]:
    """``for (i = 0; i < count; i += step) carried = body(i, carried)``; returns the carried values' finals."""
    carried = carried or []
    pre = fn.current
    head, latch, exit_ = fn.label("D"), fn.label("Dlatch"), fn.label("Dexit")
    fn.br(head)
    fn.start_block(head)
    i = fn.tmp("d")
    phis = [fn.tmp("dacc") for _ in carried]
    at = len(fn.blocks[-1][1])
    for _ in range(len(carried) + 1):
        fn.emit("")
    new = body(i, phis) or []
    fn.br(latch)
    fn.start_block(latch)
    ni = fn.inst(f"add nuw nsw i64 {i}, {step}")
    c = fn.inst(f"icmp ult i64 {ni}, {count}")
    fn.cond_br(c, head, exit_)
    for label, lines in fn.blocks:
        if label == head:
            lines[at] = f"{i} = phi i64 [0, %{pre}], [{ni}, %{latch}]"
            for j, ((t, init), p, nv) in enumerate(zip(carried, phis, new)):
                lines[at + 1 + j] = f"{p} = phi {t} [{init}, %{pre}], [{nv}, %{latch}]"
            break
    fn.start_block(exit_)
    return new


def _gep(fn: Function, ty: str, base: str, *terms: str | int) -> str:
    total = None
    const_part = 0
    for t in terms:
        if isinstance(t, int):
            const_part += t
            continue
        total = t if total is None else fn.inst(f"add nuw nsw i64 {total}, {t}")
    if total is None:
        return fn.inst(f"getelementptr inbounds {ty}, ptr {base}, i64 {const_part}")
    if const_part:
        total = fn.inst(f"add nuw nsw i64 {total}, {const_part}")
    return fn.inst(f"getelementptr inbounds {ty}, ptr {base}, i64 {total}")


def _micro(fn: Function, module: Module, a: str, b: str, c: str, offs: tuple[int, int, int], row_range: tuple[int, int],
           N: int, K: int, ty: str, vl: int, MR: int, NV: int) -> None:
    first, stop = row_range
    vt = f"<{vl} x {ty}>"
    esz = SIZES[ty]
    fma = intrinsic(module, f"llvm.fma.v{vl}{'f32' if ty == 'float' else 'f64'}", vt, [vt, vt, vt])

    def rows(i: str, _: list[str]) -> list[str]:
        i0 = fn.inst(f"add nuw nsw i64 {i}, {first}") if first else i

        def cols(j0: str, __: list[str]) -> list[str]:
            crow = [fn.inst(f"mul nuw nsw i64 {fn.inst(f'add nuw nsw i64 {i0}, {r}')}, {N}") for r in range(MR)]
            cptrs = [[_gep(fn, ty, c, offs[2], crow[r], j0, v * vl) for v in range(NV)] for r in range(MR)]
            # the block's products are summed from zero and added to the accumulator once: a K loop of
            # `acc += tl.dot(a, b)` then sums in BLOCK_K-long chains, as tensor cores do, rather than one
            # chain as long as K (fewer fp16/bf16 results a rounding step away from torch's)
            init = [(vt, "zeroinitializer") for _ in range(MR * NV)]
            arow = [fn.inst(f"mul nuw nsw i64 {fn.inst(f'add nuw nsw i64 {i0}, {r}')}, {K}") for r in range(MR)]

            def kstep(k: str, accs: list[str]) -> list[str]:
                brow = fn.inst(f"mul nuw nsw i64 {k}, {N}")
                bv = [fn.inst(f"load {vt}, ptr {_gep(fn, ty, b, offs[1], brow, j0, v * vl)}, align {esz}")
                      for v in range(NV)]
                out = []
                for r in range(MR):
                    av = fn.inst(f"load {ty}, ptr {_gep(fn, ty, a, offs[0], arow[r], k)}, align {esz}")
                    ins = fn.inst(f"insertelement {vt} poison, {ty} {av}, i64 0")
                    sp = fn.inst(f"shufflevector {vt} {ins}, {vt} poison, <{vl} x i32> zeroinitializer")
                    for v in range(NV):
                        out.append(fn.inst(f"call {vt} {fma}({vt} {sp}, {vt} {bv[v]}, {vt} {accs[r * NV + v]})"))
                return out

            final = _counted(fn, K, 1, kstep, init)
            for r in range(MR):
                for v in range(NV):
                    prior = fn.inst(f"load {vt}, ptr {cptrs[r][v]}, align {esz}")
                    total = fn.inst(f"fadd {vt} {prior}, {final[r * NV + v]}")
                    fn.emit(f"store {vt} {total}, ptr {cptrs[r][v]}, align {esz}")
            return []

        _counted(fn, N, NV * vl, cols)
        return []

    _counted(fn, stop - first, MR, rows)


def _generic(fn: Function, a: str, b: str, c: str, offs: tuple[int, int, int], M: int, N: int, K: int, ty: str) -> None:
    esz = SIZES[ty]
    is_float = ty in ("float", "double")

    def rows(i: str, _: list[str]) -> list[str]:
        arow = fn.inst(f"mul nuw nsw i64 {i}, {K}")
        crow = fn.inst(f"mul nuw nsw i64 {i}, {N}")

        def ks(k: str, __: list[str]) -> list[str]:
            av = fn.inst(f"load {ty}, ptr {_gep(fn, ty, a, offs[0], arow, k)}, align {esz}")
            brow = fn.inst(f"mul nuw nsw i64 {k}, {N}")

            def js(j: str, ___: list[str]) -> list[str]:
                bv = fn.inst(f"load {ty}, ptr {_gep(fn, ty, b, offs[1], brow, j)}, align {esz}")
                cp = _gep(fn, ty, c, offs[2], crow, j)
                cv = fn.inst(f"load {ty}, ptr {cp}, align {esz}")
                if is_float:
                    p = fn.inst(f"fmul contract {ty} {av}, {bv}")
                    s = fn.inst(f"fadd contract {ty} {cv}, {p}")
                else:
                    p = fn.inst(f"mul {ty} {av}, {bv}")
                    s = fn.inst(f"add {ty} {cv}, {p}")
                fn.emit(f"store {ty} {s}, ptr {cp}, align {esz}")
                return []

            _counted(fn, N, 1, js)
            return []

        _counted(fn, K, 1, ks)
        return []

    _counted(fn, M, 1, rows)
