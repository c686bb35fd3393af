"""Writing LLVM IR as text: SSA names, basic blocks, allocas hoisted to the entry, declarations."""
from __future__ import annotations

from typing import Optional

# MLIR element types to LLVM IR types (fp8 values are stored and passed as bytes)
_TYPES = {
    "i1": "i1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "index": "i64",
    "f16": "half", "bf16": "bfloat", "f32": "float", "f64": "double",
    "f8E4M3FN": "i8", "f8E5M2": "i8", "f8E4M3FNUZ": "i8", "f8E5M2FNUZ": "i8", "f8E4M3B11FNUZ": "i8",
}
FP8 = {"f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5", "f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16",
       "f8E4M3B11FNUZ": "fp8e4b15"}
SIZES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "bfloat": 2, "float": 4, "double": 8, "ptr": 8}


# float8 formats: (exponent bits, bias, top exponent is inf/nan, NaN codes)
_FP8_FORMATS = {"fp8e4nv": (4, 7, False, (0x7F, 0xFF)), "fp8e5": (5, 15, True, ()),
                "fp8e4b8": (4, 8, False, (0x80, )), "fp8e5b16": (5, 16, False, (0x80, )),
                "fp8e4b15": (4, 15, False, ())}
_fp8_codes: dict[str, dict[float, int]] = {}


def fp8_code(value: float, fmt: str) -> int:
    """The byte encoding ``value`` (already representable) in the float8 format ``fmt``."""
    import math
    table = _fp8_codes.get(fmt)
    if table is None:
        ebits, bias, ieee, nans = _FP8_FORMATS[fmt]
        mbits = 7 - ebits
        table = {}
        for code in range(255, -1, -1):   # ascending codes win: +0 over -0
            e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
            if code in nans or (ieee and e == (1 << ebits) - 1):
                continue
            mag = m * 2.0 ** (1 - bias - mbits) if e == 0 else (1 + m / 2 ** mbits) * 2.0 ** (e - bias)
            table[-mag if code & 0x80 else mag] = code
        _fp8_codes[fmt] = table
    if math.isnan(value):
        ebits, _, ieee, nans = _FP8_FORMATS[fmt]
        return 0x7F if ieee or not nans else nans[0]
    if math.isinf(value):
        ebits, _, ieee, nans = _FP8_FORMATS[fmt]
        if ieee:
            return 0x7C | (0x80 if value < 0 else 0)
        return nans[0] if nans else (0x7F | (0x80 if value < 0 else 0))
    if value == 0 and math.copysign(1.0, value) < 0 and fmt in ("fp8e4nv", "fp8e5", "fp8e4b15"):
        return 0x80
    return table[value]


def llvm_type(mlir_elem: str) -> str:
    if mlir_elem.startswith(("!tt.ptr", "!tt.tensordesc")):
        return "ptr"
    t = _TYPES.get(mlir_elem)
    if t is None:
        raise NotImplementedError(f"the CPU backend has no representation for type {mlir_elem}")
    return t


def is_float(t: str) -> bool:
    return t in ("half", "bfloat", "float", "double")


def const(t: str, v: float | int | bool) -> str:
    """An LLVM constant literal of type ``t``."""
    if t == "i1":
        return "true" if v else "false"
    if t.startswith("i"):
        return str(int(v))
    if t == "ptr":
        return "null" if not v else f"inttoptr (i64 {int(v)} to ptr)"
    import struct
    fv = float(v)
    if t == "double":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", fv))[0]
    if t == "float":
        # LLVM writes float constants as the double with the same value
        f32 = struct.unpack("<f", struct.pack("<f", fv))[0]
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", f32))[0]
    if t == "half":
        return "0xH%04X" % struct.unpack("<H", struct.pack("<e", fv))[0]
    if t == "bfloat":
        bits = struct.unpack("<I", struct.pack("<f", fv))[0]
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
        if fv != fv:
            rounded = 0x7FC0
        return "0xR%04X" % rounded
    raise ValueError(t)


_md_counter = 1000


def next_metadata_id() -> int:
    """A fresh module-level metadata id (loop, nontemporal and debug-info nodes share this counter)."""
    global _md_counter
    _md_counter += 1
    return _md_counter


class Function:
    """One LLVM function under construction."""

    def __init__(self, name: str, ret: str, params: list[tuple[str, str]], attrs: str = "", linkage: str = "") -> None:
        self.name = name
        self.ret = ret
        self.params = params
        self.attrs = attrs
        self.linkage = linkage
        self.allocas: list[str] = []
        self.blocks: list[tuple[str, list[str]]] = [("entry", [])]
        #: module-level metadata lines this function's instructions refer to
        self.metadata: list[str] = []
        #: ``!dbg`` of the instructions emitted now (the source line of the op being lowered), and the
        #: function's DISubprogram; "" when there is no line info
        self.dbg = ""
        self.subprogram = ""
        self._n = 0
        self._labels = 0

    # -- names and blocks --------------------------------------------------------------------------
    def tmp(self, hint: str = "t") -> str:
        self._n += 1
        return f"%{hint}{self._n}"

    def label(self, hint: str = "bb") -> str:
        self._labels += 1
        return f"{hint}{self._labels}"

    @property
    def current(self) -> str:
        return self.blocks[-1][0]

    def start_block(self, label: str) -> None:
        self.blocks.append((label, []))

    def emit(self, line: str) -> None:
        self.blocks[-1][1].append(f"{line}, !dbg {self.dbg}" if self.dbg and line else line)

    def inst(self, text: str, hint: str = "t") -> str:
        """Emit ``%name = text`` and return ``%name``."""
        name = self.tmp(hint)
        self.blocks[-1][1].append(f"{name} = {text}, !dbg {self.dbg}" if self.dbg else f"{name} = {text}")
        return name

    def br(self, label: str) -> None:
        self.emit(f"br label %{label}")

    def cond_br(self, cond: str, t: str, f: str, loop_md: str = "") -> None:
        self.emit(f"br i1 {cond}, label %{t}, label %{f}" + (f", !llvm.loop {loop_md}" if loop_md else ""))

    def loop_metadata(self, *properties: str) -> str:
        """A distinct ``!llvm.loop`` node with these properties (e.g. "llvm.loop.unroll.disable")."""
        global _md_counter
        base = _md_counter + 1
        _md_counter += 1 + len(properties)
        own = f"!{base}"
        props = [f"!{base + 1 + i}" for i in range(len(properties))]
        self.metadata.append(f"{own} = distinct !{{{', '.join([own] + props)}}}")
        self.metadata += [f"{p} = !{{!\"{name}\"}}" for p, name in zip(props, properties)]
        return own

    def metadata_node(self, body: str) -> str:
        """A module-level metadata node ``!{body}`` (e.g. "i32 1" for ``!nontemporal``)."""
        global _md_counter
        _md_counter += 1
        self.metadata.append(f"!{_md_counter} = !{{{body}}}")
        return f"!{_md_counter}"

    def locate_rest(self, dbg: str) -> None:
        """Give ``dbg`` to every instruction emitted without a location."""
        for _, body in self.blocks:
            body[:] = [f"{b}, !dbg {dbg}" if b and "!dbg " not in b else b for b in body]

    def alloca(self, elem: str, count: int, align: int = 32, hint: str = "buf") -> str:
        name = self.tmp(hint)
        self.allocas.append(f"{name} = alloca {elem}, i64 {max(count, 1)}, align {align}")
        return name

    def text(self) -> str:
        params = ", ".join(f"{t} {n}" for t, n in self.params)
        sp = f" !dbg {self.subprogram}" if self.subprogram else ""
        lines = [f"define {self.linkage + ' ' if self.linkage else ''}{self.ret} @{self.name}({params}) {self.attrs}{sp} {{"]
        for i, (label, body) in enumerate(self.blocks):
            lines.append(f"{label}:")
            if i == 0:
                lines += ["  " + a for a in self.allocas]
            lines += ["  " + b for b in body]
        lines.append("}")
        return "\n".join(lines)


class Module:
    """Functions, globals and declarations of one LLVM module."""

    def __init__(self, triple: str = "", datalayout: str = "") -> None:
        self.triple = triple
        self.datalayout = datalayout
        self.functions: list[Function] = []
        self.globals: list[str] = []
        self.declarations: dict[str, str] = {}
        self.extra: list[str] = []
        self._strings: dict[str, str] = {}
        #: the module's line table (tritium.line_info.LineTable), None without line info
        self.line_table = None
        self.metadata: list[str] = []

    def declare(self, name: str, text: str) -> None:
        self.declarations.setdefault(name, text)

    def string(self, s: str) -> str:
        """A private constant C string; returns the global's name (usable as ``ptr``)."""
        g = self._strings.get(s)
        if g is None:
            g = f"@.str.{len(self._strings)}"
            data = s.encode() + b"\0"
            esc = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data)
            self.globals.append(f'{g} = private unnamed_addr constant [{len(data)} x i8] c"{esc}", align 1')
            self._strings[s] = g
        return g

    def text(self) -> str:
        head = []
        if self.datalayout:
            head.append(f'target datalayout = "{self.datalayout}"')
        if self.triple:
            head.append(f'target triple = "{self.triple}"')
        parts = head + self.globals + list(self.declarations.values()) + self.extra + [f.text() for f in self.functions]
        md = [m for f in self.functions for m in f.metadata] + self.metadata
        return "\n\n".join(parts + (["\n".join(md)] if md else [])) + "\n"


def intrinsic(module: Module, name: str, ret: str, args: list[str], attrs: Optional[str] = None) -> str:
    module.declare(name, f"declare {ret} @{name}({', '.join(args)})" + (f" {attrs}" if attrs else ""))
    return f"@{name}"
