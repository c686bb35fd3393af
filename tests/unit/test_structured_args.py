"""Tuple and host TensorDescriptor arguments in the binder (no compilation): keys, Triton's signature
spelling for tuples (nested tuples of type strings, constexprs and attrs keyed by path), the run-time
values the kernel takes, and the checks of host descriptors."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.runtime.launch import _selector
from tritium.runtime.signature import compile_inputs
from tritium.runtime.specialize import make_binder
from tritium.tools.tensor_descriptor import TensorDescriptor


def _kernel(t, n, BLOCK: tl.constexpr = 16):
    pass


def _inputs(*args, fn=None, **kwargs):
    fn = fn or tritium.jit(_kernel)
    key, runtime, bound, options = make_binder(fn)(*args, **kwargs)
    return key, runtime, compile_inputs(fn, key, bound)


def test_tuple_signature_constexprs_and_attrs_by_path():
    x = np.zeros(64, np.float32)
    y = np.zeros(64, np.int16)
    key, runtime, (sig, consts, attrs, keep) = _inputs((x, (y[1:], 32), 1, 2.5, None, tl.constexpr(7)), 5)
    assert sig["t"] == ("*fp32", ("*i16", "i32"), "constexpr", "fp32", "constexpr", "constexpr")
    assert sig["n"] == "i32" and sig["BLOCK"] == "constexpr"
    assert consts == {(0, 2): 1, (0, 4): None, (0, 5): 7, (2, ): 16}
    # per element: the aligned array and the int divisible by 16, not the misaligned y[1:]
    assert attrs == {(0, 0): [["tt.divisibility", 16]], (0, 1, 1): [["tt.divisibility", 16]]}
    assert keep == ((0, 0), (0, 1, 0), (0, 1, 1), (0, 3), 1)
    flat = _selector(keep, 2)(runtime)
    assert flat == (x.__array_interface__["data"][0], y[1:].__array_interface__["data"][0], 32, 2.5, 5)


def test_tuple_keys_follow_the_values():
    x = np.zeros(64, np.float32)
    keys = {_inputs((x, n), 3)[0] for n in (1, 16, 17, 18)}
    assert len(keys) == 3  # 1 (compiled in), divisible by 16, neither
    assert _inputs((x, x), 3)[0] != _inputs((x, x, x), 3)[0]


def test_namedtuple_signature_keeps_its_fields():
    Pair = namedtuple("Pair", ["ptr", "size"])
    x = np.zeros(64, np.float32)
    _, _, (sig, _, _, _) = _inputs(Pair(x, 17), 3)
    assert type(sig["t"]) is Pair and sig["t"].ptr == "*fp32" and sig["t"].size == "i32"


def test_do_not_specialize_applies_to_every_element():
    fn = tritium.jit(_kernel, do_not_specialize=["t"])
    key, _, (sig, consts, attrs, _) = _inputs((1, 32), 3, fn=fn)
    assert sig["t"] == ("i32", "i32") and attrs == {} and (0, 0) not in consts


def test_lists_are_refused_with_the_kernel_and_argument_named():
    fn = tritium.jit(_kernel)
    with pytest.raises(TypeError, match="cannot pass a list"):
        make_binder(fn)([1, 2], 3)
    from tritium.runtime.structured import bind_error
    try:
        make_binder(fn)([1, 2], 3)
    except TypeError as exc:
        err = bind_error(fn, ([1, 2], 3), {}, exc)
    assert "argument `t` (list) of kernel `_kernel`" in str(err)


def test_descriptor_key_signature_and_runtime_values():
    x = np.zeros((32, 48), np.float16)
    d = TensorDescriptor.from_tensor(x, [16, 16])
    assert d.strides == [48, 1]
    key, runtime, (sig, consts, attrs, keep) = _inputs(d, 3)
    # the last entry: the innermost extent (48) is a multiple of 16, given to its shape argument as a fact
    assert key[0] == ("TD", np.dtype(np.float16), "cpu", (16, 16), "zero", True)
    assert attrs == {(0, 2): [["tt.divisibility", 16]]}
    assert sig["t"] == "tensordesc<fp16[16, 16]>"
    assert runtime[0] == (x.__array_interface__["data"][0], 32, 48, 48)
    assert _selector(keep, 2)(runtime) == runtime[0] + (3, )
    nan = TensorDescriptor.from_tensor(x, [16, 16], padding="nan")
    assert _inputs(nan, 3)[2][0]["t"] == "tensordesc<fp16[16, 16],padding=nan>"
    # inside a tuple, with a path of its own
    _, runtime, (sig, _, _, keep) = _inputs((d, 2), 3)
    assert sig["t"] == ("tensordesc<fp16[16, 16]>", "i32")
    assert _selector(keep, 2)(runtime) == runtime[0][0] + (2, 3)


@pytest.mark.parametrize("make, message", [
    (lambda x: TensorDescriptor(x, [32, 48], [48, 2], [16, 16]), "last stride"),
    (lambda x: TensorDescriptor(x, [32, 48], [3, 1], [16, 16]), "multiples of 16 bytes"),
    (lambda x: TensorDescriptor(x[:, 1:], [32, 47], [48, 1], [16, 16]), "16-byte aligned"),
    (lambda x: TensorDescriptor(x, [32, 48], [48, 1], [16, 12]), "powers of 2"),
    (lambda x: TensorDescriptor(x, [32, 48], [48, 1], [16]), "rank mismatch"),
    (lambda x: TensorDescriptor(x, [0, 48], [48, 1], [16, 16]), "positive"),
    (lambda x: TensorDescriptor(x, [32, 48], [48, 1], [16, 16], padding="one"), "'zero' or 'nan'"),
    (lambda x: TensorDescriptor(x.view(np.int16), [32, 48], [48, 1], [16, 16], padding="nan"), "floating-point"),
])
def test_descriptor_rules(make, message):
    x = np.zeros((32, 48), np.float16)
    with pytest.raises(ValueError, match=message):
        make(x)


def test_descriptor_checked_again_at_launch_naming_kernel_and_argument():
    x = np.zeros((32, 48), np.float16)
    d = TensorDescriptor.from_tensor(x, [16, 16])
    d.strides = [48, 2]
    fn = tritium.jit(_kernel)
    from tritium.runtime.structured import bind_error
    with pytest.raises(ValueError) as info:
        make_binder(fn)(d, 3)
    err = bind_error(fn, (d, 3), {}, info.value)
    assert "argument `t` (TensorDescriptor) of kernel `_kernel`" in str(err) and "last stride" in str(err)


def test_triton_import_path():
    import tritium as triton
    from tritium.tools.tensor_descriptor import TensorDescriptor as TD
    assert triton.tools.tensor_descriptor.TensorDescriptor is TD
