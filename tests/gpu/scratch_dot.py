"""A matmul loop whose A operand is computed on after its load (so it reaches the tensor cores through shared
scratch memory) while B is a pipelined load (so, on targets with asynchronous dots, the loop may leave its
dot in flight). Shared by tests/gpu/test_async_dots.py and tests/nvidia_compile/test_async_dot_scratch.py."""
import tritium as triton
import tritium.language as tl


@triton.jit
def scaled_a_matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m, offs_n, offs_k = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * BN + offs_n[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, K, BK):
        a = tl.load(a_ptrs) * 2.0
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * BN
    tl.store(c_ptr + offs_m[:, None] * BN + offs_n[None, :], acc)
