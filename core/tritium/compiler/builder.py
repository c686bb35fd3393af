"""Builds tile IR in MLIR. The semantic layer talks to this class only, through ``create_*`` and
``get_*`` methods whose handles are MLIR values and types; the interpreter provides the same methods
over numpy arrays."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Optional, Sequence

from .._mlir import ir, tile_context
from ..dialect.ops import OPS
from ..llvmir.fp8 import MLIR_OF

CMPI = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5, "ult": 6, "ule": 7, "ugt": 8, "uge": 9}
CMPF = {"false": 0, "oeq": 1, "ogt": 2, "oge": 3, "olt": 4, "ole": 5, "one": 6, "ord": 7, "ueq": 8, "ugt": 9,
        "uge": 10, "ult": 11, "ule": 12, "une": 13, "uno": 14, "true": 15}


class Builder:
    """Creates ops at an insertion point with the current source location."""

    def __init__(self, context: Optional[ir.Context] = None, options: Any = None) -> None:
        self.context = context or tile_context()
        self.options = options
        self.module: Optional[ir.Module] = None
        self._ip: list[ir.InsertionPoint] = []
        self.loc: ir.Location = ir.Location.unknown(self.context)
        self._types: dict[str, ir.Type] = {}
        self.disable_line_info = False
        #: give values bound to Python names a name location (LLVM_EXTRACT_DI_LOCAL_VARIABLES): the LLVM IR
        #: generators describe such values as debugger variables
        self.name_values = False
        with self.context:
            self.i1 = ir.IntegerType.get_signless(1)
            self.i32 = ir.IntegerType.get_signless(32)
            self.i64 = ir.IntegerType.get_signless(64)
            self.index = ir.IndexType.get()

    # -- module, insertion point, location ---------------------------------------------------------
    def create_module(self) -> ir.Module:
        with self.context, ir.Location.unknown(self.context):
            self.module = ir.Module.create()
        return self.module

    @contextmanager
    def at(self, block: ir.Block, begin: bool = False) -> Iterator[None]:
        ip = ir.InsertionPoint.at_block_begin(block) if begin else ir.InsertionPoint(block)
        self._ip.append(ip)
        try:
            yield
        finally:
            self._ip.pop()

    @property
    def insertion_block(self) -> ir.Block:
        return self._ip[-1].block

    def set_loc(self, filename: str, line: int, col: int) -> None:
        if not self.disable_line_info:
            self.loc = ir.Location.file(filename, line, col, self.context)

    def name_value(self, value: Any, name: str) -> None:
        """Wrap the location of the op defining ``value`` in ``loc("name"(...))``. The first name wins: in
        ``y = x`` the op is x's, and a block argument (a parameter, a loop-carried value) has no op."""
        if not self.name_values or not isinstance(value, ir.OpResult):
            return
        op = value.owner
        if not op.location.is_a_name():
            op.location = ir.Location.name(name, childLoc=op.location, context=self.context)

    def op(self, name: str, operands: Sequence[Any] = (), results: Sequence[ir.Type] = (),
           attrs: Optional[dict[str, ir.Attribute]] = None, regions: int = 0,
           segments: Optional[dict[str, Sequence[int]]] = None) -> ir.Operation:
        attributes = dict(attrs or {})
        if segments:
            for key, sizes in segments.items():
                attributes[key] = ir.DenseI32ArrayAttr.get(list(sizes), context=self.context)
        return ir.Operation.create(name, results=list(results), operands=list(operands), attributes=attributes,
                                   regions=regions, loc=self.loc, ip=self._ip[-1] if self._ip else None)

    def tt(self, name: str, operands: dict[str, Any], results: Sequence[ir.Type] = (),
           attrs: Optional[dict[str, ir.Attribute]] = None, regions: int = 0) -> ir.Operation:
        """Create ``tt.<name>``; ``operands`` maps slot specs' names to a value, None, or a list."""
        opdef = OPS[name]
        flat: list[Any] = []
        seg: list[int] = []
        for spec in opdef.operands:
            base = spec.rstrip("?+").split("*")[0]
            v = operands.get(base)
            vals = [] if v is None else (list(v) if isinstance(v, (list, tuple)) else [v])
            if "*" in spec:
                limit = int(spec.rstrip("?").split("*")[1])
                least = 0 if spec.endswith("?") else 1
                if not least <= len(vals) <= limit:
                    raise ValueError(f"tt.{name} takes {least} to {limit} {base} values, got {len(vals)}")
                seg += [1] * len(vals) + [0] * (limit - len(vals))
            else:
                seg.append(len(vals))
            flat += vals
        segments = {}
        if opdef.needs_segments(opdef.operands):
            segments["operandSegmentSizes"] = seg
        if opdef.needs_segments(opdef.results):
            rseg: list[int] = []
            n = len(results)
            for spec in opdef.results:
                if "*" in spec:
                    limit = int(spec.split("*")[1])
                    rseg += [1] * n + [0] * (limit - n)
                else:
                    rseg.append(1)
            segments["resultSegmentSizes"] = rseg
        return self.op(f"tt.{name}", flat, results, attrs, regions, segments)

    # -- attributes --------------------------------------------------------------------------------
    def i32_attr(self, v: int) -> ir.Attribute:
        return ir.IntegerAttr.get(self.i32, int(v))

    def i64_attr(self, v: int) -> ir.Attribute:
        return ir.IntegerAttr.get(self.i64, int(v))

    def bool_attr(self, v: bool) -> ir.Attribute:
        return ir.BoolAttr.get(bool(v), context=self.context)

    def str_attr(self, s: str) -> ir.Attribute:
        return ir.StringAttr.get(s, context=self.context)

    def i32_array_attr(self, vals: Sequence[int]) -> ir.Attribute:
        return ir.DenseI32ArrayAttr.get([int(v) for v in vals], context=self.context)

    # -- types -------------------------------------------------------------------------------------
    def _parse_type(self, text: str) -> ir.Type:
        t = self._types.get(text)
        if t is None:
            t = self._types[text] = ir.Type.parse(text, self.context)
        return t

    def get_int_ty(self, bits: int) -> ir.Type:
        return self._parse_type(f"i{bits}")

    def get_int1_ty(self) -> ir.Type:
        return self.i1

    def get_int8_ty(self) -> ir.Type:
        return self.get_int_ty(8)

    def get_int16_ty(self) -> ir.Type:
        return self.get_int_ty(16)

    def get_int32_ty(self) -> ir.Type:
        return self.i32

    def get_int64_ty(self) -> ir.Type:
        return self.i64

    def get_half_ty(self) -> ir.Type:
        return self._parse_type("f16")

    def get_bf16_ty(self) -> ir.Type:
        return self._parse_type("bf16")

    def get_float_ty(self) -> ir.Type:
        return self._parse_type("f32")

    def get_double_ty(self) -> ir.Type:
        return self._parse_type("f64")

    def get_fp8_ty(self, name: str) -> ir.Type:
        return self._parse_type(MLIR_OF[name])

    def get_ptr_ty(self, element: ir.Type, address_space: int = 1) -> ir.Type:
        return self._parse_type(f"!tt.ptr<{element}>")

    def get_tensordesc_ty(self, block: ir.Type) -> ir.Type:
        return self._parse_type(f"!tt.tensordesc<{block}>")

    def get_block_ty(self, element: ir.Type, shape: Sequence[int]) -> ir.Type:
        return ir.RankedTensorType.get(list(shape), element, loc=self.loc)

    def get_function_ty(self, inputs: Sequence[ir.Type], outputs: Sequence[ir.Type]) -> ir.Type:
        return ir.FunctionType.get(list(inputs), list(outputs), context=self.context)

    @staticmethod
    def element_type(ty: ir.Type) -> ir.Type:
        if isinstance(ty, ir.RankedTensorType):
            return ir.RankedTensorType(ty).element_type
        return ty

    def with_shape_of(self, elt: ir.Type, like: ir.Value) -> ir.Type:
        if isinstance(like.type, ir.RankedTensorType):
            return self.get_block_ty(elt, ir.RankedTensorType(like.type).shape)
        return elt

    # -- constants ---------------------------------------------------------------------------------
    def get_constant(self, value: Any, ty: ir.Type) -> ir.Value:
        elt = self.element_type(ty)
        if isinstance(elt, ir.IntegerType):
            width = ir.IntegerType(elt).width
            v = int(value) & ((1 << width) - 1)
            if v >= 1 << (width - 1) and width > 1:
                v -= 1 << width
            if width == 1:
                v = -1 if v else 0
            attr = ir.IntegerAttr.get(elt, v)
        else:
            attr = ir.FloatAttr.get(elt, float(value))
        if elt != ty:
            attr = ir.DenseElementsAttr.get_splat(ty, attr)
        return self.op("arith.constant", [], [ty], {"value": attr}).result

    def get_int1(self, v: bool) -> ir.Value:
        return self.get_constant(int(bool(v)), self.i1)

    def get_int32(self, v: int) -> ir.Value:
        return self.get_constant(v, self.i32)

    def get_int64(self, v: int) -> ir.Value:
        return self.get_constant(v, self.i64)

    def get_null_value(self, ty: ir.Type) -> ir.Value:
        return self.get_constant(0, ty)

    def get_all_ones_value(self, ty: ir.Type) -> ir.Value:
        return self.get_constant(-1, ty)

    # -- generic elementwise -----------------------------------------------------------------------
    def unary(self, name: str, x: ir.Value, result: Optional[ir.Type] = None) -> ir.Value:
        return self.op(name, [x], [result or x.type]).result

    def binary(self, name: str, a: ir.Value, b: ir.Value, result: Optional[ir.Type] = None) -> ir.Value:
        return self.op(name, [a, b], [result or a.type]).result

    def cmpi(self, pred: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.op("arith.cmpi", [a, b], [self.with_shape_of(self.i1, a)],
                       {"predicate": self.i64_attr(CMPI[pred])}).result

    def cmpf(self, pred: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.op("arith.cmpf", [a, b], [self.with_shape_of(self.i1, a)],
                       {"predicate": self.i64_attr(CMPF[pred])}).result

    def select(self, c: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.op("arith.select", [c, a, b], [a.type]).result

    def cast(self, name: str, x: ir.Value, ty: ir.Type) -> ir.Value:
        return self.op(name, [x], [ty]).result

    # -- tile ops ----------------------------------------------------------------------------------
    def get_program_id(self, axis: int) -> ir.Value:
        return self.tt("get_program_id", {}, [self.i32], {"axis": self.i32_attr(axis)}).result

    def get_num_programs(self, axis: int) -> ir.Value:
        return self.tt("get_num_programs", {}, [self.i32], {"axis": self.i32_attr(axis)}).result

    def make_range(self, start: int, end: int) -> ir.Value:
        ty = self.get_block_ty(self.i32, [end - start])
        return self.tt("make_range", {}, [ty], {"start": self.i32_attr(start), "end": self.i32_attr(end)}).result

    def splat(self, x: ir.Value, ty: ir.Type) -> ir.Value:
        return self.tt("splat", {"src": x}, [ty]).result

    def broadcast(self, x: ir.Value, ty: ir.Type) -> ir.Value:
        return self.tt("broadcast", {"src": x}, [ty]).result

    def expand_dims(self, x: ir.Value, ty: ir.Type, axis: int) -> ir.Value:
        return self.tt("expand_dims", {"src": x}, [ty], {"axis": self.i32_attr(axis)}).result

    def reshape(self, x: ir.Value, ty: ir.Type, allow_reorder: bool) -> ir.Value:
        attrs = {"allow_reorder": ir.UnitAttr.get(self.context)} if allow_reorder else {}
        return self.tt("reshape", {"src": x}, [ty], attrs).result

    def trans(self, x: ir.Value, ty: ir.Type, order: Sequence[int]) -> ir.Value:
        return self.tt("trans", {"src": x}, [ty], {"order": self.i32_array_attr(order)}).result

    def addptr(self, ptr: ir.Value, offset: ir.Value) -> ir.Value:
        return self.tt("addptr", {"ptr": ptr, "offset": offset}, [ptr.type]).result

    def load(self, ptr: ir.Value, mask: Optional[ir.Value], other: Optional[ir.Value], result: ir.Type,
             attrs: dict[str, ir.Attribute]) -> ir.Value:
        return self.tt("load", {"ptr": ptr, "mask": mask, "other": other}, [result], attrs).result

    def store(self, ptr: ir.Value, value: ir.Value, mask: Optional[ir.Value], attrs: dict[str, ir.Attribute]) -> None:
        self.tt("store", {"ptr": ptr, "value": value, "mask": mask}, [], attrs)

    def yield_(self, values: Sequence[ir.Value], dialect: str = "scf") -> None:
        self.op(f"{dialect}.yield", list(values), [])
