"""A @jit function passed to a kernel as a compile-time argument is compiled into it: after its source changes
(``_unsafe_update_src``), the next launch must compile again. tritium keyed the launch by the function object,
so it kept running the kernel built from the old source (Triton's test_cache.py::test_higher_order_kernel)."""
import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def _value():
    return 0


@triton.jit
def _kernel(out_ptr, FUNC: tl.constexpr):
    tl.store(out_ptr, FUNC())


def test_changed_source_of_a_function_argument_recompiles():
    out = np.full(1, -1, np.int32)
    original = _value.src
    try:
        _kernel[(1, )](out, _value)
        assert out[0] == 0
        _value._unsafe_update_src(original.replace("return 0", "return 1"))
        _kernel[(1, )](out, _value)
        assert out[0] == 1
        _kernel[(1, )](out, _value)   # the cached launch of the new kernel
        assert out[0] == 1
    finally:
        _value._unsafe_update_src(original)
    _kernel[(1, )](out, _value)
    assert out[0] == 0
