"""Compiling for AMD GPUs on any machine, the Triton way: ``tritium.compile(ASTSource(...), target=GPUTarget("hip",
chip, 64))`` gives every stage (ttir, ttgir, llir, amdgcn text, hsaco bytes), and every code object is checked.

The kernels are those tests/nvidia_compile compiles (the GPU tests' kernels, Triton's tutorial kernels, every
example's ``COMPILE_CASES``), collected by that module; the conformance suite's kernels are compiled by
test_conformance_compile.py."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

tritium_amd = pytest.importorskip("tritium_amd", reason="tritium-amd is not installed")
from tritium_amd import codeobj  # noqa: E402
from tritium_amd.chips import CDNA, CHIPS  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _nvidia_compile_cases():
    path = os.path.join(ROOT, "tests", "nvidia_compile", "test_compile.py")
    spec = importlib.util.spec_from_file_location("_amd_collects_compile_cases", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.CASES


#: AMD refuses these at compile time, each with its reason (no ROCm device library): asserted below
REFUSED = {"print": "device_print"}
CASES = _nvidia_compile_cases()
#: compiled for all three chips in the default run; the rest for gfx942 only. The matmul kernels (FMA fallback:
#: 7-25 s each) only with TRITIUM_AMD_TEST_ALL=1, which compiles everything for every chip.
EVERY_CHIP = {"add_f16", "reduce", "softmax", "dot_f16", "scan", "atomics", "sort", "math", "print",
              "bench_layernorm", "example_01-vector-add_0", "example_02-fused-softmax_0",
              "example_09-compile-for-amd_0"}
SLOW = ("bench_matmul", "example_03-")


def _selected():
    from tritium_amd.knobs import amd
    for case in CASES:
        for chip in CDNA:
            if amd.test_all or (not case[0].startswith(SLOW) and (case[0] in EVERY_CHIP or chip == "gfx942")):
                yield pytest.param(case, chip, id=f"{case[0]}-{chip}")
ARG_BYTES = {"*": 8, "i1": 1, "i8": 1, "u8": 1, "i16": 2, "fp16": 2, "bf16": 2, "i32": 4, "u32": 4, "fp32": 4,
             "i64": 8, "u64": 8, "fp64": 8}


def compile_for(case, chip, registry, **options):
    from tritium import plugins
    name, fn, sig, consts = case
    attrs = {k: [["tt.divisibility", 16]] for k, v in sig.items() if v.startswith("*")}
    with plugins.use(registry):
        return tritium.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("hip", chip, 64),
                               options=options or None)


def signature_arg_sizes(sig):
    return [ARG_BYTES["*" if t.startswith("*") else t] for t in sig.values() if t != "constexpr"]


@pytest.mark.parametrize("case,chip", list(_selected()))
def test_compiles_to_checked_code_object(amd_registry, case, chip):
    if case[0] in REFUSED:
        with pytest.raises(Exception, match=REFUSED[case[0]]):
            compile_for(case, chip, amd_registry)
        return
    from tritium.compiler.errors import OutOfResources
    try:
        k = compile_for(case, chip, amd_registry)
    except OutOfResources as exc:
        # a configuration sized for a GPU with more shared memory (fp32 128x128x64 tiles, two stages: 128 KiB);
        # refused before LLVM, whose AMDGPU backend would end the process. One stage must then fit.
        assert exc.required > CHIPS[chip].lds_bytes and exc.limit == CHIPS[chip].lds_bytes
        try:
            k = compile_for(case, chip, amd_registry, num_stages=1)
        except OutOfResources as again:
            # fp32 128x128x64 through the FMA fallback needs 64 KiB of operand tiles plus scratch: the refusal
            # (an exception the autotuner skips, not LLVM ending the process) is what is checked
            assert again.required > CHIPS[chip].lds_bytes and "reduce the block sizes" in str(again)
            return
    assert list(k.asm)[:5] == ["ttir", "ttgir", "llir", "amdgcn", "hsaco"]
    assert "ttg.layout" in k.asm["ttgir"] and "ttg.threads_per_warp = 64" in k.asm["ttgir"]
    assert 'target triple = "amdgcn-amd-amdhsa"' in k.asm["llir"] and "amdgpu_kernel" in k.asm["llir"]
    asm = k.asm["amdgcn"]
    assert f'.amdgcn_target "amdgcn-amd-amdhsa--{chip}' in asm and f".amdhsa_kernel {k.name}" in asm
    assert "__ocml_" not in asm and "__ockl_" not in asm
    blob = k.asm["hsaco"]
    md = k.metadata_dict
    # the same check the compiler made, repeated here from the signature (not the compiler's own arg_types)
    co = codeobj.check(blob, CHIPS[chip], k.name, signature_arg_sizes(case[2]), md["num_warps"] * 64)
    kern = co.kernels[0]
    assert co.machine == 0xE0 and co.mach == CHIPS[chip].mach
    assert kern.wavefront_size == 64 and not kern.descriptor["wavefront_size32"]
    assert kern.group_segment >= md["shared"]     # the lowering's shared memory is static LDS
    assert md["n_regs"] == kern.vgprs and md["lds"] == kern.group_segment


def test_stage_names_and_binary_extension(amd_registry):
    from tritium.backends import backends
    from tritium import plugins
    with plugins.use(amd_registry):
        b = backends()["amd"].compiler(GPUTarget("hip", "gfx942", 64))
        opts = b.parse_options({})
        stages: dict = {}
        b.add_stages(stages, opts)
    assert list(stages) == ["ttir", "ttgir", "llir", "amdgcn", "hsaco"] and b.binary_ext == "hsaco"
    assert opts.warp_size == 64 and opts.backend_name == "hip"


def test_unknown_chip_and_wave32_on_cdna_are_refused(amd_registry):
    from tritium import plugins
    with plugins.use(amd_registry):
        with pytest.raises(ValueError, match="does not know gfx803"):
            compile_for(CASES[0], "gfx803", amd_registry)
        with pytest.raises(ValueError, match="wave64 only"):
            from tritium.backends import backends
            backends()["amd"].compiler(GPUTarget("hip", "gfx942", 32))


def test_rdna_compiles_wave32(amd_registry):
    from tritium import plugins
    name, fn, sig, consts = CASES[0]
    with plugins.use(amd_registry):
        k = tritium.compile(ASTSource(fn, sig, consts), target=GPUTarget("hip", "gfx1100", 32))
    co = codeobj.check(k.asm["hsaco"], CHIPS["gfx1100"], k.name, signature_arg_sizes(sig))
    assert co.kernels[0].wavefront_size == 32 and co.kernels[0].descriptor["wavefront_size32"]
    assert "ttg.threads_per_warp = 32" in k.asm["ttgir"]


def test_code_object_check_catches_a_wrong_chip_and_signature(amd_registry):
    k = compile_for(CASES[0], "gfx90a", amd_registry)
    sizes = signature_arg_sizes(CASES[0][2])
    with pytest.raises(codeobj.CodeObjectError, match="not gfx942"):
        codeobj.check(k.asm["hsaco"], CHIPS["gfx942"], k.name, sizes)
    with pytest.raises(codeobj.CodeObjectError, match="explicit kernel arguments"):
        codeobj.check(k.asm["hsaco"], CHIPS["gfx90a"], k.name, sizes + [8])
    with pytest.raises(codeobj.CodeObjectError, match="kernels"):
        codeobj.check(k.asm["hsaco"], CHIPS["gfx90a"], "other", sizes)


def test_compile_for_amd_example_prints_resource_use(amd_registry, capsys):
    from tritium import plugins
    path = os.path.join(ROOT, "examples", "09-compile-for-amd.py")
    spec = importlib.util.spec_from_file_location("_example_compile_for_amd", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    with plugins.use(amd_registry):
        mod.main()
    out = capsys.readouterr().out
    for chip in CDNA:
        row = next(line for line in out.splitlines() if line.startswith(chip))
        vgprs, agprs, sgprs, lds = (int(x) for x in row.split()[1:5])
        assert 0 < vgprs <= CHIPS[chip].vgprs and 0 < sgprs <= CHIPS[chip].sgprs and lds > 0
        assert f"({CHIPS[chip].mach:#x}), wave64" in row
    assert "stages: ['ttir', 'ttgir', 'llir', 'amdgcn', 'hsaco']" in out


def test_stages_are_dumped_and_an_overridden_amdgcn_is_what_gets_linked(amd_registry, tmp_path):
    import glob

    from tritium import knobs, plugins
    name, fn, sig, consts = CASES[0]
    nop7 = b"\x07\x00\x80\xbf"            # s_nop 7 (SOPP encoding 0xBF800007)
    with plugins.use(amd_registry), knobs.compilation.scope(), knobs.cache.scope():
        knobs.cache.dump_dir = str(tmp_path / "dump")
        knobs.cache.dir = str(tmp_path / "cache")
        knobs.compilation.dump_ir = True
        k = tritium.compile(ASTSource(fn, sig, consts), target=GPUTarget("hip", "gfx942", 64))
        for ext in ("ttir", "ttgir", "llir", "amdgcn", "hsaco"):
            assert glob.glob(str(tmp_path / "dump" / "*" / f"{k.name}.{ext}")), ext
        dumped = glob.glob(str(tmp_path / "dump" / "*" / f"{k.name}.amdgcn"))[0]
        assert open(dumped).read() == k.asm["amdgcn"] and nop7 not in k.asm["hsaco"]
        override = tmp_path / "override" / os.path.basename(os.path.dirname(dumped))
        override.mkdir(parents=True)
        edited = k.asm["amdgcn"].replace(f"\n{k.name}:", f"\n{k.name}:\n\ts_nop 7", 1)
        assert edited != k.asm["amdgcn"]
        (override / f"{k.name}.amdgcn").write_text(edited)
        knobs.cache.override_dir = str(tmp_path / "override")
        knobs.compilation.override = True
        knobs.compilation.always_compile = True
        k2 = tritium.compile(ASTSource(fn, sig, consts), target=GPUTarget("hip", "gfx942", 64))
    assert "s_nop 7" in k2.asm["amdgcn"] and nop7 in k2.asm["hsaco"]
    codeobj.check(k2.asm["hsaco"], CHIPS["gfx942"], k2.name, signature_arg_sizes(sig))
