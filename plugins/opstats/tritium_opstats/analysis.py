"""Static statistics of one program of a kernel, read from its tile IR.

Memory traffic counts every element a load reads or a store/atomic writes (masked-off lanes included: an
upper bound), times the trip count of the ``scf.for`` loops around it when their bounds are constants; a
loop whose trip count is not known is counted once and reported in ``dynamic_loops``. Flops count
``2*M*N*K`` per ``tt.dot`` and one per element of each floating-point arithmetic or math op.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
_SHAPE = re.compile(r"tensor<((?:\d+x)*)([^>]+)>")


def _size(type_text: str) -> tuple[int, int]:
    """(elements, bytes per element) of a type's printed form; pointers are 8 bytes."""
    m = _SHAPE.fullmatch(type_text)
    dims, elem = (m.group(1), m.group(2)) if m else ("", type_text)
    n = 1
    for d in dims.split("x"):
        if d:
            n *= int(d)
    if elem.startswith("!tt.ptr"):
        return n, 8
    return n, _BYTES.get(elem, 1 if elem.startswith("f8") else 4)


def _const_int(value: Any) -> Any:
    owner = value.owner
    if getattr(owner, "name", None) != "arith.constant":
        return None
    m = re.match(r"(-?\d+)", str(owner.attributes["value"]))
    return int(m.group(1)) if m else None


def _trips(op: Any) -> tuple[int, int]:
    """(product of the constant trip counts of the loops around op, number of loops whose count is unknown)."""
    trips, unknown = 1, 0
    p = op.parent
    while p is not None:
        if p.name == "scf.for":
            lb, ub, step = (_const_int(v) for v in list(p.operands)[:3])
            if None in (lb, ub, step) or step <= 0:
                unknown += 1
            else:
                trips *= max(0, -(-(ub - lb) // step))
        p = p.parent
    return trips, unknown


def analyze(module: Any) -> dict:
    from tritium.passes import all_ops
    ops: Counter = Counter()
    load = store = flops = 0
    dynamic: set = set()
    for op in all_ops(module):
        name = op.name
        if name in ("builtin.module", "func.func", "func.return", "gpu.yield", "scf.yield"):
            continue
        ops[name] += 1
        trips, unknown = _trips(op)
        if unknown:
            p = op.parent
            while p is not None:
                if p.name == "scf.for":
                    dynamic.add(p)
                p = p.parent
        if name in ("tt.load", "tt.descriptor_load"):
            n, b = _size(str(op.results[0].type))
            load += n * b * trips
        elif name in ("tt.store", "tt.atomic_rmw", "tt.atomic_cas"):
            n, b = _size(str(op.operands[1 if name != "tt.atomic_cas" else 2].type))
            store += n * b * trips
            if name != "tt.store":
                load += n * b * trips
        elif name == "tt.dot":
            a, b = (str(v.type) for v in list(op.operands)[:2])
            a_dims = [int(d) for d in _SHAPE.fullmatch(a).group(1).split("x") if d]   # [..., M, K]
            b_dims = [int(d) for d in _SHAPE.fullmatch(b).group(1).split("x") if d]   # [..., K, N]
            batch = 1
            for d in a_dims[:-2]:
                batch *= d
            flops += 2 * batch * a_dims[-2] * a_dims[-1] * b_dims[-1] * trips
        elif name.startswith(("arith.", "math.")) and len(op.results) == 1 and name != "arith.constant":
            text = str(op.results[0].type)
            if re.search(r"(?:^|[x<])b?f(16|32|64)>?$", text):
                flops += _size(text)[0] * trips
    return {"ops": dict(sorted(ops.items())), "load_bytes": load, "store_bytes": store, "flops": flops,
            "dynamic_loops": len(dynamic), "per": "program"}


def totals(kernel: Any, grid: tuple) -> dict:
    """Whole-launch numbers: per-program statistics times the number of programs in ``grid``."""
    stats = dict(getattr(kernel.metadata, "opstats", None) or {})
    if not stats:
        raise ValueError(f"kernel {kernel.name} has no opstats metadata: was it compiled with the opstats plugin?")
    programs = 1
    for g in tuple(grid):
        programs *= int(g)
    return {k: stats[k] * programs for k in ("load_bytes", "store_bytes", "flops")}
