"""Ahead-of-time compilation on the CPU: ``tritium compile`` writes an artifact, ``tritium.load_compiled`` runs it
in a fresh process that imports no MLIR and no frontend; damaged, foreign or mismatched artifacts and wrong
arguments are refused with messages that say what to do."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tritium
from tritium.runtime import aot_format
from tritium.runtime.aot_format import ArtifactError
from tritium.runtime.safety import UnsafeArgumentError
from tritium.tools import compile_cmd

KERNELS = textwrap.dedent('''
    import tritium
    import tritium.language as tl

    @tritium.jit
    def axpy(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, alpha * x + y, mask=mask)
''')
SIGNATURE = "*fp32:16, *fp32:16, *fp32:16, fp32, i32, 256"
# modules that compile: none may be imported by a process that only loads and launches artifacts
FORBIDDEN = ("mlir", "tritium._mlir", "tritium.dialect", "tritium.passes.pipeline",
             "tritium.compiler.code_generator", "tritium.compiler.ast_to_ir", "tritium.compiler.builder",
             "tritium.compiler.compiler", "tritium.language.semantic", "tritium_cpu.codegen.lower",
             "tritium_cpu.codegen.module")

LOADER = textwrap.dedent('''
    import sys, time
    t0 = time.perf_counter()
    import numpy as np
    import tritium
    k = tritium.load_compiled(sys.argv[1])
    n = 1000
    x = np.arange(n, dtype=np.float32); y = np.ones(n, dtype=np.float32); out = np.zeros(n, dtype=np.float32)
    k(x, y, out, 2.0, n)                         # on the grid given at compile time
    cold = time.perf_counter() - t0
    assert np.array_equal(out, 2 * x + y), out[:8]
    out[:] = 0
    k[(tritium.cdiv(n, 256),)](x, y, out, 2.0, n, 256)   # every argument, the constexpr too
    assert np.array_equal(out, 2 * x + y)
    bad = [m for m in %r if m in sys.modules]
    assert not bad, f"loading imported {bad}"
    print(f"cold start (import, load, first launch): {cold * 1e3:.1f} ms")
''' % (FORBIDDEN, ))


def _env(tmp: str) -> dict:
    env = dict(os.environ)
    env["TRITIUM_HOME"] = tmp   # a private cache: the CLI really compiles
    env.pop("TRITON_CACHE_DIR", None)
    env.pop("TRITIUM_CACHE_DIR", None)
    return env


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("aot")
    (tmp / "kernels.py").write_text(KERNELS)
    out = tmp / "axpy.tritium"
    cmd = [sys.executable, "-m", "tritium.tools.cli", "compile", f"{tmp / 'kernels.py'}:axpy", "--signature",
           SIGNATURE, "--grid", "cdiv(n, BLOCK)", "--target", "cpu", "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=_env(str(tmp)), timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"wrote {out}" in r.stdout
    return tmp, out


def test_round_trip_in_a_fresh_process(built):
    tmp, out = built
    (tmp / "loader.py").write_text(LOADER)
    r = subprocess.run([sys.executable, str(tmp / "loader.py"), str(out)], capture_output=True, text=True,
                       env=_env(str(tmp / "empty-home")), timeout=300)
    assert r.returncode == 0, r.stderr
    print(r.stdout.strip())
    assert "cold start" in r.stdout
    assert not (tmp / "empty-home" / "cache").exists() or not any((tmp / "empty-home" / "cache").iterdir())


def test_header_describes_the_kernel(built):
    _, out = built
    header, binary = aot_format.read(str(out))
    assert header["kernel"] == "axpy" and header["target"][0] == "cpu" and header["binary_stage"] == "obj"
    assert header["backend"]["name"] == "cpu" and header["backend"]["abi"] == 1
    assert header["tritium_version"] == tritium.__version__
    assert [p["type"] for p in header["params"]] == ["*fp32", "*fp32", "*fp32", "fp32", "i32", "constexpr"]
    assert header["params"][0]["hint"] == 16 and header["params"][5]["value"] == 256
    assert header["grid"] == ["cdiv(n, BLOCK)"]
    assert binary[:4] == b"\x7fELF"      # the host object the CPU backend's obj stage made


def test_built_for_a_lower_isa_level_records_and_runs_it(tmp_path):
    from tritium_cpu.isa import level_settings, runnable_levels
    if "avx2" not in runnable_levels():
        pytest.skip("this host cannot run AVX2 code")
    (tmp_path / "kernels.py").write_text(KERNELS)
    out = tmp_path / "avx2.tritium"
    env = dict(_env(str(tmp_path)), **level_settings("avx2"))
    r = subprocess.run([sys.executable, "-m", "tritium.tools.cli", "compile", f"{tmp_path / 'kernels.py'}:axpy",
                        "--signature", SIGNATURE, "--target", "cpu", "-o", str(out)], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    md = aot_format.read(str(out))[0]["metadata"]
    enabled = [f for f in md["cpu_features"].split(",") if f.startswith("+")]
    assert md["cpu_name"] == "x86-64-v3" and "+avx2" in enabled and not [f for f in enabled if "avx512" in f]
    k = tritium.load_compiled(str(out))
    x = np.arange(512, dtype=np.float32)
    out_arr = np.zeros_like(x)
    k[(2, )](x, x, out_arr, 1.5, 512)
    np.testing.assert_array_equal(out_arr, 2.5 * x)


def _k(built):
    return tritium.load_compiled(str(built[1]))


def test_in_process_launch_and_argument_checks(built):
    k = _k(built)
    n = 300
    x = np.random.rand(n).astype(np.float32)
    y = np.random.rand(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    k.run((2, ), x, y, out, 0.5, n)
    np.testing.assert_allclose(out, 0.5 * x + y, rtol=1e-6)
    with pytest.raises(TypeError, match=r"takes its 6 arguments .* or only its 5 run-time ones .*got 4"):
        k(x, y, out, 0.5)
    with pytest.raises(TypeError, match=r"`out_ptr` .* compiled as \*fp32: pass an array of fp32, got one of fp64"):
        k(x, y, out.astype(np.float64), 0.5, n)
    with pytest.raises(ValueError, match=r"`BLOCK` .* compiled in as 256, got 128"):
        k[(3, )](x, y, out, 0.5, n, 128)
    with pytest.raises(ValueError, match=r"`n` .* compiled as i32.*got 4294967296"):
        k(x, y, out, 0.5, 2**32)
    with pytest.raises(TypeError, match=r"`alpha` .* compiled as fp32: pass a number"):
        k(x, y, out, "half", n)
    with pytest.raises(TypeError, match=r"`x_ptr` .* pass an array"):
        k(1.0, y, out, 0.5, n)
    with pytest.raises(ValueError, match=r"`y_ptr` .*16-byte aligned address \(\*fp32:16\)"):
        k(x, np.zeros(n + 1, np.float32)[1:], out, 0.5, n)
    ro = out.copy()
    ro.flags.writeable = False
    with pytest.raises(UnsafeArgumentError, match="`out_ptr`.*read-only"):
        k(x, y, ro, 0.5, n)
    k(ro, y, out, 0.5, n)   # read-only input: the kernel only loads it


def _rewrite(built, tmp_path, edit):
    header, binary = aot_format.read(str(built[1]))
    edit(header)
    path = tmp_path / "edited.tritium"
    aot_format.write(str(path), header, binary)
    return str(path)


def test_damage_is_detected(built, tmp_path):
    data = built[1].read_bytes()
    cases = {
        "flipped": data[:-100] + bytes([data[-100] ^ 1]) + data[-99:],
        "truncated": data[:-10],
        "textmode": data.replace(b"\r\n", b"\n", 1),
        "other": b"not a kernel at all" * 10,
        "newer": data[:16] + struct.pack("<I", aot_format.FORMAT_VERSION + 1) + data[20:],
    }
    expect = {"flipped": "checksum does not match", "truncated": "truncated", "textmode": "text-mode",
              "other": "not a tritium compiled-kernel file", "newer": "written by a newer tritium"}
    for name, blob in cases.items():
        p = tmp_path / f"{name}.tritium"
        p.write_bytes(blob)
        with pytest.raises(ArtifactError, match=expect[name]):
            tritium.load_compiled(str(p))
    with pytest.raises(FileNotFoundError, match="tritium compile"):
        tritium.load_compiled(str(tmp_path / "missing.tritium"))


def test_foreign_or_incompatible_artifacts_are_refused(built, tmp_path):
    def abi(h):
        h["backend"]["abi"] = 999

    def backend(h):
        h["backend"].update(name="warp9", distribution="tritium-warp9")

    def features(h):
        h["metadata"]["cpu_features"] += ",+nosuchfeature"

    def triple(h):
        h["metadata"]["cpu_triple"] = "aarch64-unknown-linux-gnu"

    def arity(h):
        h["metadata"]["arg_types"] = h["metadata"]["arg_types"][:-1]

    for edit, msg in ((abi, r"ABI 999.*loads ABI 1.*compile the kernel again"),
                      (backend, r"backend 'warp9' .*not installed here .*install tritium-warp9"),
                      (features, r"lacks: nosuchfeature.*TRITIUM_CPU_TARGET"),
                      (triple, r"compiled for aarch64-unknown-linux-gnu, this host is"),
                      (arity, r"5 run-time arguments but its binary takes 4")):
        with pytest.raises(ArtifactError, match=msg):
            tritium.load_compiled(_rewrite(built, tmp_path, edit))


def _cli(tmp_path, capsys, signature, *extra, out="x"):
    (tmp_path / "kernels.py").write_text(KERNELS)
    rc = compile_cmd.main([f"{tmp_path / 'kernels.py'}:axpy", "--signature", signature,
                           "-o", str(tmp_path / f"{out}.tritium"), *extra])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("signature, extra, message", [
    ("*fp32, *fp32, *fp32, fp32, i32", (), r"5 entries but kernel `axpy` has 6 parameters"),
    ("*fp32, *fp32, *fp32, fp32, i32, i32", (), r"`BLOCK` is tl.constexpr: give its value"),
    ("*fp32, *fp32, *float, fp32, i32, 256", (), r"unknown type '\*float'"),
    ("*fp32:8, *fp32, *fp32, fp32, i32, 256", (), r"must be 16 .* or 1"),
    ("*fp32:1, *fp32, *fp32, fp32, i32, 256", (), r"a pointer cannot be 1"),
    (SIGNATURE, ("--grid", "cdiv(m, BLOCK)"), r"uses 'm', which is not an integer argument"),
    (SIGNATURE, ("--grid", "__import__('os')"), r"is not allowed"),
    (SIGNATURE, ("--target", "hip:gfx942"), r"no installed backend compiles for 'hip'.*'hip' backend is missing"),
])
def test_cli_refuses_bad_input(tmp_path, capsys, signature, extra, message):
    rc, err = _cli(tmp_path, capsys, signature, *extra)
    assert rc == 2
    assert __import__("re").search(message, err), err
    assert not (tmp_path / "x.tritium").exists()


def test_hint_one_and_no_grid(tmp_path, capsys):
    rc, err = _cli(tmp_path, capsys, "*fp32, *fp32, *fp32, fp32:1, i32, 128")
    assert rc == 0, err
    k = tritium.load_compiled(str(tmp_path / "x.tritium"))
    assert k.constants == {"alpha": 1, "BLOCK": 128}
    x = np.arange(200, dtype=np.float32)
    out = np.zeros_like(x)
    with pytest.raises(TypeError, match="compiled without --grid"):
        k(x, x, out, 200)
    k[(2, )](x, x, out, 200)
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.raises(ValueError, match=r"`alpha` .* compiled in as 1, got 2.0"):
        k[(2, )](x, x, out, 2.0, 200, 128)
    assert json.loads(json.dumps(aot_format.read(str(tmp_path / "x.tritium"))[0]["params"]))[3]["value"] == 1


C_HOST = r'''
#include "axpy.h"
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    int n = 1000;
    float *x = aligned_alloc(64, 4096), *y = aligned_alloc(64, 4096), *o = aligned_alloc(64, 4096);
    for (int i = 0; i < n; i++) { x[i] = (float)i; y[i] = 1.0f; o[i] = 0.0f; }
    int rc = axpy((n + 255) / 256, 1, 1, 0, x, y, o, 2.0f, n);
    if (rc != 0) { printf("rc %d\n", rc); return 1; }
    for (int i = 0; i < n; i++) if (o[i] != 2.0f * i + 1.0f) { printf("wrong at %d: %f\n", i, o[i]); return 1; }
    if (axpy(4, 1, 1, 1, x + 1, y, o, 2.0f, n) != AXPY_EHINT) { printf("misaligned x accepted\n"); return 1; }
    if (axpy(0, 1, 1, 1, x, y, o, 2.0f, n) != 0) return 1;
    printf("C host ok\n");
    return 0;
}
'''


@pytest.mark.skipif(__import__("shutil").which("cc") is None, reason="no C compiler to build the test host")
def test_c_header_and_launcher_link_into_a_c_program(tmp_path, capsys):
    rc, err = _cli(tmp_path, capsys, SIGNATURE, "--emit-c", out="axpy")
    assert rc == 0, err
    (tmp_path / "main.c").write_text(C_HOST)
    build = subprocess.run(["cc", "-O1", "-Wall", "-Werror", "-o", "host", "main.c", "axpy.c", "axpy.o", "-lpthread",
                            "-lm"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    r = subprocess.run([str(tmp_path / "host")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "C host ok" in r.stdout, r.stdout + r.stderr


def test_cli_reports_a_kernel_that_does_not_compile(tmp_path, capsys):
    (tmp_path / "kernels.py").write_text(KERNELS + textwrap.dedent('''
        @tritium.jit
        def broken(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), undefined_name)
    '''))
    rc = compile_cmd.main([f"{tmp_path / 'kernels.py'}:broken", "-s", "*fp32, 64", "-o", str(tmp_path / "b.tritium")])
    err = capsys.readouterr().err
    assert rc == 1
    assert "kernel `broken` does not compile" in err and "undefined_name" in err
    assert not (tmp_path / "b.tritium").exists()
