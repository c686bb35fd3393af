"""Keeping LLVM's optimization time linear in the size of a kernel.

A tile op becomes a loop, so a long straight-line kernel is one function holding thousands of loops. Several
LLVM passes redo work over the whole function for each loop they transform (the loop vectorizer's
function-wide analyses, full unrolling, SLP on the giant block that unrolling leaves, the schedulers'
dependence graphs over it), which made such kernels compile in quadratic time: 3000 statements took
minutes. Above a size, each top-level loop of a function is moved into a function of its own (LLVM's loop
extractor) and kept out of line, so that every pass sees bounded functions and the optimization of each
loop is unchanged. Small kernels, all of the examples among them, are left as they are.
"""
from __future__ import annotations

import re
from typing import Any

from .outline_chunks import LATCH, wrap_module

#: ``define ... @name(...) #N !dbg !M {`` of a function made by the loop extractor (``!dbg``: its
#: DISubprogram when the kernel has line info, tritium.line_info)
_DEFINE = re.compile(r'^(define [^@]*@("[^"]+"|[\w.$-]+)\(.*\))( #\d+)?( !dbg !\d+)? \{$')
_ATTR_GROUP = "#424242"
_PROTECT = "#424243"
_RESTORED = 424300
_GROUP = re.compile(r"^attributes (#\d+) = \{ (.*) \}$")


def instruction_count(text: str) -> int:
    """The instructions (indented lines) of an LLVM IR module written by the code generator."""
    return text.count("\n  ")


def outline_loops(mod: Any, tm: Any) -> Any:
    """A module in which every top-level loop of every function is a ``noinline`` function of its own."""
    import llvmlite.binding as llvm
    before = {f.name for f in mod.functions}
    text, chunks = wrap_module(str(mod))
    if chunks:      # many loops in one function: extract its chunks, then each chunk's loops (outline_chunks.py)
        mod = llvm.parse_assembly(text)
        mod.verify()
    _extract(mod, tm)
    if chunks:
        wrappers = {f.name for f in mod.functions if f.name not in before
                    and any(b.name.startswith(LATCH) for b in f.blocks)}
        mod = _extract_in(mod, tm, wrappers)
    made = {f.name for f in mod.functions} - before
    if not made:
        return mod
    # an extracted function inherits its parent's attributes, ``alwaysinline`` included: the inliner would
    # put every loop back. llvmlite cannot remove an attribute, so rewrite the definitions' attribute groups
    lines = str(mod).split("\n")
    for i, line in enumerate(lines):
        if line.startswith("define "):
            m = _DEFINE.match(line)
            if m and m.group(2).strip('"') in made:
                lines[i] = f"{m.group(1)} {_ATTR_GROUP}{m.group(4) or ''} {{"
    attrs = 'noinline nounwind "no-builtin-memcpy" "no-builtin-memset"'
    lines.append(f"attributes {_ATTR_GROUP} = {{ {attrs} }}")
    out = llvm.parse_assembly("\n".join(lines))
    out.verify()
    return out


def _extract(mod: Any, tm: Any) -> None:
    import llvmlite.binding as llvm
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=0))
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_loop_simplify_pass()
    mpm.add_loop_extract_pass()
    mpm.run(mod, pb)


def _extract_in(mod: Any, tm: Any, wrappers: set) -> Any:
    """``mod`` with the loops of the functions ``wrappers`` extracted, and no other function changed: the
    others are ``optnone`` meanwhile (which the loop extractor and loop-simplify leave alone)."""
    import llvmlite.binding as llvm
    lines = str(mod).split("\n")
    groups = {m.group(1): m.group(2) for m in map(_GROUP.match, lines) if m}
    kept: dict[str, str] = {}        # function -> its attribute group's text
    for i, line in enumerate(lines):
        if line.startswith("define "):
            m = _DEFINE.match(line)
            if m is None:
                return mod           # a definition this does not parse: leave the chunks' loops in them
            name = m.group(2).strip('"')
            if name not in wrappers:
                kept[name] = groups.get((m.group(3) or "").strip(), "")
                lines[i] = f"{m.group(1)} {_PROTECT}{m.group(4) or ''} {{"
    lines.append(f"attributes {_PROTECT} = {{ noinline nounwind optnone }}")
    work = llvm.parse_assembly("\n".join(lines))
    _extract(work, tm)
    lines = str(work).split("\n")
    ids: dict[str, str] = {}
    for i, line in enumerate(lines):
        if line.startswith("define "):
            m = _DEFINE.match(line)
            name = m.group(2).strip('"') if m else None
            if name in kept:
                gid = ids.setdefault(kept[name], f"#{_RESTORED + len(ids)}") if kept[name] else ""
                lines[i] = f"{m.group(1)}{' ' + gid if gid else ''}{m.group(4) or ''} {{"
    lines += [f"attributes {gid} = {{ {text} }}" for text, gid in ids.items() if gid]
    out = llvm.parse_assembly("\n".join(lines))
    out.verify()
    return out
