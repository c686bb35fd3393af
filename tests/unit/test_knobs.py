"""Knobs: typed, read from the environment under Triton's and tritium's names, settable and scoped."""
from __future__ import annotations

import pytest

from tritium import knobs


def test_bool_knob_reads_both_spellings(monkeypatch):
    monkeypatch.delenv("TRITIUM_ALWAYS_COMPILE", raising=False)
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    assert knobs.compilation.always_compile is True
    monkeypatch.setenv("TRITIUM_ALWAYS_COMPILE", "0")  # tritium's spelling wins
    assert knobs.compilation.always_compile is False


def test_python_value_beats_environment_and_scope_restores(monkeypatch):
    monkeypatch.setenv("TRITON_DEFAULT_BACKEND", "from-env")
    assert knobs.runtime.default_backend == "from-env"
    with knobs.runtime.scope():
        knobs.runtime.default_backend = "from-python"
        assert knobs.runtime.default_backend == "from-python"
    assert knobs.runtime.default_backend == "from-env"


def test_global_scope_restores_every_group():
    with knobs.scope():
        knobs.compilation.dump_ir = True
        knobs.language.fp32_default = "ieee"
    assert "dump_ir" not in knobs.compilation.__dict__
    assert "fp32_default" not in knobs.language.__dict__


def test_bad_values_are_clear_errors(monkeypatch):
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "perhaps")
    with pytest.raises(knobs.KnobError, match="TRITON_ALWAYS_COMPILE='perhaps': expected a boolean"):
        _ = knobs.compilation.always_compile
    monkeypatch.setenv("TRITON_F32_DEFAULT", "fp16")
    with pytest.raises(knobs.KnobError, match="expected one of ieee, tf32, tf32x3"):
        _ = knobs.language.fp32_default
    with pytest.raises(knobs.KnobError):
        knobs.runtime.num_threads = "many"


def test_mlir_dump_accepts_a_kernel_name(monkeypatch):
    monkeypatch.setenv("MLIR_ENABLE_DUMP", "my_kernel")
    v = knobs.compilation.mlir_dump
    assert knobs.DumpKnob.wants(v, "my_kernel") and not knobs.DumpKnob.wants(v, "other")
    monkeypatch.setenv("MLIR_ENABLE_DUMP", "1")
    assert knobs.DumpKnob.wants(knobs.compilation.mlir_dump, "anything")


def test_home_moves_cache_dump_and_override(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_HOME", str(tmp_path / "t"))
    monkeypatch.delenv("TRITIUM_HOME", raising=False)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    monkeypatch.delenv("TRITIUM_CACHE_DIR", raising=False)
    assert knobs.cache.cache_dir() == str(tmp_path / "t" / ".tritium" / "cache")
    monkeypatch.setenv("TRITIUM_HOME", str(tmp_path / "u"))
    assert knobs.cache.dump_path() == str(tmp_path / "u" / ".tritium" / "dump")


def test_foundation_knobs_exist():
    names = {row[0] for row in knobs.describe()}
    for n in ["cache.home_dir", "compilation.always_compile", "runtime.default_backend",
              "compilation.front_end_debugging", "compilation.disable_line_info", "compilation.mlir_dump",
              "compilation.mlir_dump_path", "compilation.llvm_ir_dump", "compilation.dump_ir", "cache.dump_dir",
              "compilation.override", "cache.override_dir", "runtime.interpret",
              "runtime.add_stages_inspection_hook"]:
        assert n in names, n
    env = {v for row in knobs.describe() for v in row[2].split()}
    for v in ["TRITON_HOME", "TRITIUM_HOME", "TRITON_ALWAYS_COMPILE", "TRITON_DEFAULT_BACKEND",
              "TRITON_FRONT_END_DEBUGGING", "TRITON_DISABLE_LINE_INFO", "MLIR_ENABLE_DUMP", "MLIR_DUMP_PATH",
              "LLVM_IR_ENABLE_DUMP", "TRITON_KERNEL_DUMP", "TRITON_DUMP_DIR", "TRITON_KERNEL_OVERRIDE",
              "TRITON_OVERRIDE_DIR", "TRITON_INTERPRET", "TRITIUM_INTERPRET"]:
        assert v in env, v


def test_plugin_group_collision_is_an_error():
    class g1(knobs.KnobGroup):
        group_name = "zz_test_group"
        x = knobs.IntKnob("ZZ_TEST_X", 1)

    class g2(knobs.KnobGroup):
        group_name = "zz_test_group"

    knobs.register_group(g1(), "dist-a")
    assert knobs.zz_test_group.x == 1  # type: ignore[attr-defined]
    with pytest.raises(knobs.KnobError, match="declared by both dist-a and dist-b"):
        knobs.register_group(g2(), "dist-b")
