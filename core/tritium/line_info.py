"""Python source locations as LLVM debug metadata (line tables), for code generators that write LLVM IR text.

The tile IR carries each operation's Python location (``loc("k.py":14:9)``, possibly wrapped in a name, a
call site or a fusion). A code generator asks :meth:`LineTable.location` for the op it is lowering and puts
``!dbg !N`` on the instructions it emits; :meth:`LineTable.metadata` then writes the compile unit, files,
subprograms, locations and module flags. LLVM turns them into ``.debug_line`` in objects, or ``.file``/``.loc``
directives in assembly, so profilers and debuggers point at the kernel's Python lines. Only line tables are
described by default: they must not change the generated code (the line-info tests compare it).

``LLVM_EXTRACT_DI_LOCAL_VARIABLES=1`` adds variables: the frontend wraps the location of an op whose value is
bound to a Python name in ``loc("name"(...))`` (:func:`variable_name`), and a code generator calls
:meth:`LineTable.variable` and :func:`dbg_value` after the value's definition; the compile unit is then
``FullDebug`` (:data:`FULL`).

``TRITON_DISABLE_LINE_INFO=1`` strips locations in the frontend; :func:`enabled` says whether to write any.
"""
from __future__ import annotations

import linecache
import os
from typing import Any, Callable, Optional

from . import knobs

#: what LLVM is asked to emit: line tables only (``DebugDirectivesOnly``: ``.loc`` directives without DWARF
#: sections, for targets whose assembler builds the tables itself)
LINE_TABLES = "LineTablesOnly"
DIRECTIVES_ONLY = "DebugDirectivesOnly"
DWARF_VERSION = 4
#: line tables and variables (LLVM_EXTRACT_DI_LOCAL_VARIABLES)
FULL = "FullDebug"

#: LLVM scalar type -> (DWARF name, bits, encoding) of its DIBasicType
_BASIC = {"i1": ("bool", 8, "DW_ATE_boolean"), "i8": ("int8", 8, "DW_ATE_signed"),
          "i16": ("int16", 16, "DW_ATE_signed"), "i32": ("int32", 32, "DW_ATE_signed"),
          "i64": ("int64", 64, "DW_ATE_signed"), "half": ("fp16", 16, "DW_ATE_float"),
          "bfloat": ("bf16", 16, "DW_ATE_float"), "float": ("fp32", 32, "DW_ATE_float"),
          "double": ("fp64", 64, "DW_ATE_float")}


def enabled() -> bool:
    return not knobs.compilation.disable_line_info


def variables() -> bool:
    """Whether code generators describe named values as variables (needs line info: they are located)."""
    return enabled() and knobs.compilation.dump_ir_extract_di_local_variables


def variable_name(loc: Any) -> Optional[str]:
    """The Python name the frontend gave an op's value (``loc("x"(...))``), also through a fusion (passes
    that merge ops fuse their locations)."""
    if loc is None:
        return None
    if loc.is_a_name():
        return loc.name_str
    if loc.is_a_fused():
        for inner in loc.locations:
            got = variable_name(inner)
            if got is not None:
                return got
    return None


def dbg_value(llty: str, value: str, var: str) -> str:
    """The call that says ``var`` holds ``value`` from here on (emit it with the op's ``!dbg``)."""
    return f"call void @llvm.dbg.value(metadata {llty} {value}, metadata {var}, metadata !DIExpression())"


DBG_VALUE_DECL = "declare void @llvm.dbg.value(metadata, metadata, metadata)"


def source_position(loc: Any) -> Optional[tuple[str, int, int]]:
    """(file, line, column) of an MLIR location: a file location, or the one it wraps. Of a call site, the
    innermost frame (where the code is written); of a fusion, the first position found."""
    if loc is None:
        return None
    if loc.is_a_file():
        return loc.filename, loc.start_line, loc.start_col
    if loc.is_a_name():
        return source_position(loc.child_loc)
    if loc.is_a_callsite():
        return source_position(loc.callee) or source_position(loc.caller)
    if loc.is_a_fused():
        for inner in loc.locations:
            got = source_position(inner)
            if got is not None:
                return got
    return None


def located(message: str, func: Any, op: Any) -> str:
    """A code generator's error ``message`` about ``op`` of kernel ``func`` (its ``func.func``), with where it
    happened: the kernel's name, file:line, and that Python line with a caret under the op's column."""
    kernel = str(func.attributes["sym_name"]).strip('"')
    pos = source_position(op.location)
    if pos is None:
        return f"{message} (kernel `{kernel}`, {op.name})"
    file, line, col = pos
    text = linecache.getline(file, line).rstrip()
    excerpt = f"\n    {text}\n    {' ' * max(col - 1, 0)}^" if text.strip() else ""
    return f"{message} (kernel `{kernel}`, {file}:{line}){excerpt}"


def _quote(s: str) -> str:
    return s.replace("\\", "\\5C").replace('"', "\\22")


class LineTable:
    """The debug metadata of one LLVM module. ``next_id`` gives fresh metadata ids (the code generator's own
    counter, so that these never collide with its other metadata)."""

    def __init__(self, next_id: Callable[[], int], emission: str = LINE_TABLES, producer: str = "tritium") -> None:
        self._next = next_id
        self.emission = emission
        self.producer = producer
        self._lines: list[str] = []
        self._files: dict[str, str] = {}
        self._scopes: dict[tuple[str, str], str] = {}          # (subprogram, file) -> scope in that file
        self._sp_file: dict[str, str] = {}
        self._locs: dict[tuple, str] = {}
        self._cu: Optional[str] = None
        self._type: Optional[str] = None
        self._types: dict[str, str] = {}
        self._vars: dict[tuple[str, str, str], str] = {}
        self._sp_line: dict[str, int] = {}                      # subprogram -> index of its line
        self._retained: dict[str, list[str]] = {}                # subprogram -> its variables
        #: how many DILocalVariable records were made (a backend that made none is warned about)
        self.variables = 0

    def _node(self, body: str, distinct: bool = False) -> str:
        ref = f"!{self._next()}"
        self._lines.append(f"{ref} = {'distinct ' if distinct else ''}{body}")
        return ref

    def file(self, path: str) -> str:
        ref = self._files.get(path)
        if ref is None:
            directory, name = os.path.split(path)
            ref = self._node(f'!DIFile(filename: "{_quote(name)}", directory: "{_quote(directory)}")')
            self._files[path] = ref
        return ref

    def _unit(self, path: str) -> str:
        if self._cu is None:
            self._cu = self._node(
                f'!DICompileUnit(language: DW_LANG_Python, file: {self.file(path)}, producer: "{self.producer}", '
                f"isOptimized: true, runtimeVersion: 0, emissionKind: {self.emission})", distinct=True)
            self._type = self._node("!DISubroutineType(types: !{})")
        return self._cu

    def subprogram(self, name: str, linkage_name: str, where: tuple[str, int, int]) -> str:
        """A DISubprogram for an LLVM function (put ``!dbg`` of it on the ``define``); ``where`` is the
        (file, line, column) the function's code starts at."""
        path, line, _ = where
        cu = self._unit(path)
        f = self.file(path)
        ref = self._node(f'!DISubprogram(name: "{_quote(name)}", linkageName: "{_quote(linkage_name)}", '
                         f"scope: {f}, file: {f}, line: {line}, type: {self._type}, scopeLine: {line}, "
                         f"spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: {cu})", distinct=True)
        self._sp_file[ref] = path
        self._sp_line[ref] = len(self._lines) - 1
        return ref

    def _scope(self, subprogram: str, path: str) -> str:
        # a location's file is its scope's: code from another file (an inlined helper's module) gets a
        # lexical block of the same subprogram in that file
        if self._sp_file[subprogram] == path:
            return subprogram
        key = (subprogram, path)
        ref = self._scopes.get(key)
        if ref is None:
            ref = self._node(f"!DILexicalBlockFile(scope: {subprogram}, file: {self.file(path)}, discriminator: 0)")
            self._scopes[key] = ref
        return ref

    def at(self, where: Optional[tuple[str, int, int]], subprogram: str, inlined_at: str = "") -> str:
        """``!N`` of a DILocation at ``where`` in ``subprogram`` ("" when ``where`` is None)."""
        if where is None:
            return ""
        path, line, col = where
        key = (path, line, col, subprogram, inlined_at)
        ref = self._locs.get(key)
        if ref is None:
            extra = f", inlinedAt: {inlined_at}" if inlined_at else ""
            ref = self._node(f"!DILocation(line: {line}, column: {col}, scope: {self._scope(subprogram, path)}"
                             f"{extra})")
            self._locs[key] = ref
        return ref

    def _basic_type(self, llty: str) -> Optional[str]:
        ref = self._types.get(llty)
        if ref is None:
            if llty == "ptr" or llty.startswith("ptr "):
                ref = self._node("!DIDerivedType(tag: DW_TAG_pointer_type, baseType: null, size: 64)")
            elif llty in _BASIC:
                name, bits, enc = _BASIC[llty]
                ref = self._node(f'!DIBasicType(name: "{name}", size: {bits}, encoding: {enc})')
            else:
                return None
            self._types[llty] = ref
        return ref

    def variable(self, name: str, loc: Any, subprogram: str, llty: str) -> str:
        """``!N`` of a DILocalVariable ``name`` of LLVM type ``llty`` declared at ``loc`` in ``subprogram`` ("" when
        the location is unknown or the type has no DWARF description: aggregates, vectors)."""
        where = source_position(loc)
        ty = self._basic_type(llty) if where is not None else None
        if ty is None:
            return ""
        # a name assigned again (``acc += ...``) is the same variable, declared where it was first bound, as
        # in C; rebound to a value of another type it is another variable of the same name
        key = (name, subprogram, ty)
        ref = self._vars.get(key)
        if ref is None:
            path, line, _ = where
            self.variables += 1
            ref = self._node(f'!DILocalVariable(name: "{_quote(name)}", scope: {self._scope(subprogram, path)}, '
                             f"file: {self.file(path)}, line: {line}, type: {ty})")
            self._vars[key] = ref
            self._retained.setdefault(subprogram, []).append(ref)
        return ref

    def location(self, loc: Any, subprogram: str) -> str:
        """``!N`` of an MLIR location in ``subprogram`` ("" for an unknown location)."""
        return self.at(source_position(loc), subprogram)

    def metadata(self) -> list[str]:
        """Every metadata line, with ``!llvm.dbg.cu`` and the module flags LLVM requires of debug info."""
        if self._cu is None:
            return []
        # a subprogram lists its variables (retainedNodes), so that one whose values the optimizer dropped is
        # still declared and reads as "optimized out" in a debugger instead of being unknown
        for sp, refs in self._retained.items():
            nodes = self._node("!{" + ", ".join(refs) + "}")
            at = self._sp_line[sp]
            self._lines[at] = self._lines[at].replace(", unit: ", f", retainedNodes: {nodes}, unit: ", 1)
        self._retained = {}
        version = self._node('!{i32 2, !"Debug Info Version", i32 3}')
        dwarf = self._node(f'!{{i32 7, !"Dwarf Version", i32 {DWARF_VERSION}}}')
        # named metadata given twice is merged by LLVM's parser: a backend may add flags of its own
        return [f"!llvm.dbg.cu = !{{{self._cu}}}", f"!llvm.module.flags = !{{{version}, {dwarf}}}"] + self._lines


def function_start(func: Any) -> Optional[tuple[str, int, int]]:
    """Where a kernel's ``func.func`` starts: its own location, else the first located operation in it."""
    got = source_position(func.location)
    if got is not None:
        return got
    stack = [func]
    while stack:
        op = stack.pop()
        for region in reversed(list(op.regions)):
            for block in reversed(list(region.blocks)):
                ops = list(block.operations)
                for inner in reversed(ops):
                    stack.append(inner)
        if op is not func:
            got = source_position(op.location)
            if got is not None:
                return got
    return None
