"""The one place that imports the MLIR Python bindings (including their private modules).

Importing this module loads MLIR (about 0.2 s); ``import tritium`` does not, so only compilation pays.
"""
from __future__ import annotations

import threading

from mlir import ir, passmanager  # noqa: F401
from mlir._mlir_libs._mlir import globals as _mlir_globals
from mlir.dialects import func, irdl  # noqa: F401  (func: the frontend builds func.call/func.func)

from .dialect.ops import irdl_source

_local = threading.local()

# For every op it wraps, the bindings import the Python module of the op's dialect (``mlir.dialects.<name>``) and
# remember only a success: each ``tt`` op touched from Python searched sys.path again, about 1 ms, which was most
# of the compile time of a kernel with thousands of ops. Our dialects' modules live under a prefix of our own.
_BINDINGS = "tritium.dialect.bindings"
if _BINDINGS not in _mlir_globals.dialect_search_modules:
    _mlir_globals.append_dialect_search_prefix(_BINDINGS)


def tile_context() -> ir.Context:
    """This thread's MLIR context with the ``tt`` dialect loaded (contexts are not shared across threads)."""
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = ir.Context()
        load_tile_dialects(ctx)
        _local.ctx = ctx
    return ctx


def load_tile_dialects(ctx: ir.Context) -> None:
    """Load the ``tt`` dialect and the upstream dialects tile IR uses into ``ctx``."""
    ctx.allow_unregistered_dialects = False
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(irdl_source()))
        # make sure the dialects our IR uses are loaded, so parsing generic IR works
        for name in ("arith", "math", "scf", "func", "gpu", "cf", "llvm"):
            ctx.dialects[name]


def parse_module(text: str, ctx: ir.Context | None = None) -> ir.Module:
    ctx = ctx or tile_context()
    with ctx:
        return ir.Module.parse(text)


def walk_children(op: ir.Operation) -> list[ir.Operation]:
    """The operations directly nested in ``op``'s regions, in order, without building OpViews (fast)."""
    out: list[ir.Operation] = []
    root = op.operation

    def visit(o: ir.Operation) -> ir.WalkResult:
        if o == root:
            return ir.WalkResult.ADVANCE
        out.append(o)
        return ir.WalkResult.SKIP

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


def block_ops(block: ir.Block) -> list[ir.Operation]:
    """The operations of ``block`` in order (fast path through the parent op's walk)."""
    parent = block.owner
    if parent is None:
        return [o.operation for o in block.operations]
    return [o for o in walk_children(parent) if o.block == block]
