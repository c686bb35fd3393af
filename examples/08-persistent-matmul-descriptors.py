"""
Persistent matrix multiplication on tensor descriptors
======================================================

C = A @ B^T with host ``TensorDescriptor`` s (A is M x K, B is N x K, both K-contiguous, as Hopper's fp8
tensor-core instructions want them): one program per multiprocessor walks over the output tiles
(``tl.range(start, num_tiles, NUM_SMS, flatten=True)``), grouped along M so that neighbouring programs share
tiles of B in the cache. The same kernel runs in fp16, bf16, fp8 e4m3 and fp32 (tf32 tensor cores), and
with ``warp_specialize=True`` on the tile loop.

Run: python examples/08-persistent-matmul-descriptors.py   (on a GPU: checks against torch and times
tritium beside Triton 3.6 in one process)
"""
import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def matmul_persistent(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr,
                      WARP_SPECIALIZE: tl.constexpr):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True, warp_specialize=WARP_SPECIALIZE):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        offs_am = pid_m * BLOCK_M
        offs_bn = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([offs_am, offs_bn], acc.to(c_desc.dtype))


#: (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) per input dtype name
CONFIGS = {"float16": (128, 256, 64, 8, 3), "bfloat16": (128, 256, 64, 8, 3),
           "float8_e4m3fn": (128, 256, 128, 8, 3), "float32": (128, 128, 32, 8, 3)}


def matmul(a, b, c, num_sms, cfg, warp_specialize=False):
    """c = a @ b.T for a (M, K), b (N, K), c (M, N)."""
    M, K = a.shape
    N = b.shape[0]
    BM, BN, BK, warps, stages = cfg
    a_desc = TensorDescriptor(a, list(a.shape), list(a.stride()), [BM, BK])
    b_desc = TensorDescriptor(b, list(b.shape), list(b.stride()), [BN, BK])
    c_desc = TensorDescriptor(c, list(c.shape), list(c.stride()), [BM, BN])
    grid = (min(num_sms, triton.cdiv(M, BM) * triton.cdiv(N, BN)), )
    matmul_persistent[grid](a_desc, b_desc, c_desc, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
                            NUM_SMS=num_sms, WARP_SPECIALIZE=warp_specialize, num_warps=warps, num_stages=stages)
    return c


def inputs(dtype_name, M, N, K, device):
    import torch
    dtype = getattr(torch, dtype_name)
    a = torch.randn(M, K, device=device).to(dtype)
    b = torch.randn(N, K, device=device).to(dtype)
    out_dtype = torch.float16 if dtype.itemsize == 1 else dtype
    return a, b, torch.full((M, N), float("nan"), device=device, dtype=out_dtype)


def check(mod, dtype_name, M, N, K, device, num_sms, cfg, ws=False):
    """Relative error against a float64 reference on fresh inputs (the output poisoned first)."""
    a, b, c = inputs(dtype_name, M, N, K, device)
    mod.matmul(a, b, c, num_sms, cfg, ws)
    ref = a.double() @ b.double().T
    err = ((c.double() - ref).norm() / ref.norm()).item()
    tol = {"float32": 2e-3, "float8_e4m3fn": 2e-3}.get(dtype_name, 1e-2)   # tf32 / rounding of the output
    assert err < tol, f"{dtype_name}: relative error {err:.2e}"
    return err


def main():
    import sys

    from _bench import device, interleaved, triton_twin
    dev = device()
    me = sys.modules[__name__]
    if dev == "cpu":
        for name in ("float16", "bfloat16", "float32"):
            err = check(me, name, 256, 192, 128, "cpu", 4, (64, 64, 32, 4, 1))
            print(f"persistent descriptor matmul {name} 256x192x128 (cpu): rel err {err:.1e}")
        return
    import torch
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    twin = triton_twin(__file__)
    M = N = K = 8192
    rows = []
    for name in ("float16", "bfloat16", "float8_e4m3fn", "float32"):
        for ws in ((False, True) if name == "float16" else (False, )):
            cfg = CONFIGS[name]
            res, fns = {}, {}
            a, b, c_first = inputs(name, M, N, K, dev)
            for fw, mod in (("tritium", me), ("triton", twin)):
                if mod is None:
                    continue
                try:
                    err = check(mod, name, 512, 768, 1024, dev, num_sms, cfg, ws)
                    c = torch.empty_like(c_first)
                    mod.matmul(a, b, c, num_sms, cfg, ws)
                    fns[fw] = lambda mod=mod, c=c: mod.matmul(a, b, c, num_sms, cfg, ws)
                    res[fw] = (float("nan"), err)
                except Exception as exc:  # noqa: BLE001 - report the framework's refusal and go on
                    res[fw] = (float("nan"), f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            for fw, ms in interleaved(fns, dev).items():
                res[fw] = (2 * M * N * K / (ms * 1e-3) / 1e12, res[fw][1])
            t, r = res["tritium"], res.get("triton", (float("nan"), ""))
            what = f"{name}{' warp_specialize' if ws else ''}"
            line = (f"persistent descriptor matmul {what} {M}^3 cfg={cfg}: tritium {t[0]:.0f} TFLOP/s | Triton "
                    f"{r[0]:.0f} | ratio {t[0] / r[0]:.2f}x | errors {t[1]} / {r[1]}")
            print(line, flush=True)
            rows.append(line)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
