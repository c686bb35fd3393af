"""The decorator-built op tables: methods bind to the collaborator that owns them, collisions are loud."""
from __future__ import annotations

import pytest

from tritium.op_registry import OpTable


def test_methods_bind_to_their_owner_and_functions_to_the_context():
    table = OpTable("the test lowering")

    class Shapes:
        @table.lowers("tt.splat", "tt.broadcast")
        def splat(self, op):
            return ("splat", self, op)

    @table.lowers("tt.load")
    def load(ctx, op):
        return ("load", ctx, op)

    shapes, ctx = Shapes(), object()
    bound = table.bind(shapes, context=ctx)
    assert bound["tt.splat"](1) == ("splat", shapes, 1)
    assert bound["tt.broadcast"](2) == ("splat", shapes, 2)
    assert bound["tt.load"](3) == ("load", ctx, 3)
    # the class keeps a plain method
    assert Shapes().splat(4)[0] == "splat"
    assert table.handles("tt.splat").endswith("Shapes.splat")


def test_duplicate_registration_names_both_handlers():
    table = OpTable("the test lowering")

    class A:
        @table.lowers("tt.dot")
        def first(self, op): ...

    # raised while the class is created: Python 3.11 wraps it in a RuntimeError, 3.12 does not
    with pytest.raises((RuntimeError, ValueError)) as info:
        class B:
            @table.lowers("tt.dot")
            def second(self, op): ...
    text = str(info.value.__cause__ or info.value)
    assert "A.first" in text and "B.second" in text


def test_refusals_families_and_messages():
    table = OpTable("the test lowering")
    table.refuse("tt.descriptor_gather", "use tl.load with gathered offsets")
    table.family("arith ops, elementwise", lambda name: name.startswith("arith."))
    assert table.handles("arith.addf") == "arith ops, elementwise"
    assert table.handles("tt.descriptor_gather") is None
    assert "use tl.load" in table.unsupported("tt.descriptor_gather")
    assert table.unsupported("tt.nope") == "the test lowering does not support tt.nope yet"
    with pytest.raises(ValueError, match="refused and lowered"):
        table.lowers("tt.descriptor_gather")(lambda ctx, op: None)


def test_bind_reports_a_missing_collaborator():
    table = OpTable("the test lowering")

    class Memory:
        @table.lowers("tt.store")
        def store(self, op): ...

    with pytest.raises(TypeError, match="Memory.store"):
        table.bind(object())


def test_handlers_called_by_name_count_but_are_not_bound():
    """The interpreter's builder API (``load``, ``splat``) is called by the semantic directly: such handlers
    cover their op, and bind() does not need an object or context for them."""
    table = OpTable("the test lowering")

    class Builder:
        @table.lowers("tt.load", dispatch=False)
        def load(self, ptr, mask, other):
            return ("load", ptr)

        @table.lowers("tt.clampf")
        def tt_clampf(self, o, res, attrs):
            return ("clampf", o)

    class Semantic:
        @table.lowers("tt.print", dispatch=False)
        def device_print(self, prefix, args): ...

    @table.lowers("tt.assume", dispatch=False)
    def assume(ctx, op): ...

    assert table.handles("tt.load").endswith("Builder.load")
    assert table.handles("tt.print").endswith("Semantic.device_print")
    assert table.handles("tt.assume").endswith(".assume")
    b = Builder()
    bound = table.bind(b)     # no Semantic object and no context: neither is needed
    assert set(bound) == {"tt.clampf"}
    assert bound["tt.clampf"]({"x": 1}, [], {}) == ("clampf", {"x": 1})
    assert b.load(1, None, None) == ("load", 1)
