"""The interpreter's builder: the methods :class:`tritium.language.semantic.Semantic` calls on the compiler's
MLIR builder (``binary``, ``cast``, ``tt``, ``load``...), carried out at once on numpy arrays.

Types are Triton's own dtypes (the interpreter's semantic maps every dtype to itself), so each operation
knows its element type; attributes are plain Python values.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..language import core as tl
from . import elementwise as ew
from . import floats
from .memory import Memory
from .optable import INTERPRETER_OPS
from .tiles import TileOps
from .values import MEMORY, PTR, V, as_type, storage


class Op:
    """What ``Builder.tt``/``Builder.op`` return: the results of the operation, already computed."""
    __slots__ = ("results", )

    def __init__(self, results: Sequence[Any]) -> None:
        self.results = list(results)

    @property
    def result(self) -> Any:
        return self.results[0]


def _bshape(*arrays: Optional[np.ndarray]) -> tuple[int, ...]:
    return np.broadcast_shapes(*[a.shape for a in arrays if a is not None])


# Which op each handler implements is said beside it (@INTERPRETER_OPS.lowers here, in tiles.py, semantic.py).
INTERPRETER_OPS.family("arith and math ops: the builder's binary, unary, cmpi, cmpf, select, cast and op, computed in "
                       "elementwise.py", lambda name: name.startswith(("arith.", "math.")))
INTERPRETER_OPS.family("control flow and calls (scf.*, func.*): the kernel runs as its own Python, rewritten by "
                       "rewrite.py (rt.cond, rt.iterate)", lambda name: name.startswith(("scf.", "func.")))
INTERPRETER_OPS.refuse("tt.get_cluster_cta_rank", "made only by the GPU stages' cluster split (num_ctas > 1); "
                                                  "the frontend never emits it")
INTERPRETER_OPS.refuse("tt.elementwise_inline_asm", "tl.inline_asm_elementwise runs GPU assembly, which the "
                                                     "interpreter cannot execute (nor can Triton's); run the kernel on "
                                                     "a GPU backend, or write the computation with tl operations")
INTERPRETER_OPS.refuse("tt.dot_scaled", "the frontend emulates tl.dot_scaled with ordinary ops (language/scaled.py) "
                                        "and never emits tt.dot_scaled; add a tt_dot_scaled method in tiles.py to "
                                        "run it")


class NumpyBuilder(TileOps):
    def __init__(self, launch: Any) -> None:
        self.launch = launch
        self.memory: Memory = launch.memory
        self._consts: dict[Any, V] = {}
        self._ranges: dict[tuple[int, int], V] = {}
        #: while not None, binary operations are recorded here (see InterpreterSemantic._simple_combine)
        self.trace: Optional[list[tuple[str, V, V, V]]] = None
        #: "clampf" -> self.tt_clampf: what tt() dispatches (the table's keys without the "tt." prefix)
        self.handlers = {name[3:]: fn for name, fn in INTERPRETER_OPS.bind(self).items()}

    # -- attributes, locations -----------------------------------------------------------------------
    @staticmethod
    def i32_attr(v: Any) -> int:
        return int(v)

    i64_attr = i32_attr

    @staticmethod
    def bool_attr(v: Any) -> bool:
        return bool(v)

    @staticmethod
    def str_attr(s: str) -> str:
        return s

    @staticmethod
    def i32_array_attr(vals: Sequence[int]) -> list[int]:
        return [int(v) for v in vals]

    def set_loc(self, *args: Any) -> None:
        pass

    # -- constants -----------------------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("arith.constant", dispatch=False)
    def get_constant(self, value: Any, ty: Any) -> V:
        # floats by their bits: -0.0 == 0.0, and a nan is not equal to itself
        key = (value.hex() if type(value) is float else value, type(value), ty)
        try:
            return self._consts[key]
        except (KeyError, TypeError):
            pass
        elt = ty.scalar
        if elt.is_int():
            bits = elt.int_bitwidth
            v = int(value) & ((1 << bits) - 1) if bits > 1 else int(bool(value))
            if elt.is_int_signed() and v >= 1 << (bits - 1):
                v -= 1 << bits
            a = np.array([v], storage(elt))
        elif elt.is_ptr():
            a = np.array([int(value)], PTR)
        elif elt.name == "bf16":
            a = floats.round_bf16(np.array([float(value)], np.float64))
        elif elt.is_fp8():
            a = floats.f32_to_fp8(floats.f64_to_f32_round_odd(np.array([float(value)])), elt.name, satfinite=False)
        else:
            a = np.array([float(value)], storage(elt))
        if ty.is_block():
            a = np.broadcast_to(a.reshape((1, ) + (1, ) * len(ty.shape)), (1, ) + tuple(ty.shape))
        v = V(a, ty)
        if len(self._consts) < 4096:
            try:
                self._consts[key] = v
            except TypeError:
                pass
        return v

    def get_null_value(self, ty: Any) -> V:
        return self.get_constant(0, ty)

    def get_all_ones_value(self, ty: Any) -> V:
        return self.get_constant(-1, ty)

    # -- elementwise ---------------------------------------------------------------------------------
    def binary(self, name: str, a: V, b: V, result: Any = None) -> V:
        r = ew.binary(name, a, b, result or a.type)
        if self.trace is not None:
            self.trace.append((name, a, b, r))
        return r

    def unary(self, name: str, x: V, result: Any = None) -> V:
        return ew.unary(name, x, result or x.type)

    def _bool_type(self, like: V) -> Any:
        t = like.type
        return t.with_element_ty(tl.int1) if t.is_block() else tl.int1

    def cmpi(self, pred: str, a: V, b: V) -> V:
        return ew.cmpi(pred, a, b, self._bool_type(a))

    def cmpf(self, pred: str, a: V, b: V) -> V:
        return ew.cmpf(pred, a, b, self._bool_type(a), a.type.scalar)

    def select(self, c: V, a: V, b: V) -> V:
        mem = a.mem if a.mem is b.mem else None
        bb = b.a if b.a.dtype == a.a.dtype else as_type(b.a, a.a.dtype)
        return V(np.where(c.a, a.a, bb), a.type, mem)

    def cast(self, name: str, x: V, ty: Any) -> V:
        return ew.cast(name, x, ty)

    def op(self, name: str, operands: Sequence[Any] = (), results: Sequence[Any] = (), attrs: Any = None,
           regions: int = 0, segments: Any = None) -> Op:
        if name == "tt.print":
            return Op([])
        return Op([ew.math_op(name, list(operands), results[0])])

    # -- program ids ---------------------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("tt.get_program_id", dispatch=False)
    def get_program_id(self, axis: int) -> V:
        return self.launch.program_ids[axis]

    @INTERPRETER_OPS.lowers("tt.get_num_programs", dispatch=False)
    def get_num_programs(self, axis: int) -> V:
        return self.get_constant(self.launch.grid[axis], tl.int32)

    # -- shapes --------------------------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("tt.make_range", dispatch=False)
    def make_range(self, start: int, end: int) -> V:
        v = self._ranges.get((start, end))
        self.launch.note_tile(end - start)
        if v is None:
            v = self._ranges[(start, end)] = V(np.arange(start, end, dtype=np.int32)[None],
                                               tl.block_type(tl.int32, [end - start]))
        return v

    @INTERPRETER_OPS.lowers("tt.splat", dispatch=False)
    def splat(self, x: V, ty: Any) -> V:
        a = x.a
        nd = len(ty.shape)
        self.launch.note_tile(ty.numel)
        # a scalar holds one value per program, (batch, ); inside a combine function run on whole rows at once
        # (reduce, scan) it holds (batch, lanes...): those leading axes stay in front of the tile's
        return V(np.broadcast_to(a.reshape(a.shape + (1, ) * nd), a.shape + tuple(ty.shape)), ty, x.mem)

    @INTERPRETER_OPS.lowers("tt.broadcast", dispatch=False)
    def broadcast(self, x: V, ty: Any) -> V:
        self.launch.note_tile(ty.numel)
        return V(np.broadcast_to(x.a, (x.a.shape[0], ) + tuple(ty.shape)), ty, x.mem)

    @INTERPRETER_OPS.lowers("tt.expand_dims", dispatch=False)
    def expand_dims(self, x: V, ty: Any, axis: int) -> V:
        return V(np.expand_dims(x.a, axis + 1), ty, x.mem)

    @INTERPRETER_OPS.lowers("tt.reshape", dispatch=False)
    def reshape(self, x: V, ty: Any, allow_reorder: bool) -> V:
        return V(x.a.reshape((x.a.shape[0], ) + tuple(ty.shape)), ty, x.mem)

    @INTERPRETER_OPS.lowers("tt.trans", dispatch=False)
    def trans(self, x: V, ty: Any, order: Sequence[int]) -> V:
        return V(x.a.transpose([0] + [o + 1 for o in order]), ty, x.mem)

    # -- memory --------------------------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("tt.addptr", dispatch=False)
    def addptr(self, ptr: V, offset: V) -> V:
        size = MEMORY[ptr.type.scalar.element_ty.name].itemsize
        off = offset.a
        if size != 1:
            off = np.multiply(off, size, dtype=np.int64)
        return V(np.add(ptr.a, off, dtype=np.int64), ptr.type, ptr.mem)

    @INTERPRETER_OPS.lowers("tt.load", dispatch=False)
    def load(self, ptr: V, mask: Optional[V], other: Optional[V], result: Any, attrs: dict) -> V:
        if ptr.type.is_ptr() and ptr.type.element_ty.is_block():
            return self.block_load(ptr, result, attrs)
        elt = result.scalar
        p, m = ptr.a, (mask.a if mask is not None else None)
        if m is not None and m.shape != p.shape:
            shape = _bshape(p, m)
            p, m = np.broadcast_to(p, shape), np.broadcast_to(m, shape)
        raw = self.memory.load(p, m, ptr.mem, elt.name)
        vals = floats.bits_to_bf16(raw).reshape(raw.shape) if elt.name == "bf16" else raw
        if m is not None:
            vals = np.where(m, vals, other.a if other is not None else np.zeros((), vals.dtype))
        return V(vals, result)

    @INTERPRETER_OPS.lowers("tt.store", dispatch=False)
    def store(self, ptr: V, value: V, mask: Optional[V], attrs: dict) -> None:
        if ptr.type.is_ptr() and ptr.type.element_ty.is_block():
            return self.block_store(ptr, value, attrs)
        elt = ptr.type.scalar.element_ty
        vals = value.a
        if elt.name == "bf16":
            vals = floats.bf16_to_bits(vals).reshape(vals.shape)
        elif vals.dtype != MEMORY[elt.name]:
            vals = as_type(vals, MEMORY[elt.name])
        p, m = ptr.a, (mask.a if mask is not None else None)
        shape = _bshape(p, vals, m)
        p = np.broadcast_to(p, shape)
        vals = np.broadcast_to(vals, shape)
        if m is not None:
            m = np.broadcast_to(m, shape)
        self.memory.store(p, vals, m, ptr.mem, elt.name)

    # -- tile ops ------------------------------------------------------------------------------------
    def tt(self, name: str, operands: dict, results: Sequence[Any] = (), attrs: Optional[dict] = None,
           regions: int = 0) -> Op:
        fn = self.handlers.get(name)
        if fn is None:
            raise NotImplementedError(INTERPRETER_OPS.unsupported("tt." + name))
        out = fn(operands, list(results), attrs or {})
        if out is None:
            return Op([])
        return Op(out if isinstance(out, list) else [out])

    @INTERPRETER_OPS.lowers("tt.clampf")
    def tt_clampf(self, o: dict, res: list, attrs: dict) -> V:
        x, lo, hi = o["x"], o["min"], o["max"]
        nan = bool(attrs.get("propagate_nan"))
        up, down = (ew._maximum, ew._minimum) if nan else (ew._maximumnum, ew._minimumnum)
        return V(down(up(x.a, lo.a), hi.a), res[0])

    @INTERPRETER_OPS.lowers("tt.bitcast")
    def tt_bitcast(self, o: dict, res: list, attrs: dict) -> V:
        x = o["src"]
        dst = res[0].scalar
        src = x.type.scalar
        if src.is_ptr() and dst.is_ptr():
            # another element size: no longer known to be aligned, so addressed the general way
            same = MEMORY[src.element_ty.name].itemsize == MEMORY[dst.element_ty.name].itemsize \
                if not (src.element_ty.is_block() or dst.element_ty.is_block()) else False
            return V(x.a, res[0], x.mem if same else None)
        return V(ew.from_bits(ew.to_bits(x.a, src), dst), res[0])

    @INTERPRETER_OPS.lowers("tt.fp_to_fp")
    def tt_fp_to_fp(self, o: dict, res: list, attrs: dict) -> V:
        return ew.fp_to_fp(o["src"], res[0], attrs.get("rounding", "rtne"))

    @INTERPRETER_OPS.lowers("tt.ptr_to_int")
    def tt_ptr_to_int(self, o: dict, res: list, attrs: dict) -> V:
        return V(o["src"].a, res[0])

    @INTERPRETER_OPS.lowers("tt.int_to_ptr")
    def tt_int_to_ptr(self, o: dict, res: list, attrs: dict) -> V:
        return V(as_type(o["src"].a, PTR), res[0])

    @INTERPRETER_OPS.lowers("tt.mulhiui")
    def tt_mulhiui(self, o: dict, res: list, attrs: dict) -> V:
        return ew.umulhi(o["x"], o["y"], res[0])

    @INTERPRETER_OPS.lowers("tt.precise_sqrt")
    def tt_precise_sqrt(self, o: dict, res: list, attrs: dict) -> V:
        return ew.unary("tt.precise_sqrt", o["x"], res[0])

    @INTERPRETER_OPS.lowers("tt.precise_divf")
    def tt_precise_divf(self, o: dict, res: list, attrs: dict) -> V:
        return ew.binary("tt.precise_divf", o["x"], o["y"], res[0])

    @INTERPRETER_OPS.lowers("tt.extern_elementwise")
    def tt_extern_elementwise(self, o: dict, res: list, attrs: dict) -> V:
        if attrs.get("libname") != "libdevice":
            raise NotImplementedError(f"extern_elementwise ({attrs.get('symbol')} from {attrs.get('libname')}) calls "
                                      "a device library the interpreter does not have; use tl.math functions")
        from .libdevice import extern
        srcs = o["srcs"]
        arrays = np.broadcast_arrays(*[v.a for v in srcs])
        return V(extern(attrs["symbol"], list(arrays), [v.type for v in srcs], res[0].scalar), res[0])

    @INTERPRETER_OPS.lowers("tt.unsplat")
    def tt_unsplat(self, o: dict, res: list, attrs: dict) -> V:
        a = o["src"].a
        return V(a.reshape(a.shape[0]), res[0])

    @INTERPRETER_OPS.lowers("tt.assume")
    def tt_assume(self, o: dict, res: list, attrs: dict) -> None:
        return None

    @INTERPRETER_OPS.lowers("tt.debug_barrier")
    def tt_debug_barrier(self, o: dict, res: list, attrs: dict) -> None:
        return None
