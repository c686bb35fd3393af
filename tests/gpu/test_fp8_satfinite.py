"""float8e5 narrowing on the GPU side (tests/cpu/test_fp8_satfinite.py says why): rounding to nearest saturates,
infinities included, as Triton's cvt.rn.satfinite; rounding toward zero keeps an infinity (Triton: cvt.rz.f16
then the half's top byte)."""
import numpy as np

import tritium as triton
import tritium.language as tl

E5_MAX, E5_INF = 0x7B, 0x7C


@triton.jit
def _narrow(X, RNE, RTZ, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    tl.store(RNE + o, x.to(tl.float8e5))
    tl.store(RTZ + o, x.to(tl.float8e5, fp_downcast_rounding="rtz"))


def test_float32_to_float8e5(dev):
    x = np.array([np.inf, -np.inf, 1e6, -1e6, 61440.0, 61441.0, 57344.0, 1.0] * 4, np.float32)
    rne, rtz = dev.put(np.zeros(32, np.uint8)), dev.put(np.zeros(32, np.uint8))
    _narrow[(1, )](dev.put(x), triton.reinterpret(rne, tl.float8e5), triton.reinterpret(rtz, tl.float8e5), BLOCK=32)
    sat = [E5_MAX, E5_MAX | 0x80, E5_MAX, E5_MAX | 0x80, E5_MAX, E5_MAX, E5_MAX, 0x3C] * 4
    assert [hex(v) for v in dev.get(rne)] == [hex(v) for v in sat]
    assert [hex(v) for v in dev.get(rtz)] == [hex(v) for v in ([E5_INF, E5_INF | 0x80] + sat[2:8]) * 4]
