"""Stages print a kernel's arguments under their parameter names, as Triton's do (``%n: i32``, not ``%arg1``):
Triton's tests and users' FileCheck lines match on them (test_annotations.py: ``'%v: i8' in h.asm['ttir']``)."""
import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def _named(X, n, pair, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(X + offs, n + pair[0] + pair[1], mask=offs < n)


def test_arguments_print_under_their_names():
    x = np.zeros(8, np.int32)
    k = _named[(1, )](x, 5, (2, 3), BLOCK=8)
    assert x.tolist() == [10] * 5 + [0] * 3
    ttir = k.asm["ttir"]
    head = ttir[ttir.index("func.func"):].split("\n")[0]
    assert "%X: !tt.ptr<i32>" in head and "%n: i32" in head, head
    # a tuple's elements share the parameter's name, made unique by MLIR
    assert "%pair: i32" in head and "%pair_0: i32" in head, head
    assert "%arg" not in head
