"""Atomics keep their memory order and scope in the PTX (sm_90a, no GPU needed). LLVM's NVPTX backend selects every
``atomicrmw`` as a relaxed ``atom`` whatever its ordering, so a lock released with ``tl.atomic_xchg`` (acq_rel by
default) did not publish the stores before it (Triton 3.6's test_core.py::test_atomic_cas found it on an H200). The
operations PTX has no instruction for are a relaxed compare-and-swap loop between ``fence.acq_rel`` of the scope.
tests/gpu/test_triton_core_found.py runs the lock on a GPU."""
from __future__ import annotations

import os
import re
import shutil

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@tritium.jit
def _atomic(X, Y, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr):
    offs = tl.arange(0, 128)
    v = tl.load(Y + offs)
    if OP == "add":
        old = tl.atomic_add(X + offs, v, sem=SEM, scope=SCOPE)
    elif OP == "max":
        old = tl.atomic_max(X + offs, v, sem=SEM, scope=SCOPE)
    elif OP == "xchg":
        old = tl.atomic_xchg(X + offs, v, sem=SEM, scope=SCOPE)
    elif OP == "or":
        old = tl.atomic_or(X + offs, v, sem=SEM, scope=SCOPE)
    else:
        old = tl.atomic_cas(X + offs, v, v + 1, sem=SEM, scope=SCOPE)
    tl.store(Y + offs, old)


def _ptx(dtype: str, op: str, sem, scope: str = "gpu") -> str:
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        k = tritium.compile(ASTSource(_atomic, {"X": f"*{dtype}", "Y": f"*{dtype}"},
                                      {"OP": op, "SEM": sem, "SCOPE": scope}, {}),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    assert k.asm["cubin"]           # ptxas accepted the qualifiers
    return k.asm["ptx"]


def _atoms(ptx: str) -> set[str]:
    return set(re.findall(r"\batom\.\S+", ptx))


@pytest.mark.parametrize("dtype, op, inst", [
    ("i32", "add", "add.u32"), ("u32", "max", "max.u32"), ("i32", "max", "max.s32"), ("i64", "xchg", "exch.b64"),
    ("i32", "or", "or.b32"), ("fp32", "add", "add.f32"), ("fp64", "add", "add.f64"), ("fp16", "add", "add.noftz.f16"),
    ("bf16", "add", "add.noftz.bf16"), ("fp32", "xchg", "exch.b32")])
@pytest.mark.parametrize("sem", [None, "acquire", "release", "acq_rel", "relaxed"])
def test_read_modify_write_carries_its_order(isolated_tritium, dtype, op, inst, sem):
    order = sem or "acq_rel"        # Triton's default
    assert _atoms(_ptx(dtype, op, sem)) == {f"atom.global.gpu.{order}.{inst}"}


@pytest.mark.parametrize("scope", ["cta", "sys"])
def test_scope(isolated_tritium, scope):
    assert _atoms(_ptx("i32", "add", "release", scope)) == {f"atom.global.{scope}.release.add.u32"}
    assert _atoms(_ptx("i32", "cas", "acquire", scope)) == {f"atom.global.acquire.{scope}.cas.b32"}


@pytest.mark.parametrize("dtype, bits", [("i32", 32), ("fp32", 32), ("i64", 64), ("fp16", 16)])
@pytest.mark.parametrize("sem", [None, "acquire", "relaxed"])
def test_compare_and_swap(isolated_tritium, dtype, bits, sem):
    assert _atoms(_ptx(dtype, "cas", sem)) == {f"atom.global.{sem or 'acq_rel'}.gpu.cas.b{bits}"}


@pytest.mark.parametrize("sem, fences", [(None, 2), ("acq_rel", 2), ("acquire", 1), ("release", 1), ("relaxed", 0)])
def test_float_max_is_a_fenced_relaxed_loop(isolated_tritium, sem, fences):
    ptx = _ptx("fp32", "max", sem)
    assert {a for a in _atoms(ptx)} == {"atom.relaxed.gpu.global.cas.b32"}
    lines = [ln.strip() for ln in ptx.splitlines()]
    got = [i for i, ln in enumerate(lines) if ln.startswith("fence.acq_rel.gpu")]
    assert len(got) == fences
    loop = [i for i, ln in enumerate(lines) if ln.startswith("atom.")]
    if sem in ("release", None, "acq_rel"):
        assert got[0] < loop[0]         # the stores before it are published first
    if sem in ("acquire", None, "acq_rel"):
        assert got[-1] > loop[-1]       # the loads after it see what the release published
