"""The host side of one call of examples/08's ``matmul()`` (three host ``TensorDescriptor``s made, then the
persistent kernel launched with them) on a host without a GPU, as launch_host.py measures a cached launch: the
kernel is compiled for sm_90 with ptxas, the driver call is an empty C function of cuLaunchKernel's signature,
torch's device/stream queries answer 0, and the tensors are torch CPU tensors. The tensor maps' encoding is the
one part that needs the driver (``cuTensorMapEncodeTiled``): it is replaced by a function returning 128 zero
bytes and counted; the launcher caches encoded maps by their fields, so a steady state of calls on the same
tensors encodes nothing (the count printed says so).

    python backends/nvidia/bench/launch_descriptors.py               # ns per call, medians of batches
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=functools_reduce \\
        python backends/nvidia/bench/launch_descriptors.py --callgrind --case 0
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import pathlib
import sys
from typing import Any

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import launch_host  # noqa: E402 - the stand-in driver and the timing loop, shared

EXAMPLE = HERE.parents[2] / "examples" / "08-persistent-matmul-descriptors.py"


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("persistent_matmul_08", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def stub_encoding() -> list:
    """Replace the driver's map encoding by 128 zero bytes; returns the list that counts its calls."""
    from tritium_nvidia import tensor_maps
    calls: list = []

    def encode(spec: dict, base: int, dims: list, stride_bytes: list) -> tuple:
        calls.append((base, tuple(dims)))
        return bytes(128), ""
    tensor_maps._encode = encode
    return calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--callgrind", action="store_true", help="5000 calls of the case inside functools.reduce")
    parser.add_argument("--case", type=int, default=None, help="only this case (0-based)")
    parser.add_argument("--batches", type=int, default=31)
    parser.add_argument("--size", type=int, default=512)
    opts = parser.parse_args()
    engine = launch_host.install()  # noqa: F841 - the stand-in's code lives as long as its engine
    encodes = stub_encoding()
    mod = load_example()
    from tritium.tools.tensor_descriptor import TensorDescriptor
    n = opts.size
    a, b, c = mod.inputs("float16", n, n, n, "cpu")
    cfg, sms = mod.CONFIGS["float16"], 132
    BM, BN, BK, warps, stages = cfg
    kernel = mod.matmul_persistent
    meta = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8, NUM_SMS=sms, WARP_SPECIALIZE=False,
                num_warps=warps, num_stages=stages)

    def descriptors() -> tuple:
        return (TensorDescriptor(a, list(a.shape), list(a.stride()), [BM, BK]),
                TensorDescriptor(b, list(b.shape), list(b.stride()), [BN, BK]),
                TensorDescriptor(c, list(c.shape), list(c.stride()), [BM, BN]))

    launch_host.prepare(kernel, *descriptors(), n, n, n, **meta)
    mod.matmul(a, b, c, sms, cfg)
    fixed = descriptors()
    grid = (min(sms, (n // BM) * (n // BN)), )
    cases = [("examples/08 matmul(a, b, c): 3 TensorDescriptors + launch", lambda: mod.matmul(a, b, c, sms, cfg)),
             ("3 TensorDescriptor(...) constructions only", descriptors),
             ("kernel[grid](3 descriptors made once, M, N, K, meta)", lambda: kernel[grid](*fixed, n, n, n, **meta))]
    warm = len(encodes)
    for i, (name, call) in enumerate(cases):
        if opts.case is not None and i != opts.case:
            continue
        if opts.callgrind:
            functools.reduce(lambda acc, _: call(), range(5000), None)
            print(f"5000 calls inside functools.reduce: {name}")
        else:
            print(f"{name:62s} {launch_host.per_call_ns(call, opts.batches, 500):8.0f} ns per call", flush=True)
    print(f"tensor maps encoded: {warm} while warming up, {len(encodes) - warm} during the measured calls")


if __name__ == "__main__":
    main()
