"""Layout assignment: the ``ttgir`` stage.

Every tensor value of the kernel gets a distributed layout, written on its defining op as the string
array attribute ``ttg.layout`` (one entry per result, "" for scalars); loop and branch block arguments
take the layouts of their op's results (``scf.while`` writes ``ttg.before_layouts`` for its first region).
``tt.dot`` gets ``ttg.dot`` (the strategy) and ``ttg.operands`` (the layouts of its operands).

How (a simpler form of Triton's coalescing and layout-propagation passes):

1. *anchors*, in program order: a load, store or atomic gets a coalesced layout chosen from the axis
   analysis of its pointer (vectors of up to 16 bytes along the most contiguous dimension); a dot gets
   the target's accumulator layout; reductions, scans and shape ops derive theirs from their operands;
   elementwise ops take the layout of an anchored operand; loop-carried values take the layout of what
   the loop body yields (so an accumulator stays in the dot's layout across iterations).
2. *demands*, in reverse order: a value without a layout takes the one its (last) user wants, so index
   arithmetic is computed directly in the layout of the load or store that uses it.
3. whatever is left gets a default blocked layout.

The lowering re-reads these attributes (so an overridden ``.ttgir`` file takes effect) and converts a
value wherever a user needs another layout: for free when the same thread already holds the data, by
recomputing cheap values, or through shared memory.
"""
from __future__ import annotations

from typing import Any, Optional

from .._mlir import ir, walk_children
from . import layout as L
from .axis_info import AxisAnalysis, AxisInfo
from .layout_policy import (  # noqa: F401  (also imported from here by the backends and the lowering)
    DotPlan, LayoutPolicy, blocked_for, fma_dot_plan, fma_operand, operand_contiguous)
from .value_types import element_bytes, element_type, pointee_bytes, tensor_shape  # noqa: F401  (same)

ELEMENTWISE_PREFIXES = ("arith.", "math.")
ELEMENTWISE_TT = {"tt.addptr", "tt.bitcast", "tt.int_to_ptr", "tt.ptr_to_int", "tt.fp_to_fp", "tt.precise_sqrt",
                  "tt.precise_divf", "tt.mulhiui", "tt.clampf", "tt.extern_elementwise"}


def is_elementwise(name: str) -> bool:
    return (name.startswith(ELEMENTWISE_PREFIXES) and name != "arith.constant") or name in ELEMENTWISE_TT


def all_ops(func: Any) -> list[Any]:
    """Every op of the function in program order, nested regions right after their op's position."""
    out: list[Any] = []

    def visit(op: Any) -> None:
        for child in walk_children(op):
            out.append(child)
            if len(child.regions):
                visit(child)

    visit(func)
    return out


class Assigner:
    def __init__(self, func: Any, policy: LayoutPolicy) -> None:
        self.func = func
        self.policy = policy
        self.axis = AxisAnalysis(func)
        self.layouts: dict[Any, L.Layout] = {}
        self.ops = all_ops(func)
        self.dots: dict[Any, DotPlan] = {}

    # -- helpers -----------------------------------------------------------------------------------
    def get(self, v: Any) -> Optional[L.Layout]:
        return self.layouts.get(v)

    def put(self, v: Any, lay: Optional[L.Layout]) -> None:
        if lay is not None and tensor_shape(v.type) is not None:
            self.layouts[v] = lay

    def coalesced_for(self, ptr: Any) -> L.Layout:
        shape = tensor_shape(ptr.type)
        return self.policy.coalesced(shape, pointee_bytes(element_type(ptr.type)), self.axis.info(ptr))

    def descriptor_coalesced(self, op: Any) -> L.Layout:
        """A descriptor's block is contiguous along its last dimension, and its rows start 16-byte aligned
        (base and strides are multiples of 16 bytes by the descriptor's rules): vectors along that dimension
        as wide as the last index's divisibility allows."""
        shape = tensor_shape(op.results[0].type)
        eb = element_bytes(element_type(op.results[0].type))
        div = self.axis.info(list(op.operands)[-1]).div[0] * eb
        rank = len(shape)
        info = AxisInfo((1, ) * (rank - 1) + (shape[-1], ), (16, ) * (rank - 1) + (min(div, 16), ), (1, ) * rank)
        return self.policy.coalesced(shape, eb, info)

    def staged_for_dots(self, op: Any, lay: L.Layout) -> L.Layout:
        """The layout of a load that a software-pipelined loop stages for its dots along the other dimension
        than global memory runs along (LayoutPolicy.staged_copy), else the coalesced ``lay``."""
        parent = op.parent
        while parent is not None and parent.name != "scf.for":
            parent = parent.parent if parent.name != "func.func" else None
        if parent is None or lay.rank != 2 or not getattr(self.policy, "pipelines", False):
            return lay
        def kind(dot: Any) -> str:
            a, b, c = list(dot.operands)[:3]
            return self.policy.dot_plan(dot, a.type, b.type, c.type).kind
        want = operand_contiguous(op.results[0], self.policy, kind)
        fast = max(range(2), key=lambda d: (lay.reg_run(d), d))
        if want is None or want == fast:
            return lay
        eb = pointee_bytes(element_type(list(op.operands)[0].type))
        return self.policy.staged_copy(lay.shape, eb, fast, want) or lay

    # -- pass 1: anchors and derived layouts -----------------------------------------------------------
    def forward(self, ops: list[Any]) -> None:
        for op in ops:
            self.forward_op(op)

    def forward_op(self, op: Any) -> None:
        name = op.name
        res = list(op.results)
        operands = list(op.operands)
        if name in ("tt.load", "tt.atomic_rmw", "tt.atomic_cas"):
            if res and tensor_shape(res[0].type) is not None:
                if tensor_shape(operands[0].type) is None:     # through a block pointer
                    self.put(res[0], self.policy.default(tensor_shape(res[0].type)))
                elif name == "tt.load":
                    self.put(res[0], self.staged_for_dots(op, self.coalesced_for(operands[0])))
                else:
                    self.put(res[0], self.coalesced_for(operands[0]))
            return
        if name == "tt.descriptor_load":
            if res and tensor_shape(res[0].type) is not None:
                self.put(res[0], self.descriptor_coalesced(op))
            return
        if name == "tt.dot":
            if op.results[0] not in self.dots:
                self.dots[op.results[0]] = self.policy.dot_plan(op, operands[0].type, operands[1].type, operands[2].type)
            self.put(res[0], self.dots[op.results[0]].acc)
            return
        if name in ("tt.reduce", "tt.scan"):
            axis = ir.IntegerAttr(op.attributes["axis"]).value
            src = operands[0]
            lay = self.get(src)
            if lay is None:
                lay = self.policy.default(tensor_shape(src.type))
                self.demand(src, lay)
            for r in res:
                if name == "tt.scan":
                    self.put(r, lay)
                elif tensor_shape(r.type) is not None:
                    self.put(r, L.slice_layout(lay, axis))
            return
        if name == "scf.for":
            self.forward_loop(op)
            return
        if name == "scf.if":
            for region in op.regions:
                for block in region.blocks:
                    self.forward(walk_children_block(block))
            for i, r in enumerate(res):
                for region in op.regions:
                    blocks = list(region.blocks)
                    if blocks and self.get(r) is None:
                        y = list(blocks[0].operations)[-1].operands[i]
                        self.put(r, self.get(y))
            return
        if name == "scf.while":
            before, after = (list(region.blocks)[0] for region in op.regions)
            for a, init in zip(before.arguments, operands):
                self.put(a, self.get(init))
            self.forward(walk_children_block(before))
            cond = list(before.operations)[-1]
            for a, r, v in zip(after.arguments, res, list(cond.operands)[1:]):
                self.put(a, self.get(v))
                self.put(r, self.get(v))
            self.forward(walk_children_block(after))
            return
        if not res or tensor_shape(res[0].type) is None or len(res) != 1:
            if name == "tt.split" and operands and self.get(operands[0]) is not None:
                src = self.get(operands[0])
                if L.split_bit(src) is not None:
                    half, _ = L.split(src)
                    for r in res:
                        self.put(r, half)
            return
        r = res[0]
        src = self.get(operands[0]) if operands else None
        if name == "tt.expand_dims" and src is not None:
            self.put(r, L.expand_dims(src, ir.IntegerAttr(op.attributes["axis"]).value))
        elif name == "tt.trans" and src is not None:
            self.put(r, L.permute(src, list(ir.DenseI32ArrayAttr(op.attributes["order"]))))
        elif name == "tt.reshape" and src is not None:
            self.put(r, L.reshape(src, tensor_shape(r.type)))
        elif name == "tt.join" and src is not None:
            self.put(r, L.join(src))
        elif name == "tt.cat" and src is not None:
            self.put(r, L.cat(src))
        elif is_elementwise(name):
            for v in operands:
                lay = self.get(v)
                if lay is not None and lay.shape == tensor_shape(r.type):
                    self.put(r, lay)
                    break

    def forward_loop(self, op: Any) -> None:
        block = op.regions[0].blocks[0]
        args = list(block.arguments)[1:]
        inits = list(op.operands)[3:]
        body = walk_children_block(block)
        for a, i in zip(args, inits):
            self.put(a, self.get(i))
        for _ in range(2):
            self.forward(body)
            yielded = list(body[-1].operands)
            changed = False
            for a, y in zip(args, yielded):
                ly = self.get(y)
                if ly is not None and ly != self.get(a):
                    self.layouts[a] = ly
                    changed = True
            if not changed:
                break
        for r, a in zip(op.results, args):
            self.put(r, self.get(a))

    # -- pass 2: demands ---------------------------------------------------------------------------------
    def demand(self, v: Any, lay: Optional[L.Layout]) -> None:
        if lay is None or tensor_shape(v.type) is None or v in self.layouts:
            return
        self.layouts[v] = lay

    def backward(self) -> None:
        for op in reversed(self.ops):
            self.backward_op(op)

    def backward_op(self, op: Any) -> None:
        name = op.name
        operands = list(op.operands)
        res = list(op.results)
        if name in ("tt.store", "tt.load", "tt.atomic_rmw", "tt.atomic_cas"):
            if tensor_shape(operands[0].type) is None:
                return
            lay = self.get(res[0]) if res and name != "tt.store" else None
            lay = lay or self.coalesced_for(operands[0])
            for v in operands:
                self.demand(v, lay)
            return
        if name == "tt.dot":
            plan = self.dots[op.results[0]]
            self.demand(operands[0], plan.a)
            self.demand(operands[1], plan.b)
            self.demand(operands[2], plan.acc)
            return
        if name == "scf.for":
            block = op.regions[0].blocks[0]
            args = list(block.arguments)[1:]
            for a, r in zip(args, res):
                self.demand(a, self.get(r))
                self.demand(r, self.get(a))
            yielded = list(list(block.operations)[-1].operands)
            for a, i, y in zip(args, operands[3:], yielded):
                self.demand(i, self.get(a))
                self.demand(y, self.get(a))
            return
        if name == "scf.if":
            for region in op.regions:
                blocks = list(region.blocks)
                if blocks:
                    for r, y in zip(res, list(blocks[0].operations)[-1].operands):
                        self.demand(y, self.get(r))
            return
        if len(res) != 1 or tensor_shape(res[0].type) is None:
            return
        lay = self.get(res[0])
        if lay is None:
            return
        src = operands[0] if operands else None
        if name == "tt.broadcast":
            self.demand(src, L.restrict(lay, tensor_shape(src.type)))
        elif name == "tt.expand_dims":
            self.demand(src, L.squeeze(lay, ir.IntegerAttr(op.attributes["axis"]).value))
        elif name == "tt.trans":
            order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
            inv = [order.index(i) for i in range(len(order))]
            self.demand(src, L.permute(lay, inv))
        elif name == "tt.reshape":
            self.demand(src, L.reshape(lay, tensor_shape(src.type)))
        elif is_elementwise(name):
            for v in operands:
                if tensor_shape(v.type) == lay.shape:
                    self.demand(v, lay)

    # -- all passes ------------------------------------------------------------------------------------
    def run(self) -> None:
        self.forward(walk_children(self.func))
        self.backward()
        for op in self.ops:
            for r in op.results:
                shape = tensor_shape(r.type)
                if shape is not None and r not in self.layouts:
                    self.layouts[r] = self.policy.default(shape)
                    # values derived from it can now follow it
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        shape = tensor_shape(a.type)
                        if shape is not None and a not in self.layouts:
                            self.layouts[a] = self.policy.default(shape)
        self.write()

    def write(self) -> None:
        for op in self.ops:
            res = list(op.results)
            if any(tensor_shape(r.type) is not None for r in res):
                op.attributes["ttg.layout"] = _strings([self.layouts[r].text() if r in self.layouts else ""
                                                        for r in res])
            if op.name == "scf.while":
                before = list(op.regions[0].blocks)[0]
                op.attributes["ttg.before_layouts"] = _strings(
                    [self.layouts[a].text() if a in self.layouts else "" for a in before.arguments])
            if op.name == "tt.dot":
                plan = self.dots[op.results[0]]
                op.attributes["ttg.dot"] = ir.StringAttr.get(plan.kind)
                op.attributes["ttg.operands"] = _strings([plan.a.text(), plan.b.text()])


def _strings(items: list[str]) -> Any:
    return ir.ArrayAttr.get([ir.StringAttr.get(s) for s in items])


def walk_children_block(block: Any) -> list[Any]:
    return [o.operation for o in block.operations]


def assign_layouts(module: Any, policy: LayoutPolicy) -> Any:
    """Run the assignment on the kernel of ``module`` (in place) and record the launch shape."""
    num_warps, warp_size = policy.num_warps, policy.warp_size
    with module.context:
        for func in kernel_functions(module):
            Assigner(func, policy).run()
        attrs = module.operation.attributes
        attrs["ttg.num_warps"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), num_warps)
        attrs["ttg.threads_per_warp"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), warp_size)
    return module


def kernel_functions(module: Any) -> list[Any]:
    return [op for op in walk_children(module.operation) if op.name == "func.func"]


def read_layouts(func: Any) -> dict[Any, L.Layout]:
    """The layouts written by :func:`assign_layouts` (or an overridden ``.ttgir``), by value."""
    out: dict[Any, L.Layout] = {}

    def put_all(values: list[Any], attr: Any) -> None:
        for v, s in zip(values, ir.ArrayAttr(attr)):
            text = ir.StringAttr(s).value
            shape = tensor_shape(v.type)
            if text and shape is not None:
                out[v] = L.parse(text, shape)

    for op in all_ops(func):
        if "ttg.layout" in op.attributes:
            put_all(list(op.results), op.attributes["ttg.layout"])
            if op.name == "scf.for":
                put_all(list(op.regions[0].blocks[0].arguments)[1:], op.attributes["ttg.layout"])
            if op.name == "scf.while":
                put_all(list(list(op.regions[1].blocks)[0].arguments), op.attributes["ttg.layout"])
        if op.name == "scf.while" and "ttg.before_layouts" in op.attributes:
            put_all(list(list(op.regions[0].blocks)[0].arguments), op.attributes["ttg.before_layouts"])
    return out
