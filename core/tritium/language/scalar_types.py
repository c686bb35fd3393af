"""Scalar element types of the Triton language (``tl.int32``, ``tl.float16``, ...) and the ``dtype`` base
class every type derives from. Compound types (pointers, blocks, tuples) and the signature spellings are
dtypes.py, which builds on this module and re-exports it."""
from __future__ import annotations

from enum import Enum
from typing import Any

from ..llvmir.fp8 import FORMATS as FP8_FORMATS


class KIND(Enum):
    # order matters: Python scalars of a lower or equal kind do not take part in promotion
    BOOLEAN = 0
    INTEGRAL = 1
    FLOATING = 2


class SIGNEDNESS(Enum):
    SIGNED = 0
    UNSIGNED = 1


class dtype:
    """A scalar type. Instances are compared and hashed by name."""

    SINT_TYPES = ("int8", "int16", "int32", "int64")
    UINT_TYPES = ("int1", "uint8", "uint16", "uint32", "uint64")
    FP_TYPES = ("fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64")
    STANDARD_FP_TYPES = ("fp16", "bf16", "fp32", "fp64")
    OTHER_TYPES = ("void", )
    SIGNEDNESS = SIGNEDNESS
    KIND = KIND

    def __getattr__(self, name: str) -> Any:
        # In Triton a dtype reaches a kernel or a device function wrapped in a constexpr, and libraries unwrap it with
        # `.value` (FlagGems' get_dtype_min); tritium passes the dtype itself, so its value is itself.
        # (constexpr_type keeps its own `value` attribute: this runs only when lookup finds none)
        if name == "value":
            return self
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __init__(self, name: str) -> None:
        self.name = name
        assert name in self.SINT_TYPES + self.UINT_TYPES + self.FP_TYPES + self.OTHER_TYPES, name
        self.primitive_bitwidth = 0
        self.int_bitwidth = 0
        self.int_signedness = SIGNEDNESS.SIGNED
        self.fp_mantissa_width = 0
        self.exponent_bias = 0
        if name in self.SINT_TYPES:
            self.int_bitwidth = int(name[3:])
            self.primitive_bitwidth = self.int_bitwidth
        elif name in self.UINT_TYPES:
            self.int_signedness = SIGNEDNESS.UNSIGNED
            self.int_bitwidth = int(name.split("int")[-1])
            self.primitive_bitwidth = self.int_bitwidth
        elif name in self.FP_TYPES:
            fp8 = FP8_FORMATS.get(name)
            mant, bias, bits = (fp8.mbits, fp8.bias, 8) if fp8 else {
                "fp16": (10, 15, 16), "bf16": (7, 127, 16), "fp32": (23, 127, 32), "fp64": (52, 1023, 64)}[name]
            self.fp_mantissa_width, self.exponent_bias, self.primitive_bitwidth = mant, bias, bits

    # -- predicates -------------------------------------------------------------------------------
    def is_fp8(self) -> bool:
        return self.name.startswith("fp8")

    def is_fp8e4nv(self) -> bool:
        return self.name == "fp8e4nv"

    def is_fp8e4b8(self) -> bool:
        return self.name == "fp8e4b8"

    def is_fp8e4b15(self) -> bool:
        return self.name == "fp8e4b15"

    def is_fp8e5(self) -> bool:
        return self.name == "fp8e5"

    def is_fp8e5b16(self) -> bool:
        return self.name == "fp8e5b16"

    def is_fp16(self) -> bool:
        return self.name == "fp16"

    def is_bf16(self) -> bool:
        return self.name == "bf16"

    def is_fp32(self) -> bool:
        return self.name == "fp32"

    def is_fp64(self) -> bool:
        return self.name == "fp64"

    def is_int1(self) -> bool:
        return self.name == "int1"

    def is_int8(self) -> bool:
        return self.name == "int8"

    def is_int16(self) -> bool:
        return self.name == "int16"

    def is_int32(self) -> bool:
        return self.name == "int32"

    def is_int64(self) -> bool:
        return self.name == "int64"

    def is_uint8(self) -> bool:
        return self.name == "uint8"

    def is_uint16(self) -> bool:
        return self.name == "uint16"

    def is_uint32(self) -> bool:
        return self.name == "uint32"

    def is_uint64(self) -> bool:
        return self.name == "uint64"

    def is_floating(self) -> bool:
        return self.name in self.FP_TYPES

    def is_standard_floating(self) -> bool:
        return self.name in self.STANDARD_FP_TYPES

    def is_int_signed(self) -> bool:
        return self.name in self.SINT_TYPES

    def is_int_unsigned(self) -> bool:
        return self.name in self.UINT_TYPES

    def is_int(self) -> bool:
        return self.name in self.SINT_TYPES + self.UINT_TYPES

    def is_bool(self) -> bool:
        return self.is_int1()

    def kind(self) -> KIND:
        if self.is_bool():
            return KIND.BOOLEAN
        if self.is_int():
            return KIND.INTEGRAL
        assert self.is_floating(), self
        return KIND.FLOATING

    def get_int_max_value(self) -> int:
        if self.is_int_signed():
            return 2**(self.int_bitwidth - 1) - 1
        return 2**self.int_bitwidth - 1

    def get_int_min_value(self) -> int:
        return -2**(self.int_bitwidth - 1) if self.is_int_signed() else 0

    @staticmethod
    def is_dtype(type_str: str) -> bool:
        return type_str in dtype.SINT_TYPES + dtype.UINT_TYPES + dtype.FP_TYPES + dtype.OTHER_TYPES

    @staticmethod
    def is_void() -> bool:
        raise RuntimeError("Not implemented")

    @staticmethod
    def is_block() -> bool:
        return False

    @staticmethod
    def is_ptr() -> bool:
        return False

    @staticmethod
    def is_const() -> bool:
        return False

    def is_tuple(self) -> bool:
        return False

    @property
    def scalar(self) -> "dtype":
        return self

    def with_element_ty(self, element_ty: "dtype") -> "dtype":
        return element_ty

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    @property
    def cache_key_part(self) -> str:
        return self.name

    def codegen_name(self) -> str:
        if self.name.startswith("fp"):
            return "float" + self.name[2:]
        if self.name == "bf16":
            return "bfloat16"
        return self.name

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"triton.language.{self.codegen_name()}"

    def mangle(self) -> str:
        if self.is_int():
            return ("i" if self.is_int_signed() else "u") + str(self.int_bitwidth)
        return {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64"}.get(self.name, self.name)

    def __call__(self, value: Any) -> Any:
        # tl.float32(x) inside a kernel is a cast; the code generator routes it to semantic.cast
        raise RuntimeError("dtype objects can only be called inside a @jit function")


class void_type(dtype):
    def __init__(self) -> None:
        super().__init__("void")

    @staticmethod
    def is_void() -> bool:  # type: ignore[override]
        return True


void = void_type()
int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float8e5 = dtype("fp8e5")
float8e5b16 = dtype("fp8e5b16")
float8e4nv = dtype("fp8e4nv")
float8e4b8 = dtype("fp8e4b8")
float8e4b15 = dtype("fp8e4b15")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")
