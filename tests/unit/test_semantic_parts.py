"""The semantic object delegates every operation to one of its collaborators (language/semantic/ops.py): each
public method of a collaborator is reachable on Semantic with the same parameters, and the collaborators reach
each other, and the hooks a subclass overrides, through the semantic object."""
import inspect

from tritium.interpreter.semantic import InterpreterSemantic
from tritium.language import core as tl
from tritium.language.semantic import Semantic
from tritium.language.semantic.ops import Part, SemanticOps

PARTS = {"arith", "casts", "shapes", "memory", "misc", "descriptors", "regions"}


def _parts(sem):
    return {name: getattr(sem, name) for name in PARTS}


def test_semantic_is_not_built_from_mixins():
    assert Semantic.__bases__ == (object,)
    sem = Semantic(builder=None)
    for name, part in _parts(sem).items():
        assert isinstance(part, Part), name
        assert part.sem is sem


def test_every_public_operation_is_on_the_facade_with_its_signature():
    sem = Semantic(builder=None)
    missing, differ = [], []
    for part in _parts(sem).values():
        for name, fn in inspect.getmembers(type(part), inspect.isfunction):
            if name.startswith("_") or name in vars(Part):
                continue
            facade = getattr(Semantic, name, None)
            if facade is None:
                missing.append(f"{type(part).__name__}.{name}")
            elif inspect.signature(facade) != inspect.signature(fn):
                differ.append(name)
    assert not missing and not differ, (missing, differ)


def test_the_shared_interface_is_what_the_facade_offers():
    sem = Semantic(builder=None)
    declared = [n for n in vars(SemanticOps) if not n.startswith("__") and callable(vars(SemanticOps)[n])]
    assert "ir_type" in declared and "_region_op" in declared
    for name in declared:
        assert callable(getattr(sem, name)), name


class _Recording(Semantic):
    def __init__(self):
        super().__init__(builder=None)
        self.asked = []

    def _region_op(self, kind, inputs, axis, combine, reverse=False):
        self.asked.append((kind, axis, reverse))
        return ()


def test_reductions_and_scans_go_through_the_overridable_hook():
    # the interpreter's semantic overrides _region_op: the collaborator must call the override
    sem = _Recording()
    sem.reduction([], 0, None)
    sem.associative_scan([], 1, None, True)
    assert sem.asked == [("reduce", 0, False), ("scan", 1, True)]
    assert "_region_op" in vars(InterpreterSemantic) and "ir_type" in vars(InterpreterSemantic)


def test_ir_type_override_reaches_the_collaborators():
    class Typed(Semantic):
        def ir_type(self, ty):
            return ("typed", ty)

    class Builder:
        def tt(self, name, operands, types, attrs=None):
            self.made = (name, types)
            return type("Op", (), {"result": object()})()

    b = Builder()
    sem = Typed(b)
    x = tl.tensor(object(), tl.block_type(tl.float32, [1]))
    sem.unsplat(x)
    assert b.made == ("unsplat", [("typed", tl.float32)])
