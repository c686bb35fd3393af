"""Which pointer arguments of a kernel may be written: recorded in the kernel's metadata (``written_args``), so
that a launch can refuse a read-only array (``writeable=False``, ``np.frombuffer(bytes)``, a read-only memmap)
that the kernel would store to, while read-only arrays that are only loaded keep working.

The scan follows every value back to the kernel's pointer arguments it may derive from (its *roots*). A value
computed by any operation derives from all of that operation's operands (sound for pointer arithmetic, selects,
casts to and from integers, block pointers and descriptors); loop-carried values and results of ``scf.if``,
``scf.while`` and other region operations also derive from what their regions yield; calls are followed into the
callee. A store, an atomic, a descriptor store, or any operation with side effects this scan does not know,
writes the roots of its operands. Where provenance is lost (a pointer loaded from memory, an integer turned into
a pointer, unstructured control flow), every pointer argument counts as written: the answer may be too large,
never too small.
"""
from __future__ import annotations

import re
from typing import Any, Optional


_ALL = -1
_NONE: frozenset = frozenset()
_UNKNOWN = frozenset((_ALL, ))

#: operation -> operand positions it writes through
_WRITES = {"tt.store": (0, ), "tt.atomic_rmw": (0, ), "tt.atomic_cas": (0, ), "tt.descriptor_store": (0, ),
           "tt.descriptor_reduce": (0, ), "tt.descriptor_scatter": (0, )}
#: operations that read memory (their pointer-typed results cannot be traced) or have effects other than writes
_LOADS = frozenset(("tt.load", "tt.descriptor_load", "tt.descriptor_gather"))
_NO_WRITE = frozenset(("tt.print", "tt.assert", "tt.assume", "tt.debug_barrier", "tt.extern_elementwise",
                       "func.return", "gpu.yield", "scf.yield", "scf.condition"))
_PURE_DIALECTS = ("arith.", "math.", "scf.", "index.", "ub.")


def _is_pointer(ty: Any) -> bool:
    text = str(ty)
    return "!tt.ptr" in text or "tensordesc" in text


class _Scan:
    def __init__(self, module: Any) -> None:
        self.funcs: dict[str, Any] = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func":
                self.funcs[op.attributes["sym_name"].value] = op
        self.summaries: dict[str, tuple[frozenset, list[frozenset]]] = {}
        self.active: set[str] = set()

    # -- one function ------------------------------------------------------------------------------
    def summary(self, name: str) -> tuple[dict, list[frozenset]]:
        """(argument indices written, roots of each returned value), in terms of the function's own
        arguments; unknown callees and recursion give the unknown answer."""
        hit = self.summaries.get(name)
        if hit is not None:
            return hit
        fn = self.funcs.get(name)
        if fn is None or name in self.active or not len(fn.regions[0].blocks):
            return {_ALL: None}, []
        self.active.add(name)
        try:
            block = fn.regions[0].blocks[0]
            env = {a: frozenset((i, )) if _is_pointer(a.type) else _NONE for i, a in enumerate(block.arguments)}
            written: dict[int, Optional[str]] = {}
            returned: list[frozenset] = []
            self.region(fn.regions[0], env, written, returned)
        finally:
            self.active.discard(name)
        result = (written, returned)
        self.summaries[name] = result
        return result

    def region(self, region: Any, env: dict, written: set, terminators: Optional[list]) -> None:
        blocks = list(region.blocks)
        for k, block in enumerate(blocks):
            if k:  # a branch target: what flows into its arguments is not traced
                for a in block.arguments:
                    env[a] = _UNKNOWN
            for op in block.operations:
                self.op(op.operation, env, written, terminators)

    # -- operations --------------------------------------------------------------------------------
    def roots(self, env: dict, values: Any) -> frozenset:
        out: frozenset = _NONE
        for v in values:
            r = env.get(v, _NONE)
            if r:
                out = out | r
        return out

    def op(self, op: Any, env: dict, written: set, terminators: Optional[list]) -> None:
        name = op.name
        operands = list(op.operands)
        if name in ("func.return", "scf.yield", "gpu.yield", "scf.condition") and terminators is not None:
            rs = [env.get(v, _NONE) for v in operands]
            if terminators and len(terminators) == len(rs):
                for i, r in enumerate(rs):
                    terminators[i] = terminators[i] | r
            elif not terminators:
                terminators.extend(rs)
            else:
                terminators[:] = [t | self.roots(env, operands) for t in terminators]
            return
        if name == "func.call":
            self.call(op, operands, env, written)
            return
        if len(op.regions):
            self.region_op(op, operands, env, written)
            return
        roots = self.roots(env, operands)
        writes = _WRITES.get(name)
        if writes is not None:
            _note(written, self.roots(env, [operands[i] for i in writes if i < len(operands)]), op)
        elif name not in _NO_WRITE and name not in _LOADS and not _pure(name):
            _note(written, roots, op)  # an operation this scan does not know: it may write what it is given
        if name == "tt.int_to_ptr" or (name in _LOADS and any(_is_pointer(r.type) for r in op.results)):
            roots = _UNKNOWN
        for r in op.results:
            env[r] = roots

    def call(self, op: Any, operands: list, env: dict, written: set) -> None:
        callee = op.attributes["callee"]
        callee_name = str(callee).lstrip("@").strip('"')
        arg_written, returned = self.summary(callee_name)
        if _ALL in arg_written:
            _note(written, self.roots(env, operands) | _UNKNOWN, op)
        else:
            for i, where in arg_written.items():
                if i < len(operands):
                    _note(written, env.get(operands[i], _NONE), op, where)
        for j, r in enumerate(op.results):
            rr = returned[j] if j < len(returned) else _UNKNOWN
            env[r] = _UNKNOWN if _ALL in rr else self.roots(env, [operands[i] for i in rr if i < len(operands)])

    def region_op(self, op: Any, operands: list, env: dict, written: set) -> None:
        """scf.for/scf.if/scf.while position by position; any other region op coarsely (everything it is given
        or yields flows into every block argument and result). Iterated until nothing grows."""
        name = op.name
        results = list(op.results)
        if name == "scf.for":
            inits = [env.get(v, _NONE) for v in operands[3:]]
            carried = list(inits)
            body = op.regions[0]
            args = list(body.blocks[0].arguments)
            while True:
                env[args[0]] = _NONE
                for a, r in zip(args[1:], carried):
                    env[a] = r
                yields: list = []
                self.region(body, env, written, yields)
                grown = [c | (yields[i] if i < len(yields) else _UNKNOWN) for i, c in enumerate(carried)]
                if grown == carried:
                    break
                carried = grown
            for r, c in zip(results, carried):
                env[r] = c
            return
        if name == "scf.if":
            outs = [_NONE] * len(results)
            for reg in op.regions:
                yields = []
                self.region(reg, env, written, yields)
                for i in range(len(outs)):
                    outs[i] = outs[i] | (yields[i] if i < len(yields) else (_UNKNOWN if len(reg.blocks) else _NONE))
            for r, o in zip(results, outs):
                env[r] = o
            return
        # scf.while and the rest: one set for everything the op takes and makes
        flow = self.roots(env, operands)
        while True:
            for reg in op.regions:
                for block in reg.blocks:
                    for a in block.arguments:
                        env[a] = flow
            before = len(written)
            outs: list = []
            for reg in op.regions:
                self.region(reg, env, written, outs)
            grown = flow.union(*outs)
            if grown == flow and len(written) == before:
                break
            flow = grown
        if name not in _PURE_OPS_WITH_REGIONS and not name.startswith(_PURE_DIALECTS):
            _note(written, flow, op)
        for r in results:
            env[r] = flow


_LOC = re.compile(r'"([^"]+)":(\d+):(\d+)')


def _note(written: dict, roots: frozenset, op: Any, where: Optional[str] = None) -> None:
    """Record that ``roots`` are written, with the first source location that writes each."""
    for r in roots:
        if r not in written:
            if where is None:
                m = _LOC.search(str(op.location))
                where = f"{m.group(1)}:{m.group(2)}:{m.group(3)}" if m else None
            written[r] = where


_PURE_OPS_WITH_REGIONS = frozenset(("tt.reduce", "tt.scan", "tt.map_elementwise"))


def _pure(name: str) -> bool:
    if name.startswith(_PURE_DIALECTS):
        return True
    # imported here: backends' drivers import this package's error classes, and a process that only loads
    # compiled artifacts (tritium.load_compiled) must not import the tile dialect
    from ..dialect import PURE_OPS
    return name in PURE_OPS


def written_args_metadata(module: Any) -> dict:
    """``written_args``: indices of the kernel function's arguments that it may write through, or None when
    that cannot be told (every pointer argument must then count as written); ``written_at``: for each, the
    "file:line:column" of a write (or None), for error messages."""
    try:
        found = written_args(module)
    except Exception:  # never let a scan fail a compilation: not knowing means every pointer is written
        found = None
    if found is None:
        return {"written_args": None, "written_at": {}}
    return {"written_args": sorted(found), "written_at": {str(k): v for k, v in found.items()}}


def written_args(module: Any) -> Optional[dict[int, Optional[str]]]:
    if isinstance(module, (str, bytes)) or not hasattr(module, "body"):
        return None
    scan = _Scan(module)
    kernel = None
    try:
        wanted = module.operation.attributes["tt.kernel"].value
    except (KeyError, AttributeError):
        wanted = None
    for name, fn in scan.funcs.items():
        if name == wanted or (wanted is None and "sym_visibility" in fn.attributes
                              and fn.attributes["sym_visibility"].value == "public"):
            kernel = name
            break
    if kernel is None:
        return None
    written, _ = scan.summary(kernel)
    if _ALL in written:
        return None
    return written
