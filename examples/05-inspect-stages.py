"""
Inspecting and changing the compiler pipeline
=============================================

Triton's README shows how to look at (and change) the stages a backend adds:

    def inspect_stages(_self, stages, options, language, capability):
        # inspect or modify add_stages here
    triton.knobs.runtime.add_stages_inspection_hook = inspect_stages

tritium runs that hook exactly so, after the backend and after every plugin's `tritium_add_stages`.
`stages` maps each stage's name (its file extension) to `fn(src, metadata)`; a hook may wrap, replace,
insert or remove stages. What the hook does is part of the cache key: change it and kernels recompile.

Run: python examples/05-inspect-stages.py
"""
import statistics
import time

import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


#: what CI compiles for GPU targets without a GPU (tests/nvidia_compile): (kernel, signature, constexprs)
COMPILE_CASES = [(scale_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "factor": "fp32",
                                 "BLOCK": "constexpr"}, {"BLOCK": 1024})]

seen = {}


def inspect_stages(_self, stages, options, language, capability):
    # inspect: which stages does this backend run, for which target?
    seen["stages"] = list(stages)
    seen["capability"] = capability

    # wrap: count the operations of the tile IR after the backend's own passes
    make_ttir = stages["ttir"]

    def counting_ttir(src, metadata):
        module = make_ttir(src, metadata)
        text = str(module)
        seen["tile ops"] = sum(line.strip().startswith(("%", '"tt.')) for line in text.splitlines())
        return module

    stages["ttir"] = counting_ttir

    # insert: a stage of our own after the LLVM IR, whose artifact is kept with the others
    names = list(stages)
    at = names.index("llir") + 1  # right after the LLVM IR, whatever the backend's later stages are
    items = list(stages.items())
    items.insert(at, ("llstats", lambda src, metadata: (
        f"; {sum(1 for l in src.splitlines() if l.startswith('define'))} functions, "
        f"{len(src.splitlines())} lines\n" + src)))
    stages.clear()
    stages.update(items)


def arrays(n):
    """Host arrays on the CPU backend, device tensors on a GPU backend."""
    from _bench import device
    if device() == "cpu":
        x = np.arange(n, dtype=np.float32)
        return x, np.empty_like(x), lambda a: a
    import torch
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    return x, torch.empty_like(x), lambda a: a.cpu().numpy()


def main():
    # a kernel found in the on-disk cache is not compiled again, so the hook would not run: compile it anyway
    with triton.knobs.compilation.scope():
        triton.knobs.compilation.always_compile = True
        run_with_hooks()


def run_with_hooks():
    triton.knobs.runtime.add_stages_inspection_hook = inspect_stages
    n = 5000
    x, out, host = arrays(n)
    t = time.perf_counter()
    kernel = scale_kernel[(triton.cdiv(n, 1024), )](x, out, n, 2.0, BLOCK=1024)
    first = time.perf_counter() - t
    np.testing.assert_allclose(host(out), 2 * host(x))
    print("stages the backend added:", seen["stages"], "for", seen["capability"])
    print("tile IR lines after the backend's passes:", seen["tile ops"])
    print("artifacts of the compiled kernel:", list(kernel.asm))
    print("our stage's artifact begins with:", kernel.asm["llstats"].splitlines()[0])

    # a cached launch does not recompile; a different hook does
    cached_runs = []
    for _ in range(200):
        t = time.perf_counter()
        scale_kernel[(triton.cdiv(n, 1024), )](x, out, n, 3.0, BLOCK=1024)
        cached_runs.append(time.perf_counter() - t)
    cached = statistics.median(cached_runs)

    def another_hook(_self, stages, options, language, capability):
        pass

    triton.knobs.runtime.add_stages_inspection_hook = another_hook
    k2 = scale_kernel[(triton.cdiv(n, 1024), )](x, out, n, 3.0, BLOCK=1024)
    print("a new hook compiled a new kernel:", k2.hash != kernel.hash, "| artifacts:", list(k2.asm))
    triton.knobs.runtime.add_stages_inspection_hook = None
    print(f"first call {first * 1e3:.1f} ms (compile), cached call {cached * 1e6:.0f} us (median of 200)")


if __name__ == "__main__":
    main()
