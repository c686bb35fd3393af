"""
Launch overhead
===============

What a kernel costs before it does any work: `import tritium` (in a fresh interpreter, so nothing is
cached in this process) and the launch of an already-compiled tiny kernel, which goes through
argument binding, the specialization key, the in-memory cache and the driver's launcher.

Run: python examples/06-launch-overhead.py   (on a GPU it also times the same launch under Triton)
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


def launch_us(kernel, out, sync=lambda: None, launches: int = 5000) -> float:
    """Median cost of one launch in microseconds, measured in batches of 100 so the timer's own
    cost does not dominate."""
    kernel[(1, )](out, 3)
    sync()
    batches = []
    for _ in range(launches // 100):
        t0 = time.perf_counter()
        for _ in range(100):
            kernel[(1, )](out, 3)
        batches.append((time.perf_counter() - t0) * 1e6 / 100)
    sync()
    return statistics.median(batches)


def main():
    from _bench import device, triton_twin
    dev = device()
    print(f"import tritium: {import_seconds() * 1e3:.0f} ms (median of 5 fresh interpreters)", flush=True)
    if dev == "cpu":
        import numpy as np
        out = np.zeros(4, dtype=np.float32)
        ours = launch_us(store_one, out)
        assert out[0] == 3
        print(f"cached launch of a one-store kernel (cpu): tritium {ours:.1f} us", flush=True)
        return
    import torch
    out = torch.zeros(4, device="cuda")
    ours = launch_us(store_one, out, torch.cuda.synchronize)
    assert out[0].item() == 3
    twin = triton_twin(__file__)
    if twin is None:
        print(f"cached launch (cuda): tritium {ours:.1f} us | Triton not installed", flush=True)
        return
    theirs = launch_us(twin.store_one, out, torch.cuda.synchronize)
    print(f"cached launch of a one-store kernel (cuda): tritium {ours:.1f} us | triton {theirs:.1f} us | "
          f"ratio {theirs / ours:.2f}x", flush=True)


if __name__ == "__main__":
    main()
