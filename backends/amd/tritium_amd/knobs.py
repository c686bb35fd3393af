"""Settings of the AMD backend (``tritium.knobs.amd``), under Triton's environment names where Triton has them."""
from __future__ import annotations

from tritium.knobs import BoolKnob, KnobGroup, StrKnob


class amd_knobs(KnobGroup):
    group_name = "amd"
    # reports: they never change the generated code
    not_in_cache_key = ("dump_amdgcn", "launch_blocking", "test_all", "compile_only")
    dump_amdgcn = BoolKnob("AMDGCN_ENABLE_DUMP", doc="Print the AMDGCN assembly of every compiled kernel to stderr")
    arch = StrKnob("TRITIUM_AMD_ARCH", doc="Compile for this chip (gfx90a, gfx942, gfx950...) instead of the "
                   "current device's; also the target of `tritium.compile` calls that name none")
    zig_path = StrKnob("TRITIUM_AMD_ZIG", doc="The zig executable whose ld.lld links code objects; default: the "
                       "ziglang wheel's")
    enable_asan = BoolKnob("TRITON_ENABLE_ASAN", doc="Build code objects instrumented by AMD's address sanitizer "
                           "(tritium-amd refuses: see README)")
    compile_only = BoolKnob("TRITIUM_AMD_COMPILE_ONLY", doc="Launches compile (for TRITIUM_AMD_ARCH, default gfx942) "
                            "and run nothing, with or without an AMD GPU: checks that a suite's kernels compile")
    test_all = BoolKnob("TRITIUM_AMD_TEST_ALL", doc="tests/amd: compile every kernel for every chip and every "
                        "conformance kernel (several minutes); default: a representative set per chip")
    launch_blocking = BoolKnob("HIP_LAUNCH_BLOCKING", doc="Wait for every kernel to finish and check its status "
                               "(errors then name the kernel that faulted)")


amd = amd_knobs()
