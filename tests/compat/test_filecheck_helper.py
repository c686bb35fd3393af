"""``triton._filecheck`` (Triton's test_frontend.py imports it): ``run_parser`` builds a kernel's tile IR for
given arguments (frontend errors raise as at launch), ``run_filecheck`` matches text against CHECK lines with the
``filecheck`` package, ``filecheck_test`` checks a kernel's IR against the CHECK comments in its own source."""
import pytest

pytest.importorskip("triton", reason="the triton compat package is not installed")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton._filecheck import filecheck_test, run_filecheck, run_parser  # noqa: E402


@triton.jit
def _sink(v):
    pass


@triton.jit
def _calls_sink():
    # CHECK-LABEL: @_calls_sink
    # CHECK: [[R:%.*]] = "tt.make_range"
    # CHECK-NEXT: call @{{.*}}_sink{{.*}}([[R]])
    _sink(tl.arange(0, 4))


@triton.jit
def _wrong_check():
    # CHECK: "tt.make_range"() {end = 8 : i32
    _sink(tl.arange(0, 4))


@triton.jit
def _refused():
    x = tl.arange(0, 3)   # not a power of 2
    _sink(x)


@triton.jit
def _with_args(X, n, BLOCK: tl.constexpr):
    tl.store(X + tl.arange(0, BLOCK), n)


def test_run_filecheck_matches_and_reports():
    run_filecheck("ok", "a = 1\nb = 2\n", "# CHECK: a = 1\n# CHECK-NEXT: b = 2\n")
    with pytest.raises(ValueError, match="FileCheck failed"):
        run_filecheck("bad", "a = 1\n", "# CHECK: b = 2\n")


def test_filecheck_test_checks_the_kernels_own_ir():
    filecheck_test(_calls_sink)()
    with pytest.raises(ValueError, match="end = 8"):
        filecheck_test(_wrong_check)()


def test_run_parser_raises_frontend_errors():
    with pytest.raises(triton.CompilationError):
        run_parser(_refused)


def test_run_parser_specializes_like_a_launch():
    import numpy as np
    from triton._filecheck import module_text
    text = module_text(run_parser(_with_args, (np.zeros(8, np.float32), 5), {"BLOCK": 8}))
    assert "loc(" not in text                     # printed without debug information, as Triton's str_nodebug
    assert "%X: !tt.ptr<f32>" in text and "%n: i32" in text and "tt.divisibility" in text and "tt.store" in text
