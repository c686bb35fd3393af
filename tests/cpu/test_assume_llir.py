"""``tl.assume`` reaches LLVM on the CPU backend as ``llvm.assume`` (Triton's test_core::test_assume checks the
llir the same way), so LLVM may use the fact; results do not change where the assumption holds."""
import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def _assumed_size(out_ptr, N: tl.constexpr, BLOCK_N: tl.constexpr):
    current_size = N - tl.program_id(0) * BLOCK_N
    tl.assume(current_size >= BLOCK_N)
    if current_size >= 128:
        tl.store(out_ptr + tl.program_id(0), current_size)
    else:
        tl.store(out_ptr + tl.program_id(0), current_size + 101024)


def test_assume_is_in_the_llir_and_used():
    out = np.zeros(8, np.float32)
    k = _assumed_size[(8, )](out, N=1024, BLOCK_N=128)
    assert out.tolist() == [1024.0 - 128 * i for i in range(8)]
    llir = k.asm["llir"]
    assert "call void @llvm.assume(i1" in llir
    # the branch the assumption rules out is gone from the optimized code
    assert "101024" not in llir


@triton.jit
def _assumed_tile(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.assume(n > 0)
    tl.assume(offs < BLOCK)   # a tile's condition: accepted, not stated to LLVM
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=-1.0) * 2, mask=offs < BLOCK)


def test_assume_on_a_scalar_and_a_tile_keeps_results():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    k = _assumed_tile[(1, )](x, out, 10, BLOCK=16)
    assert out.tolist() == [2.0 * i for i in range(10)] + [-2.0] * 6
    assert k.asm["llir"].count("call void @llvm.assume(i1") == 1
