"""Launch options as Triton 3.6's NVIDIA backend takes them (test_core.py test_override_arch, test_num_ctas_pre_sm90,
test_num_warps_pow2), compiled for sm_90 without a GPU: ``arch`` compiles for that architecture instead of the
target's (every stage: PTX target, ptxas, the num_ctas check), num_ctas > 1 below sm_90 is refused in Triton's words,
and a num_warps that is not a power of 2 is an AssertionError as Triton's (and a ValueError as tritium's)."""
from __future__ import annotations

import os
import re
import shutil

import pytest

import tritium
import tritium.language as tl
from tritium import plugins
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@tritium.jit
def _simple(data, out):
    in_ptrs = data + tl.arange(0, 128)
    out_ptrs = out + tl.arange(0, 128)
    tl.store(out_ptrs, tl.load(in_ptrs) * 1.5 + 1.0)


def _compile(**options):
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        return tritium.compile(ASTSource(_simple, {"data": "*fp32", "out": "*fp32"}, {}, {}),
                               target=GPUTarget("cuda", 90, 32), options=options)


@pytest.mark.parametrize("arch, target", [("sm80", "sm_80"), ("sm89", "sm_89"), ("sm90", "sm_90a")])
def test_arch_option_compiles_for_that_architecture(isolated_tritium, arch, target):
    k = _compile(arch=arch)
    assert re.search(rf"^\.target {target}$", k.asm["ptx"], re.M), k.asm["ptx"][:400]
    assert k.metadata.arch == target and k.asm["cubin"]
    # Triton's test reads the architecture back from the ttgir's module attribute
    assert re.search(r'ttg\.target = "cuda:(\d+)"', k.asm["ttgir"]).group(1) == arch[2:]


def test_arch_below_sm80_is_refused(isolated_tritium):
    with pytest.raises(ValueError, match=r"arch='sm70': tritium-nvidia compiles for sm_80 and newer"):
        _compile(arch="sm70")


def test_num_ctas_needs_sm90_in_tritons_words(isolated_tritium):
    with pytest.raises(ValueError, match=r"num_ctas > 1 requires NVIDIA SM90\+ \(Hopper\)"):
        _compile(num_ctas=2, arch="sm80")
    assert _compile(num_ctas=2).metadata.num_ctas == 2       # the target, sm_90, has clusters


@pytest.mark.parametrize("warps", [3, 6, 64])
def test_num_warps_not_a_power_of_two(isolated_tritium, warps):
    with pytest.raises(AssertionError, match="must be a power of 2") as err:
        _compile(num_warps=warps)
    assert isinstance(err.value, ValueError)


def test_override_arch_knob_is_tritons_runtime_knob(isolated_tritium):
    from tritium import knobs
    with knobs.runtime.scope():
        knobs.runtime.override_arch = "sm80"
        k = _compile()
        assert re.search(r"^\.target sm_80$", k.asm["ptx"], re.M) and 'ttg.target = "cuda:80"' in k.asm["ttgir"]
        assert re.search(r"^\.target sm_89$", _compile(arch="sm89").asm["ptx"], re.M)   # the option wins
    assert re.search(r"^\.target sm_90a$", _compile().asm["ptx"], re.M)


@tritium.jit
def _exp2(data):
    ptrs = data + tl.arange(0, 128)
    tl.store(ptrs, tl.math.exp2(tl.load(ptrs)))


def _exp2_ptx(**options) -> str:
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        return tritium.compile(ASTSource(_exp2, {"data": "*fp32"}, {}, {}), target=GPUTarget("cuda", 90, 32),
                               options=options).asm["ptx"]


@pytest.mark.parametrize("ftz", [None, True])
def test_enable_reflect_ftz_default_and_true_flush(isolated_tritium, ftz):
    ptx = _exp2_ptx(**({} if ftz is None else {"enable_reflect_ftz": ftz}))
    assert re.search(r"ex2\.approx\.ftz\.f32", ptx)


def test_enable_reflect_ftz_false_keeps_subnormals(isolated_tritium):
    ptx = _exp2_ptx(enable_reflect_ftz=False)
    assert re.search(r"ex2\.approx\.f32", ptx) and not re.search(r"ex2\.approx\.ftz\.f32", ptx)
