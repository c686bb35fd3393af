"""The opt-in ``triton`` package (compat/triton, distribution ``tritium-triton-compat``): Triton's module names
are tritium's modules themselves, it reads as Triton 3.6, and it refuses to load beside a real Triton.

Each check runs in a fresh interpreter with the package's source on the path, so it neither depends on the
distribution being installed nor leaves ``triton`` modules behind in this process."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "compat" / "triton" / "src"


def _python(code: str, extra_path: tuple[str, ...] = (), timeout: int = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TRITIUM_INTERPRET")}
    env["PYTHONPATH"] = os.pathsep.join([*extra_path, str(SRC), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "script.py"  # a file, not -c: @jit reads kernels' source from it
        script.write_text(textwrap.dedent(code))
        return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                              timeout=timeout, cwd=d)


def _ok(code: str, **kw) -> str:
    r = _python(code, **kw)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_triton_modules_are_tritium_modules():
    out = _ok('''
        import importlib, sys
        import triton, tritium
        pairs = {
            "triton.language": "tritium.language", "triton.language.core": "tritium.language.core",
            "triton.language.math": "tritium.language.math", "triton.language.standard": "tritium.language.standard",
            "triton.language.semantic": "tritium.language.semantic",
            "triton.language.extra.libdevice": "tritium.language.extra.libdevice",
            "triton.runtime": "tritium.runtime", "triton.runtime.jit": "tritium.runtime.jit",
            "triton.runtime.autotuner": "tritium.runtime.autotuner", "triton.runtime.driver": "tritium.runtime.driver",
            "triton.runtime._allocation": "tritium.runtime._allocation", "triton.runtime.cache": "tritium.cache",
            "triton.compiler": "tritium.compiler", "triton.compiler.compiler": "tritium.compiler.compiler",
            "triton.backends": "tritium.backends", "triton.backends.compiler": "tritium.backends.compiler",
            "triton.testing": "tritium.testing", "triton.knobs": "tritium.knobs", "triton.errors": "tritium.errors",
            "triton.tools.tensor_descriptor": "tritium.tools.tensor_descriptor",
        }
        for alias, real in pairs.items():
            assert importlib.import_module(alias) is importlib.import_module(real), alias
            assert sys.modules[real].__spec__.name == real, real  # the alias did not rename the module
        import triton.language as tl
        assert tl.core.tensor is tritium.language.core.tensor
        assert triton.jit is tritium.jit and triton.JITFunction is tritium.JITFunction
        assert triton.TritonError is tritium.TritonError and issubclass(triton.CompilationError, triton.TritonError)
        from triton.runtime.autotuner import OutOfResources
        assert OutOfResources is tritium.OutOfResources
        from triton.runtime import driver          # the driver object, as in Triton, not the module
        assert driver is tritium.runtime.driver and hasattr(driver, "active")
        assert triton.runtime.jit.JITFunction is tritium.JITFunction  # triton.runtime.jit is the module
        from triton.runtime.errors import InterpreterError
        assert issubclass(InterpreterError, triton.TritonError)
        assert "cpu" in triton.backends.backends
        print(triton.__version__, triton.__tritium_version__ == tritium.__version__)
    ''')
    assert out.split() == ["3.6.0", "True"]


def test_every_table_entry_resolves_to_its_module():
    _ok('''
        import importlib
        import triton
        from triton._alias import TABLE, extra_target
        for alias, real in TABLE.items():
            real = extra_target(alias) or real      # a backend's own tl.extra.<name> comes first
            assert importlib.import_module(alias) is importlib.import_module(real), alias
    ''')


def test_backend_extra_is_triton_language_extra_name():
    # tritium-nvidia provides tl.extra.cuda (hookspecs' tritium_language_extras): Triton's module path is it, and
    # its libdevice is the portable one; hip has no provider here and stays the portable libdevice's package
    pytest.importorskip("tritium_nvidia")
    _ok('''
        import triton
        import triton.language as tl
        import triton.language.extra.cuda as cuda
        from triton.language.extra.cuda import libdevice
        import triton.language.extra.hip as hip
        assert cuda.__name__ == "tritium_nvidia.language_extra" and tl.extra.cuda is cuda, cuda
        assert callable(cuda.globaltimer) and callable(cuda.smid) and callable(cuda.num_threads)
        assert libdevice is tl.extra.libdevice and hip is tl.extra
    ''')


def test_unknown_names_fail_like_missing_modules():
    _ok('''
        import triton
        try:
            import triton.no_such_module
        except ModuleNotFoundError:
            pass
        else:
            raise SystemExit("imported a module that does not exist")
        try:
            triton.no_such_name
        except AttributeError as e:
            assert "no_such_name" in str(e)
    ''')


def test_a_triton_kernel_runs_unchanged():
    out = _ok('''
        import numpy as np
        import triton
        import triton.language as tl

        @triton.jit
        def add(X, Y, Z, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(Z + offs, tl.load(X + offs, mask=m) + tl.load(Y + offs, mask=m), mask=m)

        x = np.arange(100, dtype=np.float32); y = np.ones(100, np.float32); z = np.zeros_like(x)
        add[(triton.cdiv(100, 32), )](x, y, z, 100, BLOCK=32)
        np.testing.assert_array_equal(z, x + 1)
        print("ok")
    ''')
    assert out.strip() == "ok"


def test_refuses_to_load_beside_a_real_triton(tmp_path):
    dist = tmp_path / "triton-3.6.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: triton\nVersion: 3.6.0\n")
    r = _python("import triton", extra_path=(str(tmp_path), ))
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "triton 3.6.0 (the real Triton)" in r.stderr
    assert "pip uninstall tritium-triton-compat" in r.stderr


def test_torch_still_imports_and_finds_a_usable_triton():
    pytest.importorskip("torch")
    out = _ok('''
        import torch
        from torch.utils._triton import has_triton_package
        from torch._inductor.runtime import triton_compat
        print(has_triton_package(), triton_compat.HAS_TRITON, len(triton_compat.triton_key()) > 0)
    ''')
    assert out.split() == ["True", "True", "True"]


def test_internal_testing_helpers_for_triton_suite():
    pytest.importorskip("torch")
    out = _ok('''
        import numpy as np
        import tritium
        import triton.language as tl
        from triton._internal_testing import (is_interpreter, is_cuda, numpy_random, str_to_triton_dtype, to_numpy,
                                              to_triton)
        x = numpy_random((64, ), "uint16")
        assert x.dtype == np.uint16 and (x != 0).all()
        t = to_triton(x, "cpu")            # torch has no uint16 kernels: a reinterpreted int16 tensor
        assert t.dtype is tl.uint16
        np.testing.assert_array_equal(to_numpy(t), x)
        b = numpy_random(8, "bfloat16")
        assert (b.view(np.uint32) & 0xFFFF == 0).all()
        assert str_to_triton_dtype("bfloat16") is tl.bfloat16 and str_to_triton_dtype("bool") is tl.int1
        before = is_interpreter()
        tritium.knobs.runtime.interpret = True
        print(before, is_interpreter(), is_cuda())
    ''')
    assert out.split() == ["False", "True", "False"]


def test_interpreted_function():
    """``triton.runtime.interpreter.InterpretedFunction``: a @jit function the interpreter runs (inductor asks
    in TRITON_INTERPRET=1 mode how to call its kernels); constructing one makes a kernel that always runs
    interpreted."""
    _ok('''
        import os
        import triton, triton.language as tl
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction

        def scale(X, N: tl.constexpr):
            o = tl.arange(0, N)
            tl.store(X + o, tl.load(X + o) * 3)

        k = triton.jit(scale)
        assert not isinstance(k, InterpretedFunction) and not isinstance(scale, InterpretedFunction)
        os.environ["TRITON_INTERPRET"] = "1"
        assert isinstance(k, InterpretedFunction)
        del os.environ["TRITON_INTERPRET"]
        i = InterpretedFunction(scale)
        assert isinstance(i, JITFunction) and isinstance(i, InterpretedFunction) and i.interpret
        import torch
        x = torch.arange(8, dtype=torch.float32)
        i[(1, )](x, N=8)
        assert x.tolist() == [3.0 * v for v in range(8)]
    ''')


def test_triton_c_ir_api():
    """``triton._C.libtriton.ir``: a context that tritium's frontend builds in, and Triton's walk API over the
    module ``ASTSource.make_ir`` returns (names as in Triton's TTIR)."""
    _ok('''
        import triton, triton.language as tl
        from triton._C.libtriton import ir
        from triton.compiler.compiler import ASTSource, make_backend

        @triton.jit
        def k(X, Y, N: tl.constexpr):
            o = tl.arange(0, N)
            tl.store(Y + o, tl.sum(tl.load(X + o), 0))

        ctx = ir.context()
        ir.load_dialects(ctx)
        target = triton.runtime.driver.active.get_current_target()
        backend = make_backend(target)
        backend.load_dialects(ctx)
        src = ASTSource(k, {"X": "*fp32", "Y": "*fp32", "N": "constexpr"}, {"N": 8}, {})
        mod = src.make_ir(target, backend.parse_options({}), backend.get_codegen_implementation(None),
                          backend.get_module_map(), ctx)
        assert isinstance(mod, ir.module) and mod.verify() and mod.get_entry_func_name() == "k"
        names = []
        mod.walk(lambda op: names.append(op.get_name()))
        assert names[-2:] == ["tt.func", "builtin.module"]
        assert names.index("tt.reduce.return") < names.index("tt.reduce") < names.index("tt.store")
        assert "tt.return" in names and "func.func" not in names
        assert triton._C.libtriton.ir is ir  # reached as attributes too, as torch does
    ''')
