"""``triton._C.libtriton.ir``: Triton's IR objects (context, module, operation, block, region, value) as views of
tritium's tile IR.

Code outside Triton builds a kernel's TTIR with ``ASTSource(...).make_ir(..., context)`` and reads it through this
API: torch inductor walks it to learn which tensor arguments a user's kernel writes. tritium's tile IR is MLIR
with Triton's operations, built by tritium's own frontend, so these views add no analysis of their own: they
translate the few names tritium spells differently from Triton's TTIR (functions are ``func.func``/``func.call``/
``func.return``, block pointers ``tt.make_block_ptr``, combine regions end in ``gpu.yield``) and give values,
blocks and regions stable integer ids, as Triton's pointers are.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from tritium._mlir import ir as _ir
from tritium._mlir import load_tile_dialects

#: tritium's operation name -> Triton's
_NAMES = {"func.func": "tt.func", "func.call": "tt.call", "func.return": "tt.return",
          "tt.make_block_ptr": "tt.make_tensor_ptr"}
#: Triton's name of the terminator of each region-holding tile op (tritium's is gpu.yield: IRDL ops cannot
#: declare terminators)
_RETURNS = {"tt.reduce": "tt.reduce.return", "tt.scan": "tt.scan.return",
            "tt.map_elementwise": "tt.map_elementwise.return"}


class context(_ir.Context):
    """An MLIR context: tritium's frontend builds in it directly, and hands the modules it makes back as
    :class:`module` (see ``ASTSource.make_ir``)."""

    @staticmethod
    def module_from_mlir(mlir_module: Any) -> "module":
        return module(mlir_module)


def load_dialects(ctx: Any) -> None:
    """Load the dialects of tritium's tile IR (``tt`` and the upstream ones it uses) into ``ctx``."""
    load_tile_dialects(ctx)


class value:
    __slots__ = ("_v", )

    def __init__(self, v: Any) -> None:
        self._v = v

    def id(self) -> int:
        return hash(self._v)  # MLIR hashes a value by its storage, as Triton's id is its address

    def __eq__(self, other: object) -> bool:
        return isinstance(other, value) and self._v == other._v

    def __hash__(self) -> int:
        return self.id()

    def __str__(self) -> str:
        return str(self._v)


class region:
    __slots__ = ("_r", "_owner", "_index")

    def __init__(self, r: Any, owner: Any, index: int) -> None:
        self._r, self._owner, self._index = r, owner, index

    def id(self) -> int:
        # an MLIR region object is made anew on each access: its owner and position name it
        return hash((hash(self._owner), self._index))

    def size(self) -> int:
        return len(self._r.blocks)


class block:
    __slots__ = ("_b", )

    def __init__(self, b: Any) -> None:
        self._b = b

    def id(self) -> int:
        return hash(self._b)

    def get_num_arguments(self) -> int:
        return len(self._b.arguments)

    def get_argument(self, i: int) -> value:
        return value(self._b.arguments[i])

    def get_parent(self) -> Optional[region]:
        owner = self._b.owner
        if owner is None:
            return None
        owner = owner.operation
        for i, r in enumerate(owner.regions):
            if r == self._b.region:
                return region(r, owner, i)
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, block) and self._b == other._b

    def __hash__(self) -> int:
        return self.id()


def _attr(op: Any, name: str, kind: Any = None) -> Any:
    """The attribute ``name`` of ``op`` (the bindings give it its concrete class), or None where ``op`` has none
    of that kind."""
    attrs = op.attributes
    a = attrs[name] if name in attrs else None
    return a if kind is None or isinstance(a, kind) else None


def _sym_name(op: Any) -> Optional[str]:
    a = _attr(op, "sym_name", _ir.StringAttr)
    return None if a is None else a.value


class operation:
    __slots__ = ("_op", )

    def __init__(self, op: Any) -> None:
        self._op = op.operation

    def get_name(self) -> str:
        name = self._op.name
        if name == "gpu.yield":
            parent = self._op.parent
            return _RETURNS.get(parent.name, name) if parent is not None else name
        return _NAMES.get(name, name)

    def get_num_operands(self) -> int:
        return len(self._op.operands)

    def get_operand(self, i: int) -> value:
        return value(self._op.operands[i])

    def get_num_results(self) -> int:
        return len(self._op.results)

    def get_result(self, i: int) -> value:
        return value(self._op.results[i])

    def get_num_regions(self) -> int:
        return len(self._op.regions)

    def get_region(self, i: int) -> region:
        return region(self._op.regions[i], self._op, i)

    def get_block(self) -> Optional[block]:
        if self._op.parent is None:
            return None
        return block(self._op.block)

    # attributes: None where the operation has no such attribute of that kind, as Triton's getters
    def get_str_attr(self, name: str) -> Optional[str]:
        a = _attr(self._op, name, _ir.StringAttr)
        return None if a is None else a.value

    def get_bool_attr(self, name: str) -> Optional[bool]:
        a = _attr(self._op, name, _ir.BoolAttr)
        return None if a is None else a.value

    def get_flat_symbol_ref_attr(self, name: str) -> Optional[str]:
        a = _attr(self._op, name, _ir.FlatSymbolRefAttr)
        return None if a is None else a.value

    def verify(self) -> bool:
        try:
            return bool(self._op.verify())
        except _ir.MLIRError:
            return False

    def walk(self, fn: Callable[["operation"], Any]) -> None:
        """Call ``fn`` on every nested operation, then on this one (post-order, as Triton's walk)."""
        def visit(op: Any) -> Any:
            fn(operation(op))
            return _ir.WalkResult.ADVANCE
        self._op.walk(visit, _ir.WalkOrder.POST_ORDER)

    def __str__(self) -> str:
        return str(self._op)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, operation) and self._op == other._op

    def __hash__(self) -> int:
        return hash(self._op)


class module(operation):
    """A kernel's module: the kernel and the functions it calls."""
    __slots__ = ("_module", )

    def __init__(self, mlir_module: Any) -> None:
        super().__init__(mlir_module.operation)
        self._module = mlir_module

    def _functions(self) -> list:
        return [op.operation for op in self._module.body.operations]

    def get_entry_func_name(self) -> str:
        name = _attr(self._op, "tt.kernel", _ir.StringAttr)
        if name is not None:
            return name.value
        for f in self._functions():
            vis = _attr(f, "sym_visibility", _ir.StringAttr)
            if vis is None or vis.value == "public":
                return _sym_name(f)
        raise ValueError("the module has no public function")

    def has_function(self, name: str) -> bool:
        return any(_sym_name(f) == name for f in self._functions())

    def walk(self, fn: Callable[[operation], Any]) -> None:
        """Post-order, the kernel's function first: Triton's frontend puts the kernel before the functions it
        calls (tritium's, after them), and callers take the first function walked to be the kernel."""
        entry = self.get_entry_func_name()
        funcs = self._functions()
        first = [f for f in funcs if _sym_name(f) == entry]
        for f in first + [f for f in funcs if f not in first]:
            operation(f).walk(fn)
        fn(self)

    def str(self) -> str:
        return str(self._module)

    def dump(self) -> None:
        print(self._module)

    @property
    def context(self) -> Any:
        return self._module.context
