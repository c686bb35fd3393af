"""Hopper's tensor memory accelerator (TMA) for tensor descriptors: the tensor map a descriptor load copies
through, mbarriers that count the bytes landed, and the bulk tensor copies themselves (PTX 8.3+, sm_90a).

The tensor map of a descriptor made of kernel arguments and constants (every host ``TensorDescriptor``) is
encoded by the launcher (tensor_maps.py) and passed as a 128-byte ``__grid_constant__`` parameter
(:func:`param_tensor_map`), as Triton passes a host descriptor's. Any other descriptor's map is built on the
device, in a 128-byte global of the module, from the descriptor's base,
shape and strides: warp 0 zero-fills a shared template, thread 0 sets its fields with ``tensormap.replace``,
and the warp copies it to global memory with a release fence of the tensormap proxy; warp 0 (whose thread 0
issues every copy) then acquires it. Only descriptors whose fields are the same in every program of a launch
get one (the lowering checks), so every program writes the same bytes; the launcher orders launches of such a
kernel on different streams (driver.py), so two launches never share the globals at once.
"""
from __future__ import annotations

from typing import Any, Optional

from tritium.gpu.target import guarded
from tritium.llvmir.text import Function, Module

#: tensormap.replace.elemtype by element size: unsigned integers (the copy moves bits; the zero fill of an
#: out-of-bounds element is all-zero bits for every type)
_ELEMTYPE = {1: 0, 2: 1, 4: 2, 8: 4}
#: ... where the engine must know the type (reductions; a NaN fill, which it gives float types only): PTX's
#: tensormap.replace elemtype codes
_TYPED_ELEMTYPE = {"u32": 2, "s32": 3, "u64": 4, "s64": 5, "half": 6, "float": 7, "double": 9, "bfloat": 10}
#: names of the module globals holding tensor maps built on the device (the launcher orders launches of a kernel
#: that has them across streams: every launch rewrites them)
GLOBAL_PREFIX = "__tritium_tmap"
#: the smallest PTX ISA (x10) whose ``global_stride`` field is given in bytes (Triton shifts it by 4 below)
MIN_ISA = 86


def _asm(fn: Function, text: str, constraints: str, args: list[str], ret: str = "void") -> str:
    call = f'call {ret} asm sideeffect "{text}", "{constraints}"({", ".join(args)})'
    if ret == "void":
        fn.emit(call)
        return ""
    return fn.inst(call)


def _saddr(fn: Function, ptr: str) -> str:
    return fn.inst(f"ptrtoint ptr addrspace(3) {ptr} to i32")


def build_tensor_map(target: Any, fn: Function, module: Module, template: str, base: str, dims: list[str],
                     stride_bytes: list[str], box: list[int], eb: int, swizzle: int,
                     elem: Optional[str] = None, nan_fill: bool = False) -> str:
    """Write the tensor map of a tiled copy of rank 1 to 5 into a new module global; return its address (i64).
    ``dims`` (i32) and ``box`` are innermost first, ``stride_bytes`` (i64) the outer dimensions' strides,
    innermost first. ``template`` is 128 bytes of shared memory, 128-byte aligned, free to overwrite.
    ``elem``: the element type the copies must know (reductions, NaN fills), else unsigned integers of ``eb``
    bytes; ``nan_fill``: out-of-bounds elements read NaN (else zero bits)."""
    n = sum(1 for k in module.declarations if k.startswith(GLOBAL_PREFIX))
    name = f"{GLOBAL_PREFIX}{n}"
    module.declare(name, f"@{name} = internal addrspace(1) global [128 x i8] zeroinitializer, align 128")
    gaddr = fn.inst(f"ptrtoint ptr addrspace(1) @{name} to i64")
    tid = target.thread_id(fn)
    warp0 = fn.inst(f"icmp ult i32 {tid}, 32")
    leader = fn.inst(f"icmp eq i32 {tid}, 0")
    rank = len(box)

    def fill() -> None:
        p = fn.inst(f"getelementptr i32, ptr addrspace(3) {template}, i32 {tid}")
        fn.emit(f"store volatile i32 0, ptr addrspace(3) {p}, align 4")
        _asm(fn, "bar.warp.sync -1;", "~{memory}", [])
        t = _saddr(fn, template)

        def fields() -> None:
            pre = "tensormap.replace.tile"
            sfx = "shared::cta.b1024"
            _asm(fn, f"{pre}.global_address.{sfx}.b64 [$0], $1;", "r,l,~{memory}", [f"i32 {t}", f"i64 {base}"])
            if rank > 1:
                _asm(fn, f"{pre}.rank.{sfx}.b32 [$0], {rank - 1};", "r,~{memory}", [f"i32 {t}"])
            for i in range(rank):
                _asm(fn, f"{pre}.box_dim.{sfx}.b32 [$0], {i}, {box[i]};", "r,~{memory}", [f"i32 {t}"])
                _asm(fn, f"{pre}.global_dim.{sfx}.b32 [$0], {i}, $1;", "r,r,~{memory}", [f"i32 {t}", f"i32 {dims[i]}"])
                _asm(fn, f"{pre}.element_stride.{sfx}.b32 [$0], {i}, 1;", "r,~{memory}", [f"i32 {t}"])
            for i, s in enumerate(stride_bytes):
                _asm(fn, f"{pre}.global_stride.{sfx}.b64 [$0], {i}, $1;", "r,l,~{memory}", [f"i32 {t}", f"i64 {s}"])
            elemtype = _TYPED_ELEMTYPE[elem] if elem else _ELEMTYPE[eb]
            if elemtype:
                _asm(fn, f"{pre}.elemtype.{sfx}.b32 [$0], {elemtype};", "r,~{memory}", [f"i32 {t}"])
            if nan_fill:
                _asm(fn, f"{pre}.fill_mode.{sfx}.b32 [$0], 1;", "r,~{memory}", [f"i32 {t}"])
            if swizzle:
                _asm(fn, f"{pre}.swizzle_mode.{sfx}.b32 [$0], {swizzle};", "r,~{memory}", [f"i32 {t}"])

        guarded(fn, leader, fields)
        _asm(fn, "bar.warp.sync -1;", "~{memory}", [])
        _asm(fn, "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned "
             "[$0], [$1], 128;", "l,r,~{memory}", [f"i64 {gaddr}", f"i32 {t}"])
        # the thread that issues the copies reads the map through the tensormap proxy: acquire it; the bulk
        # commit/wait after the fence is the workaround Triton applies for ptxas dropping that fence
        _asm(fn, "fence.proxy.tensormap::generic.acquire.gpu [$0], 128;", "l,~{memory}", [f"i64 {gaddr}"])
        _asm(fn, "cp.async.bulk.commit_group;", "~{memory}", [])
        _asm(fn, "cp.async.bulk.wait_group.read 0;", "~{memory}", [])

    guarded(fn, warp0, fill)
    return gaddr


#: the launcher's CUtensorMapDataType by element size, as the maps built on the device use (_ELEMTYPE)
PARAM_ELEMTYPE = {1: "UINT8", 2: "UINT16", 4: "UINT32", 8: "UINT64"}
#: ... and where the type matters (reductions; CUtensorMapFloatOOBfill's NAN_REQUEST_ZERO_FMA needs a float type)
PARAM_TYPED_ELEMTYPE = {"u32": "UINT32", "s32": "INT32", "u64": "UINT64", "s64": "INT64", "half": "FLOAT16",
                        "float": "FLOAT32", "double": "FLOAT64", "bfloat": "BFLOAT16"}


def param_tensor_map(fn: Function, maps: list[dict], args: list, box: list[int], eb: int, swizzle: int,
                     elem: Optional[str] = None, nan_fill: bool = False) -> str:
    """The generic address (i64) of a 128-byte ``__grid_constant__`` parameter holding the tensor map the
    launcher encodes from ``args`` (base, dims outermost first, outer strides in elements: kernel-argument
    numbers or ["const", value]);
    ``maps`` collects what the launcher needs (the kernel's ``tensor_map_params`` metadata), one parameter per
    distinct map. The copy instructions read the map where it is, in parameter space: no fence is needed, and
    concurrent launches each have their own."""
    spec = {"args": list(args), "box": list(box), "elem_bytes": eb, "elem_type": PARAM_ELEMTYPE[eb],
            "swizzle": swizzle}
    if elem:
        spec["elem_type"] = PARAM_TYPED_ELEMTYPE[elem]
    if nan_fill:
        spec["oob_fill"] = "NAN_REQUEST_ZERO_FMA"
    from .knobs import nvidia
    if nvidia.tma_l2_promotion not in (0, 64, 128, 256):
        raise ValueError(f"TRITIUM_NVIDIA_TMA_L2_PROMOTION={nvidia.tma_l2_promotion}: a tensor map's L2 promotion "
                         "is 0, 64, 128 or 256 bytes; set one of those or unset it (128)")
    if nvidia.tma_l2_promotion != 128:
        # an A/B of the launcher's L2 sector promotion (the default, 128 bytes, is Triton 3.6's): in the
        # metadata, so each setting is a kernel of its own
        spec["l2_promotion"] = nvidia.tma_l2_promotion
    for i, m in enumerate(maps):
        if m == spec:
            return fn.pinst(f"ptrtoint ptr %tmap{i} to i64")
    name = f"%tmap{len(maps)}"
    maps.append(spec)
    # byval + nvvm.grid_constant: NVPTX declares `.param .align 64 .b8 [128]` and takes its address with
    # cvta.param instead of copying it to local memory
    fn.params.append(('ptr byval([128 x i8]) align 64 "nvvm.grid_constant"', name))
    return fn.pinst(f"ptrtoint ptr {name} to i64")


def mbarrier_init(fn: Function, bar: str, count: int = 1) -> None:
    _asm(fn, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}", [f"i32 {_saddr(fn, bar)}", f"i32 {count}"])


def mbarrier_init_fence(fn: Function) -> None:
    _asm(fn, "fence.mbarrier_init.release.cluster;", "~{memory}", [])


def mbarrier_inval(fn: Function, bar: str) -> None:
    _asm(fn, "mbarrier.inval.shared::cta.b64 [$0];", "r,~{memory}", [f"i32 {_saddr(fn, bar)}"])


def expect_bytes(fn: Function, bar: str, nbytes: int) -> None:
    """Arrive on ``bar`` (count 1) and make its phase wait for ``nbytes`` more bytes of bulk copies."""
    _asm(fn, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}",
         [f"i32 {_saddr(fn, bar)}", f"i32 {nbytes}"])


def mbarrier_arrive(fn: Function, bar: str) -> None:
    """Arrive on ``bar`` (count 1; release semantics at CTA scope, the PTX default)."""
    _asm(fn, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}", [f"i32 {_saddr(fn, bar)}"])


def wait_parity(fn: Function, bar: str, parity: str) -> None:
    """Spin until the phase of ``bar`` with parity ``parity`` (i32 0/1) has completed."""
    a = _saddr(fn, bar)
    head, done = fn.label("mbw"), fn.label("mbwd")
    fn.br(head)
    fn.start_block(head)
    ok = _asm(fn, "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }",
              "=r,r,r,~{memory}", [f"i32 {a}", f"i32 {parity}"], ret="i32")
    fn.cond_br(fn.inst(f"icmp ne i32 {ok}, 0"), done, head)
    fn.start_block(done)


def tensor_load(fn: Function, dst: str, tmap: str, coords: list[str], bar: str) -> None:
    """Bulk copy of one box at ``coords`` (i32, innermost first) into shared ``dst``, completing on ``bar``."""
    n = len(coords)
    cs = ", ".join(f"${3 + i}" for i in range(n))
    _asm(fn, f"cp.async.bulk.tensor.{n}d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {{{cs}}}], [$2];",
         "r,l,r" + ",r" * n + ",~{memory}",
         [f"i32 {_saddr(fn, dst)}", f"i64 {tmap}", f"i32 {_saddr(fn, bar)}", *[f"i32 {c}" for c in coords]])


def tensor_store(fn: Function, tmap: str, coords: list[str], src: str) -> None:
    """Bulk copy of shared ``src`` to the box at ``coords`` (i32, innermost first), in this thread's group."""
    n = len(coords)
    cs = ", ".join(f"${2 + i}" for i in range(n))
    _asm(fn, f"cp.async.bulk.tensor.{n}d.global.shared::cta.bulk_group [$0, {{{cs}}}], [$1];",
         "l,r" + ",r" * n + ",~{memory}", [f"i64 {tmap}", f"i32 {_saddr(fn, src)}", *[f"i32 {c}" for c in coords]])


#: cp.reduce.async.bulk.tensor's operation per ``tt.descriptor_reduce`` kind (signedness is the map's type)
_REDUCE_OP = {"add": "add", "fadd": "add", "min": "min", "umin": "min", "max": "max", "umax": "max", "and": "and",
              "or": "or", "xor": "xor"}


def tensor_reduce(fn: Function, tmap: str, coords: list[str], src: str, kind: str) -> None:
    """Bulk reduction of shared ``src`` into the box at ``coords`` (i32, innermost first), in this thread's group."""
    n = len(coords)
    cs = ", ".join(f"${2 + i}" for i in range(n))
    _asm(fn, f"cp.reduce.async.bulk.tensor.{n}d.global.shared::cta.{_REDUCE_OP[kind]}.bulk_group [$0, {{{cs}}}], [$1];",
         "l,r" + ",r" * n + ",~{memory}", [f"i64 {tmap}", f"i32 {_saddr(fn, src)}", *[f"i32 {c}" for c in coords]])


def store_wait_read(fn: Function) -> None:
    _asm(fn, "cp.async.bulk.commit_group;", "~{memory}", [])
    _asm(fn, "cp.async.bulk.wait_group.read 0;", "~{memory}", [])
