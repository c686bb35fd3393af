"""Debugging in the interpreter: ``breakpoint()`` stops in the kernel's own frame with its tensors inspectable
as numpy arrays; ``device_print`` and ``print`` print; ``device_assert`` raises with the failing program id."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.interpreter import DeviceAssertionError

_SCRIPT = textwrap.dedent('''
    import numpy as np
    import tritium as triton
    import tritium.language as tl
    from tritium import plugins
    plugins.use(plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin"})).__enter__()

    @triton.jit
    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        y = x * 2
        breakpoint()
        tl.store(out_ptr + offs, y, mask=offs < n)

    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    scale[(2, )](x, out, 8, BLOCK=4)
    print("RESULT", out.tolist())
''')


def test_breakpoint_stops_in_the_kernel_with_numpy_values(tmp_path):
    script = tmp_path / "kernel_with_breakpoint.py"
    script.write_text(_SCRIPT)
    commands = "\n".join([
        "p pid.handle.value",           # program 0
        "p y.handle.value",
        "p type(y.handle.value).__name__",
        "p offs.handle.value.tolist()",
        "c",
        "p pid.handle.value",           # the same line, program 1
        "p tritium.interpreter.numpy(x) if False else x.handle.value.tolist()",
        "c",
    ]) + "\n"
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONBREAKPOINT="pdb.set_trace")
    proc = subprocess.run([sys.executable, str(script)], input=commands, capture_output=True, text=True, env=env,
                          timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr + out
    stop = f"> {script}(15)scale()"           # the kernel's own file, line and function name
    assert out.count(stop) == 2, out
    assert "-> tl.store(out_ptr + offs, y, mask=offs < n)" in out
    assert "array(0, dtype=int32)" in out and "array(1, dtype=int32)" in out
    assert "array([0., 2., 4., 6.], dtype=float32)" in out
    assert "'ndarray'" in out
    assert "[0, 1, 2, 3]" in out
    assert "[4.0, 5.0, 6.0, 7.0]" in out
    assert "RESULT [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]" in out


_DEVICE_FN_SCRIPT = textwrap.dedent('''
    import numpy as np
    import tritium as triton
    import tritium.language as tl

    @triton.jit
    def helper(y):
        breakpoint()
        return y + 1

    @triton.jit
    def kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, helper(tl.load(x_ptr + offs)))

    kernel.interpret = True
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    kernel[(2, )](x, out, BLOCK=4)
    print("RESULT", out.tolist())
''')


def test_a_breakpoint_in_a_device_function_shows_one_program(tmp_path):
    script = tmp_path / "device_fn_breakpoint.py"
    script.write_text(_DEVICE_FN_SCRIPT)
    env = dict(os.environ, PYTHONBREAKPOINT="pdb.set_trace")
    proc = subprocess.run([sys.executable, str(script)], input="p y.handle.value\nc\np y.handle.value\nc\n",
                          capture_output=True, text=True, env=env, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr + out
    assert out.count(f"> {script}(9)helper()") == 2, out
    assert "array([0., 1., 2., 3.], dtype=float32)" in out and "array([4., 5., 6., 7.], dtype=float32)" in out
    assert "RESULT [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]" in out


@triton.jit
def _prints(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.device_print("x", x)
    print("sum", tl.sum(x, 0))
    tl.device_print("hex", x, hex=True)


def test_device_print_and_print(interpret, capfd):
    x = np.array([5, -3, 12, 7], np.int32)
    _prints[(2, )](x, 4)
    lines = capfd.readouterr().out.strip().splitlines()
    # the compiled CPU backend's format; programs in order, each program's prints in program order
    assert lines[:4] == [f"pid (0, 0, 0) idx ({i}) x: {v}" for i, v in enumerate(x)]
    assert lines[4] == "pid (0, 0, 0) idx () sum: 21"
    assert lines[5:9] == ["pid (0, 0, 0) idx (0) hex: 0x5", "pid (0, 0, 0) idx (1) hex: 0xfffffffffffffffd",
                          "pid (0, 0, 0) idx (2) hex: 0xc", "pid (0, 0, 0) idx (3) hex: 0x7"]
    assert lines[9:] == [ln.replace("pid (0,", "pid (1,") for ln in lines[:9]]


@triton.jit(debug=True)
def _checked(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x >= 0, "negative input")
    assert tl.sum(x, 0) < 1000, "too big"


def test_device_assert_names_the_failing_program_and_element(interpret):
    x = np.arange(32, dtype=np.int32)
    _checked[(4, )](x, BLOCK=8)
    x[21] = -5
    with pytest.raises(DeviceAssertionError, match=r"device_assert failed in kernel `_checked` at .*test_debugging.py:"
                                                   r"\d+: negative input \(program id \(2, 0, 0\), element 5\)"):
        _checked[(4, )](x, BLOCK=8)
    x[21] = 5000
    with pytest.raises(AssertionError, match=r"too big \(program id \(2, 0, 0\)"):
        _checked[(4, )](x, BLOCK=8)


@triton.jit
def _unchecked(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x >= 0, "negative input")


def test_device_assert_is_left_out_without_debug_as_when_compiled(interpret):
    from tritium import knobs
    x = -np.ones(8, np.int32)
    _unchecked[(1, )](x, BLOCK=8)
    with knobs.runtime.scope():
        knobs.runtime.debug = True
        with pytest.raises(DeviceAssertionError, match="negative input"):
            _unchecked[(1, )](x, BLOCK=8)


def test_errors_point_at_the_kernel_line(interpret):
    @triton.jit
    def bad(x_ptr):
        a = tl.arange(0, 16)
        b = tl.arange(0, 32)
        tl.store(x_ptr + a, (a + b).to(tl.float32))

    with pytest.raises(triton.CompilationError) as info:
        bad[(1, )](np.zeros(16, np.float32))
    text = str(info.value)
    assert "in kernel `bad`" in text and "incompatible shapes" in text
    lines = text.splitlines()
    caret = next(i for i, ln in enumerate(lines) if ln.strip() and set(ln.strip()) == {"^"})
    assert "(a + b)" in lines[caret - 1]
