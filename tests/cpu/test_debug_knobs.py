"""Debugging knobs through the public API: MLIR_ENABLE_DUMP, MLIR_DUMP_PATH, LLVM_IR_ENABLE_DUMP,
TRITON_DISABLE_LINE_INFO, TRITON_FRONT_END_DEBUGGING."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.compiler import CompilationError


def make_kernel():
    @triton.jit
    def scale(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3, mask=m)
    return scale


def run(kernel):
    x = np.ones(10, np.float32)
    k = kernel[(1, )](x, 10, BLOCK=16)
    np.testing.assert_array_equal(x, 3 * np.ones(10, np.float32))
    return k


@pytest.fixture
def scoped(fresh_cache):
    with knobs.scope():
        knobs.compilation.always_compile = True
        yield


def test_mlir_dump_to_file_for_one_kernel(scoped, tmp_path):
    path = tmp_path / "mlir.txt"
    knobs.compilation.mlir_dump = "scale"
    knobs.compilation.mlir_dump_path = str(path)
    run(make_kernel())
    text = path.read_text()
    assert "IR Dump Before" in text and '"tt.load"' in text
    path.unlink()
    knobs.compilation.mlir_dump = "another_kernel"
    run(make_kernel())
    assert not path.exists()


def test_llvm_ir_dump(scoped, capfd):
    knobs.compilation.llvm_ir_dump = True
    run(make_kernel())
    err = capfd.readouterr().err
    assert "LLVM IR before optimization" in err and "LLVM IR after optimization" in err and "define" in err


def test_line_info_kept_and_disabled(scoped):
    k = run(make_kernel())
    assert "test_debug_knobs.py" in k.asm["ttir"]
    knobs.compilation.disable_line_info = True
    k2 = run(make_kernel())
    assert "test_debug_knobs.py" not in k2.asm["ttir"]


def bad():
    @triton.jit
    def broken(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
    return broken


def test_front_end_debugging_shows_internal_traceback(scoped):
    x = np.ones(16, np.float32)
    with pytest.raises(CompilationError) as err:
        bad()[(1, )](x, BLOCK=10)
    assert "power of 2" in str(err.value) and "^" in str(err.value)
    knobs.compilation.front_end_debugging = True
    with pytest.raises(Exception) as raw:
        bad()[(1, )](x, BLOCK=10)
    assert not isinstance(raw.value, CompilationError)
