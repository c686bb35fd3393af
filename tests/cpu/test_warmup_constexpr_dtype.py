"""``warmup`` takes a dtype for an array argument (``kernel.warmup(torch.float32, ...)``), but a dtype given to a
``tl.constexpr`` parameter is that dtype. tritium wrapped every ``tl`` dtype as an array stand-in, so the
kernel got the stand-in as its compile-time value: each warmup compiled again (the stand-in is a new object each
time), a launch with the same arguments did not find the warmed kernel, and the hook's ``specialization_data``
was None (Triton's test_cache.py::test_preload)."""
import numpy as np
import torch

import tritium as triton
import tritium.language as tl
from tritium import knobs


@triton.jit
def _fill(X, n, DT: tl.constexpr, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(X + offs, (tl.zeros((B, ), DT) + 1.5).to(tl.float32), mask=offs < n)


def test_dtype_for_a_constexpr_parameter_stays_a_dtype():
    compiled = []
    with knobs.runtime.scope():
        knobs.runtime.jit_cache_hook = lambda **kw: compiled.append(kw["compile"])
        _fill.warmup(torch.float32, 8, tl.float16, 8, grid=(1, ))
        _fill.warmup(torch.float32, 8, tl.float16, 8, grid=(1, ))
        _fill.warmup(torch.float32, 8, DT=tl.float16, B=8, grid=(1, ))
        assert len(compiled) == 1
        assert compiled[0]["constants"][(2, )] == tl.float16
        assert compiled[0]["specialization_data"] is not None
        x = torch.zeros(8)
        _fill[(1, )](x, 8, tl.float16, 8)   # the warmed kernel: no compilation
        assert len(compiled) == 1
    np.testing.assert_array_equal(x.numpy(), np.full(8, 1.5, np.float32))
