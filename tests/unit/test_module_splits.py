"""The big core modules were split into cohesive ones; every old import path must keep working and the
seams must stay wired (a re-export that is a copy, or a listener never subscribed, breaks silently)."""
from __future__ import annotations

import importlib

import pytest

from tritium import knob_types, knobs


@pytest.mark.parametrize("name", ["BoolKnob", "ClassKnob", "DumpKnob", "FlagsKnob", "IntKnob", "Knob", "KnobError",
                                  "KnobGroup", "ListKnob", "ObjectKnob", "StrKnob", "parse_bool", "unset_check"])
def test_knob_types_keep_their_import_path(name):
    assert getattr(knobs, name) is getattr(knob_types, name)


def test_every_change_from_python_bumps_the_generation(monkeypatch):
    # the runtime's cached launches compare knobs.generation; the knob machinery lives in another module
    # and reaches the counter only through its change listener
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    with knobs.scope():
        seen = [knobs.generation]

        def bumped() -> bool:
            seen.append(knobs.generation)
            return seen[-1] > seen[-2]

        knobs.runtime.debug = True
        assert bumped()
        del knobs.runtime.debug
        assert bumped()
        with knobs.runtime.scope():
            knobs.runtime.debug = True
        assert bumped() and knobs.runtime.debug is False
        knobs.runtime.reset()
        assert bumped()
    assert bumped()


def test_groups_declared_in_knobs_count_as_tritiums():
    # `tritium knobs` tells tritium's own groups from plugins' by the module that declares the group class
    assert type(knobs.compilation).__module__ == knobs.__name__


@pytest.mark.parametrize("module, part, names", [
    ("tritium.language.core", "tritium.language.builtin_protocol",
     ["TRITON_BUILTIN", "CompileTimeError", "_ambient_semantic", "is_builtin", "must_use_result",
      "unused_result_error"]),
    ("tritium.language.dtypes", "tritium.language.scalar_types",
     ["KIND", "SIGNEDNESS", "dtype", "void_type", "void", "int1", "int32", "uint64", "float8e4nv", "bfloat16",
      "float64"]),
    ("tritium.interpreter.memory", "tritium.interpreter.regions", ["SLOT_SHIFT", "Region", "HostMemory"]),
    ("tritium.interpreter.launcher", "tritium.interpreter.programs",
     ["Launch", "kernel_state", "BATCH_ELEMENTS", "FIRST_BATCH"]),
    ("tritium.gpu.emulator", "tritium.gpu.emulator_target",
     ["NAME", "EmulatorTarget", "thread_main", "new_host_machine", "host_machine", "BF16_HELPERS"]),
    ("tritium.gpu.emulator", "tritium.gpu.emulator_driver",
     ["EmulatorDriver", "EmulatorLauncher", "EmulatorUtils", "EmulatedAssertionError", "MAX_NUM_REGS"]),
    ("tritium.runtime.jit", "tritium.runtime.dependencies", ["dependencies_hash", "_same_value", "_MISSING"]),
    ("tritium.gpu.assign", "tritium.gpu.layout_policy",
     ["DotPlan", "LayoutPolicy", "blocked_for", "fma_dot_plan", "fma_operand", "operand_contiguous"]),
    ("tritium.gpu.assign", "tritium.gpu.value_types", ["tensor_shape", "element_type", "element_bytes",
                                                       "pointee_bytes"]),
    ("tritium.gpu.layout", "tritium.gpu.linear_layout",
     ["Layout", "Vec", "as_blocked", "blocked", "default_blocked", "parse"]),
    ("tritium.language.core", "tritium.language.constexpr_and_tuple",
     ["base_value", "const", "constexpr", "CONSTEXPR_0", "tuple", "tuple_value", "is_namedtuple_class",
      "make_namedtuple", "_unwrap", "_unwrap_if_constexpr", "_unwrap_shape", "_constexpr_to_value"]),
    ("tritium.gpu.lower.pipeline", "tritium.gpu.lower.pipeline_planner",
     ["PipelinePlan", "pipeline_plan", "_OTHER_STAGE_BYTES", "_SLICE_OPS", "_dot_operand_uses", "_dot_kind",
      "_stage_layout", "_zero_padded_descriptor", "_is_zero_constant"]),
])
def test_split_out_names_keep_their_import_path(module, part, names):
    old, new = importlib.import_module(module), importlib.import_module(part)
    for name in names:
        assert getattr(old, name) is getattr(new, name), name


def test_language_namespace_keeps_the_builtin_decorator():
    # a submodule named like a tl name would replace it on the package when imported
    import tritium.language as tl
    assert callable(tl.builtin) and tl.builtin is tl.core.builtin
    assert tl.dtype is tl.core.dtype and tl.int32 is tl.core.int32
    assert tl.constexpr is tl.core.constexpr and tl.tuple is tl.core.tuple is tl.tuple_value


@pytest.mark.parametrize("op", ["__add__", "__radd__", "__mul__", "__rsub__", "__lt__", "__eq__", "__and__"])
def test_constexpr_operators_still_give_way_to_tensors(op):
    # constexpr left core.py, which defines tensor: `2 + x` must still reach tensor.__radd__ (code in the
    # kernel) instead of folding the tensor into a Python constant
    import tritium.language as tl
    x = tl.tensor(None, tl.int32)
    assert getattr(tl.constexpr(2), op)(x) is NotImplemented
    assert getattr(tl.constexpr(2), op)(3) is not NotImplemented


def test_constexpr_operators_still_fold_other_values():
    # only tensors give way: another value is compared as a constant
    import tritium.language as tl
    assert tl.constexpr(2).__eq__(tl.core.base_value()).value is False


@pytest.mark.parametrize("module", ["tritium.knobs", "tritium.language.core", "tritium.language.dtypes",
                                    "tritium.interpreter.memory", "tritium.interpreter.launcher",
                                    "tritium.gpu.emulator", "tritium.runtime.jit", "tritium.gpu.assign",
                                    "tritium.gpu.layout", "tritium.gpu.lower.context", "tritium.gpu.lower.pipeline"])
def test_old_modules_import(module):
    importlib.import_module(module)


@pytest.mark.parametrize("method", ["scratch", "scratch_read_done", "enter_loop", "exit_loop", "invariant_loop",
                                    "hoist", "loop_buffer", "shared_buffer"])
def test_the_lowering_context_still_offers_the_shared_buffers(method):
    # the op handlers and the backends call these as ctx.<method>; they moved to Context's base class
    from tritium.gpu.lower.context import Context
    from tritium.gpu.lower.shared_buffers import SharedBuffers
    assert issubclass(Context, SharedBuffers) and getattr(Context, method) is getattr(SharedBuffers, method)


def test_emulator_plugin_module_still_declares_its_backend():
    # tests load tritium.gpu.emulator as a plugin object, and its BackendSpec names classes by that module
    from tritium.gpu import emulator

    def load(path: str):
        module, _, attr = path.partition(":")
        return getattr(importlib.import_module(module), attr)

    spec, = emulator.tritium_backends()
    assert load(spec.compiler) is emulator.EmulatorBackend and load(spec.driver) is emulator.EmulatorDriver


def test_a_kernels_key_still_follows_its_callees_and_watched_globals():
    # the key's hashing left jit.py: it must still recurse into @jit callees (recognized through their base
    # class, since the hashing module cannot import jit.py) and still hand the globals it read to the launch
    import textwrap
    import types

    from tritium.runtime.jit import JITFunction, jit

    def make(callee_body: str, scale: int) -> JITFunction:
        module = types.ModuleType("g5_split_probe")
        src = textwrap.dedent(f"""
            import tritium.language as tl
            SCALE = tl.constexpr({scale})

            def callee(x):
                return {callee_body}

            def kernel(X):
                tl.store(X, callee(tl.load(X)) * SCALE)
        """)
        exec(compile(src, "<g5_split_probe>", "exec"), module.__dict__)
        callee = jit(module.callee)
        module.callee = callee
        kernel = jit(module.kernel)
        # functions made by exec() keep no source for inspect: give it, as a code generator would
        callee._unsafe_update_src(textwrap.dedent(f"""
            def callee(x):
                return {callee_body}
        """))
        kernel._unsafe_update_src("def kernel(X):\n    tl.store(X, callee(tl.load(X)) * SCALE)\n")
        return kernel

    base = make("x + 1", 2)
    assert make("x + 1", 2).cache_key == base.cache_key
    assert make("x + 2", 2).cache_key != base.cache_key      # only the callee changed
    assert make("x + 1", 3).cache_key != base.cache_key      # only a constexpr global changed
    watched = {name for _, name, _ in base.used_globals}
    assert {"callee", "SCALE"} <= watched
    base.fn.__globals__["SCALE"] = type(base.fn.__globals__["SCALE"])(5)
    base.check_globals()
    assert base.hash is None                                   # a rebound global forgot the key


@pytest.mark.parametrize("name", ["base_value", "const", "constexpr", "tuple_value"])
def test_moved_language_classes_keep_their_public_module(name):
    # reprs, pickles, keys that name an annotation's class, and the triton package's renaming of constexpr to
    # triton.language.core (inductor writes that name into generated code) all read __module__
    import tritium.language.core as core
    assert getattr(core, name).__module__ in ("tritium.language.core", "triton.language.core")


def test_triton_names_constexpr_in_triton_language_core():
    # in a fresh interpreter with the compat package's source on the path (it renames classes process-wide)
    import os
    import pathlib
    import subprocess
    import sys
    src = pathlib.Path(__file__).resolve().parents[2] / "compat" / "triton" / "src"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]))
    code = ("import pickle, triton, triton.language as tl\n"
            "assert tl.constexpr.__module__ == 'triton.language.core', tl.constexpr.__module__\n"
            "assert pickle.loads(pickle.dumps(tl.constexpr)) is tl.constexpr\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
