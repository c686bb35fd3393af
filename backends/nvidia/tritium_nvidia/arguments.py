"""A kernel's parameters as cuLaunchKernel reads them: one buffer laid out as the C struct of the parameters,
and the ``void**`` pointing into it (:class:`ArgumentBuffer`), filled per launch from the Python values.
"""
from __future__ import annotations

import ctypes
import struct
from typing import Any, Callable, Optional

# struct codes of the kernel parameter types, in native alignment as the ABI lays the parameters out: the fast
# path packs the Python values themselves, the slow path the bits its setters made of them
_PACK_CODES = {"ptr addrspace(1)": "Q", "i1": "B", "i8": "b", "i16": "h", "i32": "i", "i64": "q", "float": "f",
               "double": "d", "half": "e", "bfloat": "H"}
_CONVERTED_CODES = {**_PACK_CODES, "half": "H"}
_MASK = {"i8": 0xFF, "i16": 0xFFFF, "i32": 0xFFFFFFFF, "i64": (1 << 64) - 1}
_SIGNED = {"i8": (1 << 7), "i16": (1 << 15), "i32": (1 << 31), "i64": (1 << 63)}

def _half_bits(v: Any) -> int:
    f = float(v)
    try:
        return struct.unpack("<H", struct.pack("<e", f))[0]
    except OverflowError:  # rounds to infinity, as C's conversion does
        return 0xFC00 if f < 0 else 0x7C00


def _f32(v: Any) -> float:
    return ctypes.c_float(float(v)).value  # out of float's range: infinity, as C's conversion gives


def _bf16_bits(v: Any) -> int:
    bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _wrap_int(t: str) -> Callable[[Any], int]:
    mask, sign = _MASK[t], _SIGNED[t]
    return lambda v: ((int(v) & mask) ^ sign) - sign


def _setter(t: str) -> Optional[Callable[[Any], Any]]:
    """How a Python argument becomes the value its slot is packed from when struct refuses the value itself."""
    if t == "half":
        return _half_bits
    if t == "bfloat":
        return _bf16_bits
    if t == "float":
        return _f32
    if t == "double":
        return float
    if t in _MASK:
        return _wrap_int(t)
    if t == "i1":
        return lambda v: 1 if v else 0
    return lambda v: int(v) & 0xFFFFFFFFFFFFFFFF


def field_offsets(codes: list[str]) -> list[int]:
    """Where each field of the native-aligned struct of these codes starts."""
    ends = [struct.calcsize("@" + "".join(codes[:i + 1])) for i in range(len(codes))]
    return [end - struct.calcsize(code) for end, code in zip(ends, codes)]


class ArgumentBuffer:
    """A kernel's parameters in one buffer laid out as a C struct, and the ``void**`` cuLaunchKernel reads
    (pointing into it). One ``struct.pack_into`` converts and stores all arguments: a ctypes object per
    argument cost ~0.3 us each per launch."""

    def __init__(self, types: list[str], tensor_maps: Optional[list] = None, kernel: Any = None) -> None:
        codes = [_PACK_CODES.get(t, "Q") for t in types]
        self.packer = struct.Struct("@" + "".join(codes))
        self.converted_packer = struct.Struct("@" + "".join(_CONVERTED_CODES.get(t, "Q") for t in types))
        # host-encoded tensor maps follow the scalar parameters, 128 bytes each (tensor_maps.py)
        n_maps = len(tensor_maps or ())
        self.buffer = ctypes.create_string_buffer(max(8, self.packer.size + 192 * n_maps))
        base = ctypes.addressof(self.buffer)
        self.offsets = field_offsets(codes)
        self.maps: Any = None
        map_offsets: list[int] = []
        if n_maps:
            from .tensor_maps import TensorMapParams, layout
            map_offsets = layout(self.packer.size, base, n_maps)[1]
            self.maps = TensorMapParams(list(tensor_maps or ()), self.buffer, map_offsets, kernel)
        self.params = (ctypes.c_void_p * max(1, len(types) + n_maps))(*[base + o for o in self.offsets + map_offsets])
        self.params_addr = ctypes.addressof(self.params)
        self.count = len(types)
        self.setters = [_setter(t) for t in types]
        # struct converts Python values as the setters would, except bf16 (no struct code)
        self.pack_directly = "bfloat" not in types
        self.error: Optional[Exception] = None

    def pack(self, args: tuple) -> bool:
        """Store ``args``; False (with ``error`` set) where one cannot be passed as its parameter's type."""
        try:
            if not self.pack_directly:
                raise struct.error
            self.packer.pack_into(self.buffer, 0, *args)
        except (struct.error, OverflowError):
            if not self.pack_converted(args):
                return False
        if self.maps is not None:
            self.maps.write(args)   # raises TensorMapError, naming the kernel and the argument
        return True

    def pack_converted(self, args: tuple) -> bool:
        """The slow path: values struct refuses as they are (bf16, ints that wrap around as C's conversions do,
        floats beyond float's range) go through the setters first; what the setters refuse is the caller's."""
        self.error = None
        if len(args) != self.count:
            return False
        try:
            values = [setter(a) for setter, a in zip(self.setters, args)]
            self.converted_packer.pack_into(self.buffer, 0, *values)
            return True
        except (TypeError, ValueError, OverflowError, struct.error) as exc:
            self.error = exc
            return False
