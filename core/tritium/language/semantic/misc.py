"""Dot, reductions and scans, math functions, debugging and compiler hints."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from ... import knobs
from ...dialect.ops import ROUNDED_ALONE, inline_asm_elements_per_register
from .. import core as tl
from ..core import CompileTimeError
from .ops import Part

T = tl.tensor

DOT_PRECISIONS = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")


class Misc(Part):
    # -- math -------------------------------------------------------------------------------------
    def unary_math(self, name: str, x: Any, float_only: bool = True) -> T:
        x = self.sem.to_tensor(x)
        if float_only and not x.dtype.is_floating():
            raise CompileTimeError(f"{name.split('.')[-1]} expects a floating-point argument, got {x.dtype}; "
                                   "convert it first, e.g. x.to(tl.float32)")
        return T(self.builder.unary(name, x.handle), x.type)

    def fma(self, x: Any, y: Any, z: Any) -> T:
        x, y = self.sem.binary_op_type_checking(x, y)
        x, z = self.sem.binary_op_type_checking(x, z)
        x, y = self.sem.binary_op_type_checking(x, y)
        if not x.dtype.is_floating():
            raise CompileTimeError(f"fma expects floating-point arguments, got {x.dtype}")
        return T(self.builder.op("math.fma", [x.handle, y.handle, z.handle], [x.handle.type]).result, x.type)

    def umulhi(self, x: Any, y: Any) -> T:
        x, y = self.sem.binary_op_type_checking(x, y)
        if not x.dtype.is_int():
            raise CompileTimeError(f"umulhi expects integer arguments, got {x.dtype}")
        return T(self.builder.tt("mulhiui", {"x": x.handle, "y": y.handle}, [x.handle.type]).result, x.type)

    def precise(self, name: str, *args: Any) -> T:
        vals = [self.sem.to_tensor(a) for a in args]
        if len(vals) == 2:
            vals = list(self.sem.binary_op_type_checking(*vals))
        if not vals[0].dtype.is_floating():
            raise CompileTimeError(f"{name} expects floating-point arguments, got {vals[0].dtype}")
        keys = ("x", "y")
        op = self.builder.tt(name, {k: v.handle for k, v in zip(keys, vals)}, [vals[0].handle.type])
        return T(op.result, vals[0].type)

    def libdevice_op(self, name: str, args: Sequence[T], ret: tl.dtype, rounded_alone: bool = False) -> T:
        """An upstream ``math``/``arith`` op on same-shaped ``args`` whose element result type is ``ret``.
        ``rounded_alone``: the op rounds its own result and is never fused with another (libdevice's ``*_rn``,
        which error-free transformations such as TwoProduct rely on), marked ``tritium.rn`` for the lowerings."""
        ty = args[0].type.with_element_ty(ret) if args[0].type.is_block() else ret
        attrs = {ROUNDED_ALONE: self.builder.bool_attr(True)} if rounded_alone else None
        op = self.builder.op(name, [a.handle for a in args], [self.sem.ir_type(ty)], attrs)
        return T(op.result, ty)

    def extern_elementwise(self, lib_name: str, lib_path: str, args: Sequence[Any], symbol: str,
                           ret_dtype: tl.dtype, is_pure: bool = True) -> T:
        vals = [self.sem.to_tensor(a) for a in args]
        vals = list(self.sem.broadcast_tensors(*vals)) if len(vals) > 1 else vals
        ret_ty = vals[0].type.with_element_ty(ret_dtype) if vals[0].type.is_block() else ret_dtype
        b = self.builder
        attrs = {"libname": b.str_attr(lib_name), "libpath": b.str_attr(lib_path), "symbol": b.str_attr(symbol),
                 "pure": b.bool_attr(is_pure)}
        op = b.tt("extern_elementwise", {"srcs": [v.handle for v in vals]},
                  [self.sem.ir_type(ret_ty)], attrs)
        return T(op.result, ret_ty)

    def inline_asm_elementwise(self, asm: str, constraints: str, args: Sequence[Any], dtypes: Sequence[tl.dtype],
                               is_pure: bool, pack: int) -> tuple[T, ...]:
        if len(dtypes) > 8:
            raise CompileTimeError(f"inline_asm_elementwise gives up to 8 results, got {len(dtypes)}")
        vals = [self.sem.to_tensor(a) for a in args]
        vals = list(self.sem.broadcast_tensors(*vals)) if len(vals) > 1 else vals
        # results take the arguments' broadcast shape; without arguments they are scalars
        block = bool(vals) and vals[0].type.is_block()
        numel = vals[0].type.numel if block else 1
        if pack < 1 or numel % pack:
            raise CompileTimeError(f"inline_asm_elementwise: pack={pack} must be a positive divisor of the "
                                   f"{numel} elements of the arguments")
        out_tys = [vals[0].type.with_element_ty(d) if block else d for d in dtypes]
        _check_asm_constraints(constraints, [v.type.scalar for v in vals], list(dtypes), pack)
        b = self.builder
        attrs = {"asm_string": b.str_attr(asm), "constraints": b.str_attr(constraints), "pure": b.bool_attr(is_pure),
                 "packed_element": b.i32_attr(pack)}
        op = b.tt("elementwise_inline_asm", {"srcs": [v.handle for v in vals]},
                  [self.sem.ir_type(t) for t in out_tys], attrs)
        return tuple(T(op.results[i], t) for i, t in enumerate(out_tys))

    # -- dot --------------------------------------------------------------------------------------
    def dot(self, a: T, b: T, acc: Optional[T], input_precision: Optional[str], max_num_imprecise_acc: Optional[int],
            out_dtype: tl.dtype) -> T:
        for name, x in (("first", a), ("second", b)):
            if not isinstance(x, T) or not x.type.is_block():
                raise CompileTimeError(f"the {name} operand of dot must be a block of rank 2 or more")
        if not (a.dtype.is_fp8() and b.dtype.is_fp8()):
            allowed = (tl.int8, tl.uint8, tl.float16, tl.bfloat16, tl.float32, tl.float64)
            for x in (a, b):
                if x.dtype not in allowed:
                    raise CompileTimeError(f"dot does not support {x.dtype} operands")
            if a.dtype != b.dtype:
                raise CompileTimeError(f"dot operands must have the same dtype, got {a.dtype} and {b.dtype}; "
                                       "cast one of them")
        ra, rb = len(a.shape), len(b.shape)
        if ra == rb > 3:
            return self._dot_multi_batch(a, b, acc, input_precision, max_num_imprecise_acc, out_dtype)
        if not (ra == rb == 2 or ra == rb == 3):
            raise CompileTimeError(f"dot operands must have the same rank, 2 or more, got shapes {a.type.shape} "
                                   f"and {b.type.shape}")
        M, K = a.type.shape[-2], a.type.shape[-1]
        K2, N = b.type.shape[-2], b.type.shape[-1]
        if K != K2:
            raise CompileTimeError(f"dot shapes {list(a.type.shape)} and {list(b.type.shape)} do not chain: "
                                   f"the inner dimensions are {K} and {K2}")
        if ra == 3 and a.type.shape[0] != b.type.shape[0]:
            raise CompileTimeError("batched dot operands must have the same batch size")
        min_mnk = getattr(self.options, "min_dot_size", (16, 16, 16)) if self.options is not None else (16, 16, 16)
        if M < min_mnk[0] or N < min_mnk[1] or K < min_mnk[2]:
            raise CompileTimeError(f"dot needs M >= {min_mnk[0]}, N >= {min_mnk[1]} and K >= {min_mnk[2]}, got "
                                   f"M={M}, N={N}, K={K}; use larger blocks (or elementwise * and tl.sum)")
        if input_precision is None:
            input_precision = knobs.language.fp32_default or getattr(self.options, "default_dot_input_precision",
                                                                       "tf32")
        input_precision = str(input_precision).lower()
        allowed_prec = getattr(self.options, "allowed_dot_input_precisions", DOT_PRECISIONS)
        if input_precision not in allowed_prec:
            raise CompileTimeError(f"input_precision must be one of {', '.join(allowed_prec)}, "
                                   f"got {input_precision!r}")
        if a.dtype.is_fp8() and b.dtype.is_fp8() and max_num_imprecise_acc is not None and max_num_imprecise_acc > K:
            raise CompileTimeError(f"max_num_imprecise_acc ({max_num_imprecise_acc}) must be <= K ({K})")
        if a.dtype.is_int():
            if a.dtype != tl.int8:
                raise CompileTimeError(f"integer dot supports int8 operands only, got {a.dtype}; cast to int8 or "
                                       "to a float type")
            ret = tl.int32
        elif out_dtype.is_bf16():
            raise CompileTimeError("out_dtype=bfloat16 is not supported; use float32 and cast the result")
        elif a.dtype.is_fp32() or a.dtype.is_bf16():
            ret = tl.float32
        elif a.dtype.is_fp64():
            ret = tl.float64
        else:
            ret = out_dtype
        shape = ([a.type.shape[0]] if ra == 3 else []) + [M, N]
        ret_ty = tl.block_type(ret, shape)
        if acc is None:
            acc = self.sem.full(shape, 0, ret)
        else:
            acc = self.sem.to_tensor(acc)
            if list(acc.type.shape) != shape:
                raise CompileTimeError(f"the accumulator of dot has shape {list(acc.type.shape)}, expected {shape}")
            if acc.dtype != ret:
                raise CompileTimeError(f"the accumulator of dot has dtype {acc.dtype}, expected {ret}")
        mnia = int(max_num_imprecise_acc or 0)
        attrs = {"input_precision": self.builder.str_attr(input_precision),
                 "max_num_imprecise_acc": self.builder.i32_attr(mnia)}
        op = self.builder.tt("dot", {"a": a.handle, "b": b.handle, "c": acc.handle},
                             [self.sem.ir_type(ret_ty)], attrs)
        return T(op.result, ret_ty)

    def _dot_multi_batch(self, a: T, b: T, acc: Optional[T], input_precision: Optional[str],
                         max_num_imprecise_acc: Optional[int], out_dtype: tl.dtype) -> T:
        """A dot over several batch dimensions (Triton accepts any rank >= 2) is the 3-D batched dot of operands
        whose leading dimensions are flattened into one: a row-major reshape keeps each batch's matrix intact, so
        no backend needs a rank-N dot of its own."""
        batch = list(a.type.shape[:-2])
        if list(b.type.shape[:-2]) != batch:
            raise CompileTimeError(f"batched dot operands must have the same batch dimensions, got shapes "
                                   f"{list(a.type.shape)} and {list(b.type.shape)}")
        nb = 1
        for d in batch:
            nb *= d
        a3 = self.sem.reshape(a, [nb] + list(a.type.shape[-2:]))
        b3 = self.sem.reshape(b, [nb] + list(b.type.shape[-2:]))
        M, N = a.type.shape[-2], b.type.shape[-1]
        if acc is not None:
            acc = self.sem.to_tensor(acc)
            if list(acc.type.shape) != batch + [M, N]:
                raise CompileTimeError(f"the accumulator of dot has shape {list(acc.type.shape)}, expected "
                                       f"{batch + [M, N]}")
            acc = self.sem.reshape(acc, [nb, M, N])
        out = self.dot(a3, b3, acc, input_precision, max_num_imprecise_acc, out_dtype)
        return self.sem.reshape(out, batch + [M, N])

    # -- reductions and scans ---------------------------------------------------------------------
    def _region_op(self, kind: str, inputs: Sequence[T], axis: Optional[int],
                   combine: Callable[[list[T], list[T]], Sequence[T]], reverse: bool = False) -> tuple[T, ...]:
        if not inputs:
            raise CompileTimeError(f"{kind} needs at least one input")
        inputs = [self.sem.to_tensor(x) for x in inputs]
        if axis is None:
            if kind == "scan":
                raise CompileTimeError("scan needs an axis")
            inputs = [self.sem.reshape(x, [x.type.numel], can_reorder=True) if x.type.is_block() and
                      len(x.type.shape) > 1 else x for x in inputs]
            axis = 0
        for x in inputs:
            if not x.type.is_block():
                raise CompileTimeError(f"{kind} needs block inputs, got a scalar of type {x.type}")
        shape = list(inputs[0].type.shape)
        rank = len(shape)
        if not -rank <= axis < rank:
            raise CompileTimeError(f"{kind} axis {axis} is out of range for a tensor of rank {rank}")
        if axis < 0:
            axis += rank
        for x in inputs:
            if list(x.type.shape) != shape:
                raise CompileTimeError(f"all {kind} inputs must have the same shape, got "
                                       f"{[list(i.type.shape) for i in inputs]}")
        b = self.builder
        scalars = [x.type.scalar for x in inputs]
        if kind == "reduce":
            out_shape = [s for i, s in enumerate(shape) if i != axis]
        else:
            out_shape = shape
        out_tys = [tl.block_type(s, out_shape) if out_shape else s for s in scalars]
        attrs = {"axis": b.i32_attr(axis)}
        if kind == "scan":
            attrs["reverse"] = b.bool_attr(reverse)
        op = b.tt(kind, {"srcs": [x.handle for x in inputs]},
                  [self.sem.ir_type(t) for t in out_tys], attrs, regions=1)
        elt_ir = [self.sem.ir_type(s) for s in scalars]
        block = op.regions[0].blocks.append(*(elt_ir + elt_ir))
        args = list(block.arguments)
        n = len(inputs)
        with b.at(block):
            lhs = [T(args[i], scalars[i]) for i in range(n)]
            rhs = [T(args[n + i], scalars[i]) for i in range(n)]
            results = combine(lhs, rhs)
            if isinstance(results, T):
                results = [results]
            results = list(results)
            if len(results) != n:
                raise CompileTimeError(f"the combine function of {kind} returned {len(results)} values for "
                                       f"{n} inputs")
            handles = []
            for r, s in zip(results, scalars):
                r = self.sem.to_tensor(r)
                if r.type.is_block():
                    raise CompileTimeError(f"the combine function of {kind} must return scalars")
                if r.dtype != s:
                    r = self.sem.cast(r, s)
                handles.append(r.handle)
            b.yield_(handles, dialect="gpu")
        return tuple(T(op.results[i], out_tys[i]) for i in range(n))

    def reduction(self, inputs: Sequence[T], axis: Optional[int], combine: Callable[..., Any]) -> tuple[T, ...]:
        return self.sem._region_op("reduce", inputs, axis, combine)

    def associative_scan(self, inputs: Sequence[T], axis: int, combine: Callable[..., Any],
                         reverse: bool = False) -> tuple[T, ...]:
        return self.sem._region_op("scan", inputs, axis, combine, reverse)

    def histogram(self, x: T, num_bins: int, mask: Optional[T]) -> T:
        if not x.type.is_block() or len(x.type.shape) != 1 or not x.dtype.is_int():
            raise CompileTimeError("histogram needs a 1-D integer block")
        if mask is not None:
            mask = self.sem.broadcast_impl_shape(self.sem.to_tensor(mask), list(x.type.shape))
        ty = tl.block_type(tl.int32, [num_bins])
        op = self.builder.tt("histogram", {"src": x.handle, "mask": mask.handle if mask is not None else None},
                             [self.sem.ir_type(ty)])
        return T(op.result, ty)

    def gather(self, src: T, index: T, axis: int) -> T:
        if not index.dtype.is_int():
            raise CompileTimeError("gather's index must be an integer block")
        rank = len(src.type.shape)
        if len(index.type.shape) != rank:
            raise CompileTimeError("gather's source and index must have the same rank")
        if axis < 0:
            axis += rank
        for d in range(rank):
            if d != axis and index.type.shape[d] != src.type.shape[d]:
                raise CompileTimeError(f"gather's index dimension {d} must match the source's")
        ty = tl.block_type(src.dtype, list(index.type.shape))
        op = self.builder.tt("gather", {"src": src.handle, "indices": index.handle}, [self.sem.ir_type(ty)],
                             {"axis": self.builder.i32_attr(axis)})
        return T(op.result, ty)

    # -- debugging and hints ----------------------------------------------------------------------
    def device_print(self, prefix: str, args: Sequence[T], hex: bool) -> T:
        if not prefix.endswith(" ") and args:
            prefix += " "
        if not prefix.endswith(": ") and args:
            prefix = prefix[:-1] + ": "
        if len(prefix) > 2 and not prefix.startswith(" "):
            prefix = " " + prefix
        b = self.builder
        vals = [self.sem.to_tensor(a) for a in args]
        attrs = {"prefix": b.str_attr(prefix), "hex": b.bool_attr(hex),
                 "is_signed": b.i32_array_attr([int(v.dtype.is_int_signed()) for v in vals])}
        if vals:
            for i in range(0, len(vals), 16):
                b.tt("print", {"args": [v.handle for v in vals[i:i + 16]]}, [], attrs)
        else:
            b.op("tt.print", [], [], {**attrs, "operandSegmentSizes": b.i32_array_attr([0] * 16)})
        return T(None, tl.void)

    def device_assert(self, cond: T, msg: str, mask: Optional[T] = None) -> T:
        if not getattr(self.options, "debug", False):
            return T(None, tl.void)
        cond = self.sem.to_tensor(cond)
        if mask is not None:
            cond = self.sem.or_(cond, self.sem.not_(mask))
        cond = self.sem.cast(cond, tl.int1)
        self.builder.tt("assert", {"cond": cond.handle}, [], {"message": self.builder.str_attr(msg)})
        return T(None, tl.void)

    def assume(self, cond: T) -> T:
        cond = self.sem.to_tensor(cond)
        self.builder.tt("assume", {"cond": cond.handle}, [])
        return T(None, tl.void)

    def debug_barrier(self) -> T:
        self.builder.tt("debug_barrier", {}, [])
        return T(None, tl.void)

    def _hint(self, x: T, values: Sequence[int], attr: str, what: str) -> T:
        values = [int(tl._unwrap(v)) for v in values]
        rank = max(1, len(x.shape))
        if len(values) != rank:
            raise CompileTimeError(f"{what} needs {rank} value(s) for a tensor of rank {len(x.shape)}, "
                                   f"got {len(values)}")
        owner = getattr(x.handle, "owner", None)
        if owner is not None and hasattr(owner, "attributes"):
            owner.attributes[attr] = self.builder.i32_array_attr(values)
        return x

    def multiple_of(self, x: T, values: Sequence[int]) -> T:
        return self._hint(x, values, "tt.divisibility", "multiple_of")

    def max_contiguous(self, x: T, values: Sequence[int]) -> T:
        return self._hint(x, values, "tt.contiguity", "max_contiguous")

    def max_constancy(self, x: T, values: Sequence[int]) -> T:
        return self._hint(x, values, "tt.constancy", "max_constancy")


def _asm_registers(ty: tl.dtype, pack: int) -> int:
    """Registers one group of ``pack`` elements of ``ty`` takes in an inline-asm statement (gpu/lower/inline_asm.py
    forms them): elements under 32 bits share 32-bit registers, wider ones and pointers take one each."""
    bits = 64 if ty.is_ptr() else 32 if ty.primitive_bitwidth == 1 else ty.primitive_bitwidth
    return pack // inline_asm_elements_per_register(bits, pack)


def _check_asm_constraints(constraints: str, args: list, results: list, pack: int) -> None:
    entries = [c.strip() for c in constraints.split(",") if c.strip() and not c.strip().startswith("~")]
    outs = sum(1 for c in entries if c.startswith("="))
    want_out = sum(_asm_registers(t, pack) for t in results)
    want_in = sum(_asm_registers(t, pack) for t in args)
    if outs != want_out or len(entries) - outs != want_in:
        raise CompileTimeError(
            f"inline_asm_elementwise: the constraints {constraints!r} name {outs} output(s) and {len(entries) - outs} "
            f"input(s), but with pack={pack} the results take {want_out} register(s) and the arguments {want_in}",
            "give one constraint per register, outputs first (\"=r\"), then inputs: an element of 32 bits or more "
            "(or a pointer) is a register of its own, narrower elements of one group share 32-bit registers")
