"""The seed's debugging variables are typed knobs, read under their own names and, where the seed says
TRITON_, under the TRITIUM_ spelling too (which wins)."""
from __future__ import annotations

import pytest

from tritium import knobs

CASES = [
    # (knob, variables, text, parsed value)
    ("reproducer_path", ("TRITON_REPRODUCER_PATH", "TRITIUM_REPRODUCER_PATH"), "/tmp/r.mlir", "/tmp/r.mlir"),
    ("enable_llvm_debug", ("TRITON_ENABLE_LLVM_DEBUG", "TRITIUM_ENABLE_LLVM_DEBUG"), "1", True),
    ("llvm_debug_only", ("TRITON_LLVM_DEBUG_ONLY", "TRITIUM_LLVM_DEBUG_ONLY"),
     "tritongpu-remove-layout-conversions,regalloc", ("tritongpu-remove-layout-conversions", "regalloc")),
    ("use_ir_loc", ("USE_IR_LOC", ), "ttir", "ttir"),
    ("llvm_timing", ("LLVM_ENABLE_TIMING", ), "1", True),
    ("mlir_diagnostics", ("MLIR_ENABLE_DIAGNOSTICS", ), "remarks,operations", ("remarks", "operations")),
    ("mlir_remark", ("MLIR_ENABLE_REMARK", ), "1", True),
    ("dump_ir_extract_di_local_variables", ("LLVM_EXTRACT_DI_LOCAL_VARIABLES", ), "1", True),
    ("disable_llvm_opt", ("DISABLE_LLVM_OPT", ), "disable-lsr", ("disable-lsr", )),
]


@pytest.mark.parametrize("name, variables, text, value", CASES)
def test_debug_knob_reads_each_spelling(monkeypatch, name, variables, text, value):
    knob = type(knobs.compilation).descriptors()[name]
    assert set(knob.env) == set(variables)
    default = getattr(knobs.compilation, name)
    assert default != value
    for var in variables:
        for other in variables:
            monkeypatch.delenv(other, raising=False)
        monkeypatch.setenv(var, text)
        assert getattr(knobs.compilation, name) == value
    if len(variables) == 2:      # both set: the TRITIUM_ one wins
        monkeypatch.setenv(variables[0], "0" if isinstance(value, bool) else "other")
        monkeypatch.setenv(variables[1], text)
        assert getattr(knobs.compilation, name) == value


def test_debug_knobs_are_listed_with_their_types():
    rows = {r[0]: r for r in knobs.describe()}
    assert rows["compilation.disable_llvm_opt"][1] == "bool|list"
    assert rows["compilation.llvm_debug_only"][1] == "list"
    assert rows["compilation.enable_llvm_debug"][1] == "bool"
    with pytest.raises(knobs.KnobError):
        knobs.compilation.enable_llvm_debug = "maybe"
