"""Triton's specialization functions (``tritium.runtime.jit.native_specialize_impl``, ``mangle_type``) and the
backend's specialization protocol, which code written for Triton (torch inductor's kernel analysis) uses to build a
signature and attributes: they must agree with what a launch of the same arguments compiles."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.backends import BaseBackend
from tritium.runtime.jit import mangle_type, native_specialize_impl

torch = pytest.importorskip("torch")


@tritium.jit
def _helper(x):
    return x


def spec(arg, **kw):
    return native_specialize_impl(BaseBackend, arg, **kw)


def test_scalars():
    assert spec(32) == ("i32", "D") and spec(33) == ("i32", "")
    assert spec(1) == ("constexpr", 1)                      # an int equal to 1 is compiled in
    assert spec(1, specialize_value=False) == ("i32", None)
    assert spec(32, align=False) == ("i32", "")
    assert spec(2**40) == ("i64", "D") and spec(2**40 + 1) == ("i64", "") and spec(2**63 + 1) == ("u64", "")
    assert spec(True) == ("u1", None) and spec(0.5) == ("fp32", None)
    assert spec(None) == ("constexpr", None)
    assert spec(tl.constexpr(7)) == ("constexpr", 7)
    assert spec(_helper) == ("constexpr", _helper.cache_key)


def test_arrays():
    t = torch.zeros(8, dtype=torch.float16)
    assert spec(t) == ("*fp16", "D")
    assert spec(t[1:]) == ("*fp16", "")                     # 2 bytes past a 16-byte boundary
    assert spec(t, is_const=True) == ("*kfp16", "D")
    assert spec(t, specialize_value=False) == ("*fp16", None)
    assert spec(np.zeros(4, np.int64))[0] == "*i64"
    assert mangle_type(torch.zeros(2, dtype=torch.bfloat16)) == "*bf16" and mangle_type(1) == "i32"


def test_tuples_keep_their_class():
    P = namedtuple("P", "a b")
    types, keys = spec(P(torch.zeros(4), 16))
    assert types == P("*fp32", "i32") and keys == P("D", "D")
    assert spec((1, 3)) == (("constexpr", "i32"), (1, ""))


def test_attributes():
    assert BaseBackend.parse_attr("D") == [["tt.divisibility", 16]] and BaseBackend.parse_attr("") == []
