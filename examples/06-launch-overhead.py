"""
Launch overhead
===============

What a kernel costs before it does any work: `import tritium` (in a fresh interpreter, so nothing is
cached in this process) and the launch of an already-compiled tiny kernel, which goes through
argument binding, the specialization key, the in-memory cache and the driver's launcher.

Run: python examples/06-launch-overhead.py   (on a GPU it also times the same launch under Triton)

On an NVIDIA GPU it also times the driver's own launch call of the same kernel made from Python (cuda-bindings'
``cuLaunchKernel``), in the same batches: the floor of any launch from Python on this host. The host's speed
differs between processes on one machine (on one H200 host, five processes in a row read tritium 7.5-10.0 us
and Triton 14.0-18.0 us, each process steady within itself; a sync after every batch changed nothing, so it is
not the GPU's queue): a single reading is that process's, and the launch's cost over the bare call is the
figure to compare between runs.
"""
import statistics
import subprocess
import sys
import time

import tritium as triton
import tritium.language as tl


@triton.jit
def store_one(out_ptr, value):
    tl.store(out_ptr, value)


def import_seconds(runs: int = 5) -> float:
    """Median wall time of ``import tritium`` in a fresh interpreter."""
    code = "import time\nt = time.perf_counter()\nimport tritium\nprint(time.perf_counter() - t)\n"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout) for _ in range(runs)]
    return statistics.median(times)


def launch_us(kernels, out, sync=lambda: None, launches: int = 5000) -> list:
    """Median cost of one launch of each kernel in microseconds, measured in batches of 100 so the timer's own
    cost does not dominate, the kernels taking turns batch by batch so that a change in the host's load during
    the run falls on all of them alike."""
    for kernel in kernels:
        kernel[(1, )](out, 3)
    sync()
    batches = [[] for _ in kernels]
    for _ in range(launches // 100):
        for kernel, times in zip(kernels, batches):
            t0 = time.perf_counter()
            for _ in range(100):
                kernel[(1, )](out, 3)
            times.append((time.perf_counter() - t0) * 1e6 / 100)
    sync()
    return [statistics.median(times) for times in batches]


def main():
    from _bench import device, triton_twin
    dev = device()
    print(f"import tritium: {import_seconds() * 1e3:.0f} ms (median of 5 fresh interpreters)", flush=True)
    if dev == "cpu":
        import numpy as np
        out = np.zeros(4, dtype=np.float32)
        ours, = launch_us([store_one], out)
        assert out[0] == 3
        print(f"cached launch of a one-store kernel (cpu): tritium {ours:.1f} us", flush=True)
        return
    import torch
    out = torch.zeros(4, device="cuda")
    twin = triton_twin(__file__)
    if twin is None:
        ours, = launch_us([store_one], out, torch.cuda.synchronize)
        assert out[0].item() == 3
        print(f"cached launch (cuda): tritium {ours:.1f} us | Triton not installed", flush=True)
        return
    store_one[(1, )](out, 3)
    bare = bare_launch(store_one, out)
    kernels = [store_one, twin.store_one] + ([bare] if bare is not None else [])
    ours, theirs, *floor = launch_us(kernels, out, torch.cuda.synchronize)
    assert out[0].item() == 3
    over = f" | cuLaunchKernel alone {floor[0]:.1f} us (tritium adds {ours - floor[0]:.1f})" if floor else ""
    print(f"cached launch of a one-store kernel (cuda): tritium {ours:.1f} us | triton {theirs:.1f} us | "
          f"ratio {theirs / ours:.2f}x{over}", flush=True)


def bare_launch(kernel, out):
    """Something ``launch_us`` can time as ``k[(1, )](out, 3)`` that makes only the driver's launch call of
    ``kernel``'s compiled code, through cuda-bindings, with the parameters tritium's launcher packed (a dict, so
    that the subscript costs no Python frame); None where that is not an NVIDIA launch."""
    try:
        import torch
        from cuda.bindings import driver as cu
        state = next(iter(kernel.device_caches.values()))
        launcher = next(iter(state.kernels.values())).kernel._launcher
        func = launcher.functions[torch.cuda.current_device()]
        stream, params, block = torch.cuda.current_stream().cuda_stream, launcher.params_addr, launcher.block
    except Exception:  # noqa: BLE001 - another backend: no floor to print
        return None
    launch = cu.cuLaunchKernel
    return {(1, ): lambda out_ptr, value: launch(func, 1, 1, 1, block, 1, 1, 0, stream, params, 0)}


if __name__ == "__main__":
    main()
