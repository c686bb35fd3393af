"""``scf.for``, ``scf.if`` and ``scf.while`` on the CPU.

Scalars flow through phi nodes. A tile carried by a loop lives in one buffer for the whole loop: each
iteration reads it and the yield writes the next value into it (through a temporary only when the new
value reads the buffer at other positions, e.g. a transposition, or reads another carried buffer).
"""
from __future__ import annotations

from typing import Any

from tritium._mlir import block_ops

from .blockptr import Composite
from .context import Context
from .irtext import Function
from .opinfo import type_info, uses
from .optable import CPU_OPS
from .streaming import Streaming
from .strided import next_offset, offset_tile, strided_pointers
from .tiles import Buf, Scalar, Splat, Tile



def _flat(values: list[Any]) -> tuple[list[Any], list[tuple[Any, int]]]:
    """Expand composite values (block pointers, descriptors) into their scalars, which flow through
    phis like any scalar; the layout lets :func:`_unflat` put them back together."""
    out: list[Any] = []
    layout: list[tuple[Any, int]] = []
    for v in values:
        if isinstance(v, Composite):
            parts = v.scalars()
            out += parts
            layout.append((v, len(parts)))
        else:
            out.append(v)
            layout.append((None, 1))
    return out, layout


def _unflat(flat: list[Any], layout: list[tuple[Any, int]]) -> list[Any]:
    out, i = [], 0
    for template, n in layout:
        out.append(template.rebuild(flat[i:i + n]) if template is not None else flat[i])
        i += n
    return out


def _trip_guess(lb: str, ub: str, step: str) -> int:
    """The trip count of a loop when its bounds are constants, else a guess: loops in kernels usually walk
    over a dimension of the problem."""
    try:
        lo, hi, st = int(lb), int(ub), int(step)
    except ValueError:
        return 16
    return max(1, -(-(hi - lo) // st)) if st > 0 else 1


def _phi_slot(fn: Function) -> tuple[str, int]:
    fn.emit("")
    return fn.current, len(fn.blocks[-1][1]) - 1


def _fill(fn: Function, slot: tuple[str, int], text: str) -> None:
    label, at = slot
    for lbl, lines in fn.blocks:
        if lbl == label:
            lines[at] = text
            return


def _carry_in(ctx: Context, values: list[Any]) -> list[Any]:
    """Buffers for carried tiles, initialized with the incoming values."""
    out = []
    for v in values:
        if isinstance(v, Tile):
            buf = ctx.buffer(v.shape, v.ty)
            ctx.store_node(v.node, Buf(buf, v.shape, v.ty))
            out.append(Buf(buf, v.shape, v.ty))
        else:
            out.append(None)
    return out


def _write_carried(ctx: Context, yielded: list[Any], bufs: list[Any]) -> None:
    targets = [b.ptr for b in bufs if b is not None]
    staged = []
    for y, b in zip(yielded, bufs):
        if b is None:
            staged.append(y)
            continue
        node = y.node if isinstance(y, Tile) else None
        if isinstance(node, Buf) and node.ptr == b.ptr:
            staged.append(None)
            continue
        if node is None:
            node = Splat(y.value, b.shape, b.ty)
        hazard = node.reads_remapped(b.ptr) or any(node.reads(t) for t in targets if t != b.ptr)
        if hazard:
            tmp = ctx.buffer(b.shape, b.ty)
            ctx.store_node(node, Buf(tmp, b.shape, b.ty))
            node = Buf(tmp, b.shape, b.ty)
        staged.append(node)
    for node, b in zip(staged, bufs):
        if b is not None and node is not None:
            ctx.store_node(node, b)


def _bind_args(ctx: Context, args: list[Any], carried: list[Any], scalars: list[Any],
               layout: list[tuple[Any, int]]) -> None:
    vals = [Tile(Buf(buf.ptr, buf.shape, buf.ty)) if buf is not None else sc for buf, sc in zip(carried, scalars)]
    for arg, v in zip(args, _unflat(vals, layout)):
        if isinstance(v, Tile):
            v.uses = uses(arg)
        ctx.values[arg] = v


# -- for -------------------------------------------------------------------------------------
class ControlFlow:
    """``scf.for``: a loop tells :class:`.Streaming` its trip count, for the stores inside it."""

    def __init__(self, ctx: Context, streaming: Streaming) -> None:
        self.ctx = ctx
        self.streaming = streaming

    @CPU_OPS.lowers("scf.for")
    def for_(self, op: Any) -> None:
        ctx = self.ctx
        fn = ctx.fn
        operands = list(op.operands)
        lb, ub, step = (ctx.consume(v) for v in operands[:3])
        inits, layout = _flat([ctx.consume(v) for v in operands[3:]])
        ctx.flush_pending()
        ity = type_info(operands[0].type)[1]
        self.streaming.loop_enter(lb, ub, step, ity)
        block = op.regions[0].blocks[0]
        args = list(block.arguments)
        ops = block_ops(block)
        strided = strided_pointers(op, block, inits, layout)
        bases = {k: inits[k].node for k in strided}
        for k in strided:
            inits[k] = Scalar("0", "i64")
        peel = _peelable(ops, inits, layout)
        carried: list[Any] = []
        for k, v in enumerate(inits):
            if isinstance(v, Tile):
                buf = Buf(ctx.buffer(v.shape, v.ty), v.shape, v.ty)
                if k not in peel:
                    ctx.store_node(v.node, buf)
                carried.append(buf)
            else:
                carried.append(None)
        # incoming edges of the loop header: (block, first iv, carried scalars)
        entries: list[tuple[str, str, list[str]]] = []
        init_scalars = [v.value if buf is None else "" for v, buf in zip(inits, carried)]
        if peel:
            # the first iteration reads the splat initial values directly: accumulators need no filling
            has = fn.inst(f"icmp slt {ity} {lb.value}, {ub.value}")
            first, skip = fn.label("peel"), fn.label("nopeel")
            fn.cond_br(has, first, skip)
            fn.start_block(first)
            iv0 = Scalar(lb.value, ity)
            vals = [Tile(inits[k].node) if k in peel else (Tile(Buf(b.ptr, b.shape, b.ty)) if b is not None
                                                             else inits[k]) for k, b in enumerate(carried)]
            yielded = _iteration(ctx, ops, args, iv0, vals, layout, strided, bases,
                                      [v.value if b is None else "" for v, b in zip(inits, carried)])
            _write_carried(ctx, yielded, carried)
            entries.append((fn.current, fn.inst(f"add {ity} {lb.value}, {step.value}"),
                            [y.value if b is None else "" for y, b in zip(yielded, carried)]))
            head = fn.label("for")
            fn.br(head)
            fn.start_block(skip)
            for k in peel:
                ctx.store_node(inits[k].node, carried[k])
            entries.append((fn.current, lb.value, init_scalars))
        else:
            entries.append((fn.current, lb.value, init_scalars))
            head = fn.label("for")
        body_l, exit_ = fn.label("forbody"), fn.label("forexit")
        fn.br(head)
        fn.start_block(head)
        work_before = ctx.work
        iv = fn.tmp("iv")
        iv_slot = _phi_slot(fn)
        phis, slots = [], []
        for init, buf in zip(inits, carried):
            if buf is None:
                phis.append(Scalar(fn.tmp("carry"), init.ty))
                slots.append(_phi_slot(fn))
            else:
                phis.append(None)
                slots.append(None)
        cond = fn.inst(f"icmp slt {ity} {iv}, {ub.value}")
        fn.cond_br(cond, body_l, exit_)
        fn.start_block(body_l)
        vals = [Tile(Buf(b.ptr, b.shape, b.ty)) if b is not None else p for b, p in zip(carried, phis)]
        yielded = _iteration(ctx, ops, args, Scalar(iv, ity), vals, layout, strided, bases,
                                  [p.value if p is not None else "" for p in phis])
        _write_carried(ctx, yielded, carried)
        # the launcher's choice of threads uses the work per program: count the loop's iterations
        ctx.work += (_trip_guess(lb.value, ub.value, step.value) - 1) * (ctx.work - work_before)
        ctx.frame.cancel_point()   # Ctrl-C stops a long program here (frame.py)
        nxt = fn.inst(f"add {ity} {iv}, {step.value}")
        latch = fn.current
        fn.br(head)
        edges = ", ".join(f"[{v}, %{lbl}]" for lbl, v, _ in entries)
        _fill(fn, iv_slot, f"{iv} = phi {ity} {edges}, [{nxt}, %{latch}]")
        for k, (p, slot, y) in enumerate(zip(phis, slots, yielded)):
            if p is not None:
                edges = ", ".join(f"[{sc[k]}, %{lbl}]" for lbl, _, sc in entries)
                _fill(fn, slot, f"{p.value} = phi {p.ty} {edges}, [{y.value}, %{latch}]")
        fn.start_block(exit_)
        outs = [Tile(Buf(buf.ptr, buf.shape, buf.ty)) if buf is not None else p for p, buf in zip(phis, carried)]
        for k in strided:
            outs[k] = Tile(offset_tile(op.results[k], bases[k], phis[k].value))
        for res, v in zip(op.results, _unflat(outs, layout)):
            if isinstance(v, Tile):
                ctx.set(res, v)
            else:
                ctx.values[res] = v
        self.streaming.loop_exit()


def _iteration(ctx: Context, ops: list[Any], args: list[Any], iv: Any, vals: list[Any], layout: list,
               strided: list[int], bases: dict, offsets: list[str]) -> list[Any]:
    """Lower one copy of a loop body with its arguments bound to ``vals`` (flat); returns the flat yields."""
    ctx.values[args[0]] = iv
    for arg, v in zip(args[1:], _unflat(vals, layout)):
        if isinstance(v, Tile):
            v.uses = uses(arg)
        ctx.values[arg] = v
    for k in strided:
        t = Tile(offset_tile(args[1 + k], bases[k], offsets[k]))
        t.uses = uses(args[1 + k])
        ctx.values[args[1 + k]] = t
    ctx.lower_block(ops[:-1])
    yield_ops = list(ops[-1].operands)
    yielded, _ = _flat([ctx.consume(v) for v in yield_ops])
    for k in strided:
        yielded[k] = next_offset(ctx, yield_ops[k], offsets[k])
    ctx.flush_pending()
    return yielded


def _peelable(ops: list[Any], inits: list[Any], layout: list) -> list[int]:
    """Carried tiles that start as a splat (``acc = tl.zeros(...)``) and are updated elementwise: running the
    first iteration on the splat saves filling their buffers. Small loop bodies only (the body is lowered
    twice)."""
    if any(t is not None for t, _ in layout) or len(ops) > 120:
        return []
    if any(o.name in ("scf.for", "scf.while", "tt.dot", "tt.reduce", "tt.scan") for o in ops):
        return []
    out = []
    for k, (init, y) in enumerate(zip(inits, ops[-1].operands)):
        if isinstance(init, Tile) and isinstance(init.node, Splat) and \
                getattr(y.owner, "name", "").startswith("arith."):
            out.append(k)
    return out


# -- if ----------------------------------------------------------------------------------------
@CPU_OPS.lowers("scf.if")
def if_(ctx: Context, op: Any) -> None:
    fn = ctx.fn
    cond = ctx.consume(op.operands[0])
    ctx.flush_pending()
    results = list(op.results)
    bufs = []
    for r in results:
        shape, lt, _ = type_info(r.type)
        bufs.append(Buf(ctx.buffer(shape, lt), shape, lt) if shape is not None else None)
    then_l, else_l, join = fn.label("then"), fn.label("else"), fn.label("endif")
    fn.cond_br(cond.value, then_l, else_l)
    incoming: list[list[tuple[Any, str]]] = [[] for _ in results]
    for region, label in ((op.regions[0], then_l), (op.regions[1], else_l)):
        fn.start_block(label)
        blocks = list(region.blocks)
        if blocks:
            ops = block_ops(blocks[0])
            ctx.lower_ops(ops[:-1])
            yielded = [ctx.consume(v) for v in ops[-1].operands] if ops else []
            ctx.flush_pending()
            for k, (y, b) in enumerate(zip(yielded, bufs)):
                if b is not None:
                    node = y.node if isinstance(y, Tile) else None
                    if node is None:
                                    node = Splat(y.value, b.shape, b.ty)
                    ctx.store_node(node, b)
                else:
                    incoming[k].append((y, fn.current))
        fn.br(join)
    fn.start_block(join)
    for k, (r, b) in enumerate(zip(results, bufs)):
        if b is not None:
            ctx.set(r, Tile(Buf(b.ptr, b.shape, b.ty)))
            continue
        flats = [(_flat([y])[0], lbl) for y, lbl in incoming[k]]
        phis = []
        for j, first in enumerate(flats[0][0]):
            srcs = ", ".join(f"[{vals[j].value}, %{lbl}]" for vals, lbl in flats)
            phis.append(Scalar(fn.inst(f"phi {first.ty} {srcs}"), first.ty))
        ctx.values[r] = _unflat(phis, _flat([incoming[k][0][0]])[1])[0]


# -- while -------------------------------------------------------------------------------------
@CPU_OPS.lowers("scf.while")
def while_(ctx: Context, op: Any) -> None:
    fn = ctx.fn
    inits, layout = _flat([ctx.consume(v) for v in op.operands])
    ctx.flush_pending()
    carried = _carry_in(ctx, inits)
    before = op.regions[0].blocks[0]
    after = op.regions[1].blocks[0]
    pre = fn.current
    head, body_l, exit_ = fn.label("while"), fn.label("whilebody"), fn.label("whileexit")
    fn.br(head)
    fn.start_block(head)
    work_before = ctx.work
    phis, slots = [], []
    for init, buf in zip(inits, carried):
        if buf is None:
            phis.append(Scalar(fn.tmp("wcarry"), init.ty))
            slots.append(_phi_slot(fn))
        else:
            phis.append(None)
            slots.append(None)
    _bind_args(ctx, list(before.arguments), carried, phis, layout)
    ops = block_ops(before)
    ctx.lower_ops(ops[:-1])
    cond_op = ops[-1]
    cvals = [ctx.consume(v) for v in cond_op.operands]
    ctx.flush_pending()
    forwarded = []
    for v, r in zip(cvals[1:], op.results):
        shape, lt, _ = type_info(r.type) if isinstance(v, Tile) else (None, "", "")
        if shape is None:
            forwarded.append(v)
        else:
            node = v.node
            if not isinstance(node, Buf):
                b = Buf(ctx.buffer(shape, lt), shape, lt)
                ctx.store_node(node, b)
                node = b
            forwarded.append(Tile(node))
    fn.cond_br(cvals[0].value, body_l, exit_)
    fn.start_block(body_l)
    for arg, fv in zip(after.arguments, forwarded):
        if isinstance(fv, Tile):
            t = Tile(fv.node)
            t.uses = uses(arg)
            ctx.values[arg] = t
        else:
            ctx.values[arg] = fv
    ops = block_ops(after)
    ctx.lower_ops(ops[:-1])
    yielded, _ = _flat([ctx.consume(v) for v in ops[-1].operands])
    ctx.flush_pending()
    _write_carried(ctx, yielded, carried)
    ctx.work += 15 * (ctx.work - work_before)    # an unknown number of iterations: guess 16
    ctx.frame.cancel_point()
    latch = fn.current
    fn.br(head)
    for init, p, slot, y in zip(inits, phis, slots, yielded):
        if p is not None:
            _fill(fn, slot, f"{p.value} = phi {p.ty} [{init.value}, %{pre}], [{y.value}, %{latch}]")
    fn.start_block(exit_)
    for res, fv in zip(op.results, forwarded):
        if isinstance(fv, Tile):
            ctx.set(res, Tile(fv.node))
        else:
            ctx.values[res] = fv
