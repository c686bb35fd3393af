"""Functions generated for called @jit functions are named as Triton mangles them
(``<module>.<qualname>__<argument types>__<compile-time values>``), one per function and specialization, in the
order they are first called; functions that would share a name (made by one factory) stay apart."""

import numpy as np

import tritium as triton
import tritium.language as tl
from tritium.compiler import ASTSource
from tritium.compiler.compiler import make_backend
from tritium.runtime.driver import driver


@triton.jit(noinline=True)
def _helper(x, k: tl.constexpr):
    return x * k


class _Holder:
    @triton.jit
    def _helper(x, k: tl.constexpr):   # the same source, another function
        return x * k


@triton.jit
def _halve(x):
    if x.shape[0] == 1:
        return x
    a, b = x.reshape((x.shape[0] // 2, 2)).split()
    return _halve(a) + _halve(b)


def _ttir(kernel, signature, constexprs=None):
    target = driver.active.get_current_target()
    options = make_backend(target).parse_options({})
    from tritium._mlir import ir, load_tile_dialects
    ctx = ir.Context()
    load_tile_dialects(ctx)
    module = ASTSource(kernel, signature, constexprs or {}).make_ir(target, options, None, None, ctx)
    return str(getattr(module, "_module", module))


def test_names_follow_triton_mangling_and_call_order():
    @triton.jit
    def k(X):
        x = tl.load(X + tl.arange(0, 16))
        tl.store(X + tl.arange(0, 16), _helper(x, 4) + _Holder._helper(x, 4))
        tl.store(X + tl.arange(0, 1), _halve(tl.arange(0, 4)).to(tl.float32))

    text = _ttir(k, {"X": "*fp32"})
    mod = _helper.__module__
    assert f"call @{mod}._helper__fp32S16S___1__cconstexpr_4_(" in text, text
    assert f"call @{mod}._Holder._helper__fp32S16S___1__cconstexpr_4_(" in text, text
    # the kernel first, then each callee where it is first called: i32S4S, then the two halves
    order = [text.index(f"func.func private @{mod}._halve__i32S{n}S__") for n in (4, 2, 1)]
    assert text.index("func.func public @k") < order[0] < order[1] < order[2], text


def test_functions_of_one_name_stay_apart():
    def make(c):
        C = tl.constexpr(c)

        @triton.jit
        def add_c(x):
            return x + C
        return add_c

    add1, add10 = make(1.0), make(10.0)

    @triton.jit
    def k(X):
        offs = tl.arange(0, 8)
        x = tl.load(X + offs)
        tl.store(X + offs, add1(x) * 100 + add10(x))

    x = np.arange(8, dtype=np.float32)
    want = (x + 1) * 100 + (x + 10)
    k[(1, )](x)
    np.testing.assert_array_equal(x, want)
