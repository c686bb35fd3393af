"""Loads, stores, atomics, device_print and device_assert on the CPU."""
from __future__ import annotations

import re
from typing import Any, Optional

from tritium._mlir import ir

from .irtext import SIZES, const
from .fastpath import load_masks, select_conditions, with_mask_fast_path
from .hazards import must_stage, pointer_root
from .tiles import Buf, Evaluator, Load, Node, Tile, loop_nest

_ORDER = {"acquire": "acquire", "release": "release", "acq_rel": "acq_rel", "relaxed": "monotonic", "": "seq_cst"}
_RMW = {"add": "add", "fadd": "fadd", "and": "and", "or": "or", "xor": "xor", "xchg": "xchg", "max": "max",
        "min": "min", "umax": "umax", "umin": "umin", "fmax": "fmax", "fmin": "fmin"}
#: the tl.atomic_* function an op kind comes from, for messages
_USER_RMW = {"fadd": "add", "umax": "max", "umin": "min", "fmax": "max", "fmin": "min"}


def segments(op: Any, n_groups: int) -> list[int]:
    if "operandSegmentSizes" in op.attributes:
        return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    # without the attribute at most one group is variadic: by our op definitions, the last one
    return [1] * (n_groups - 1) + [len(op.operands) - (n_groups - 1)]


def split_operands(op: Any, names: list[str]) -> dict[str, list[Any]]:
    sizes = segments(op, len(names))
    out, i = {}, 0
    for name, n in zip(names, sizes):
        out[name] = list(op.operands)[i:i + n]
        i += n
    return out


def _str_attr(op: Any, name: str, default: str = "") -> str:
    return ir.StringAttr(op.attributes[name]).value if name in op.attributes else default


def _is_block_ptr(value: Any) -> bool:
    return str(value.type).startswith("!tt.ptr<tensor<")


def _location(op: Any) -> str:
    m = re.search(r'loc\("([^"]*)":(\d+):(\d+)\)', str(op.location))
    return f"{m.group(1)}:{m.group(2)}" if m else "<unknown>"


class MemoryMixin:
    # -- loads -------------------------------------------------------------------------------------
    def op_load(self, op: Any) -> None:
        from .lower import type_info
        parts = split_operands(op, ["ptr", "mask", "other"])
        ptr_v = parts["ptr"][0]
        if _is_block_ptr(ptr_v):
            return self.load_block_ptr(op, ptr_v)
        res = op.results[0]
        shape, lt, _ = type_info(res.type)
        ptr = self.consume(ptr_v)
        mask = self.consume(parts["mask"][0]) if parts["mask"] else None
        other = self.consume(parts["other"][0]) if parts["other"] else None
        volatile = "is_volatile" in op.attributes and ir.BoolAttr(op.attributes["is_volatile"]).value
        if shape is None:
            self.flush_pending()
            node = Load(_ScalarNode(ptr.value, "ptr"), _ScalarNode(mask.value, "i1") if mask else None,
                        _ScalarNode(other.value, lt) if other else None, lt, volatile)
            node.site = self.access_site(op, "load", mask is not None, lt)
            from .lower import Scalar
            self.values[res] = Scalar(Evaluator(self.fn).value(node, []), lt)
            return
        node = Load(self.as_node(ptr, shape), self.as_node(mask, shape) if mask else None,
                    self.as_node(other, shape) if other else None, lt, volatile)
        node.root = pointer_root(ptr_v)
        node.site = self.access_site(op, "load", mask is not None, lt)
        if not volatile:
            self.prefetch_next(node.ptr, shape, lt)
        self.work += 2 * _n(shape)
        tile = Tile(node)
        self.set(res, tile)

    # -- stores ------------------------------------------------------------------------------------
    def op_store(self, op: Any) -> None:
        from .lower import type_info
        parts = split_operands(op, ["ptr", "value", "mask"])
        if _is_block_ptr(parts["ptr"][0]):
            return self.store_block_ptr(op, parts["ptr"][0], parts["value"][0])
        ptr = self.consume(parts["ptr"][0])
        val = self.consume(parts["value"][0])
        mask = self.consume(parts["mask"][0]) if parts["mask"] else None
        shape, _, _ = type_info(parts["ptr"][0].type)
        vty = type_info(parts["value"][0].type)[1]
        self.flush_pending(consumed=tuple(x for x in (ptr, val, mask) if isinstance(x, Tile)))
        fn = self.fn
        site = self.access_site(op, "store", mask is not None, vty)
        if shape is None:
            self._guarded(mask.value if mask else None,
                          lambda: fn.emit(f"store {vty} {val.value}, ptr {self.checked(ptr.value, site)}, "
                                          f"align {SIZES[vty]}"))
            return
        pn, vn = self.as_node(ptr, shape), self.as_node(val, shape)
        if isinstance(val, Tile) and must_stage(vn, pn, pointer_root(parts["ptr"][0])):
            vn = self.materialize(val)
        mn = self.as_node(mask, shape) if mask is not None else None
        self.work += 2 * _n(shape)

        def emit_loop(masks_true: bool) -> None:
            def body(idx: list[str]) -> None:
                ev = Evaluator(fn, masks_true)
                p = ev.value(pn, idx, address=True)
                v = ev.value(vn, idx)
                m = ev.value(mn, idx) if mn is not None and not masks_true else None
                self._guarded(m, lambda: fn.emit(f"store {vty} {v}, ptr {self.checked(p, site)}, "
                                                 f"align {SIZES[vty]}"))
            if (masks_true or mn is None) and site is None:
                self.stream_store(shape, pn, vn, vty, masks_true, lambda: loop_nest(fn, shape, body))
            else:
                loop_nest(fn, shape, body)

        masks = load_masks(vn) + load_masks(pn) + ([mn] if mn is not None else [])
        with_mask_fast_path(fn, shape, masks, emit_loop, select_conditions(vn))
        self._drop_consumed((ptr, val, mask))

    def access_site(self, op: Any, kind: str, masked: bool, ty: str) -> Optional[int]:
        """The site in the bounds checker of an access through ``op``'s first operand; None when the kernel is
        compiled without checks."""
        checker = self.bounds
        return None if checker is None else checker.site(op, kind, masked, SIZES.get(ty, 8))

    def checked(self, ptr: str, site: Optional[int]) -> str:
        """The pointer a lane accesses, after its bounds check (emitted here, on the lanes that execute)."""
        return ptr if site is None else self.bounds.guard(self.fn, ptr, site)

    def _drop_consumed(self, items: tuple) -> None:
        for t in items:
            if isinstance(t, Tile) and t.uses <= 0 and t in self.pending:
                self.pending.remove(t)

    def _guarded(self, cond: Optional[str], emit: Any) -> None:
        fn = self.fn
        if cond is None or cond == "true":
            emit()
            return
        do, join = fn.label("st"), fn.label("stj")
        fn.cond_br(cond, do, join)
        fn.start_block(do)
        emit()
        fn.br(join)
        fn.start_block(join)

    # -- atomics -----------------------------------------------------------------------------------
    def _atomic(self, op: Any, emit: Any, groups: list[str]) -> None:
        from .lower import Scalar, type_info
        parts = split_operands(op, groups)
        vals = {k: (self.consume(v[0]) if v else None) for k, v in parts.items()}
        self.flush_pending()
        res = op.results[0]
        shape, lt, _ = type_info(res.type)
        fn = self.fn
        kind = "atomic_" + (_USER_RMW.get(_str_attr(op, "op"), _str_attr(op, "op")) if op.name == "tt.atomic_rmw"
                            else "cas")
        site = self.access_site(op, kind, vals.get("mask") is not None, lt)

        def checked_emit(args: dict) -> str:
            return emit(dict(args, ptr=self.checked(args["ptr"], site)))

        if shape is None:
            m = vals.get("mask")
            self.values[res] = Scalar(self._masked_value(m.value if m else None, lt,
                                                         lambda: checked_emit({k: (v.value if v else None)
                                                                               for k, v in vals.items()})), lt)
            return
        nodes = {k: (self.as_node(v, shape) if v is not None else None) for k, v in vals.items()}
        out = self.buffer(shape, lt)
        dst = Buf(out, shape, lt)

        def body(idx: list[str]) -> None:
            ev = Evaluator(fn)
            args = {k: (ev.value(n, idx, address=(k == "ptr")) if n is not None else None) for k, n in nodes.items()}
            r = self._masked_value(args.get("mask"), lt, lambda: checked_emit(args))
            fn.emit(f"store {lt} {r}, ptr {ev.element_ptr(dst, idx)}, align {SIZES[lt]}")

        loop_nest(fn, shape, body)
        self.set(res, Tile(dst))

    def _masked_value(self, cond: Optional[str], ty: str, emit: Any) -> str:
        fn = self.fn
        if cond is None or cond == "true":
            return emit()
        before = fn.current
        do, join = fn.label("at"), fn.label("atj")
        fn.cond_br(cond, do, join)
        fn.start_block(do)
        v = emit()
        end = fn.current
        fn.br(join)
        fn.start_block(join)
        return fn.inst(f"phi {ty} [{v}, %{end}], [{const(ty, 0)}, %{before}]")

    def op_atomic_rmw(self, op: Any) -> None:
        from .lower import type_info
        kind = _RMW[_str_attr(op, "op")]
        order = _ORDER[_str_attr(op, "sem", "acq_rel")]
        lt = type_info(op.results[0].type)[1]
        fn = self.fn
        self._atomic(op, lambda a: fn.inst(f"atomicrmw {kind} ptr {a['ptr']}, {lt} {a['val']} {order}, align "
                                           f"{SIZES[lt]}"), ["ptr", "val", "mask"])

    def op_atomic_cas(self, op: Any) -> None:
        from .lower import type_info
        order = _ORDER[_str_attr(op, "sem", "acq_rel")]
        fail = "acquire" if order in ("acq_rel", "acquire", "seq_cst") else "monotonic"
        if order == "release":
            fail = "monotonic"
        lt = type_info(op.results[0].type)[1]
        it = {"half": "i16", "bfloat": "i16", "float": "i32", "double": "i64"}.get(lt, lt)
        fn = self.fn

        def emit(a: dict) -> str:
            cmp, val = a["cmp"], a["val"]
            if it != lt:
                cmp = fn.inst(f"bitcast {lt} {cmp} to {it}")
                val = fn.inst(f"bitcast {lt} {val} to {it}")
            pair = fn.inst(f"cmpxchg ptr {a['ptr']}, {it} {cmp}, {it} {val} {order} {fail}, align {SIZES[lt]}")
            old = fn.inst(f"extractvalue {{ {it}, i1 }} {pair}, 0")
            return fn.inst(f"bitcast {it} {old} to {lt}") if it != lt else old

        self._atomic(op, emit, ["ptr", "cmp", "val"])

    # -- gather and histogram ----------------------------------------------------------------------
    def op_gather(self, op: Any) -> None:
        from .lower import type_info
        src = self.consume(op.operands[0])
        index = self.consume(op.operands[1])
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        shape, lt, _ = type_info(op.results[0].type)
        buf = self.materialize(src) if not isinstance(src.node, Buf) else src.node
        ity = type_info(op.operands[1].type)[1]
        inode = index.node
        n = buf.shape[axis]

        class Gather(Node):
            def __init__(self) -> None:
                self.shape, self.ty = shape, lt

            def eval(self, ev: Evaluator, idx: list[str]) -> str:
                f = ev.fn
                i = ev.value(inode, idx)
                i64 = f.inst(f"sext {ity} {i} to i64") if ity != "i64" else i
                ok = f.inst(f"icmp ult i64 {i64}, {n}")
                safe = f.inst(f"select i1 {ok}, i64 {i64}, i64 0")
                sidx = list(idx)
                sidx[axis] = safe
                return ev.value(buf, sidx)

            def children(self) -> list[Node]:
                return [inode, buf]

        self.set(op.results[0], Tile(Gather()))

    def op_histogram(self, op: Any) -> None:
        from .lower import type_info
        parts = split_operands(op, ["src", "mask"])
        src = self.consume(parts["src"][0])
        mask = self.consume(parts["mask"][0]) if parts["mask"] else None
        shape, _, _ = type_info(op.results[0].type)
        sshape, sty, _ = type_info(parts["src"][0].type)
        bins = shape[0]
        fn = self.fn
        out = self.buffer(shape, "i32")
        fn.emit(f"call void @llvm.memset.p0.i64(ptr align 16 {out}, i8 0, i64 {4 * bins}, i1 false)")
        self.module.declare("llvm.memset.p0.i64", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
        dst = Buf(out, shape, "i32")
        mnode = self.as_node(mask, sshape) if mask is not None else None

        def body(idx: list[str]) -> None:
            ev = Evaluator(fn)
            v = ev.value(src.node, idx)
            v64 = fn.inst(f"sext {sty} {v} to i64") if sty != "i64" else v
            ok = fn.inst(f"icmp ult i64 {v64}, {bins}")
            if mnode is not None:
                ok = fn.inst(f"and i1 {ok}, {ev.value(mnode, idx)}")

            def inc() -> None:
                p = fn.inst(f"getelementptr inbounds i32, ptr {out}, i64 {v64}")
                c = fn.inst(f"load i32, ptr {p}, align 4")
                c1 = fn.inst(f"add i32 {c}, 1")
                fn.emit(f"store i32 {c1}, ptr {p}, align 4")
            self._guarded(ok, inc)

        loop_nest(fn, sshape, body)
        self.set(op.results[0], Tile(dst))

    # -- debugging ---------------------------------------------------------------------------------
    def op_print(self, op: Any) -> None:
        from .lower import type_info
        self.has_print = True
        args = [(self.consume(v), v) for v in op.operands]
        self.flush_pending()
        prefix = _str_attr(op, "prefix")
        hexa = "hex" in op.attributes and ir.BoolAttr(op.attributes["hex"]).value
        signed = list(ir.DenseI32ArrayAttr(op.attributes["is_signed"])) if "is_signed" in op.attributes else []
        fn = self.fn
        self.module.declare("printf", "declare i32 @printf(ptr, ...)")
        shape: tuple[int, ...] = ()
        for a, v in args:
            s = type_info(v.type)[0]
            if s is not None:
                shape = s
        formats, conv = [], []
        for k, (a, v) in enumerate(args):
            lt = type_info(v.type)[1]
            formats.append(_fmt(lt, hexa, bool(signed[k]) if k < len(signed) else True))
            conv.append((a, lt, bool(signed[k]) if k < len(signed) else True))
        idx_fmt = ", ".join(["%*d"] * len(shape))
        text = f"pid (%d, %d, %d) idx ({idx_fmt}){prefix}" + ", ".join(formats) + "\n"
        gs = self.module.string(text)
        widths = [len(str(max(s - 1, 0))) for s in shape]

        def body(idx: list[str]) -> None:
            ev = Evaluator(fn)
            parts = ["i32 %pid0", "i32 %pid1", "i32 %pid2"]
            for w, i in zip(widths, idx):
                ii = fn.inst(f"trunc i64 {i} to i32") if i.startswith("%") else i
                parts += [f"i32 {w}", f"i32 {ii}"]
            for a, lt, sg in conv:
                v = ev.value(self.as_node(a, shape), idx) if shape else a.value
                parts.append(_vararg(fn, v, lt, sg))
            fn.emit(f"call i32 (ptr, ...) @printf(ptr {gs}, {', '.join(parts)})")

        if shape:
            loop_nest(fn, shape, body)
        else:
            body([])

    def op_assert(self, op: Any) -> None:
        from .lower import type_info
        self.has_assert = True
        cond = self.consume(op.operands[0])
        self.flush_pending()
        msg = _str_attr(op, "message")
        where = _location(op)
        state = f"@{self.name}_assert_state"
        if not any(g.startswith(state + " ") for g in self.module.globals):
            # failed flag, pid x/y/z, element index, message
            self.module.globals.append(f"{state} = global {{ i32, i32, i32, i32, i64, ptr }} zeroinitializer, "
                                       "align 8")
        gmsg = self.module.string(f"{where}: {msg}")
        shape = type_info(op.operands[0].type)[0]
        fn = self.fn

        def record(linear: str) -> None:
            pair = fn.inst(f"cmpxchg ptr {state}, i32 0, i32 1 acq_rel acquire")
            won = fn.inst(f"extractvalue {{ i32, i1 }} {pair}, 1")

            def fill() -> None:
                for k, v in enumerate(["%pid0", "%pid1", "%pid2"]):
                    p = fn.inst(f"getelementptr inbounds {{ i32, i32, i32, i32, i64, ptr }}, ptr {state}, i32 0, "
                                f"i32 {k + 1}")
                    fn.emit(f"store i32 {v}, ptr {p}, align 4")
                p = fn.inst(f"getelementptr inbounds {{ i32, i32, i32, i32, i64, ptr }}, ptr {state}, i32 0, i32 4")
                fn.emit(f"store i64 {linear}, ptr {p}, align 8")
                p = fn.inst(f"getelementptr inbounds {{ i32, i32, i32, i32, i64, ptr }}, ptr {state}, i32 0, i32 5")
                fn.emit(f"store ptr {gmsg}, ptr {p}, align 8")
            self._guarded(won, fill)

        if shape is None:
            bad = fn.inst(f"xor i1 {cond.value}, true")
            self._guarded(bad, lambda: record("0"))
            return
        node = cond.node

        def body(idx: list[str]) -> None:
            ev = Evaluator(fn)
            c = ev.value(node, idx)
            bad = fn.inst(f"xor i1 {c}, true")
            from .tiles import linear_index
            self._guarded(bad, lambda: record(linear_index(fn, shape, idx)))

        loop_nest(fn, shape, body)


class _ScalarNode(Node):
    def __init__(self, value: str, ty: str) -> None:
        self.value, self.ty, self.shape = value, ty, ()

    def eval(self, ev: Evaluator, idx: list[str]) -> str:
        return self.value


def _n(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _fmt(lt: str, hexa: bool, signed: bool) -> str:
    if lt in ("half", "bfloat", "float", "double"):
        return "%a" if hexa else "%f"
    if lt == "ptr":
        return "%p"
    if hexa:
        return "0x%llx"
    return "%lld" if signed else "%llu"


def _vararg(fn: Any, v: str, lt: str, signed: bool) -> str:
    if lt in ("half", "bfloat", "float"):
        return f"double {fn.inst(f'fpext {lt} {v} to double')}"
    if lt == "double":
        return f"double {v}"
    if lt == "ptr":
        return f"ptr {v}"
    if lt == "i64":
        return f"i64 {v}"
    ext = "sext" if signed and lt != "i1" else "zext"
    return f"i64 {fn.inst(f'{ext} {lt} {v} to i64')}"
