"""One interpreted launch: its programs, run in batches, their output and their errors.

Programs run *batched*: one Python execution of the kernel computes many programs at once, every value
carrying a leading axis with one entry per program (1 where all programs agree). Most kernels' Python
control flow does not depend on the program id (the loops run over block counts, the branches test
compile-time values), so a whole grid runs as a handful of numpy operations per kernel line.

When programs of a batch disagree on a value that steers Python (an ``if`` on a program-dependent
scalar, a loop bound that depends on the program id, a spin lock), the runtime raises
:class:`~.runtime.Divergence` with the per-program values: the batch's memory writes are undone, and the
batch is split into groups of programs that agree, each rerun as a batch of its own (and split again if
it diverges later). A batch of one program cannot diverge, so this always ends. Atomics act in program
order, lane by lane, so every batched execution equals running the programs one after another in order.

Batches are sized so that a tile of the batch stays under about 4M elements; the largest tile a kernel
uses is remembered per specialization. Kernels that call ``breakpoint()`` run one program at a time (the
debugger then shows one program's values), as does every kernel with ``TRITIUM_INTERPRET_BATCH=0``.

The entry from a call (binding, grid, hooks, user errors reported as compile errors) is launcher.py.
"""
from __future__ import annotations

import ast
import bdb
import sys
import weakref
from typing import Any, Optional

import numpy as np

from .. import knobs
from ..language import core as tl
from ..language.aggregate import clone
from ..language.core import CompileTimeError, _ambient_semantic
from ..language.dtypes import str_to_ty, tuple_type
from ..runtime.safety import UnsafeArgumentError, check_array, is_read_only
from .args import make_binder, region_for
from .builder import NumpyBuilder
from .errors import (DeviceAssertionError, OutOfBoundsError, current_location, location_in_traceback,
                     out_of_bounds_message)
from .memory import Memory, OutOfBounds, ReadOnlyStore
from .rewrite import python_function
from .runtime import RT, Divergence, returned
from .semantic import InterpreterOptions, InterpreterSemantic
from .values import V, storage

#: a batch holds as many programs as keep the kernel's largest tile under this many elements
BATCH_ELEMENTS = 1 << 22
#: programs of the first batch of a specialization, whose largest tile is not known yet
FIRST_BATCH = 64


class _KernelState:
    """What an interpreted kernel keeps between launches: its Python function and binder, and by specialization
    the batch size that suits it."""

    def __init__(self, fn: Any) -> None:
        self.src = fn.src  # _unsafe_update_src replaces it: the state is rebuilt then
        for p in fn.params:
            if p.is_constexpr and p.do_not_specialize:  # as the compiler (CodeGenerator.generate) refuses it
                from .errors import InterpretedKernelError
                raise InterpretedKernelError(fn.__name__, None, None, f"{p.name} marked as constexpr and listed in "
                                             "do_not_specialize; a tl.constexpr is always specialized: drop one of the two")
        self.pyfn, self.debugger = python_function(fn, RT)
        self.binder = make_binder(fn)
        self.peak: dict[Any, int] = {}          # specialization -> largest tile (elements)
        self.divergent: set[Any] = set()        # specializations whose programs never agree


_STATES: "weakref.WeakKeyDictionary[Any, _KernelState]" = weakref.WeakKeyDictionary()


def kernel_state(fn: Any) -> _KernelState:
    st = _STATES.get(fn)
    if st is None or st.src is not fn.src:
        st = _STATES[fn] = _KernelState(fn)
    return st


class _Generator:
    """Stands in for the code generator where builtins call back into @jit functions (combine functions)."""

    def __init__(self, launch: "Launch") -> None:
        self.launch = launch

    def call_jit_function(self, fn: Any, args: Any, kwargs: dict, node: Any = None, inline: bool = False) -> Any:
        return self.launch.call_jit(fn, list(args), kwargs)


class Launch:
    """One launch of a kernel on a grid: its memory, semantic layer and the programs of the running batch."""

    def __init__(self, fn: Any, grid: tuple[int, int, int], key: Any, options: Optional[dict] = None) -> None:
        self.fn = fn
        self.grid = grid
        self.key = key
        self.state = kernel_state(fn)
        self.memory = Memory(check=knobs.interpreter.bounds_check)
        self.builder = NumpyBuilder(self)
        opts = dict(options or {})
        opts["debug"] = bool(fn.debug or knobs.runtime.debug or opts.get("debug"))
        if knobs.compilation.sanitize_overflow:
            opts.setdefault("sanitize_overflow", True)
        self.semantic = InterpreterSemantic(self.builder, self, InterpreterOptions(**opts))
        self.generator = _Generator(self)
        self.program_ids: list[V] = []
        self.progs = np.zeros(1, np.int64)
        self.prints: Optional[list[tuple[int, str]]] = None
        self.peak = 0
        self.stack: list[Any] = [fn]  # @jit functions being called, to refuse recursion like the compiler
        self.calls: list[Any] = []    # (function, specialization) of each of those calls

    # -- arguments ---------------------------------------------------------------------------------
    def kernel_args(self, classified: list[tuple[str, Any]]) -> list[Any]:
        return [self._kernel_arg(p.name, ty, v) for p, (ty, v) in zip(self.fn.params, classified)]

    def _kernel_arg(self, name: str, ty: str, v: Any) -> Any:
        if ty == "C":
            return v
        if ty == "()":
            values = [self._kernel_arg(f"{name}[{j}]", t, x) for j, (t, x) in enumerate(v[0])]
            return tl.tuple_value(values, tuple_type([getattr(x, "type", None) for x in values], v[1]))
        if ty == "TD":
            # the descriptor tl.make_tensor_descriptor builds from the same base, shape and strides
            base_ty, base, shape, strides, block, padding = v
            ptr = self._kernel_arg(f"{name}.base", base_ty, base)
            sh = [self._kernel_arg(name, "i32", s) for s in shape]
            st = [self._kernel_arg(name, "i64", s) for s in strides[:-1]] + [tl.constexpr(1)]
            try:
                return self.semantic.make_tensor_descriptor(ptr, sh, st, list(block), padding)
            except CompileTimeError as exc:
                from ..compiler.errors import CompilationError
                raise CompilationError(self.fn.__name__, None, None, f"argument `{name}`: {exc.described()}") from None
        if ty.startswith("*"):
            elt = str_to_ty(ty)
            # the compiled path's refusals (runtime/safety.py); read-only memory is refused at the first store
            check_array(self.fn.__name__, name, v, written=False)
            region = region_for(self.memory, name, v)
            region.readonly = is_read_only(v)
            return tl.tensor(V(np.array([region.vdata], np.int64), elt, region), elt)
        dt = str_to_ty(ty)
        return tl.tensor(V(np.array([v], storage(dt)), dt), dt)

    # -- device functions --------------------------------------------------------------------------
    def call_jit(self, fn: Any, args: Any, kwargs: dict) -> Any:
        # as compiled: a call of a function with another specialization (a halved block) may recurse, the same
        # one again would never end
        key = (fn, _call_key(args), tuple((k, _call_key([v])) for k, v in sorted(kwargs.items())))
        if key in self.calls:
            chain = " -> ".join(f.__name__ for f in self.stack + [fn])
            raise CompileTimeError(f"recursive call of @jit function `{fn.__name__}` ({chain}) with the same "
                                   "argument types and compile-time values; kernels cannot recurse without end: "
                                   "rewrite it as a loop, or make each call's specialization differ")
        # a tl.constexpr annotation on a device function's parameter accepts run-time tensors too (as in Triton)
        callee = kernel_state(fn)
        if callee.debugger and self.progs.size > 1:
            # a device function with a breakpoint: from now on this kernel runs one program at a time, so that the
            # debugger shows one program's values (splitting the batch into single programs reruns it so)
            self.state.debugger = True
            raise Divergence(np.arange(self.progs.size))
        self.stack.append(fn)
        self.calls.append(key)
        # as compiled, the callee gets its own aggregates: changing one there leaves the caller's as it was
        args, kwargs = [clone(a) for a in args], {k: clone(v) for k, v in kwargs.items()}
        try:
            return returned(callee.pyfn(*args, **kwargs))
        finally:
            self.stack.pop()
            self.calls.pop()

    # -- programs ----------------------------------------------------------------------------------
    def _set_programs(self, progs: np.ndarray) -> None:
        gx, gy, _ = self.grid
        ids = (progs % gx, (progs // gx) % gy, progs // (gx * gy))
        self.progs = progs
        self.program_ids = [V((a[:1] if (a == a[0]).all() else a).astype(np.int32), tl.int32) for a in ids]

    def pid_of(self, batch_index: int) -> tuple[int, int, int]:
        p = int(self.progs[min(batch_index, self.progs.size - 1)])
        gx, gy, _ = self.grid
        return (p % gx, (p // gx) % gy, p // (gx * gy))

    def run(self, kernel_args: list[Any]) -> None:
        total = self.grid[0] * self.grid[1] * self.grid[2]
        st = self.state
        one_by_one = st.debugger or not knobs.interpreter.batch or self.key in st.divergent
        if one_by_one:
            for p in range(total):
                self._run_batch(np.array([p], np.int64), kernel_args)
            return
        start = 0
        batches = 0
        while start < total:
            peak = st.peak.get(self.key)
            size = FIRST_BATCH if peak is None else max(1, BATCH_ELEMENTS // max(peak, 1))
            progs = np.arange(start, min(total, start + size), dtype=np.int64)
            batches += self._run_batch(progs, kernel_args)
            st.peak[self.key] = max(self.peak, st.peak.get(self.key, 0), 1)
            start += progs.size
        if total > 8 and batches > total // 2:
            st.divergent.add(self.key)  # splitting cost more than it saved: go one by one next time

    def _run_batch(self, progs: np.ndarray, kernel_args: list[Any]) -> int:
        """Run ``progs`` as one batch, splitting on divergence; returns how many executions it took. The groups
        a divergence splits into run depth-first from a work list, not by recursion: a spin lock (a `while` on
        tl.atomic_cas) peels one program off the batch per split, so the depth reaches the batch size."""
        pending = [progs]
        runs = 0
        while pending:
            runs += 1
            pending.extend(reversed(self._run_once(pending.pop(), kernel_args)))
        return runs

    def _run_once(self, progs: np.ndarray, kernel_args: list[Any]) -> list[np.ndarray]:
        """Run ``progs`` as one batch; on divergence, undo it and return the groups (in program order) that
        agree on every decision, to be run next."""
        self._set_programs(progs)
        batched = progs.size > 1
        self.prints = [] if batched else None
        if batched:
            self.memory.begin()
        token = _ambient_semantic.set(self.semantic)
        divergence = failed = None
        try:
            if self.state.pyfn(*kernel_args) is not None:
                _kernel_returned(self.fn)
        except Divergence as d:
            divergence = d
        except (KeyboardInterrupt, SystemExit, bdb.BdbQuit):
            raise
        except BaseException as exc:
            if batched:
                failed = exc
            else:
                self._flush_prints()
                if isinstance(exc, OutOfBounds):
                    self._raise_out_of_bounds(exc)
                if isinstance(exc, ReadOnlyStore):
                    self._raise_read_only(exc)
                raise
        finally:
            _ambient_semantic.reset(token)
        if divergence is None and failed is None:
            self.memory.commit()
            self._flush_prints()
            return []
        self.memory.rollback()
        self.prints = None
        if failed is not None:
            # redo the batch one program at a time: the error then surfaces as it would with the programs run in
            # order (the same message, the earlier programs' writes done, their prints printed)
            for p in progs.tolist():
                self._run_batch(np.array([p], np.int64), kernel_args)
            self._set_programs(progs)
            if isinstance(failed, OutOfBounds):
                self._raise_out_of_bounds(failed)
            if isinstance(failed, ReadOnlyStore):
                self._raise_read_only(failed)
            raise failed
        key = divergence.key.reshape(progs.size, -1)
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        return [progs[inverse.reshape(-1) == g] for g in np.argsort(first, kind="stable")]

    # -- output and errors -------------------------------------------------------------------------
    def note_tile(self, numel: int) -> None:
        if numel > self.peak:
            self.peak = numel

    def print_values(self, prefix: str, vals: list[tl.tensor], hexa: bool) -> None:
        from .printing import format_lines
        lines = format_lines(self, prefix, vals, hexa)
        if self.prints is None:
            for _, text in lines:
                print(text)
        else:
            self.prints.extend(lines)

    def _flush_prints(self) -> None:
        if self.prints:
            order = sorted(range(len(self.prints)), key=lambda i: self.prints[i][0])
            for i in order:
                print(self.prints[i][1])
        self.prints = None
        sys.stdout.flush()

    def assertion_failed(self, ok: np.ndarray, msg: str, shape: tuple[int, ...]) -> None:
        flat = np.flatnonzero(~ok.reshape(ok.shape[0], -1).all(axis=1))
        b = int(flat[0]) if ok.shape[0] > 1 else 0
        bad = ~ok[b].reshape(-1)
        element = int(np.flatnonzero(bad)[0]) if bad.size else 0
        where = current_location()
        at = f" at {where}" if where is not None else ""
        raise DeviceAssertionError(f"device_assert failed in kernel `{self.fn.__name__}`{at}: {msg} (program id "
                                   f"{self.pid_of(b)}, element {element})")

    def _raise_read_only(self, exc: ReadOnlyStore) -> None:
        from ..runtime.safety import read_only_message
        where = location_in_traceback(exc.__traceback__)
        at = None if where is None else f"{where.filename}:{where.lineno}:{(where.col or 0) + 1}"
        raise UnsafeArgumentError(read_only_message(self.fn.__name__, exc.region.name, at)) from None

    def _raise_out_of_bounds(self, exc: OutOfBounds) -> None:
        per = int(np.prod(exc.shape[1:])) if len(exc.shape) > 1 else 1
        batch_of_lane = exc.lanes // per
        b = int(batch_of_lane[0])
        where = location_in_traceback(exc.__traceback__)
        msg = out_of_bounds_message(exc, self.fn.__name__, where, self.pid_of(b),
                                    np.flatnonzero(batch_of_lane == b))
        raise OutOfBoundsError(msg) from None


def _kernel_returned(fn: Any) -> None:
    ret = next((n for n in ast.walk(fn.parse()) if isinstance(n, ast.Return) and n.value is not None), None)
    from ..compiler.errors import CompilationError
    raise CompilationError(fn.__name__, fn.src, ret, "a kernel cannot return a value; store results through a "
                           "pointer argument", fn.filename, fn.first_line)


def _call_key(values: Any) -> Any:
    """What a compiled call would specialize on: a tensor's type (its shape too), a compile-time value."""
    out = []
    for v in values:
        if isinstance(v, tl.tensor):
            out.append(("T", str(v.type)))
        elif isinstance(v, tl.tuple_value):   # an aggregate's fields too, and its class
            out.append(("()", _call_key(v.values), getattr(v.type, "base_cls", None)))
        elif isinstance(v, (list, tuple)):
            out.append(("()", _call_key(list(v))))
        else:
            value = tl._unwrap(v)
            try:
                hash(value)
                out.append(("C", type(value).__name__, value))
            except TypeError:
                out.append(("C", type(value).__name__, repr(value)))
    return tuple(out)
