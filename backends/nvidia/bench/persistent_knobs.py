"""examples/08's persistent descriptor matmul at 8192^3 with the knobs of its epilogue and tile loop (PERF.md, issue
14, seventh session, H2), each variant beside Triton 3.6 in one process: interleaved rounds (the order reversed
every other round), CUDA events; "x10" is ten calls between two events (the device's time, the host's
descriptors and launch hidden behind the previous kernel), "single" one call (examples/08's way).
Run from the repository root:
  python3 backends/nvidia/bench/persistent_knobs.py --check VARIANT   correctness of one variant on small
        shapes, partial tiles, short K, few programs (run each in its own process: a hang or a fault there must
        not take a measurement down)
  H2_VARIANTS=base,defer,p1,p2,p2nb python3 backends/nvidia/bench/persistent_knobs.py   the measurement
Variants: base (every knob at its default), defer (TRITIUM_NVIDIA_DEFER_STORE_WAIT), p1 / p2 (defer + tile
prefetch mode 1 / 2), p2only (prefetch 2 alone), p2nb (p2 without the K loop's top barrier), nb (that alone),
off (all three knobs off, whatever the defaults), typed (tensor maps of floats encoded with their float type,
TRITIUM_NVIDIA_TMA_TYPED_MAPS, as Triton 3.6 encodes them; H5), stm (the epilogue's shared stores as
stmatrix .x4, TRITIUM_NVIDIA_STMATRIX; eighth session, HC), emp (per-stage empty mbarriers instead of the K
loop's CTA barriers, TRITIUM_NVIDIA_EMPTY_BARRIERS; ninth session, HA), emp0 (that without the tile prefetch),
ws1 / ws4 (emp with a producer warp / warpgroup issuing every copy, TRITIUM_NVIDIA_PRODUCER_WARPS), wsh (that
producer warp only for the loop written warp_specialize=True, TRITIUM_NVIDIA_WS_PRODUCER_WARPS=1: the ws row; the
other rows are base again), l2 (host tensor maps with 256-byte L2 promotion, TRITIUM_NVIDIA_TMA_L2_PROMOTION;
twentieth session, HA).
H2_NO_WS=1 leaves out the ws row,
H2_CHECK_SHAPES=n checks the first n shapes, H2_ROUNDS the rounds (9)."""
import importlib.util
import os
import statistics
import sys

import torch
from tritium_nvidia.knobs import nvidia

sys.path.insert(0, "examples")
_spec = importlib.util.spec_from_file_location("ex08", "examples/08-persistent-matmul-descriptors.py")
ex = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ex)

VARIANTS = {"base": {}, "defer": {"defer_store_wait": True}, "p1": {"defer_store_wait": True, "prefetch_tiles": 1},
            "p2": {"defer_store_wait": True, "prefetch_tiles": 2}, "p2only": {"prefetch_tiles": 2},
            "p2nb": {"defer_store_wait": True, "prefetch_tiles": 2, "bulk_loop_top_barrier": False},
            "nb": {"bulk_loop_top_barrier": False},
            "off": {"defer_store_wait": False, "prefetch_tiles": 0, "bulk_loop_top_barrier": True},
            "typed": {"tma_typed_maps": True}, "stm": {"stmatrix": True},
            "emp": {"empty_barriers": True}, "emp0": {"empty_barriers": True, "prefetch_tiles": 0},
            "ws1": {"empty_barriers": True, "producer_warps": 1}, "ws4": {"empty_barriers": True, "producer_warps": 4},
            "wsh": {"ws_producer_warps": 1}, "l2": {"tma_l2_promotion": 256}}
ROWS = [("float16", False), ("bfloat16", False), ("float8_e4m3fn", False), ("float32", False), ("float16", True)]
if os.environ.get("H2_NO_WS"):         # the ws row is the fp16 kernel again, on both sides (PERF.md)
    ROWS = ROWS[:4]


class knobs_of:
    """The knobs of variant ``v`` set while the block runs (the kernel recompiles per variant: knobs are in the
    cache key)."""

    def __init__(self, v):
        self.v = VARIANTS.get(v, {})

    def __enter__(self):
        self.s = nvidia.scope()
        self.s.__enter__()
        for k, x in self.v.items():
            setattr(nvidia, k, x)

    def __exit__(self, *a):
        self.s.__exit__(*a)


def launch(mod, a, b, c, num_sms, cfg, ws):
    M, K = a.shape
    N = b.shape[0]
    BM, BN, BK, warps, stages = cfg
    TD = mod.TensorDescriptor
    a_d = TD(a, list(a.shape), list(a.stride()), [BM, BK])
    b_d = TD(b, list(b.shape), list(b.stride()), [BN, BK])
    c_d = TD(c, list(c.shape), list(c.stride()), [BM, BN])
    grid = (min(num_sms, mod.triton.cdiv(M, BM) * mod.triton.cdiv(N, BN)), )
    return mod.matmul_persistent[grid](a_d, b_d, c_d, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
                                       NUM_SMS=num_sms, WARP_SPECIALIZE=ws, num_warps=warps, num_stages=stages)


def shape_of(k):
    ptx = k.asm["ptx"]
    return (f"inits={ptx.count('mbarrier.init.shared::cta.b64')} waits_read={ptx.count('cp.async.bulk.wait_group.read')}"
            f" bars={ptx.count('bar.sync')} arrives={ptx.count('mbarrier.arrive.shared')} loads={ptx.count('cp.async.bulk.tensor.2d.shared::cluster')}"
            f" stm={ptx.count('stmatrix.sync')} warps={k.metadata_dict.get('num_warps')} shared={k.metadata_dict.get('shared')}"
            f" maps={[m['elem_type'] for m in k.metadata_dict.get('tensor_map_params', [])]}")


def check(variant):
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    bad = 0
    for name, ws in ROWS:
        cfg = ex.CONFIGS[name]
        shapes = ((512, 768, 1024, num_sms), (1000, 1304, 400, 7), (300, 200, 16, 3), (128, 104, 208, 3))
        for (M, N, K, sms) in shapes[:int(os.environ.get("H2_CHECK_SHAPES", "4"))]:
            a, b, c = ex.inputs(name, M, N, K, "cuda")
            with knobs_of(variant):
                k = launch(ex, a, b, c, sms, cfg, ws)
            torch.cuda.synchronize()
            ref = a.double() @ b.double().T
            err = ((c.double() - ref).norm() / ref.norm()).item()
            nan = torch.isnan(c).any().item()
            tol = {"float32": 2e-3, "float8_e4m3fn": 2e-3}.get(name, 1e-2)
            ok = err < tol and not nan
            bad += not ok
            print(f"check {variant} {name}{' ws' if ws else ''} {M}x{N}x{K} sms={sms}: err {err:.2e} nan={nan} "
                  f"{'ok' if ok else 'WRONG'} [{shape_of(k)}]", flush=True)
    print(f"check {variant}: {'PASS' if bad == 0 else f'FAIL ({bad})'}", flush=True)


def measure(variants, rounds):
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    twin = None
    try:
        from _bench import triton_twin
        twin = triton_twin(os.path.abspath("examples/08-persistent-matmul-descriptors.py"))
    except Exception as e:  # noqa: BLE001 - measure tritium alone then
        print("no triton twin:", e)
    M = N = K = 8192
    flop = 2 * M * N * K
    s_ev, e_ev = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(fn, reps):
        s_ev.record()
        for _ in range(reps):
            fn()
        e_ev.record()
        e_ev.synchronize()
        return s_ev.elapsed_time(e_ev) / reps

    table = []
    for name, ws in ROWS:
        cfg = ex.CONFIGS[name]
        a, b, c = ex.inputs(name, M, N, K, "cuda")
        fns = {}
        for v in variants:
            def f(v=v, a=a, b=b, c=c, cfg=cfg, ws=ws):
                with knobs_of(v):
                    return launch(ex, a, b, c, num_sms, cfg, ws)
            k = f()
            torch.cuda.synchronize()
            print(f"  {name}{' ws' if ws else ''} {v}: {shape_of(k)}", flush=True)
            fns[v] = f
        if twin is not None:
            fns["triton"] = lambda a=a, b=b, c=c, cfg=cfg, ws=ws: launch(twin, a, b, c, num_sms, cfg, ws)
            fns["triton"]()
            torch.cuda.synchronize()
        dev = {n: [] for n in fns}
        single = {n: [] for n in fns}
        order = list(fns)
        for r in range(rounds):
            for n in (order if r % 2 == 0 else order[::-1]):
                fns[n]()
                torch.cuda.synchronize()
                dev[n].append(statistics.median(timed(fns[n], 10) for _ in range(3)))
                single[n].append(statistics.median(timed(fns[n], 1) for _ in range(5)))
        tf = {n: flop / (statistics.median(t) * 1e-3) / 1e12 for n, t in dev.items()}
        ts = {n: flop / (statistics.median(t) * 1e-3) / 1e12 for n, t in single.items()}
        ref, refs = tf.get("triton", float("nan")), ts.get("triton", float("nan"))
        what = f"{name}{' ws' if ws else ''}"
        line = (f"ROW {what} x10 TFLOP/s: " + " | ".join(f"{n} {t:.0f} ({t / ref:.3f})" for n, t in tf.items())
                + "   single: " + " | ".join(f"{n} {t:.0f} ({t / refs:.3f})" for n, t in ts.items()))
        print(line, flush=True)
        table.append(line)
    print("\n".join(table))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--check":
        check(sys.argv[2])
    else:
        measure(os.environ.get("H2_VARIANTS", "base,defer,p1,p2").split(","),
                int(os.environ.get("H2_ROUNDS", "9")))
