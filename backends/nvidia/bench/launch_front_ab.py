"""The cached launch on an NVIDIA GPU, in one process: through core's native front (runtime/native_front.py),
the same kernel source kept in its generated Python frame, the bare cuLaunchKernel of the compiled kernel
(cuda-bindings) and Triton 3.6, in batches of 100 taking turns (examples/06's timer), three readings.

    python backends/nvidia/bench/launch_front_ab.py
"""
import importlib.util
import os
import sys

import torch

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples")
sys.path.insert(0, EXAMPLES)
spec = importlib.util.spec_from_file_location("ex06", os.path.join(EXAMPLES, "06-launch-overhead.py"))
ex = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ex)
import tritium  # noqa: E402
import tritium.language as tl  # noqa: E402
from _bench import triton_twin  # noqa: E402


@tritium.jit
def store_frame(out_ptr, value):
    tl.store(out_ptr, value)


out = torch.zeros(4, device="cuda")
for _ in range(300):
    ex.store_one[(1, )](out, 3)
    store_frame[(1, )](out, 3)
torch.cuda.synchronize()
hp = store_frame._hot_path
print("front armed on store_one:", ex.store_one._hot_path.call is ex.store_one._hot_path.front,
      "| store_frame:", hp.call is hp.front)
if hp.front_state is not None:   # the same kernel, kept in its Python frame
    hp.front_state[1] = None
    hp.call = hp.front_state[0]
    hp.bound = (object(), None)
twin = triton_twin(os.path.join(EXAMPLES, "06-launch-overhead.py"))
bare = ex.bare_launch(ex.store_one, out)
names = ["front", "frame", "bare cuLaunchKernel", "Triton 3.6"]
kernels = [ex.store_one, store_frame, bare, twin.store_one]
for rnd in range(3):
    res = ex.launch_us(kernels, out, torch.cuda.synchronize, launches=10000)
    print(" | ".join(f"{n} {r:.2f} us" for n, r in zip(names, res)),
          f"| front adds {res[0] - res[2]:.2f}, frame adds {res[1] - res[2]:.2f}", flush=True)
assert out[0].item() == 3
