"""The 8-bit float formats, each described once: the interpreter, the CPU math library, the GPU lowering and
the frontend's type names all read this table.

Every format is a sign, ``ebits`` exponent bits, ``mbits`` mantissa bits and a bias; ``kind`` says what the
top encodings mean:

- ``ieee``: like IEEE half (exponent all ones: inf if the mantissa is 0, else NaN);
- ``fn``: no infinities; S.1111.111 (0x7f, 0xff) is NaN (E4M3FN);
- ``fnuz``: no infinities and no -0; 0x80 is the only NaN;
- ``finite``: every encoding is a finite number (Triton's fp8e4b15).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Fp8Format:
    name: str        # Triton's name (tl.float8e4nv is "fp8e4nv")
    mlir: str        # the MLIR type
    torch: str       # torch's dtype, "" where torch has none
    ebits: int
    mbits: int
    bias: int
    kind: str        # "ieee" | "fn" | "fnuz" | "finite"
    _codes: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def max_code(self) -> int:
        """The magnitude bits of the largest finite value."""
        if self.kind == "fn":
            return 0x7E
        if self.kind == "ieee":
            return ((1 << self.ebits) - 2) << self.mbits | ((1 << self.mbits) - 1)
        return 0x7F

    @property
    def max_finite(self) -> float:
        return self.decode(self.max_code)

    @property
    def nan_code(self) -> int:
        """The code a NaN becomes (``finite``: the largest value, as narrowing saturates)."""
        return 0x80 if self.kind == "fnuz" else 0x7F

    def is_nan(self, code: int) -> bool:
        if self.kind == "fnuz":
            return code == 0x80
        if self.kind == "fn":
            return code & 0x7F == 0x7F
        if self.kind == "ieee":
            return (code >> self.mbits) & ((1 << self.ebits) - 1) == (1 << self.ebits) - 1 and \
                code & ((1 << self.mbits) - 1) != 0
        return False

    def decode(self, code: int) -> float:
        """The value of a code (NaN where the code is a NaN)."""
        if self.is_nan(code):
            return float("nan")
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> self.mbits) & ((1 << self.ebits) - 1)
        m = code & ((1 << self.mbits) - 1)
        if self.kind == "ieee" and e == (1 << self.ebits) - 1:
            return sign * float("inf")
        if e == 0:
            return sign * m * 2.0 ** (1 - self.bias - self.mbits)
        return sign * (1 + m / (1 << self.mbits)) * 2.0 ** (e - self.bias)

    def encode(self, value: float) -> int:
        """The code of ``value``: exact where representable, otherwise the nearest finite value (ties to an even
        code), saturating. NaN and inf follow the format's rules (inf stays inf only in ``ieee``)."""
        if math.isnan(value):
            return self.nan_code
        if math.isinf(value):
            neg = 0x80 if value < 0 else 0
            if self.kind == "ieee":
                return ((1 << self.ebits) - 1) << self.mbits | neg
            if self.kind == "finite":
                return 0x7F | neg
            return self.nan_code
        if value == 0:
            return 0x80 if math.copysign(1.0, value) < 0 and self.kind != "fnuz" else 0
        if not self._codes:
            for code in range(255, -1, -1):   # the lowest code of a value wins
                v = self.decode(code)
                if v == v and not math.isinf(v):
                    self._codes[v] = code
        got = self._codes.get(value)
        if got is not None:
            return got
        best, best_err = 0, math.inf
        for v, code in sorted(self._codes.items(), key=lambda kv: kv[1]):
            err = abs(v - value)
            if err < best_err or (err == best_err and code % 2 == 0 and best % 2 == 1):
                best, best_err = code, err
        return best


FORMATS: dict[str, Fp8Format] = {f.name: f for f in (
    Fp8Format("fp8e4nv", "f8E4M3FN", "float8_e4m3fn", 4, 3, 7, "fn"),
    Fp8Format("fp8e5", "f8E5M2", "float8_e5m2", 5, 2, 15, "ieee"),
    Fp8Format("fp8e4b8", "f8E4M3FNUZ", "float8_e4m3fnuz", 4, 3, 8, "fnuz"),
    Fp8Format("fp8e5b16", "f8E5M2FNUZ", "float8_e5m2fnuz", 5, 2, 16, "fnuz"),
    # MLIR has no type with this format's rules; its bits travel in f8E4M3B11FNUZ, whose NaN (0x80) we never use
    Fp8Format("fp8e4b15", "f8E4M3B11FNUZ", "", 4, 3, 15, "finite"),
)}
#: MLIR type name -> Triton name, and back
FP8 = {f.mlir: f.name for f in FORMATS.values()}
MLIR_OF = {f.name: f.mlir for f in FORMATS.values()}


def decode_table(fmt: str) -> list[float]:
    """The value of every code of format ``fmt`` (Triton's name)."""
    f = FORMATS[fmt]
    return [f.decode(c) for c in range(256)]


def encode(value: float, fmt: str) -> int:
    return FORMATS[fmt].encode(value)
