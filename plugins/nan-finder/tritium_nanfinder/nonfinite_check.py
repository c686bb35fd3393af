"""nonfinite-check: a kernel that writes a NaN or an Inf stops with an error saying which, where it was
written, and which operation (and source line) produced it.

For every ``tt.store`` (and ``tt.atomic_rmw``) of floats, three ``tt.assert`` ops are added before it, under
the store's mask: the value is not NaN, not +Inf, not -Inf. Each message names the class of value and the
producing op; the backend adds the store's source line, the program id and the element. The CPU backend
records the first failing assertion of a launch and raises ``KernelAssertionError`` with it.

``mode=loads`` also checks what loads read (a NaN in the input is reported as such, not as a product), and
``mode=all`` checks the result of every floating-point op outside reductions' combine regions; lanes a
mask switches off may hold -inf there (softmax's padding), so ``all`` can report values never stored.

Pass options (``-p 'nonfinite-check{mode=all}'``) override the knobs; the number of checks is recorded in the
kernel's metadata (``nanfinder_checks``).
"""
from __future__ import annotations

import os
import re
from typing import Any

FLOATS = {"f16", "bf16", "f32", "f64"}
SKIP_PRODUCERS = {"arith.constant", "tt.load", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape",
                  "tt.trans", "tt.cat", "tt.join", "tt.split", "tt.gather", "arith.select"}


def _elem(t: Any) -> str:
    from mlir import ir
    return str(t.element_type) if isinstance(t, ir.ShapedType) else str(t)


def _where(value: Any) -> str:
    from mlir import ir
    owner = value.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner
        return f"a block argument of {parent.name if parent is not None else 'the kernel'}"
    m = re.search(r'loc\("([^"]*)":(\d+):(\d+)\)', str(owner.location))
    at = f" at {os.path.basename(m.group(1))}:{m.group(2)}:{m.group(3)}" if m else ""
    return f"{owner.name}{at}"


class _Checker:
    def __init__(self, ir: Any) -> None:
        from mlir.dialects import arith
        self.ir, self.arith, self.count = ir, arith, 0

    def _const(self, t: Any, value: Any) -> Any:
        ir = self.ir
        if isinstance(t, ir.ShapedType):
            elem = t.element_type
            attr = ir.FloatAttr.get(elem, value) if _elem(t) in FLOATS else ir.IntegerAttr.get(elem, value)
            return self.arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(t, attr)).result
        attr = ir.FloatAttr.get(t, value) if str(t) in FLOATS else ir.IntegerAttr.get(t, value)
        return self.arith.ConstantOp(t, attr).result

    def _bool_type(self, t: Any) -> Any:
        ir = self.ir
        i1 = ir.IntegerType.get_signless(1)
        return ir.RankedTensorType.get(t.shape, i1) if isinstance(t, ir.RankedTensorType) else i1

    def guard(self, value: Any, mask: Any, what: str, origin: str) -> None:
        """Before the insertion point: assert ``value`` (where ``mask`` is set) is finite."""
        arith, ir = self.arith, self.ir
        P = arith.CmpFPredicate
        t = value.type
        not_mask = None
        if mask is not None:
            not_mask = arith.XOrIOp(mask, self._const(self._bool_type(t), 1)).result
        checks = [("NaN", arith.CmpFOp(P.ORD, value, value).result),
                  ("+Inf", arith.CmpFOp(P.UNE, value, self._const(t, float("inf"))).result),
                  ("-Inf", arith.CmpFOp(P.UNE, value, self._const(t, float("-inf"))).result)]
        for kind, ok in checks:
            if not_mask is not None:
                ok = arith.OrIOp(ok, not_mask).result
            msg = f"tritium-nanfinder: {kind} {what} (the value comes from {origin})"
            ir.Operation.create("tt.assert", results=[], operands=[ok],
                                attributes={"message": ir.StringAttr.get(msg)})
            self.count += 1


def _settings(ctx: Any) -> str:
    from .knobs import nanfinder
    opts = getattr(ctx, "pass_options", None) or {}
    mode = opts.get("mode", nanfinder.mode or "stores")
    if mode not in ("stores", "loads", "all"):
        raise ValueError(f"nonfinite-check: mode {mode!r} is not one of stores, loads, all")
    return mode


def _in_combine_region(op: Any) -> bool:
    p = op.parent
    while p is not None:
        if p.name in ("tt.reduce", "tt.scan"):
            return True
        p = p.parent
    return False


def nonfinite_check(module: Any, ctx: Any = None) -> None:
    from mlir import ir
    from tritium.passes import all_ops
    from .knobs import nanfinder
    name = getattr(ctx, "kernel_name", "")
    if nanfinder.kernels and name and name not in nanfinder.kernels:
        return
    mode = _settings(ctx)
    checker = _Checker(ir)
    with module.context:
        for op in all_ops(module):
            if _in_combine_region(op):
                continue
            if op.name in ("tt.store", "tt.atomic_rmw"):
                value = op.operands[1]
                if _elem(value.type) not in FLOATS:
                    continue
                mask = op.operands[2] if len(op.operands) > 2 else None
                what = "stored to memory" if op.name == "tt.store" else "written atomically to memory"
                with ir.InsertionPoint(op), op.location:
                    checker.guard(value, mask, what, _where(value))
            elif op.name == "tt.load" and mode in ("loads", "all"):
                value = op.results[0]
                if _elem(value.type) in FLOATS:
                    _guard_after(checker, op, value, _load_mask(op), "loaded from memory", "an input of the kernel")
            elif mode == "all" and op.name not in SKIP_PRODUCERS and len(op.results) == 1 \
                    and _elem(op.results[0].type) in FLOATS and op.name.startswith(("arith.", "math.", "tt.")):
                _guard_after(checker, op, op.results[0], None, "computed", _where(op.results[0]))
    if ctx is not None and isinstance(getattr(ctx, "metadata", None), dict):
        ctx.metadata["nanfinder_checks"] = ctx.metadata.get("nanfinder_checks", 0) + checker.count


def _load_mask(op: Any) -> Any:
    from mlir import ir
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])) \
        if "operandSegmentSizes" in op.attributes else [1, len(op.operands) - 1]
    return op.operands[1] if len(sizes) > 1 and sizes[1] else None


def _guard_after(checker: _Checker, op: Any, value: Any, mask: Any, what: str, origin: str) -> None:
    from mlir import ir
    with ir.InsertionPoint.after(op), op.location:
        checker.guard(value, mask, what, origin)
