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

#: ``define ... @name(...) #N !dbg !M {`` of a function made by the loop extractor (``!dbg``: its
#: DISubprogram when the kernel has line info, tritium.line_info)
_DEFINE = re.compile(r'^(define [^@]*@("[^"]+"|[\w.$-]+)\(.*\))( #\d+)?( !dbg !\d+)? \{$')
_ATTR_GROUP = "#424242"


def instruction_count(text: str) -> int:
    """The instructions (indented lines) of an LLVM IR module written by the code generator."""
    return text.count("\n  ")


def outline_loops(mod: Any, tm: Any) -> Any:
    """A module in which every top-level loop of every function is a ``noinline`` function of its own."""
    import llvmlite.binding as llvm
    before = {f.name for f in mod.functions}
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=0))
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_loop_simplify_pass()
    mpm.add_loop_extract_pass()
    mpm.run(mod, pb)
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
