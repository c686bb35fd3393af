"""The interpreter's semantic: Triton's type checking and promotion, shared with the compiler (every rule lives
in :class:`tritium.language.semantic.Semantic`), over the numpy builder. Only what has regions or talks to
the user differs: reductions and scans run their combine function on whole arrays, ``device_print``
prints, ``device_assert`` raises.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..language import core as tl
from ..language.core import CompileTimeError
from ..language.semantic import Semantic
from .floats import quiet_nans
from .optable import INTERPRETER_OPS
from .uniform import ElementwiseOnly as ElementwiseOnly
from .values import V, as_type, shape_of, storage

T = tl.tensor


class InterpreterOptions:
    """What Semantic reads of compile options, with the CPU backend's defaults; launch options and knobs
    override them as they do when compiling (asserts are checked with ``debug``, as compiled)."""
    debug = False
    default_dot_input_precision = "ieee"
    allowed_dot_input_precisions = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")
    # Triton's interpreter takes any dot size (its builder's min_dot_size is (1, 1, 1)): the 16 minimum is a
    # compiled backend's MMA tiling constraint, and numpy's matmul has none
    min_dot_size = (1, 1, 1)
    sanitize_overflow = False

    def __init__(self, **overrides: Any) -> None:
        for k, v in overrides.items():
            if k in ("debug", "default_dot_input_precision", "allowed_dot_input_precisions", "min_dot_size",
                     "sanitize_overflow"):
                setattr(self, k, tuple(v) if isinstance(v, list) else v)


class InterpreterSemantic(Semantic):
    def __init__(self, builder: Any, launch: Any, options: Optional[InterpreterOptions] = None) -> None:
        super().__init__(builder, options or InterpreterOptions())
        self.launch = launch

    def ir_type(self, ty: tl.dtype) -> Any:
        return ty

    # -- reductions and scans ----------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("tt.reduce", "tt.scan", dispatch=False)
    def _region_op(self, kind: str, inputs: Sequence[T], axis: Optional[int],
                   combine: Callable[[list[T], list[T]], Sequence[T]], reverse: bool = False) -> tuple[T, ...]:
        if not inputs:
            raise CompileTimeError(f"{kind} needs at least one input")
        inputs = [self.to_tensor(x) for x in inputs]
        if axis is None:
            if kind == "scan":
                raise CompileTimeError("scan needs an axis")
            inputs = [self.reshape(x, [x.type.numel], can_reorder=True) if x.type.is_block() and
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
        scalars = [x.type.scalar for x in inputs]
        out_shape = [s for i, s in enumerate(shape) if i != axis] if kind == "reduce" else shape
        out_tys = [tl.block_type(s, out_shape) if out_shape else s for s in scalars]
        b = max(x.handle.a.shape[0] for x in inputs)
        # each in its type's storage: a cast between signed and unsigned of one width emits no op, so an input may
        # hold the other signedness, and numpy promotes int64 with uint64 (the scan's concatenations) to float64
        arrays = [as_type(np.broadcast_to(x.handle.a, (b, ) + tuple(shape)), storage(s))
                  for x, s in zip(inputs, scalars)]
        ax = axis + 1
        ufunc = self._simple_combine(combine, scalars) if len(inputs) == 1 else None
        if ufunc is not None:
            a = arrays[0]
            if ufunc in (np.fmax, np.fmin):
                a = quiet_nans(a)  # a signaling NaN is ignored like a quiet one (IEEE minimumNumber)
            if kind == "scan":
                a = np.flip(a, ax) if reverse else a
                r = ufunc.accumulate(a, axis=ax, dtype=a.dtype)
                if ufunc in (np.fmax, np.fmin):
                    r = _zeros_ordered(r, a, ax, ufunc is np.fmax, scan=True)
                res = [np.flip(r, ax) if reverse else r]
            elif ufunc in (np.fmax, np.fmin):
                # the compiled combine is IEEE maximumNumber/minimumNumber: -0 < +0 whatever the order
                res = [_zeros_ordered(ufunc.reduce(a, axis=ax), a, ax, ufunc is np.fmax, scan=False)]
            elif scalars[0].is_floating():
                # in order, rounding every step, as the compiled loop does
                res = [np.take(ufunc.accumulate(a, axis=ax, dtype=a.dtype), -1, axis=ax)]
            else:
                res = [ufunc.reduce(a, axis=ax, dtype=a.dtype)]
            return tuple(T(V(r, t), t) for r, t in zip(res, out_tys))
        try:
            if kind == "reduce":
                res = self._tree_reduce(arrays, ax, scalars, combine)
                res = [np.squeeze(r, axis=ax) for r in res]
            else:
                if reverse:
                    arrays = [np.flip(a, ax) for a in arrays]
                res = self._scan(arrays, ax, scalars, combine)
                if reverse:
                    res = [np.flip(r, ax) for r in res]
        except ElementwiseOnly:
            res = self._sequential(kind, arrays, ax, scalars, combine, reverse)
        return tuple(T(V(r, t), t) for r, t in zip(res, out_tys))

    _UFUNCS = {"arith.addf": np.add, "arith.addi": np.add, "arith.mulf": np.multiply, "arith.muli": np.multiply,
               "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin, "arith.maximumf": np.maximum,
               "arith.minimumf": np.minimum, "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or,
               "arith.xori": np.bitwise_xor}

    def _simple_combine(self, combine: Callable, scalars: list[tl.dtype]) -> Optional[np.ufunc]:
        """The numpy ufunc equal to ``combine`` when it is one binary operation on its two arguments (sum,
        max, cumsum...), found by running it once on probes; None otherwise."""
        elt = scalars[0]
        if elt.name == "bf16" or elt.is_fp8() or elt.is_bool():
            return None  # rounding every step to a type numpy lacks, or i1 wrap-around: not a ufunc
        lhs, rhs = V(np.zeros(1, self._storage(elt)), elt), V(np.zeros(1, self._storage(elt)), elt)
        b = self.builder
        b.trace = []
        try:
            out = combine([T(lhs, elt)], [T(rhs, elt)])
        except Exception:
            return None
        finally:
            trace, b.trace = b.trace, None
        out = list(out.values if isinstance(out, tl.tuple_value) else ([out] if isinstance(out, T) else out))
        if len(trace) != 1 or len(out) != 1 or not isinstance(out[0], T):
            return None
        name, a, c, r = trace[0]
        if out[0].handle is not r or {id(a), id(c)} != {id(lhs), id(rhs)}:
            return None
        return self._UFUNCS.get(name)

    @staticmethod
    def _storage(elt: tl.dtype) -> np.dtype:
        return storage(elt)

    def _combine(self, combine: Callable, lhs: list[np.ndarray], rhs: list[np.ndarray],
                 scalars: list[tl.dtype]) -> list[np.ndarray]:
        results = combine([T(V(a, s), s) for a, s in zip(lhs, scalars)],
                          [T(V(a, s), s) for a, s in zip(rhs, scalars)])
        if isinstance(results, T):
            results = [results]
        results = list(results.values if isinstance(results, tl.tuple_value) else results)
        if len(results) != len(scalars):
            raise CompileTimeError(f"the combine function returned {len(results)} values for {len(scalars)} inputs")
        out = []
        for r, s in zip(results, scalars):
            r = self.to_tensor(r)
            if r.type.is_block():
                raise CompileTimeError("the combine function must return scalars")
            if r.dtype != s:
                r = self.cast(r, s)
            # in the storage of its type, as the inputs are (a same-width sign cast in the combine emits no op)
            out.append(np.broadcast_to(as_type(r.handle.a, storage(s)),
                                       np.broadcast_shapes(lhs[0].shape, rhs[0].shape)))
        return out

    def _tree_reduce(self, arrays: list[np.ndarray], ax: int, scalars: list[tl.dtype],
                     combine: Callable) -> list[np.ndarray]:
        # adjacent pairs keep left operands left of right ones: right for any associative combine
        while arrays[0].shape[ax] > 1:
            n = arrays[0].shape[ax]
            even = n - n % 2
            lhs = [np.take(a, np.arange(0, even, 2), axis=ax) for a in arrays]
            rhs = [np.take(a, np.arange(1, even, 2), axis=ax) for a in arrays]
            out = self._combine(combine, lhs, rhs, scalars)
            if n % 2:
                out = [np.concatenate([o, np.take(a, [n - 1], axis=ax)], axis=ax) for o, a in zip(out, arrays)]
            arrays = out
        return arrays

    def _scan(self, arrays: list[np.ndarray], ax: int, scalars: list[tl.dtype], combine: Callable) -> list[np.ndarray]:
        n = arrays[0].shape[ax]
        d = 1
        while d < n:
            lhs = [np.take(a, np.arange(0, n - d), axis=ax) for a in arrays]
            rhs = [np.take(a, np.arange(d, n), axis=ax) for a in arrays]
            out = self._combine(combine, lhs, rhs, scalars)
            arrays = [np.concatenate([np.take(a, np.arange(0, d), axis=ax), o], axis=ax) for a, o in zip(arrays, out)]
            d *= 2
        return arrays

    def _sequential(self, kind: str, arrays: list[np.ndarray], ax: int, scalars: list[tl.dtype],
                    combine: Callable, reverse: bool) -> list[np.ndarray]:
        """One element at a time, in order, for combine functions with control flow on their values."""
        moved = [np.moveaxis(a, ax, -1) for a in arrays]
        lead = moved[0].shape[:-1]
        n = moved[0].shape[-1]
        outs = [np.empty(lead + ((n, ) if kind == "scan" else ()), a.dtype) for a in moved]
        order = range(n - 1, -1, -1) if reverse else range(n)
        for pos in np.ndindex(*lead):
            acc = None
            for k in order:
                cur = [m[pos + (k, )][None] for m in moved]
                acc = cur if acc is None else self._combine(combine, acc, cur, scalars)
                if kind == "scan":
                    for o, a in zip(outs, acc):
                        o[pos + (k, )] = a[0]
            if kind == "reduce":
                for o, a in zip(outs, acc):
                    o[pos] = a[0]
        if kind == "scan":
            return [np.moveaxis(o, -1, ax) for o in outs]
        return outs

    # -- map_elementwise ---------------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("tt.map_elementwise", dispatch=False)
    def map_elementwise(self, inputs: Sequence[T], body: Callable[[list[T]], list[T]], pack: int) -> tuple[T, ...]:
        inputs = list(self.broadcast_tensors(*[self.to_tensor(x) for x in inputs]))
        shape = list(inputs[0].type.shape) if inputs[0].type.is_block() else []
        numel = int(np.prod(shape)) if shape else 1
        if numel % pack:
            raise CompileTimeError(f"pack={pack} does not divide the {numel} elements of the arguments")
        scalars = [x.type.scalar for x in inputs]
        b = max(x.handle.a.shape[0] for x in inputs)
        # (B, numel / pack, pack): element j of each pack is one scalar argument of the body
        arrays = [np.broadcast_to(x.handle.a, (b, ) + tuple(shape)).reshape(b, numel // pack, pack) for x in inputs]

        def run(cols: list[np.ndarray]) -> list[np.ndarray]:
            vals = [T(V(a[..., j], s), s) for a, s in zip(cols, scalars) for j in range(pack)]
            results = [self.to_tensor(r) for r in body(vals)]
            if not results or len(results) % pack:
                raise CompileTimeError(f"the mapped function returned {len(results)} values; with pack={pack} it "
                                       f"must return a multiple of {pack}")
            if any(r.type.is_block() for r in results):
                raise CompileTimeError("the function given to map_elementwise must return scalars")
            self._res_scalars = [r.type.scalar for r in results[::pack]]
            like = cols[0].shape[:-1]
            return [np.stack([np.broadcast_to(results[k * pack + j].handle.a, like) for j in range(pack)], axis=-1)
                    for k in range(len(results) // pack)]

        def one(cols: list[np.ndarray]) -> list[np.ndarray]:
            # a single pack: (1, pack) columns, so that each scalar argument has shape (1,)
            return [r.reshape(1, 1, pack) for r in run(cols)]

        try:
            outs = run(arrays)
        except ElementwiseOnly:
            # the body branches on its values: one pack at a time
            per = [one([a[i:i + 1, k] for a in arrays]) for i in range(b) for k in range(numel // pack)]
            outs = [np.concatenate([p[r] for p in per], axis=0).reshape(b, numel // pack, pack)
                    for r in range(len(per[0]))]
        out_tys = [tl.block_type(s, shape) if shape else s for s in self._res_scalars]
        return tuple(T(V(o.reshape((b, ) + tuple(shape)), t), t) for o, t in zip(outs, out_tys))

    # -- debugging ---------------------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("tt.print", dispatch=False)
    def device_print(self, prefix: str, args: Sequence[T], hex: bool) -> T:
        if not prefix.endswith(" ") and args:
            prefix += " "
        if not prefix.endswith(": ") and args:
            prefix = prefix[:-1] + ": "
        if len(prefix) > 2 and not prefix.startswith(" "):
            prefix = " " + prefix
        vals = [self.to_tensor(a) for a in args]
        self.launch.print_values(prefix, vals, hex)
        return T(None, tl.void)

    @INTERPRETER_OPS.lowers("tt.assert", dispatch=False)
    def device_assert(self, cond: T, msg: str, mask: Optional[T] = None) -> T:
        if not self.options.debug:
            return T(None, tl.void)  # as compiled: without debug the check is left out
        cond = self.to_tensor(cond)
        if mask is not None:
            cond = self.or_(cond, self.not_(mask))
        cond = self.cast(cond, tl.int1)
        ok = cond.handle.a
        if not ok.all():
            self.launch.assertion_failed(ok, msg, shape_of(cond.type))
        return T(None, tl.void)


def _zeros_ordered(r: np.ndarray, a: np.ndarray, ax: int, up: bool, scan: bool) -> np.ndarray:
    """A max (``up``) or min reduction or scan ``r`` of ``a`` along ``ax`` whose zero results take IEEE 754-2019
    order (-0 < +0): a zero max is +0 when a +0 was among the values, a zero min -0 when a -0 was."""
    if not (r == 0).any():
        return r
    wanted = (a == 0) & (np.signbit(a) != up)      # +0 for a max, -0 for a min
    seen = np.logical_or.accumulate(wanted, axis=ax) if scan else wanted.any(axis=ax)
    positive = seen if up else ~seen
    return np.where(r == 0, np.where(positive, np.abs(r), -np.abs(r)), r)
