"""Tensor maps of descriptors made of kernel arguments (every host ``TensorDescriptor``), encoded by the launcher
(``cuTensorMapEncodeTiled``) and passed as 128-byte ``__grid_constant__`` kernel parameters, as Triton 3.6
passes a host descriptor's.

The compiler records, per map, which kernel arguments (or constants) are the descriptor's base, shape and outer
strides (a host descriptor's flattened fields, or a kernel's own descriptor of its arguments), and
the box, element size and swizzle it chose (the kernel's ``tensor_map_params`` metadata; tma.param_tensor_map).
Each launch reads those arguments, and the encoded bytes are cached by them: a repeated launch costs a dict
lookup. A descriptor with an empty dimension gets zeros (the kernel never issues copies through it: its
``ok`` predicate, descriptor_bulk.py).
"""
from __future__ import annotations

import ctypes
import operator
import re
import struct
from typing import Any, Optional

#: cached maps per parameter before the cache is dropped (a kernel launched over ever new buffers)
_CACHE_LIMIT = 1024
_RANK = re.compile(r"tensordesc<[^\[]*\[([^\]]*)\]")


class TensorMapError(ValueError):
    """The copy engine cannot describe a descriptor argument (misaligned base, strides, sizes)."""


def flat_arg_names(signature: Any) -> list[str]:
    """The name of each run-time kernel argument as the launcher receives them: a descriptor's base, shape and
    outer strides, a tuple's elements in order (structured.py's flattening)."""
    out: list[str] = []

    def walk(name: str, sig: Any) -> None:
        if isinstance(sig, tuple):
            for j, s in enumerate(sig):
                walk(f"{name}[{j}]", s)
        elif sig == "constexpr":
            return
        elif isinstance(sig, str) and sig.startswith("tensordesc"):
            m = _RANK.match(sig.replace(" ", ""))
            nd = len([x for x in m.group(1).split(",") if x]) if m else 2
            out.append(f"{name}.base")
            out.extend(f"{name}.shape[{i}]" for i in range(nd))
            out.extend(f"{name}.strides[{i}]" for i in range(nd - 1))
        else:
            out.append(name)

    for name, sig in (signature or {}).items():
        walk(name, sig)
    return out


def _picker(fields: list) -> Any:
    """A function from a launch's arguments to the values of a map's fields (argument numbers, or
    ["const", value] for what the kernel compiled in)."""
    if all(isinstance(f, int) for f in fields):
        return operator.itemgetter(*fields)
    return lambda args: tuple(args[f] if isinstance(f, int) else f[1] for f in fields)


def _descriptor_name(flat: list[str], index: int) -> str:
    name = flat[index] if index < len(flat) else f"#{index}"
    if name.endswith(".base"):
        return f"descriptor argument `{name[:-5]}`"
    return f"descriptor made from argument `{name}`"


class TensorMapParams:
    """The tensor-map parameters of one kernel: where each sits in the argument buffer, and its encoder."""

    def __init__(self, specs: list[dict], buffer: Any, offsets: list[int], kernel: Any) -> None:
        self.specs = specs
        self.buffer = buffer        # the argument buffer
        self.offsets = offsets      # each map's 64-byte aligned offset in it, one after the other
        assert offsets == [offsets[0] + 128 * i for i in range(len(offsets))]
        self.packer = struct.Struct("128s" * len(specs))
        self.caches: list[dict] = [{} for _ in specs]
        self.slots = [(i, _picker(s["args"]), cache) for i, (s, cache) in enumerate(zip(specs, self.caches))]
        self.kernel = kernel
        # the fields of every map at once: a launch with the same descriptors as the previous one leaves the
        # slots as they are (the common case costs one tuple comparison)
        fields = [f for s in specs for f in s["args"]]
        self.pick_all = _picker(fields) if len(fields) > 1 else (lambda args: (args[fields[0]], ))
        self.last: Any = None

    def write(self, args: tuple) -> None:
        """Put each map of this launch's arguments in its slot (raises TensorMapError)."""
        every = self.pick_all(args)
        if every == self.last:
            return
        raws = []
        for i, pick, cache in self.slots:
            key = pick(args)
            raw = cache.get(key)
            if raw is None:
                raw = self.encode(i, key)
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[key] = raw
            raws.append(raw)
        self.packer.pack_into(self.buffer, self.offsets[0], *raws)
        self.last = every

    def encode(self, i: int, values: tuple) -> bytes:
        spec = self.specs[i]
        rank = len(spec["box"])
        base, dims, strides = int(values[0]), [int(v) for v in values[1:1 + rank]], [int(v) for v in values[1 + rank:]]
        if min(dims) <= 0:
            return bytes(128)
        eb = spec["elem_bytes"]
        stride_bytes = [s * eb for s in strides]
        problem = None
        if base % 16:
            problem = f"its base address {base:#x} is not a multiple of 16 bytes"
        elif any(s % 16 or s <= 0 for s in stride_bytes):
            problem = (f"its strides {strides + [1]} ({eb}-byte elements) have outer strides that are not positive "
                       "multiples of 16 bytes")
        elif any(d >= 2**32 for d in dims) or any(s >= 2**40 for s in stride_bytes):
            problem = f"its shape {dims} or strides {strides + [1]} exceed the copy engine's limits"
        if problem is None:
            raw, problem = _encode(spec, base, dims, stride_bytes)
            if raw is not None:
                return raw
        k = getattr(self.kernel, "name", "?")
        names = flat_arg_names(getattr(getattr(self.kernel, "src", None), "signature", None))
        arg = _descriptor_name(names, spec["args"][0])
        raise TensorMapError(
            f"kernel `{k}`: cannot encode the tensor map of the {arg} (shape {dims}, strides "
            f"{strides + [1]}, block {list(reversed(spec['box']))}): {problem}. Pass a descriptor whose base is "
            "16-byte aligned and whose strides other than the last are multiples of 16 bytes (e.g. a contiguous "
            "tensor with rows padded to 16 bytes), or set TRITIUM_NVIDIA_TMA_HOST_MAPS=0 to build the map on the "
            "device")


#: a map's L2 sector promotion (tma.param_tensor_map's "l2_promotion", in bytes; 128 when absent)
PROMOTION = {0: "CU_TENSOR_MAP_L2_PROMOTION_NONE", 64: "CU_TENSOR_MAP_L2_PROMOTION_L2_64B",
              128: "CU_TENSOR_MAP_L2_PROMOTION_L2_128B", 256: "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"}


def _encode(spec: dict, base: int, dims: list[int], stride_bytes: list[int]) -> tuple[Optional[bytes], str]:
    """(the 128 bytes of the map, "") or (None, the driver's complaint). ``dims`` outermost first."""
    from cuda.bindings import driver as cu

    from . import cuda
    cuda.init()
    rank = len(spec["box"])
    u64, u32 = cu.cuuint64_t, cu.cuuint32_t
    err, tmap = cu.cuTensorMapEncodeTiled(
        getattr(cu.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{spec['elem_type']}"), rank, base,
        # a 1-D map has no outer strides; the driver reads none of the (placeholder) entry
        [u64(d) for d in reversed(dims)], [u64(s) for s in reversed(stride_bytes)] or [u64(16)],
        [u32(b) for b in spec["box"]], [u32(1)] * rank, cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        cu.CUtensorMapSwizzle(spec["swizzle"]),
        getattr(cu.CUtensorMapL2promotion, PROMOTION[spec.get("l2_promotion", 128)]),
        getattr(cu.CUtensorMapFloatOOBfill, f"CU_TENSOR_MAP_FLOAT_OOB_FILL_{spec.get('oob_fill', 'NONE')}"))
    if err != cu.CUresult.CUDA_SUCCESS:
        name, desc = cuda.error_text(err)
        return None, f"cuTensorMapEncodeTiled refused it ({name}: {desc})"
    return ctypes.string_at(tmap.getPtr(), 128), ""


def layout(types_size: int, base_addr: int, count: int) -> tuple[int, list[int]]:
    """(bytes the argument buffer needs, the offset of each map) for ``count`` maps after ``types_size`` bytes
    of scalar parameters, each map 64-byte aligned in host memory as a ``CUtensorMap`` is."""
    offsets = []
    end = types_size
    for _ in range(count):
        start = end + (-(base_addr + end)) % 64
        offsets.append(start)
        end = start + 128
    return end, offsets
