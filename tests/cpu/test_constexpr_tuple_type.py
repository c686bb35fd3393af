"""``t: tl.constexpr = (5, 6, 7)`` binds a constexpr wrapping the tuple, and its ``.type`` is that constexpr's
``constexpr_type`` as in Triton (whose constexpr keeps its own ``type`` attribute whatever it wraps). The code
generator handed back the wrapped tuple's own type (a tuple type) instead, so Triton 3.6's
test_core.py::test_constexpr_assignment[literal2-None] failed its first static_assert on the CPU backend."""
import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import knobs
from tritium.language.core import constexpr_type


@tritium.jit
def _tuple_type(out_ptr, LIT: tl.constexpr):
    t: tl.constexpr = (5, 6, 7)
    tl.static_assert(t.type == constexpr_type((5, 6, 7)))
    tl.static_assert(LIT.type == constexpr_type((5, 6, 7)))
    same: tl.constexpr = LIT
    tl.static_assert(same.type == constexpr_type((5, 6, 7)))
    tl.static_assert(same == t)
    tl.store(out_ptr, t[1] + LIT[2])


def test_constexpr_tuple_type_is_its_constexpr_type():
    if knobs.runtime.interpret:
        pytest.skip("the interpreter holds compile-time values as plain Python values")
    out = np.zeros(1, np.int32)
    _tuple_type[(1, )](out, (5, 6, 7))
    assert out[0] == 13
