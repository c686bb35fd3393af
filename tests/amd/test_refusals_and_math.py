"""What tritium-amd cannot do without ROCm's device libraries is refused at compile time, naming the kernel and
what to do (never an unresolved symbol in the code object, never LLVM's "no libcall available" printed and
ignored); the float32 functions it builds from native ones are checked numerically by running the very IR it
emits on the host."""
from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource
from tritium.language.extra import libdevice

tritium_amd = pytest.importorskip("tritium_amd", reason="tritium-amd is not installed")
from tritium_amd.knobs import amd as amd_knobs  # noqa: E402


@tritium.jit
def unary(x_ptr, y_ptr, N: tl.constexpr, FN: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if FN == "erf":
        y = libdevice.erf(x)
    elif FN == "atan":
        y = libdevice.atan(x)
    elif FN == "exp":
        y = tl.exp(x)
    elif FN == "tanh":
        y = libdevice.tanh(x)
    else:
        y = libdevice.tan(x)
    tl.store(y_ptr + offs, y)


@tritium.jit
def printing(x_ptr, N: tl.constexpr):
    tl.device_print("x", tl.load(x_ptr + tl.arange(0, N)))


def compile_amd(registry, fn, sig, consts, chip="gfx942"):
    from tritium import plugins
    with plugins.use(registry):
        return tritium.compile(ASTSource(fn, sig, consts), target=GPUTarget("hip", chip, 64))


@pytest.mark.parametrize("fn,ty", [("atan", "fp32"), ("exp", "fp64"), ("tan", "fp64")])
def test_math_without_device_code_is_refused(amd_registry, fn, ty):
    want = "double" if ty == "fp64" else "float"
    with pytest.raises(Exception, match=rf"kernel `unary`: tritium-amd has no device code for {fn} on {want}"):
        compile_amd(amd_registry, unary, {"x_ptr": f"*{ty}", "y_ptr": f"*{ty}", "N": "constexpr", "FN": "constexpr"},
                    {"N": 64, "FN": fn})


@pytest.mark.parametrize("fn", ["exp", "tanh", "tan", "erf"])
def test_supported_math_leaves_no_call(amd_registry, fn):
    k = compile_amd(amd_registry, unary, {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "constexpr", "FN": "constexpr"},
                    {"N": 64, "FN": fn})
    assert "s_swappc" not in k.asm["amdgcn"] and "__ocml" not in k.asm["amdgcn"]


def test_device_print_is_refused_with_the_reason(amd_registry):
    with pytest.raises(Exception, match=r"kernel `printing` uses device_print: AMD device printf"):
        compile_amd(amd_registry, printing, {"x_ptr": "*fp32", "N": "constexpr"}, {"N": 64})


def test_asan_is_refused_with_the_reason(amd_registry):
    with amd_knobs.scope():
        amd_knobs.enable_asan = True
        with pytest.raises(Exception, match=r"TRITON_ENABLE_ASAN=1: tritium-amd cannot build .*asanrtl"):
            compile_amd(amd_registry, unary, {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "constexpr",
                                              "FN": "constexpr"}, {"N": 64, "FN": "exp"})


# -- the float32 functions tritium-amd writes itself, run on the host ------------------------------------------
def _host_function(builder):
    import llvmlite.binding as llvm
    from tritium.gpu.target import Function, Module
    module = Module()
    fn = Function("f", "float", [("float", "%x")])
    fn.emit(f"ret float {builder(fn, module, ['%x'])}")
    module.functions.append(fn)
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine()
    mod = llvm.parse_assembly(module.text())
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    f = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)(engine.get_function_address("f"))
    f.engine = engine      # the function lives as long as its engine
    return f


@pytest.mark.parametrize("name,ref,rtol", [("libm.tanh", np.tanh, 4e-7), ("libm.sinh", np.sinh, 4e-7),
                                           ("libm.cosh", np.cosh, 4e-7), ("math.tan", np.tan, 1e-6),
                                           ("libm.erf", np.vectorize(math.erf), 3e-7)])
def test_own_float32_functions_are_accurate(name, ref, rtol):
    from tritium_amd import target as T
    f = _host_function(T._F32[name])
    xs = np.concatenate([np.linspace(-10, 10, 4001), np.geomspace(1e-8, 0.3, 200), -np.geomspace(1e-8, 0.3, 200),
                         [0.0, 0.2499, 0.25, 0.2501]]).astype(np.float32)
    if name == "math.tan":
        xs = xs[np.abs(np.cos(xs.astype(np.float64))) > 1e-2]
    got = np.array([f(float(x)) for x in xs], np.float32)
    want = ref(xs.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-30)
