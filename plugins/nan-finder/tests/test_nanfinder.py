"""The NaN/Inf finder on CPU kernels: off by default; on, the first non-finite value written is reported with
its kind, the op and line that produced it, the line that stored it, the program and the element."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import knobs

HERE = Path(__file__).parent
THIS = os.path.basename(__file__)


@tritium.jit
def reciprocal(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)  # masked-off lanes divide by zero: never stored
    y = 1.0 / x
    tl.store(out_ptr + offs, y, mask=mask)


_src, _start = inspect.getsourcelines(reciprocal.fn)
DIV_LINE = _start + next(i for i, line in enumerate(_src) if "1.0 / x" in line)
STORE_LINE = DIV_LINE + 1


def _run(x, block=64):
    out = np.zeros_like(x)
    # one JITFunction throughout: switching the finder on in process must recompile, not reuse
    k = reciprocal[(tritium.cdiv(x.size, block),)](x, out, x.size, BLOCK=block)
    return k, out


def test_ir_file():
    from tritium.tools.irtest import run_ir_file
    run_ir_file(HERE / "nonfinite-check.mlir")


def test_off_by_default():
    x = np.ones(100, np.float32)
    x[7] = 0
    k, out = _run(x)
    assert np.isinf(out[7]) and "tt.assert" not in k.asm["ttir"]


def test_reports_first_inf_with_op_lines_program_and_element():
    knobs.nanfinder.enable = True
    x = np.ones(100, np.float32)
    x[70] = 0  # program 1, element 6
    with pytest.raises(AssertionError) as err:
        _run(x)
    msg = str(err.value)
    assert "+Inf stored to memory" in msg
    assert f"arith.divf at {THIS}:{DIV_LINE}" in msg          # what produced it
    assert f"{THIS}:{STORE_LINE}" in msg                       # where it was written
    assert "program id (1, 0, 0)" in msg and "element 6" in msg


def test_reports_nan_and_negative_inf():
    knobs.nanfinder.enable = True
    x = np.ones(100, np.float32)
    x[3] = np.float32(-0.0)
    with pytest.raises(AssertionError, match=r"-Inf stored to memory"):
        _run(x)


def test_masked_lanes_and_finite_kernels_run_clean():
    knobs.nanfinder.enable = True
    x = np.random.rand(100).astype(np.float32) + 1  # 28 masked lanes of the second program divide 1 by 0
    k, out = _run(x)
    np.testing.assert_allclose(out, 1 / x, rtol=1e-6)
    assert k.metadata.nanfinder_checks == 3
    assert k.asm["ttir"].count('"tt.assert"') == 3


def test_loads_mode_reports_nan_inputs():
    knobs.nanfinder.enable = True
    knobs.nanfinder.mode = "loads"
    x = np.ones(100, np.float32)
    x[5] = np.nan
    with pytest.raises(AssertionError, match=r"NaN loaded from memory \(the value comes from an input"):
        _run(x)


def test_kernel_filter():
    knobs.nanfinder.enable = True
    knobs.nanfinder.kernels = ("some_other_kernel",)
    x = np.zeros(10, np.float32)
    k, out = _run(x)
    assert np.isinf(out).all() and "tt.assert" not in k.asm["ttir"]


def test_enabling_changes_the_cache_key():
    x = np.ones(8, np.float32)
    off, _ = _run(x, block=8)
    knobs.nanfinder.enable = True
    on, _ = _run(x, block=8)
    knobs.nanfinder.mode = "all"
    all_, _ = _run(x, block=8)  # no masked-off lanes: "all" would report the 1/0 they compute
    assert len({off.hash, on.hash, all_.hash}) == 3


def test_environment_switches_it_on(tmp_path):
    """In a fresh process, TRITIUM_NANFINDER_ENABLE=1 is all it takes (the plugin found through a path)."""
    script = tmp_path / "run.py"
    script.write_text(
        "import numpy as np, tritium, tritium.language as tl\n"
        "from tritium import plugins\n"
        "reg = plugins.PluginRegistry.from_objects({'core': 'tritium.builtin_plugin', 'cpu': 'tritium_cpu.plugin',"
        " 'nanfinder': 'tritium_nanfinder.plugin'})\n"
        "@tritium.jit\n"
        "def k(p, n, B: tl.constexpr):\n"
        "    o = tl.arange(0, B)\n"
        "    tl.store(p + o, tl.log(tl.load(p + o)), mask=o < n)\n"
        "with plugins.use(reg):\n"
        "    k[(1,)](np.zeros(4, np.float32), 4, B=4)\n")
    env = dict(os.environ, TRITIUM_NANFINDER_ENABLE="1", TRITIUM_HOME=str(tmp_path))
    res = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert res.returncode != 0 and "-Inf stored to memory" in res.stderr and "math.log" in res.stderr
