"""Settings of the NVIDIA backend (``tritium.knobs.nvidia``), under Triton's environment names where Triton has
them."""
from __future__ import annotations

from tritium.knobs import BoolKnob, IntKnob, KnobGroup, StrKnob


class nvidia_knobs(KnobGroup):
    group_name = "nvidia"
    # reports and run-time checks: they never change the generated code
    not_in_cache_key = ("dump_nvptx", "dump_ptxas", "launch_blocking", "native_launch", "launch_debug")
    ptxas_path = StrKnob("TRITON_PTXAS_PATH", doc="ptxas to use; default: the PATH, then the nvidia-cuda-nvcc "
                         "wheel, then the driver's JIT")
    ptxas_options = StrKnob("PTXAS_OPTIONS", doc="Extra ptxas options, space separated (e.g. -O1 -lineinfo)")
    libdevice_path = StrKnob("TRITON_LIBDEVICE_PATH", doc="libdevice.10.bc to link for precise math functions; "
                             "default: the CUDA toolkit's or the nvidia-cuda-nvcc wheel's")
    dump_nvptx = BoolKnob("NVPTX_ENABLE_DUMP", doc="Print the PTX of every compiled kernel to stderr")
    dump_ptxas = BoolKnob("TRITIUM_NVIDIA_PTXAS_VERBOSE", doc="Print ptxas's resource report (registers, "
                          "spills, shared memory) of every kernel")
    regroup = StrKnob("TRITIUM_NVIDIA_REGROUP", default="auto", choices=("auto", "1", "0"), doc="Order of the "
                      "PTX: 1 reorders the optimized LLVM IR element by element (SLP under a 128-bit cost model; "
                      "PERF.md), 0 keeps the lowering's op-major order, auto (default) assembles both for kernels "
                      "without tensor cores and keeps the element-major one only where ptxas then needs fewer "
                      "registers (layer norm at 4 warps: 62 -> 56; the persistent softmax would go 60 -> 64)")
    tma = BoolKnob("TRITIUM_NVIDIA_TMA", default=True, doc="On sm_90, copy tensor-descriptor blocks (rank 1 to 5, loads "
                   "and stores) with TMA where a descriptor's fields are the same in every program; off: "
                   "pipelined loads take 16-byte cp.async copies as on sm_80, other accesses go element by element")
    tma_host_maps = BoolKnob("TRITIUM_NVIDIA_TMA_HOST_MAPS", default=True, doc="With TMA on: a host "
                             "TensorDescriptor's tensor map is encoded by the launcher and passed as a 128-byte "
                             "kernel parameter (as Triton does); off: built on the device by each program, in a "
                             "module global that launches on different streams must take turns for")
    tma_ranks = BoolKnob("TRITIUM_NVIDIA_TMA_RANKS", default=True, doc="With TMA on: also descriptors of rank 1 "
                         "and 3-5, loads outside software-pipelined loops, NaN padding and descriptor reductions "
                         "(as Triton 3.6). On by default since the H200 measured it against off across the "
                         "examples (PERF.md, seventh session); off: TMA for 2-D pipelined loads and 2-D stores only")
    tma_loop_loads = BoolKnob("TRITIUM_NVIDIA_TMA_LOOP_LOADS", default=True, doc="With TMA on: a descriptor load "
                              "inside a loop that is not software-pipelined (not feeding a dot) is one TMA copy "
                              "waited for in its iteration, as outside loops; off: such loads go element by "
                              "element (several loads in flight per thread)")
    restage_bytes = BoolKnob("TRITIUM_NVIDIA_RESTAGE_BYTES", default=True, doc="On sm_90, an fp8/int8 dot operand "
                             "staged along its other dimension (B stored (K, N)) is rewritten K-major for wgmma in "
                             "4 x 4-byte blocks, conflict-free (restage.py); off: one byte per shared store")
    wgmma_split_n = BoolKnob("TRITIUM_NVIDIA_WGMMA_SPLIT_N", default=True, doc="On sm_90, a dot of 64-row tiles at "
                             "8 warps runs wgmma with the two warpgroups splitting N (as Triton 3.6); off: mma.sync")
    cp_async_fence = BoolKnob("TRITIUM_NVIDIA_CP_ASYNC_FENCE", default=False, doc="On sm_90, a "
                              "fence.proxy.async after each cp.async wait, before wgmma reads the stage (what the "
                              "PTX memory model's proxy rule asks; ptxas makes it a MEMBAR.ALL.CTA, which also waits "
                              "for the next stages' copies). Off (default, as Triton 3.6, whose pointer matmuls "
                              "have none there): 1-9% faster pointer matmuls on the H200 (PERF.md, H2)")
    carry_dots = BoolKnob("TRITIUM_NVIDIA_CARRY_DOTS", default=False, doc="On sm_90, a pipelined loop's last wgmma "
                          "dot whose result is only carried (attention's P @ V) is left running into the next "
                          "iteration and retired by that iteration's first dot's wait, as Triton 3.6 does "
                          "(gpu/lower/carry_dot.py); off: it is waited for in its own iteration (measured faster "
                          "for the forward: PERF.md, fifth session)")
    carry_register_a = IntKnob("TRITIUM_NVIDIA_CARRY_REGISTER_A", default=1, doc="On sm_90, in a pipelined loop "
                               "whose carried accumulators are left in flight (attention's backward) and take at "
                               "least this many registers per thread, the last dot reading A from registers (dK, "
                               "dQ) runs into the next iteration too, its A registers carried to the next "
                               "iteration's first wait, as Triton 3.6 does; 1 (default): every such loop (with "
                               "early_row_reads, examples/07's backward +6% at D64, +12-18% at D128 on the H200: "
                               "PERF.md, eighth session); 0: it is waited for in its own iteration")
    early_row_reads = BoolKnob("TRITIUM_NVIDIA_EARLY_ROW_READS", default=True, doc="On sm_90, a pipelined loop's "
                               "row vector left in its stage for expand_dims (attention backward's M and Di) is read "
                               "before the dot that precedes its first use, so the shared loads run beside the dot "
                               "(as Triton 3.6's SASS; gpu/lower/pipeline_rows.py; measured with carry_register_a: "
                               "PERF.md, eighth session); off: read at the expand_dims, after that dot's wait")
    pin_descriptors = BoolKnob("TRITIUM_NVIDIA_PIN_DESCRIPTORS", default=True, doc="On sm_90, a wgmma operand's "
                               "shared address is computed in the loop body that reads it (not hoisted by LLVM), so "
                               "the descriptors of a tile written before the loop are not kept live through the loop "
                               "in registers (wgmma_operands.py, _pinned); off: LLVM may hoist them")
    uniform_warp = BoolKnob("TRITIUM_NVIDIA_UNIFORM_WARP", default=True, doc="On sm_90, wgmma's warpgroup index "
                            "comes from lane 0's warp (shfl.sync.idx, as Triton 3.6), so ptxas keeps the "
                            "descriptors that follow from it in uniform registers; off: tid >> 5 as elsewhere")
    lsr = StrKnob("TRITIUM_NVIDIA_LSR", default="auto", choices=("auto", "1", "0"), doc="LLVM's loop strength "
                  "reduction in the PTX code generator: auto (default) turns it off for kernels of num_stages >= 3 "
                  "with a wgmma reading A from registers (attention: it adds a 64-bit add per copy to the pipelined "
                  "loop, lsr.py), on elsewhere; 1 on everywhere (LLVM's default); 0 off everywhere")
    defer_store_wait = BoolKnob("TRITIUM_NVIDIA_DEFER_STORE_WAIT", default=True, doc="On sm_90, a descriptor "
                                "store inside a loop stages its block in a shared buffer of its own, live through "
                                "the loop, and its bulk copies' read of it is waited for only before the next "
                                "iteration writes it again (and once after the loop), as Triton 3.6's persistent "
                                "kernels do; off: the block goes through the short-lived scratch buffer and each "
                                "store waits for its reads at once. Default on with the tile prefetch below "
                                "(measured together, PERF.md seventh session H2)")
    prefetch_tiles = IntKnob("TRITIUM_NVIDIA_PREFETCH_TILES", default=2, doc="On sm_90, a software-pipelined "
                             "loop of bulk tensor copies inside an outer for loop (a persistent kernel's tile loop) "
                             "issues the next outer iteration's first stages as soon as it ends, before the "
                             "epilogue (gpu/lower/pipeline_prefetch.py; its stages then live through the outer "
                             "loop): 1 on barriers initialized again for each run, 2 (default) on barriers whose "
                             "phases go on from run to run; 0: each run of the loop fills its stages when it "
                             "starts. examples/08 at 8192^3 on the H200, device time, 2 with the deferred store "
                             "wait against both off: fp16 +1.2 / +0.2%, bf16 +0.3 / +0.6%, fp8 +2.7 / +1.4%, tf32 "
                             "+0.0 / +0.4% (two runs); mode 1 below mode 2 in every row")
    bulk_loop_top_barrier = BoolKnob("TRITIUM_NVIDIA_BULK_LOOP_TOP_BARRIER", default=True, doc="On sm_90, a "
                                     "software-pipelined loop whose stages are all bulk tensor copies and whose "
                                     "dots run on into the next iteration keeps its barrier at the top of each "
                                     "iteration (default); off: only the one after the dots' wait, before the "
                                     "refill (the stages' barriers tell the copies' landing). Off measured not "
                                     "faster on the H200 (examples/08 with the tile prefetch: -0.2 to -1.1%)")
    empty_barriers = BoolKnob("TRITIUM_NVIDIA_EMPTY_BARRIERS", default=False, doc="On sm_90, a "
                              "software-pipelined loop whose stages are all bulk tensor copies and whose dots run "
                              "on frees each stage with an mbarrier of its own (one arrival per warp once its "
                              "wgmma.wait_group has retired the stage's reads; the thread that refills the stage "
                              "waits for it) instead of the CTA barriers at the top of each iteration and before "
                              "the refill (gpu/lower/pipeline_empty.py), so the warpgroups are not in lock step "
                              "every K step. Off by default: examples/08 on the H200, device time, four processes: fp16 -1.5..+0.8%, "
                              "bf16 -1.7..+1.3%, fp8 -1.2..-0.2%, tf32 -6..-9% (PERF.md, ninth session, HA)")
    producer_warps = IntKnob("TRITIUM_NVIDIA_PRODUCER_WARPS", default=0, doc="On sm_90, with "
                             "TRITIUM_NVIDIA_EMPTY_BARRIERS: a persistent kernel whose K loop the tile prefetch takes "
                             "(carried phases) runs 1 or 4 more warps, one thread of which issues every copy of every "
                             "tile (waiting for each stage's release), while the num_warps consumer warps only wait "
                             "for the stages, run the dots and the epilogue, their CTA barriers named barriers of "
                             "their own (gpu/lower/pipeline_producer.py, tritium_nvidia/warp_roles.py); 0 (default): "
                             "none. Off by default: examples/08 on the H200 (device time, two processes) fp16 +0.2/+1.4%, bf16 "
                             "+0.9/+2.3%, fp8 +1.5/+2.9% but tf32 -6/-8% (PERF.md, ninth session, HA)")
    ws_producer_warps = IntKnob("TRITIUM_NVIDIA_WS_PRODUCER_WARPS", default=0, doc="On sm_90: the producer "
                                "warps of TRITIUM_NVIDIA_PRODUCER_WARPS (1 or 4, with per-stage empty barriers), "
                                "taken only for the K loops of a tile loop written as tl.range(..., "
                                "warp_specialize=True), whatever TRITIUM_NVIDIA_EMPTY_BARRIERS says; 0 (default): "
                                "the hint changes nothing, as in Triton 3.6 on sm_90 (twentieth session, HA)")
    tma_l2_promotion = IntKnob("TRITIUM_NVIDIA_TMA_L2_PROMOTION", default=128, doc="The L2 sector promotion, in "
                               "bytes (0, 64, 128 or 256), of the tensor maps the launcher encodes for host "
                               "descriptors; 128 (default) as Triton 3.6. For A/B runs on the H200 (twentieth "
                               "session, HA)")
    tma_typed_maps = BoolKnob("TRITIUM_NVIDIA_TMA_TYPED_MAPS", default=False, doc="With TMA on: a tensor map "
                              "of 16/32/64-bit floats is encoded with its float type (FLOAT16, BFLOAT16, FLOAT32, "
                              "FLOAT64), as Triton 3.6 encodes a host descriptor's, instead of the unsigned integer "
                              "of its size (default: the copies move bits either way). For an A/B of examples/08's "
                              "fp16 vs bf16 gap on the H200 (PERF.md, seventh session, H5)")
    stmatrix = BoolKnob("TRITIUM_NVIDIA_STMATRIX", default=False, doc="On sm_90, a descriptor store writes its "
                        "block of 16-bit elements to shared memory with stmatrix.sync.aligned.m8n8.x4 (four 8x8 "
                        "matrices per instruction, tensor-core fragment layouts) instead of one st.shared per "
                        "two elements, as Triton 3.6's epilogue does (stmatrix.py); off: element-wise stores. Off "
                        "by default: examples/08 on the H200 measured no difference (device time, two runs: fp16 "
                        "+0.0 / +0.3%, bf16 -0.4 / +0.1%, fp8 -0.1 / +0.3%; PERF.md eighth session, HC)")
    launch_blocking = BoolKnob("CUDA_LAUNCH_BLOCKING", doc="Wait for every kernel to finish and check its "
                               "status (errors then name the kernel that faulted)")
    native_launch = BoolKnob("TRITIUM_NVIDIA_NATIVE_LAUNCH", default=True, doc="Call cuLaunchKernel through a "
                             "builtin JIT-compiled at the first launch (tritium.llvmir.native_call), read then; off: "
                             "through cuda-bindings' wrapper, a few microseconds more per launch")
    launch_debug = BoolKnob("TRITIUM_NVIDIA_LAUNCH_DEBUG", doc="Say on stderr which call launches kernels, and why "
                            "the native one is not used where it is not")

    decoupled_stages = IntKnob("TRITIUM_NVIDIA_DECOUPLED_STAGES", default=8, doc="On sm_90, in kernels of at least "
                               "this many warps, a software-pipelined loop of cp.async copies whose dots wait for "
                               "themselves (attention's forward) copies one iteration ahead instead of S - 1 and tells "
                               "each stage's landing with an mbarrier per stage (every thread arrives through "
                               "cp.async.mbarrier.arrive.noinc after starting its copies) instead of the CTA barrier "
                               "at the top of each iteration, so the warpgroups of a 128 x 128 tile may drift up to "
                               "an iteration apart (gpu/lower/pipeline_decoupled.py). 8 (default): examples/07's "
                               "D128 forward +10-12% on the H200, causal too (at 4, D64 +1-2%: PERF.md, ninth "
                               "session, HC); 0: off")
    warpgroup_turns = BoolKnob("TRITIUM_NVIDIA_WARPGROUP_TURNS", default=False, doc="On sm_90, with "
                               "decoupled_stages, a pipelined loop of two dots at 8 warps (attention's forward, 128 x "
                               "128) makes its two warpgroups take turns at them with two named barriers, as FA3's "
                               "ping-pong: one runs P @ V and the next Q K^T while the other runs its softmax "
                               "(gpu/lower/pipeline_turns.py); off (default): they drift as they may. Measured "
                               "16-17% slower than without it on the H200 (PERF.md, ninth session, HC)")


nvidia = nvidia_knobs()
