"""Aggregates (``tl.core._aggregate``, Triton's user-defined value classes): built inside kernels, passed to and
returned from @jit functions, their methods called (@jit ones, plain ones taking ``_semantic``, constexpr
functions), nested, with constexpr fields, changed in place inside loops and branches; compiled (CPU backend)
and interpreted, checked against numpy. Misuse is a compile error that names the kernel and points at the line."""

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.compiler.errors import CompilationError


def _launch(kernel, interpret, *args, grid=(1, )):
    from tritium import knobs
    with knobs.runtime.scope():
        knobs.runtime.interpret = False
        kernel.interpret = interpret
        try:
            return kernel[grid](*args)
        finally:
            kernel.interpret = False


MODES = pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])


@tl.core._aggregate
class Acc:
    """A running sum with a compile-time scale."""
    total: tl.tensor
    scale: tl.constexpr

    def __init__(self, total, scale):
        self.total = total
        self.scale = scale

    @triton.jit
    def scaled(self):
        return self.total * self.scale

    def add(self, x, _semantic=None):
        self.total = _semantic.add(self.total, x)

    @triton.jit
    def plus(self, x):
        return Acc(self.total + x, self.scale)

    @triton.constexpr_function
    def scale_squared(self):
        return self.scale * self.scale


@tl.core._aggregate
class Pair:
    first: tl.tensor
    second: tl.tensor

    def __init__(self, first, second):
        self.first = first
        self.second = second

    @triton.jit
    def total(self):
        return self.first + self.second

    def __getitem__(self, i: tl.constexpr, _semantic=None):
        return self.first if i == 0 else self.second


@tl.core._aggregate
class Diff:
    """The same fields as Pair, another class: calls specialize on the class."""
    first: tl.tensor
    second: tl.tensor

    def __init__(self, first, second):
        self.first = first
        self.second = second

    @triton.jit
    def total(self):
        return self.first - self.second

    @triton.jit
    def __getitem__(self, i):
        return self.first * i


@tl.core._aggregate
class Nest:
    inner: Pair
    acc: Acc
    n: tl.constexpr

    def __init__(self, inner, acc, n):
        self.inner = inner
        self.acc = acc
        self.n = n

    @staticmethod
    @triton.jit
    def make(x, n: tl.constexpr):
        return Nest(Pair(x, x + 1), Acc(x * 0, 2), n)

    def grow(self, x, _semantic=None):
        self.acc.add(x, _semantic=_semantic)   # changes the nested aggregate in place


@triton.jit
def sum_of(p):
    return p.total()


@triton.jit
def swapped(p):
    return Pair(p.second, p.first)


@triton.jit
def bumped(acc, x):
    acc.add(x)          # the callee's own copy
    return acc


@MODES
def test_construct_methods_and_constexpr_field(interpret):
    @triton.jit
    def k(X, Y, N: tl.constexpr):
        offs = tl.arange(0, N)
        acc = Acc(tl.load(X + offs), 3)
        tl.static_assert(acc.scale == 3)
        tl.static_assert(acc.scale_squared() == 9)
        acc.add(1.0)
        tl.store(Y + offs, acc.scaled())
        tl.store(Y + N + offs, acc.plus(2.0).total)

    x = np.random.rand(16).astype(np.float32)
    y = np.zeros(32, np.float32)
    _launch(k, interpret, x, y, 16)
    np.testing.assert_allclose(y[:16], (x + 1) * 3, rtol=1e-6)
    np.testing.assert_allclose(y[16:], x + 3, rtol=1e-6)


@MODES
def test_pass_return_and_class_specialization(interpret):
    @triton.jit
    def k(X, Y, N: tl.constexpr):
        offs = tl.arange(0, N)
        a = tl.load(X + offs)
        b = tl.load(X + N + offs)
        p = swapped(Pair(a, b))
        d = Diff(a, b)
        tl.store(Y + offs, sum_of(p))              # Pair.total
        tl.store(Y + N + offs, sum_of(d))          # Diff.total: same field types, another class
        tl.store(Y + 2 * N + offs, p[0])           # Pair.__getitem__ (plain, compile-time index)
        tl.store(Y + 3 * N + offs, d[3.0])         # Diff.__getitem__ (@jit)
        acc = Acc(a, 1)
        acc2 = bumped(acc, 5.0)
        tl.store(Y + 4 * N + offs, acc.total)      # the caller's aggregate is unchanged
        tl.store(Y + 5 * N + offs, acc2.total)

    x = np.random.rand(32).astype(np.float32)
    a, b = x[:16], x[16:]
    y = np.zeros(96, np.float32)
    _launch(k, interpret, x, y, 16)
    np.testing.assert_allclose(y.reshape(6, 16), np.stack([a + b, a - b, b, a * 3, a, a + 5]), rtol=1e-6)


@MODES
def test_nested_aggregates_and_static_jit_constructor(interpret):
    @triton.jit
    def k(X, Y, N: tl.constexpr):
        offs = tl.arange(0, N)
        nest = Nest.make(tl.load(X + offs), 4)
        tl.static_assert(nest.n == 4)
        nest.grow(nest.inner.total())
        tl.store(Y + offs, nest.acc.scaled())
        tl.store(Y + N + offs, nest.inner.second)

    x = np.random.rand(8).astype(np.float32)
    y = np.zeros(16, np.float32)
    _launch(k, interpret, x, y, 8)
    np.testing.assert_allclose(y[:8], (2 * x + 1) * 2, rtol=1e-6)
    np.testing.assert_allclose(y[8:], x + 1, rtol=1e-6)


@MODES
def test_loop_carried_changed_in_place(interpret):
    @triton.jit
    def k(X, Y, STEPS, N: tl.constexpr):
        offs = tl.arange(0, N)
        acc = Acc(tl.zeros((N, ), dtype=tl.float32), 2)
        for i in range(STEPS):
            acc.add(tl.load(X + i * N + offs))     # no assignment: the method changes the aggregate
        nest = Nest.make(tl.zeros((N, ), dtype=tl.float32), 1)
        j = 0
        while j < STEPS:
            nest.grow(tl.load(X + j * N + offs) * 2)   # a nested aggregate changed in a while loop
            j += 1
        tl.store(Y + offs, acc.scaled())
        tl.store(Y + N + offs, nest.acc.total)

    x = np.random.rand(5, 16).astype(np.float32)
    y = np.zeros(32, np.float32)
    _launch(k, interpret, x, y, 5, 16)
    np.testing.assert_allclose(y[:16], x.sum(0) * 2, rtol=1e-5)
    np.testing.assert_allclose(y[16:], x.sum(0) * 2, rtol=1e-5)


@MODES
def test_loop_carried_reassigned_and_branch(interpret):
    @triton.jit
    def k(X, Y, STEPS, N: tl.constexpr):
        offs = tl.arange(0, N)
        acc = Acc(tl.zeros((N, ), dtype=tl.float32), 1)
        for i in range(STEPS):
            acc = acc.plus(tl.load(X + i * N + offs))   # a new aggregate each iteration
            if i % 2 == 0:
                acc.add(100.0)                         # changed in place on a run-time branch
        tl.store(Y + offs, acc.total)

    x = np.random.rand(5, 8).astype(np.float32)
    y = np.zeros(8, np.float32)
    _launch(k, interpret, x, y, 5, 8)
    np.testing.assert_allclose(y, x.sum(0) + 300, rtol=1e-5)


@tl.core._aggregate
class Cfg:
    """Compile-time fields set from plain Python values: a number, a dtype, a tuple."""
    block: tl.constexpr
    dt: tl.constexpr
    shape: tl.tuple

    def __init__(self, block):
        self.block = block
        self.dt = tl.float16
        self.shape = (block, 2)

    @triton.jit
    def zeros(self):
        return tl.zeros((self.block, ), self.dt)


@MODES
def test_compile_time_fields_from_python_values(interpret):
    @triton.jit
    def k(Y):
        c = Cfg(8)
        tl.static_assert(c.shape[1] == 2)
        z = c.zeros()
        tl.static_assert(z.dtype == tl.float16)
        tl.store(Y + tl.arange(0, c.block), z.to(tl.float32) + c.shape[0])

    y = np.zeros(8, np.float32)
    _launch(k, interpret, y)
    np.testing.assert_array_equal(y, np.full(8, 8, np.float32))


class _Scaled:
    """A plain base class: aggregates inherit its fields and methods."""
    value: tl.tensor

    def __init__(self, value):
        self.value = value

    @triton.jit
    def doubled(self):
        return self.value * 2


@tl.core._aggregate
class Tagged(_Scaled):
    tag: tl.constexpr

    def __init__(self, value, tag):
        super().__init__(value)
        self.tag = tag


@tl.core._aggregate
class Longer(Tagged):
    """An aggregate deriving from an aggregate."""
    extra: tl.tensor

    def __init__(self, value, tag, extra):
        self.value = value
        self.tag = tag
        self.extra = extra

    @triton.jit
    def total(self):
        return self.doubled() + self.extra + self.tag


@MODES
def test_inherited_fields_and_methods(interpret):
    @triton.jit
    def k(X, Y, N: tl.constexpr):
        offs = tl.arange(0, N)
        x = tl.load(X + offs)
        t = Tagged(x, 5)
        tl.store(Y + offs, t.doubled() + t.tag)
        tl.store(Y + N + offs, Longer(x, 1, x).total())

    x = np.random.rand(8).astype(np.float32)
    y = np.zeros(16, np.float32)
    _launch(k, interpret, x, y, 8)
    np.testing.assert_allclose(y[:8], 2 * x + 5, rtol=1e-6)
    np.testing.assert_allclose(y[8:], 3 * x + 1, rtol=1e-6)


# -- misuse ------------------------------------------------------------------------------------------

@tl.core._aggregate
class Half:
    value: tl.tensor

    def __init__(self):
        pass      # never sets `value`


@tl.core._aggregate
class JitInit:
    value: tl.tensor

    @triton.jit
    def __init__(self, value):
        self.value = value


def _assign_field(X):
    p = Pair(tl.load(X), tl.load(X))
    p.first = tl.load(X + 1)


def _augassign_field(X):
    p = Pair(tl.load(X), tl.load(X))
    p.first += 1.0


def _unpack(X):
    a, b = Pair(tl.load(X), tl.load(X))


def _iterate(X):
    for v in Pair(tl.load(X), tl.load(X)):
        tl.store(X, v)


def _missing_field(X):
    h = Half()


def _wrong_field_type(X):
    p = Pair(tl.load(X), 3)


def _unknown_field(X):
    p = Pair(tl.load(X), tl.load(X))
    tl.store(X, p.third)


def _not_subscriptable(X):
    acc = Acc(tl.load(X), 1)
    tl.store(X, acc[0])


def _jit_init(X):
    j = JitInit(tl.load(X))


def _jit_method_assigns(X):
    acc = Acc(tl.load(X), 1)
    acc = sets_field(acc)


@triton.jit
def sets_field(acc):
    acc.total = acc.total + 1
    return acc


MISUSE = [
    (_assign_field, "p.first = tl.load(X + 1)", "Attribute assignment is not supported"),
    (_augassign_field, "p.first += 1.0", "Attribute assignment is not supported"),
    (_unpack, "a, b = Pair(", "cannot unpack"),
    (_iterate, "for v in Pair(", "iterate over"),
    (_missing_field, "h = Half()", "did not initialize attribute 'value'"),
    (_wrong_field_type, "p = Pair(tl.load(X), 3)", "for attribute 'second'"),
    (_unknown_field, "tl.store(X, p.third)", "has no attribute 'third'"),
    (_not_subscriptable, "tl.store(X, acc[0])", "not subscriptable"),
    (_jit_init, "j = JitInit(tl.load(X))", "cannot be a @jit function"),
    (_jit_method_assigns, "acc.total = acc.total + 1", "Attribute assignment is not supported"),
]


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("body, line, words", MISUSE, ids=[m[0].__name__.strip("_") for m in MISUSE])
def test_misuse_names_kernel_and_line(interpret, body, line, words):
    kernel = triton.jit(body)
    with pytest.raises(CompilationError) as info:
        _launch(kernel, interpret, np.zeros(4, np.float32))
    text = str(info.value)
    assert body.__name__ in text or (body is _jit_method_assigns and "sets_field" in text), text
    assert line in text and "^" in text, text
    assert words in text, text


def test_cache_key_covers_fields_and_methods():
    from tritium.language.aggregate import cache_key

    def make(variant):
        if variant == 0:
            @tl.core._aggregate
            class A:
                x: tl.tensor

                def f(self, _semantic=None):
                    return 1
        elif variant == 1:
            @tl.core._aggregate
            class A:
                x: tl.tensor

                def f(self, _semantic=None):
                    return 2
        else:
            @tl.core._aggregate
            class A:
                x: tl.constexpr

                def f(self, _semantic=None):
                    return 1
        return A

    keys = [cache_key(make(v), lambda fn: "") for v in (0, 1, 2, 0)]
    assert keys[0] == keys[3] and len(set(keys[:3])) == 3
    # a @jit method's own key (its code and what it calls) is part of it
    assert cache_key(Acc, lambda fn: "a") != cache_key(Acc, lambda fn: "b")
