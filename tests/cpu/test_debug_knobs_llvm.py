"""The seed's LLVM debugging knobs on CPU kernels: DISABLE_LLVM_OPT (all, or named LLVM options; part of the
cache key), TRITON_ENABLE_LLVM_DEBUG, TRITON_LLVM_DEBUG_ONLY, LLVM_ENABLE_TIMING, and
LLVM_EXTRACT_DI_LOCAL_VARIABLES making variables without a warning."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import debug_knobs, knobs


def make_kernel():
    @triton.jit
    def acc(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        s = tl.zeros((BLOCK, ), tl.float32)
        for i in range(0, n, BLOCK):
            offs = i + tl.arange(0, BLOCK)
            s += tl.load(x_ptr + offs, mask=offs < n, other=0.0) * 2
        tl.store(out_ptr + tl.arange(0, BLOCK), s)
    return acc


def run():
    """A fresh JITFunction each time: only the disk cache is shared between calls."""
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(16, np.float32)
    k = make_kernel()[(1, )](x, out, 100, BLOCK=16)
    np.testing.assert_allclose(out, [2 * x[j::16].sum() for j in range(16)])
    return k


def same_code(a, b) -> bool:
    """Artifacts equal up to the kernel's symbol, which carries a digest of the cache key."""
    if isinstance(a, bytes):
        return re.sub(rb"acc_[0-9a-f]{16}", b"acc", a) == re.sub(rb"acc_[0-9a-f]{16}", b"acc", b)
    return re.sub(r"acc_[0-9a-f]{16}", "acc", a) == re.sub(r"acc_[0-9a-f]{16}", "acc", b)


@pytest.fixture
def scoped(fresh_cache):
    debug_knobs._said.clear()
    with knobs.scope():
        yield


def test_disable_llvm_opt_parses_as_bool_or_flag_list(monkeypatch):
    for text, want in (("1", True), ("true", True), ("0", False), ("", False),
                       ("disable-lsr", ("disable-lsr", )), ("disable-lsr, -regalloc-x", ("disable-lsr", "-regalloc-x"))):
        monkeypatch.setenv("DISABLE_LLVM_OPT", text)
        assert knobs.compilation.disable_llvm_opt == want
    with knobs.compilation.scope():
        knobs.compilation.disable_llvm_opt = "disable-lsr"
        assert knobs.compilation.disable_llvm_opt == ("disable-lsr", )
        knobs.compilation.disable_llvm_opt = "on"
        assert knobs.compilation.disable_llvm_opt is True


def test_disable_llvm_opt_turns_optimization_off_and_is_part_of_the_cache_key(scoped):
    optimized = run().asm["llir"]
    knobs.compilation.disable_llvm_opt = True      # always_compile stays off: the cache must not serve it
    plain = run().asm["llir"]
    assert not same_code(plain, optimized)
    # the optimizer vectorizes the element loops; unoptimized code keeps the codegen's scalar loops
    assert "x float>" in optimized and "x float>" not in plain
    knobs.compilation.disable_llvm_opt = False
    assert same_code(run().asm["llir"], optimized)


def test_disable_llvm_opt_flag_list_sets_llvm_options_for_that_kernel_only(scoped):
    base = run().asm["obj"]
    knobs.compilation.disable_llvm_opt = ("disable-lsr", )   # the seed's example: loop strength reduction off
    no_lsr = run().asm["obj"]
    assert not same_code(no_lsr, base)
    knobs.compilation.disable_llvm_opt = ("disable-loop-idiom-all", )
    knobs.compilation.always_compile = True
    # LLVM's options are process-wide: -disable-lsr must have been switched back off after that kernel
    assert same_code(run().asm["obj"], base)


def test_enable_llvm_debug_prints_every_debug_type(scoped, capfd, monkeypatch):
    from tritium import llvm_debug
    if llvm_debug._debug_types:
        pytest.skip("an earlier -debug-only list narrows -debug for the rest of this process")
    knobs.compilation.always_compile = True
    monkeypatch.setenv("TRITIUM_ENABLE_LLVM_DEBUG", "1")          # the TRITIUM_ spelling of TRITON_ENABLE_LLVM_DEBUG
    run()
    err = capfd.readouterr().err
    assert "LLVM debug output of kernel acc" in err
    assert "INSTCOMBINE ITERATION" in err and "LV: " in err and "SLP: " in err
    monkeypatch.delenv("TRITIUM_ENABLE_LLVM_DEBUG")
    run()
    assert "INSTCOMBINE ITERATION" not in capfd.readouterr().err


def test_llvm_debug_only_limits_llvm_debug_output(scoped, capfd):
    knobs.compilation.always_compile = True
    knobs.compilation.llvm_debug_only = ("instcombine", )
    run()
    err = capfd.readouterr().err
    assert "INSTCOMBINE ITERATION" in err and "LV: " not in err      # loop-vectorize's debug type is "loop-vectorize"
    knobs.compilation.llvm_debug_only = ("instcombine", "loop-vectorize")
    run()
    err = capfd.readouterr().err
    assert "INSTCOMBINE ITERATION" in err and "LV: " in err
    knobs.compilation.llvm_debug_only = ()
    run()
    assert "INSTCOMBINE" not in capfd.readouterr().err          # switched off again
    knobs.compilation.llvm_debug_only = ("licm", )
    with pytest.warns(debug_knobs.DebugKnobWarning, match="cannot forget a debug type.*instcombine"):
        run()                                                    # LLVM still prints instcombine's: said once
    knobs.compilation.llvm_debug_only = ()
    knobs.compilation.enable_llvm_debug = True
    with pytest.warns(debug_knobs.DebugKnobWarning, match="-debug shows only those types"):
        run()


def test_llvm_timing_prints_the_pass_timing_report(scoped, capfd):
    knobs.compilation.always_compile = True
    run()
    assert "Pass execution timing report" not in capfd.readouterr().err
    knobs.compilation.llvm_timing = True
    run()
    err = capfd.readouterr().err
    assert "LLVM pass timing of kernel acc" in err and "Pass execution timing report" in err
    assert "LoopVectorizePass" in err


def test_extract_di_local_variables_describes_the_variables_without_warning(scoped):
    # the CPU backend honours it (tests/cpu/test_debug_local_variables.py): no "cannot" warning
    knobs.compilation.always_compile = True
    knobs.compilation.dump_ir_extract_di_local_variables = True
    with warnings.catch_warnings():
        warnings.simplefilter("error", debug_knobs.DebugKnobWarning)
        llir = run().asm["llir"]
    assert re.search(r'DILocalVariable\(name: "offs"', llir) and re.search(r'DILocalVariable\(name: "s"', llir)
