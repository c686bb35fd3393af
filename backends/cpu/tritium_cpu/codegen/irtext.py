"""The CPU's LLVM IR text: :mod:`tritium.llvmir` with the host's 8-byte pointers, and functions that call their
entry prologue ``allocas`` (stack slots, and values hoisted next to them)."""
from __future__ import annotations

from typing import Optional

from tritium.llvmir import text
from tritium.llvmir import types as _types
from tritium.llvmir.fp8 import FP8, encode as fp8_code
from tritium.llvmir.text import Module, next_metadata_id
from tritium.llvmir.types import const

__all__ = ["FP8", "SIZES", "Function", "Module", "const", "fp8_code", "intrinsic", "llvm_type", "next_metadata_id"]

SIZES = {**_types.BYTES, "ptr": 8}


def llvm_type(mlir_elem: str) -> str:
    return _types.llvm_type(mlir_elem, "the CPU backend")


class Function(text.Function):
    @property
    def allocas(self) -> list[str]:
        return self.prologue

    @allocas.setter
    def allocas(self, lines: list[str]) -> None:
        self.prologue = lines


def intrinsic(module: Module, name: str, ret: str, args: list[str], attrs: Optional[str] = None) -> str:
    return module.intrinsic(name, ret, args, attrs or "")
