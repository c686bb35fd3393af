"""LLVM IR as text: functions of basic blocks with an entry prologue, and a module of globals, declarations,
functions and metadata."""
from __future__ import annotations

import itertools
from typing import Callable, Optional

#: metadata ids, unique in the process: functions are built before they belong to a module, so they and the
#: modules draw from one source and never collide. Ids below 1000 are left to backends' fixed nodes; LLVM renumbers
#: all of them when it prints a parsed module
_process_ids = itertools.count(1001)


def next_metadata_id() -> int:
    """A metadata id no other node of this process has (loop, nontemporal and debug-info nodes share them)."""
    return next(_process_ids)


class Function:
    """One LLVM function under construction.

    ``prologue`` holds instructions placed at the top of the entry block: stack slots, and values that depend
    only on the arguments (a GPU thread's identity), so that they dominate every use wherever they were first
    asked for. ``metadata_ids`` numbers the metadata nodes the function makes (loop properties, nontemporal).
    """

    def __init__(self, name: str, ret: str, params: list[tuple[str, str]], attrs: str = "", linkage: str = "",
                 cc: str = "", metadata_ids: Callable[[], int] = next_metadata_id) -> None:
        self.name, self.ret, self.params, self.attrs, self.linkage, self.cc = name, ret, params, attrs, linkage, cc
        self.prologue: list[str] = []
        self.blocks: list[tuple[str, list[str]]] = [("entry", [])]
        #: module-level metadata lines this function's instructions refer to
        self.metadata: list[str] = []
        #: ``!dbg`` of the instructions emitted now (the op being lowered) and the function's DISubprogram;
        #: "" without line info. Prologue instructions (shared by every op) get none
        self.dbg = ""
        self.subprogram = ""
        self.metadata_ids = metadata_ids
        self._n = 0
        self._labels = 0

    # -- names and blocks ----------------------------------------------------------------------------------
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

    def pinst(self, text: str, hint: str = "p") -> str:
        """An instruction in the entry prologue (its operands must be prologue values or arguments)."""
        name = self.tmp(hint)
        self.prologue.append(f"{name} = {text}")
        return name

    def alloca(self, elem: str, count: int, align: int = 32, hint: str = "buf") -> str:
        name = self.tmp(hint)
        self.prologue.append(f"{name} = alloca {elem}, i64 {max(count, 1)}, align {align}")
        return name

    def br(self, label: str) -> None:
        self.emit(f"br label %{label}")

    def cond_br(self, cond: str, t: str, f: str, loop_md: str = "") -> None:
        self.emit(f"br i1 {cond}, label %{t}, label %{f}" + (f", !llvm.loop {loop_md}" if loop_md else ""))

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

    def locate_rest(self, dbg: str) -> None:
        """Give ``dbg`` to every instruction emitted without a location."""
        for _, body in self.blocks:
            body[:] = [f"{b}, !dbg {dbg}" if b and "!dbg " not in b else b for b in body]

    # -- metadata --------------------------------------------------------------------------------------------
    def loop_metadata(self, *properties: str) -> str:
        """A distinct ``!llvm.loop`` node with these properties (e.g. "llvm.loop.unroll.disable")."""
        own = f"!{self.metadata_ids()}"
        props = [f"!{self.metadata_ids()}" for _ in properties]
        self.metadata.append(f"{own} = distinct !{{{', '.join([own] + props)}}}")
        self.metadata += [f"{p} = !{{!\"{name}\"}}" for p, name in zip(props, properties)]
        return own

    def metadata_node(self, body: str) -> str:
        """A module-level metadata node ``!{body}`` (e.g. "i32 1" for ``!nontemporal``)."""
        own = f"!{self.metadata_ids()}"
        self.metadata.append(f"{own} = !{{{body}}}")
        return own

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
    """Globals, declarations, functions and metadata of one LLVM module."""

    def __init__(self, triple: str = "", datalayout: str = "") -> None:
        self.triple = triple
        self.datalayout = datalayout
        self.functions: list[Function] = []
        self.globals: list[str] = []
        self.declarations: dict[str, str] = {}
        #: whole definitions written elsewhere (a math library's functions, a target's attribute groups)
        self.extra: list[str] = []
        self.metadata: list[str] = []
        self._strings: dict[str, str] = {}
        #: the module's line table (tritium.line_info.LineTable), None without line info
        self.line_table = None

    @staticmethod
    def next_metadata_id() -> int:
        return next_metadata_id()

    def declare(self, name: str, text: str) -> str:
        self.declarations.setdefault(name, text)
        return f"@{name}"

    def intrinsic(self, name: str, ret: str, args: list[str], attrs: Optional[str] = "") -> str:
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
        parts = head + self.globals + list(self.declarations.values()) + self.extra + [f.text() for f in self.functions]
        md = [m for f in self.functions for m in f.metadata] + self.metadata
        return "\n\n".join(parts + (["\n".join(md)] if md else [])) + "\n"
