"""Metadata nodes the CPU code generator writes get ids of their own (a collision fails LLVM's parser)."""
from __future__ import annotations

import re

from tritium_cpu.codegen.irtext import Function


def test_loop_and_plain_metadata_ids_are_distinct():
    fn = Function("f", "void", [])
    fn.loop_metadata("llvm.loop.unroll.disable")
    fn.metadata_node("i32 1")
    fn.loop_metadata("llvm.loop.unroll.disable", "llvm.loop.vectorize.enable")
    fn.metadata_node("i32 1")
    ids = [re.match(r"(!\d+) =", line).group(1) for line in fn.metadata]
    assert len(ids) == 7 and len(set(ids)) == 7, fn.metadata
    # a loop node refers to itself first, then to its property nodes, all defined here
    refs = set(re.findall(r"!\d+", fn.metadata[0]))
    assert refs <= set(ids)
