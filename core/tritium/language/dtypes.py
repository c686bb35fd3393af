"""Compound types of the Triton language (pointers, blocks, tuples, constexpr and descriptor types) and the
signature spellings of all types (``"*fp32"``, ``"i64"``: :func:`str_to_ty`, :func:`ty_to_str`).

The scalar types and the ``dtype`` base class are scalar_types.py, re-exported here: ``tl.core.dtype``,
``dtypes.int32`` and the rest keep their import path.
"""
from __future__ import annotations

from typing import Any, Sequence

from .scalar_types import (  # noqa: F401  (the scalar types, at their import path)
    KIND, SIGNEDNESS, bfloat16, dtype, float8e4b8, float8e4b15, float8e4nv, float8e5, float8e5b16, float16, float32,
    float64, int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64, void, void_type)


class pointer_type(dtype):
    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False) -> None:
        if not isinstance(element_ty, dtype):
            raise TypeError(f"element_ty has type `{type(element_ty).__name__}`; expected `dtype`.")
        self.element_ty = element_ty  # type: ignore[misc]
        self.address_space = address_space
        self.const = const
        self.name = f"pointer<{element_ty}>" if not const else f"const_pointer<{element_ty}>"
        self.primitive_bitwidth = 64
        self.int_bitwidth = 0
        self.int_signedness = SIGNEDNESS.UNSIGNED
        self.fp_mantissa_width = 0
        self.exponent_bias = 0

    def is_ptr(self) -> bool:  # type: ignore[override]
        return True

    def is_const(self) -> bool:  # type: ignore[override]
        return self.const

    def is_floating(self) -> bool:
        return False

    def is_int(self) -> bool:
        return False

    def is_int_signed(self) -> bool:
        return False

    def is_int_unsigned(self) -> bool:
        return False

    def is_bool(self) -> bool:
        return False

    def kind(self) -> KIND:
        raise TypeError("pointers have no arithmetic kind")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, pointer_type) and self.element_ty == other.element_ty
                and self.address_space == other.address_space and self.const == other.const)

    def __hash__(self) -> int:
        return hash(("ptr", self.element_ty, self.address_space, self.const))

    def mangle(self) -> str:
        return f"P{self.element_ty.mangle()}"

    def __repr__(self) -> str:
        return f"pointer_type({self.element_ty!r})"


class block_type(dtype):
    """A tile: an element type and a static shape."""

    def __init__(self, element_ty: dtype, shape: Sequence[Any]) -> None:
        self.element_ty = element_ty  # type: ignore[misc]
        if not shape:
            raise TypeError("0d block_type is forbidden")
        self.shape = tuple(_static(s) for s in shape)
        for s in self.shape:
            if not isinstance(s, int):
                raise TypeError(f"block shapes must be compile-time integers, got {s!r}")
        self.numel = 1
        for s in self.shape:
            self.numel *= s
        self.name = f"<{list(self.shape)}, {element_ty}>"
        self.primitive_bitwidth = element_ty.primitive_bitwidth
        self.int_bitwidth = element_ty.int_bitwidth
        self.int_signedness = element_ty.int_signedness
        self.fp_mantissa_width = element_ty.fp_mantissa_width

    def is_block(self) -> bool:  # type: ignore[override]
        return True

    def get_block_shapes(self) -> tuple[int, ...]:
        return self.shape

    @property
    def scalar(self) -> dtype:
        return self.element_ty

    def with_element_ty(self, scalar_ty: dtype) -> "block_type":
        return block_type(scalar_ty, self.shape)

    def is_ptr(self) -> bool:  # type: ignore[override]
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, block_type) and self.element_ty == other.element_ty and self.shape == other.shape

    def __hash__(self) -> int:
        return hash(("block", self.element_ty, self.shape))

    def mangle(self) -> str:
        return f"{self.element_ty.mangle()}S{'_'.join(map(str, self.shape))}S"

    def __repr__(self) -> str:
        return f"block_type({self.element_ty!r}, {list(self.shape)})"

    # a block of a type answers the element type's predicates (Triton code relies on it)
    def __getattr__(self, name: str) -> Any:
        if name.startswith("is_") and name not in ("is_block", "is_ptr"):
            return getattr(self.element_ty, name)
        raise AttributeError(name)


class tuple_type(dtype):
    def __init__(self, types: Sequence[dtype], fields: Sequence[str] | None = None) -> None:
        self.types = list(types)
        self.fields = list(fields or [""] * len(self.types))
        self.name = "[" + ",".join(f"{f}:{t}" for f, t in zip(self.fields, self.types)) + "]"

    def is_tuple(self) -> bool:
        return True

    def __iter__(self):
        return iter(self.types)

    def __getitem__(self, i: int) -> dtype:
        return self.types[i]

    def __len__(self) -> int:
        return len(self.types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, tuple_type) and self.types == other.types and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(("tuple", tuple(self.types)))

    def mangle(self) -> str:
        return "T" + "_".join(t.mangle() for t in self.types) + "T"


class constexpr_type(dtype):
    """The type of a compile-time value (used in signatures)."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.name = f"constexpr[{value!r}]"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self) -> int:
        return hash(("constexpr", repr(self.value)))

    def mangle(self) -> str:
        return f"c{self.value!r}"


class tensor_descriptor_base_type(dtype):
    """The type of a descriptor: its block type (shape and element type)."""

    def __init__(self, block_type: block_type) -> None:
        self.block_type = block_type
        self.name = f"tensor_descriptor<{block_type}>"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.block_type == self.block_type  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("tensordesc", self.block_type))

    def is_block(self) -> bool:  # type: ignore[override]
        return False

    def mangle(self) -> str:
        return f"TD{self.block_type.mangle()}"

    def __str__(self) -> str:
        return self.name


class tensor_descriptor_type(tensor_descriptor_base_type):
    def __init__(self, block_type: block_type, shape_type: Any = None, strides_type: Any = None) -> None:
        super().__init__(block_type)
        self.shape_type = shape_type
        self.strides_type = strides_type


def _static(s: Any) -> Any:
    """A block dimension: a tl.constexpr (core.py, which builds on this module) gives the int its type holds."""
    t = getattr(s, "type", None)
    return t.value if isinstance(t, constexpr_type) else s


pi32_t = pointer_type(int32)

#: signature type strings (Triton's spelling) to dtypes
SIGNATURE_TYPES: dict[str, dtype] = {
    "i1": int1, "B": int1, "u1": int1, "i8": int8, "i16": int16, "i32": int32, "i64": int64,
    "u8": uint8, "u16": uint16, "u32": uint32, "u64": uint64,
    "fp8e4nv": float8e4nv, "fp8e4b8": float8e4b8, "fp8e4b15": float8e4b15, "fp8e5": float8e5,
    "fp8e5b16": float8e5b16, "fp16": float16, "bf16": bfloat16, "fp32": float32, "fp64": float64,
}


def str_to_ty(name: Any, c: Any = None) -> dtype:
    """Parse a signature type: ``i32``, ``fp16``, ``*fp32`` (pointer), ``*kfp32`` (const pointer), a tuple of
    such strings (a tuple type; a named tuple keeps its field names), ``tensordesc<fp16[64, 64]>`` or
    ``constexpr`` (whose value is ``c``, as in Triton's two-argument form)."""
    if isinstance(name, tuple):
        fields = type(name).__dict__.get("_fields", None)
        return tuple_type([str_to_ty(x, c) for x in name], fields)
    if not isinstance(name, str):
        raise TypeError(f"a kernel signature type is a string or a tuple of strings, got {name!r}")
    if name.startswith("*"):
        rest = name[1:]
        const = rest.startswith("k")
        if const:
            rest = rest[1:]
        return pointer_type(str_to_ty(rest), const=const)
    if name.startswith("tensordesc"):
        return _descriptor_type(name)
    if name.startswith("constexpr"):
        return constexpr_type(c)
    try:
        return SIGNATURE_TYPES[name]
    except KeyError:
        raise TypeError(f"unknown type {name!r} in a kernel signature; expected one of "
                        f"{', '.join(SIGNATURE_TYPES)}, *T for a pointer, a tuple, tensordesc<T[shape]> or "
                        "constexpr") from None


def _descriptor_type(name: str) -> dtype:
    import re
    m = re.fullmatch(r"tensordesc<(\w+)\[([\d,]*)\](?:,.*)?>", name.replace(" ", ""))
    if m is None:
        raise TypeError(f"malformed tensor descriptor type {name!r}; expected e.g. 'tensordesc<fp16[64, 64]>'")
    shape = [int(x) for x in m.group(2).split(",") if x]
    return tensor_descriptor_type(block_type(str_to_ty(m.group(1)), shape), tuple_type([int32] * len(shape)),
                                  tuple_type([int64] * len(shape)))


def ty_to_str(ty: dtype) -> str:
    if isinstance(ty, pointer_type):
        return "*" + ("k" if ty.const else "") + ty_to_str(ty.element_ty)
    for k, v in SIGNATURE_TYPES.items():
        if v == ty and k not in ("B", "u1"):
            return k
    raise TypeError(f"no signature spelling for {ty}")
