"""``scf.for``, ``scf.if`` and ``scf.while``: loop-carried and branch values are phi nodes, one per register
(control flow in a Triton kernel is uniform across the program, so every thread takes the same path and
barriers inside loops are safe)."""
from __future__ import annotations

from typing import Any

from ..._mlir import block_ops
from ..assign import tensor_shape
from .blockptr import Composite
from .optable import GPU_OPS
from .values import Scalar, Tensor


def _flat(x: Any) -> list[tuple[str, str]]:
    """The SSA values (and their types) a carried value is made of."""
    if isinstance(x, Scalar):
        return [(x.value, x.ty)]
    if isinstance(x, Composite):
        return [(s.value, s.ty) for s in x.flat()]
    return [(r, x.ty) for r in x.regs]


def _rebuild(template: Any, names: list[str]) -> Any:
    if isinstance(template, Scalar):
        return Scalar(names[0], template.ty)
    if isinstance(template, Composite):
        return template.rebuild([Scalar(n, s.ty) for n, s in zip(names, template.flat())])
    return Tensor(template.layout, names, template.ty)


class ControlMixin:
    def _carried(self, v: Any, arg: Any) -> Any:
        """Value ``v`` in the form block argument ``arg`` carries it."""
        got = self.values.get(v)
        if isinstance(got, Composite):
            return got
        if tensor_shape(arg.type) is None:
            return self.scalar_of(v)
        return self.tensor_in(v, self.layout_of(arg))

    def _regs(self, x: Any) -> list[str]:
        return [v for v, _ in _flat(x)]

    def _phis(self, args: list[Any], inits: list[Any]) -> tuple[list[Any], list[list[tuple[str, int]]]]:
        """Placeholders for the phi nodes of each block argument; returns the values bound and the slots."""
        fn = self.fn
        values, slots = [], []
        for a, init in zip(args, inits):
            names = [fn.tmp("phi") for _ in _flat(init)]
            slots.append([fn.placeholder() for _ in names])
            values.append(_rebuild(init, names))
        return values, slots

    def _fill_phis(self, phis: list[Any], slots: list[list], incoming: list[list[tuple[Any, str]]]) -> None:
        fn = self.fn
        for k, (p, sl) in enumerate(zip(phis, slots)):
            flat = _flat(p)
            srcs = [(self._regs(v), label) for v, label in incoming[k]]
            for i, ((name, ty), slot) in enumerate(zip(flat, sl)):
                edges = ", ".join(f"[{regs[i]}, %{label}]" for regs, label in srcs)
                fn.fill(slot, f"{name} = phi {ty} {edges}")

    @GPU_OPS.lowers("scf.for")
    def op_for(self, op: Any) -> None:
        plan = self.pipeline_plan(op)
        if plan is not None:
            self.lower_pipelined_for(op, plan)
            return
        fn = self.fn
        operands = list(op.operands)
        lb, ub, step = (self.scalar_of(v) for v in operands[:3])
        block = op.regions[0].blocks[0]
        args = list(block.arguments)
        inits = [self._carried(v, a) for v, a in zip(operands[3:], args[1:])]
        self.scratch_dirty = True
        frame = self.enter_loop(op, True)
        pre = fn.current
        head, body, exit_ = fn.label("for"), fn.label("forbody"), fn.label("forexit")
        fn.br(head)
        fn.start_block(head)
        iv = fn.tmp("iv")
        iv_slot = fn.placeholder()
        phis, slots = self._phis(args[1:], inits)
        cond = fn.inst(f"icmp slt {lb.ty} {iv}, {ub.value}")
        fn.cond_br(cond, body, exit_)
        fn.start_block(body)
        self.push_scope()
        self.values[args[0]] = Scalar(iv, lb.ty)
        for a, p in zip(args[1:], phis):
            self.values[a] = p
        ops = block_ops(block)
        self.lower_ops(ops[:-1])
        yielded = [self._carried(v, a) for v, a in zip(ops[-1].operands, args[1:])]
        nxt = fn.inst(f"add {lb.ty} {iv}, {step.value}")
        self.pop_scope()
        self.scratch_dirty = True
        latch = fn.current
        fn.br(head)
        pre = frame.pre                         # code hoisted out of the body may have added blocks
        fn.fill(iv_slot, f"{iv} = phi {lb.ty} [{lb.value}, %{pre}], [{nxt}, %{latch}]")
        self._fill_phis(phis, slots, [[(i, pre), (y, latch)] for i, y in zip(inits, yielded)])
        fn.start_block(exit_)
        # the last iteration's reads of shared memory are ordered before later writes by the barrier the next
        # writer emits (scratch_dirty is set)
        self.exit_loop()
        for r, p in zip(op.results, phis):
            self.values[r] = p

    @GPU_OPS.lowers("scf.if")
    def op_if(self, op: Any) -> None:
        fn = self.fn
        cond = self.scalar_of(op.operands[0])
        results = list(op.results)
        then_l, else_l, join = fn.label("then"), fn.label("else"), fn.label("endif")
        fn.cond_br(cond.value, then_l, else_l)
        incoming: list[list[tuple[Any, str]]] = [[] for _ in results]
        dirty = self.scratch_dirty
        for region, label in ((op.regions[0], then_l), (op.regions[1], else_l)):
            fn.start_block(label)
            self.scratch_dirty = dirty
            self.push_scope()
            blocks = list(region.blocks)
            if blocks:
                ops = block_ops(blocks[0])
                self.lower_ops(ops[:-1])
                for k, (v, r) in enumerate(zip(ops[-1].operands, results)):
                    incoming[k].append((self._carried(v, r), None))
            self.pop_scope()
            for k in range(len(results)):
                incoming[k][-1] = (incoming[k][-1][0], fn.current)
            fn.br(join)
        fn.start_block(join)
        self.scratch_dirty = True
        for k, r in enumerate(results):
            first = incoming[k][0][0]
            flat = _flat(first)
            names = [fn.tmp("ifv") for _ in flat]
            for i, (name, (_, ty)) in enumerate(zip(names, flat)):
                edges = ", ".join(f"[{self._regs(v)[i]}, %{label}]" for v, label in incoming[k])
                fn.emit(f"{name} = phi {ty} {edges}")
            self.values[r] = _rebuild(first, names)

    @GPU_OPS.lowers("scf.while")
    def op_while(self, op: Any) -> None:
        fn = self.fn
        before = list(op.regions[0].blocks)[0]
        after = list(op.regions[1].blocks)[0]
        bargs = list(before.arguments)
        inits = [self._carried(v, a) for v, a in zip(op.operands, bargs)]
        self.scratch_dirty = True
        pre = fn.current
        head, body, exit_ = fn.label("while"), fn.label("whilebody"), fn.label("whileexit")
        fn.br(head)
        fn.start_block(head)
        phis, slots = self._phis(bargs, inits)
        self.enter_loop(op, False)
        self.push_scope()
        for a, p in zip(bargs, phis):
            self.values[a] = p
        ops = block_ops(before)
        self.lower_ops(ops[:-1])
        cond_op = ops[-1]
        cond = self.scalar_of(cond_op.operands[0])
        forwarded = [self._carried(v, r) for v, r in zip(list(cond_op.operands)[1:], op.results)]
        self.pop_scope()
        fn.cond_br(cond.value, body, exit_)
        fn.start_block(body)
        self.push_scope()
        for a, v in zip(after.arguments, forwarded):
            self.values[a] = v
        ops = block_ops(after)
        self.lower_ops(ops[:-1])
        yielded = [self._carried(v, a) for v, a in zip(ops[-1].operands, bargs)]
        self.pop_scope()
        self.scratch_dirty = True
        latch = fn.current
        fn.br(head)
        self._fill_phis(phis, slots, [[(i, pre), (y, latch)] for i, y in zip(inits, yielded)])
        fn.start_block(exit_)
        self.exit_loop()
        for r, v in zip(op.results, forwarded):
            self.values[r] = v
