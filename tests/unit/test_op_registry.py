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
