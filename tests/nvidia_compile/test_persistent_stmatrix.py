"""TRITIUM_NVIDIA_STMATRIX: a descriptor store writes its 16-bit block to shared memory with
``stmatrix.sync.aligned.m8n8.x4`` (tritium_nvidia/stmatrix.py), as Triton 3.6's epilogue of examples/08 does (16
per thread for a 128x256 tile at 8 warps, against 64 ``st.shared.b32``).

Two kinds of test: the addresses (each lane's row addresses, simulated on the integers for the accumulator
layouts, against the offsets the element-wise stores use: every element must land where it did), and the PTX of
examples/08 with the knob on and off."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persistent08 import compile08  # noqa: E402

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                 reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

STM = "stmatrix.sync.aligned.m8n8.x4.shared.b16"


class _Ints:
    """The arithmetic SmemLayout.offset asks of a lowering, on literals only."""
    fn = None

    def iadd(self, a: str, b: str) -> str:
        return str(int(a) + int(b))

    def imul(self, a: str, c: int) -> str:
        return str(int(a) * c)


def _offset(smem, coords) -> int:
    return int(smem.offset(_Ints(), [str(c) for c in coords]))


def _acc(M: int, N: int, warps: int):
    from tritium_nvidia.wgmma import acc_layout
    return acc_layout(M, N, warps)


def _mma_c(M: int, N: int, warps: int):
    from tritium_nvidia.mma import F16, mma_layouts
    return mma_layouts(F16, M, N, 16, warps)[0]


@pytest.mark.parametrize("make,M,N,warps", [(_acc, 128, 256, 8), (_acc, 128, 128, 8), (_acc, 64, 256, 4),
                                            (_acc, 64, 128, 8), (_acc, 128, 64, 4), (_acc, 256, 128, 8),
                                            (_mma_c, 128, 128, 4), (_mma_c, 64, 64, 4)])
def test_every_element_lands_where_the_elementwise_store_puts_it(make, M, N, warps):
    """Simulate each stmatrix .x4: lane 8j+i gives the address of row i of matrix j; lane t's word j holds
    columns 2(t%4), 2(t%4)+1 of row t//4 of matrix j (PTX ISA, stmatrix). Each element's byte must be the one
    the element-wise store of the same register writes (SmemLayout's swizzled offset)."""
    from tritium.gpu.lower.shared import SmemLayout
    from tritium_nvidia.stmatrix import address_layout
    lay = make(M, N, warps)
    # the descriptor store's layout: 64-element (128-byte) swizzled panels (N = 64: one panel)
    smem = SmemLayout((M, N), 1, 2)
    addr = address_layout(lay, smem)
    assert addr is not None, lay
    seen = set()
    for w in range(lay.num_warps):
        for g in range(lay.num_regs // 8):
            rows = [_offset(smem, addr.coords(g, lane, w)) for lane in range(32)]
            for t in range(32):
                for j in range(4):
                    for e in range(2):
                        r = 8 * g + 2 * j + e
                        want = _offset(smem, lay.coords(r, t, w))
                        got = rows[8 * j + t // 4] + 2 * (t % 4) + e
                        assert got == want, (w, g, t, j, e)
                        seen.add(got)
    assert len(seen) == M * N


def test_layouts_without_the_fragment_shape_are_left_alone():
    """A blocked layout (4 consecutive columns per thread) and a fragment layout whose warps copy each other
    keep the element-wise stores; so does a 32-bit tile."""
    from tritium.gpu import layout as L
    from tritium.gpu.lower.shared import SmemLayout
    from tritium_nvidia.stmatrix import address_layout
    smem = SmemLayout((128, 128), 1, 2)
    assert address_layout(L.blocked((128, 128), [1, 4], [4, 8], [8, 1], [1, 0]), smem) is None
    acc = _acc(128, 128, 8)
    dup = L.Layout(acc.shape, acc.reg, acc.lane, [(0, 0)] + list(acc.warp[1:]))
    assert address_layout(dup, smem) is None
    assert address_layout(acc, SmemLayout((128, 128), 1, 4)) is None


def test_knob_is_off_by_default():
    from tritium_nvidia.knobs import nvidia
    assert nvidia.stmatrix is False


@needs_ptxas
@pytest.mark.parametrize("dt,bk", [("fp16", 64), ("bf16", 64), ("fp8e4nv", 128)])
@pytest.mark.parametrize("defer", [True, False])
def test_epilogue_stores_the_tile_with_stmatrix(dt, bk, defer):
    """examples/08 (128x256 tile, 8 warps; fp8 stores fp16): 16 stmatrix .x4 per thread and no 32-bit shared
    store left in the epilogue, in the deferred-store path and the scratch path; the knob off keeps 64
    st.shared.b32."""
    c_dt = "fp16" if dt.startswith("fp8") else dt
    on = compile08(dt, bk=bk, c_dt=c_dt, stmatrix=True, defer_store_wait=defer).asm["ptx"]
    off = compile08(dt, bk=bk, c_dt=c_dt, stmatrix=False, defer_store_wait=defer).asm["ptx"]
    assert on.count(STM) == 16
    assert on.count("st.shared.b32") == 0
    assert off.count(STM) == 0 and off.count("st.shared.b32") == 64
    # the conversions stay packed two by two
    cvt = "cvt.rn.bf16x2.f32" if dt == "bf16" else "cvt.rn.f16x2.f32"
    assert on.count(cvt) == off.count(cvt) == 64


@needs_ptxas
def test_fp32_tile_keeps_elementwise_stores():
    """tf32 (fp32 C): stmatrix moves 16-bit elements only; the PTX is the knob-off one."""
    on = compile08("fp32", bk=32, bn=128, stmatrix=True).asm["ptx"]
    off = compile08("fp32", bk=32, bn=128, stmatrix=False).asm["ptx"]
    assert STM not in on
    assert on == off
