"""What AmdTarget writes, seen in the LLVM IR and the AMDGCN of small kernels: workgroup ids and the grid size from
the HSA dispatch packet, s_barrier between workgroup-scope fences, DPP quad permutes and ds_bpermute for
cross-lane reductions, LDS for layout conversions, atomics with Triton's scopes mapped to AMDGPU's."""
from __future__ import annotations

import re

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytest.importorskip("tritium_amd", reason="tritium-amd is not installed")


@tritium.jit
def row_sum(x_ptr, out_ptr, N: tl.constexpr):
    pid = tl.program_id(1)
    x = tl.load(x_ptr + pid * N + tl.arange(0, N))
    tl.store(out_ptr + pid, tl.sum(x, axis=0) + tl.num_programs(0) + tl.num_programs(1))


@tritium.jit
def scoped_atomics(p, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.atomic_add(p + offs, 1, scope="gpu")
    tl.atomic_add(p + offs, 1, scope="cta", sem="relaxed")
    tl.atomic_max(p + offs, 1, scope="sys", sem="acquire")


@tritium.jit
def transpose(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rm * N + rn)
    tl.store(y_ptr + rn * M + rm, x)


def build(registry, fn, sig, consts, chip="gfx942", **options):
    from tritium import plugins
    with plugins.use(registry):
        return tritium.compile(ASTSource(fn, sig, consts), target=GPUTarget("hip", chip, 64), options=options or None)


def test_reduction_uses_ids_dispatch_packet_barriers_and_cross_lane_moves(amd_registry):
    k = build(amd_registry, row_sum, {"x_ptr": "*fp32", "out_ptr": "*fp32", "N": "constexpr"}, {"N": 1024})
    ll, asm = k.asm["llir"], k.asm["amdgcn"]
    assert "@llvm.amdgcn.workitem.id.x" in ll and "@llvm.amdgcn.workgroup.id.y" in ll
    assert "@llvm.amdgcn.dispatch.ptr" in ll            # tl.num_programs: grid size / workgroup size
    assert ".amdhsa_user_sgpr_dispatch_ptr 1" in asm
    assert 'fence syncscope("workgroup") release' in ll and "s_barrier" in asm
    assert "quad_perm:[1,0,3,2]" in asm and "ds_bpermute_b32" in asm     # lane ^ 1 by DPP, far lanes by bpermute
    assert re.search(r"\bds_write_b32\b", asm) and re.search(r"\bds_read\w*_b(32|64|128)\b", asm)   # across warps: LDS


def test_atomic_scopes(amd_registry):
    k = build(amd_registry, scoped_atomics, {"p": "*i32", "N": "constexpr"}, {"N": 64})
    ll = k.asm["llir"]
    rmw = [line for line in ll.splitlines() if "atomicrmw" in line]
    assert any('syncscope("agent") acq_rel' in line for line in rmw)
    assert any('syncscope("workgroup") monotonic' in line for line in rmw)
    assert any("atomicrmw max" in line and "syncscope" not in line and "acquire" in line for line in rmw)
    assert "global_atomic_add" in k.asm["amdgcn"]


def test_layout_conversion_goes_through_lds(amd_registry):
    k = build(amd_registry, transpose, {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "constexpr", "N": "constexpr"},
              {"M": 64, "N": 64})
    assert k.metadata_dict["lds"] >= k.metadata_dict["shared"] > 0
    assert "addrspace(3)" in k.asm["llir"] and "s_barrier" in k.asm["amdgcn"]
