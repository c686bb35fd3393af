"""LLVM IR as text: functions of basic blocks, an entry prologue for thread-invariant values, a module of
declarations, globals and functions. Targets add their own declarations through :meth:`Module.declare`."""
from __future__ import annotations

import struct

#: MLIR element type -> LLVM type (fp8 values live in bytes; pointers are filled in by the target)
ELEMENT_TYPES = {
    "i1": "i1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "index": "i64",
    "f16": "half", "bf16": "bfloat", "f32": "float", "f64": "double",
    "f8E4M3FN": "i8", "f8E5M2": "i8", "f8E4M3FNUZ": "i8", "f8E5M2FNUZ": "i8", "f8E4M3B11FNUZ": "i8",
}
FP8 = {"f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5", "f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16",
       "f8E4M3B11FNUZ": "fp8e4b15"}
BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "bfloat": 2, "float": 4, "double": 8}
FLOATS = ("half", "bfloat", "float", "double")
INT_OF = {"half": "i16", "bfloat": "i16", "float": "i32", "double": "i64"}


def is_float(t: str) -> bool:
    return t in FLOATS


def is_ptr(t: str) -> bool:
    return t.startswith("ptr")


def const(t: str, v: float | int | bool) -> str:
    """An LLVM constant literal of type ``t``."""
    if t == "i1":
        return "true" if v else "false"
    if t.startswith("i"):
        return str(int(v))
    if is_ptr(t):
        return "null" if not v else f"inttoptr (i64 {int(v)} to {t})"
    fv = float(v)
    if t == "double":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", fv))[0]
    if t == "float":
        f32 = struct.unpack("<f", struct.pack("<f", fv))[0] if fv == fv else fv
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", f32))[0]
    if t == "half":
        return "0xH%04X" % struct.unpack("<H", struct.pack("<e", fv))[0]
    if t == "bfloat":
        bits = struct.unpack("<I", struct.pack("<f", fv))[0]
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
        return "0xR%04X" % (0x7FC0 if fv != fv else rounded)
    raise ValueError(f"no constant of type {t}")


class Function:
    """One LLVM function under construction.

    ``prologue`` holds instructions placed at the top of the entry block (values that depend only on the
    thread's identity), so that they dominate every use wherever they were first asked for.
    """

    def __init__(self, name: str, ret: str, params: list[tuple[str, str]], attrs: str = "", linkage: str = "",
                 cc: str = "") -> None:
        self.name = name
        self.ret = ret
        self.params = params
        self.attrs = attrs
        self.linkage = linkage
        self.cc = cc
        self.prologue: list[str] = []
        self.blocks: list[tuple[str, list[str]]] = [("entry", [])]
        #: ``!dbg`` of the instructions emitted now (the op being lowered) and the function's DISubprogram;
        #: "" without line info. Prologue instructions (thread identity, shared by every op) get none
        self.dbg = ""
        self.subprogram = ""
        self._n = 0
        self._labels = 0

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
        name = self.tmp(hint)
        self.blocks[-1][1].append(f"{name} = {text}, !dbg {self.dbg}" if self.dbg else f"{name} = {text}")
        return name

    def pinst(self, text: str, hint: str = "p") -> str:
        """An instruction in the entry prologue (its operands must be prologue values or arguments)."""
        name = self.tmp(hint)
        self.prologue.append(f"{name} = {text}")
        return name

    def br(self, label: str) -> None:
        self.emit(f"br label %{label}")

    def cond_br(self, cond: str, t: str, f: str) -> None:
        self.emit(f"br i1 {cond}, label %{t}, label %{f}")

    def placeholder(self) -> tuple[str, int]:
        """A line to fill in later (a phi whose incoming values are not known yet)."""
        self.emit("")
        return self.current, len(self.blocks[-1][1]) - 1

    def fill(self, slot: tuple[str, int], text: str) -> None:
        label, at = slot
        for lbl, lines in self.blocks:
            if lbl == label:
                lines[at] = text
                return
        raise KeyError(label)

    def text(self) -> str:
        params = ", ".join(f"{t} {n}" for t, n in self.params)
        head = " ".join(x for x in ("define", self.linkage, self.cc, self.ret) if x)
        sp = f" !dbg {self.subprogram}" if self.subprogram else ""
        lines = [f"{head} @{self.name}({params}) {self.attrs}{sp} {{"]
        for i, (label, body) in enumerate(self.blocks):
            lines.append(f"{label}:")
            if i == 0:
                lines += ["  " + a for a in self.prologue]
            lines += ["  " + b for b in body if b]
        lines.append("}")
        return "\n".join(lines)


class Module:
    def __init__(self, triple: str = "", datalayout: str = "") -> None:
        self.triple = triple
        self.datalayout = datalayout
        self.functions: list[Function] = []
        self.globals: list[str] = []
        self.declarations: dict[str, str] = {}
        self.metadata: list[str] = []
        self.extra: list[str] = []
        self._strings: dict[str, str] = {}
        #: the module's line table (tritium.line_info.LineTable), None without line info
        self.line_table = None
        self._md_id = 1000     # metadata ids of this module's own nodes (a backend may add low ones)

    def next_metadata_id(self) -> int:
        self._md_id += 1
        return self._md_id

    def declare(self, name: str, text: str) -> str:
        self.declarations.setdefault(name, text)
        return f"@{name}"

    def intrinsic(self, name: str, ret: str, args: list[str], attrs: str = "") -> str:
        return self.declare(name, f"declare {ret} @{name}({', '.join(args)}){' ' + attrs if attrs else ''}")

    def string(self, s: str, addrspace: int = 0) -> str:
        """A private constant C string; returns the global's name."""
        key = f"{addrspace}:{s}"
        g = self._strings.get(key)
        if g is None:
            g = f"@.str.{len(self._strings)}"
            data = s.encode() + b"\0"
            esc = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data)
            space = f" addrspace({addrspace})" if addrspace else ""
            self.globals.append(f'{g} = private unnamed_addr{space} constant [{len(data)} x i8] c"{esc}", align 1')
            self._strings[key] = g
        return g

    def text(self) -> str:
        head = []
        if self.datalayout:
            head.append(f'target datalayout = "{self.datalayout}"')
        if self.triple:
            head.append(f'target triple = "{self.triple}"')
        parts = head + self.globals + list(self.declarations.values()) + self.extra + \
            [f.text() for f in self.functions] + self.metadata
        return "\n\n".join(parts) + "\n"


def vector_type(n: int, t: str) -> str:
    return t if n == 1 else f"<{n} x {t}>"
