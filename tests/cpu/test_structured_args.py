"""Tuples and host TensorDescriptors as run-time kernel arguments, compiled on the CPU: what the compiled
kernel's signature says (Triton's spelling), one compilation per specialization, a direct launch of the
compiled kernel, and the errors of misuse (naming the kernel and the argument)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.compiler.errors import CompilationError
from tritium.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _axpy(ptrs, coef, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(ptrs[0] + offs, mask=m)
    tl.store(ptrs[1] + offs, x * coef[0] + coef[1], mask=m)


def _kernels(fn):
    (state, ) = fn.device_caches.values()
    return [e.kernel for e in state.kernels.values()]


def test_signature_and_one_compilation_per_specialization():
    x, y = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    _axpy[(1, )]((x, y), (2.0, 3), 16, BLOCK=16)
    np.testing.assert_array_equal(y, x * 2 + 3)
    _axpy[(1, )]((x, y), (2.0, 5), 16, BLOCK=16)  # same key: 3 and 5 are both plain i32
    np.testing.assert_array_equal(y, x * 2 + 5)
    (k, ) = _kernels(_axpy)
    assert k.src.signature == {"ptrs": ("*fp32", "*fp32"), "coef": ("fp32", "i32"), "n": "i32",
                               "BLOCK": "constexpr"}
    assert k.src.attrs[(0, 0)] == [["tt.divisibility", 16]] and k.src.attrs[(2, )] == [["tt.divisibility", 16]]
    _axpy[(1, )]((x, y), (2.0, 1), 16, BLOCK=16)  # an element equal to 1 is compiled in
    np.testing.assert_array_equal(y, x * 2 + 1)
    sigs = [k.src.signature["coef"] for k in _kernels(_axpy)]
    assert ("fp32", "constexpr") in sigs and len(sigs) == 2
    new = next(k for k in _kernels(_axpy) if k.src.signature["coef"][1] == "constexpr")
    assert new.src.constants[(1, 1)] == 1


def test_compiled_kernel_launched_directly_takes_the_tuples():
    x, y = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    k = _axpy.warmup((x, y), (2.0, 3), 16, BLOCK=16, grid=(1, ))
    k[(1, )]((x, y), (2.0, 4), 16, 16)
    np.testing.assert_array_equal(y, x * 2 + 4)


@triton.jit
def _desc_scale(d, k):
    v = d.load([0, 0])
    d.store([0, 0], v * k)


def test_descriptor_signature_and_errors():
    x = np.ones((16, 16), np.float32)
    _desc_scale[(1, )](TensorDescriptor.from_tensor(x, [16, 16]), 3.0)
    assert (x == 3).all()
    (k, ) = _kernels(_desc_scale)
    assert k.src.signature["d"] == "tensordesc<fp32[16, 16]>"
    # too narrow a block: the compiler's own rule for descriptors, reported for the argument
    with pytest.raises(CompilationError, match=r"argument `d`: Descriptor block shape must have at least 16 bytes in the last dimension"):
        _desc_scale[(1, )](TensorDescriptor.from_tensor(x, [16, 2]), 3.0)
    d = TensorDescriptor.from_tensor(x, [16, 16])
    d.strides = (16, 2)
    with pytest.raises(ValueError, match=r"argument `d` \(TensorDescriptor\) of kernel `_desc_scale`: the last "
                                         r"stride of a TensorDescriptor must be 1"):
        _desc_scale[(1, )](d, 3.0)


def test_misuse_names_the_kernel_and_argument():
    x = np.zeros(16, np.float32)
    with pytest.raises(TypeError, match=r"argument `ptrs` \(list\) of kernel `_axpy`: cannot pass a list"):
        _axpy[(1, )]([x, x], (1.0, 2), 16, BLOCK=16)
    with pytest.raises(TypeError, match=r"argument `coef` \(a tuple\) of kernel `_axpy`: cannot pass a object"):
        _axpy[(1, )]((x, x), (1.0, object()), 16, BLOCK=16)
    # indexing past the end of a tuple argument is a compile error in the kernel
    with pytest.raises(CompilationError, match="_axpy"):
        _axpy[(1, )]((x, ), (1.0, 2), 16, BLOCK=16)
