"""The x86-64 feature levels this host can execute, as settings of the CPU backend's knobs.

Vector width changes how reductions, masks and shuffles are compiled, so a miscompile on one width can hide
on another: the test matrix (``make test``) and differential fuzzers compile for each level below, not only
for the host. The backend registers :func:`runnable_levels` as its ``BackendSpec.variants``.

``python -m tritium_cpu.isa`` prints one line per runnable level, highest first (``name VAR=value ...``,
``native`` first); ``--native`` prints the named level the host's own compilation belongs to, ``--lower`` only
the levels below it. The Makefile's test matrix reads these.
"""
from __future__ import annotations

import contextlib
import functools
import sys
from typing import Iterator, Optional

from .knobs import cpu, cpu_knobs

# name -> (LLVM CPU name, features it needs; each also needs those of the levels before it). The features
# are passed explicitly (not left to the CPU name) because the code generator sizes its vectors from them.
_LEVELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sse2": ("x86-64", ("sse", "sse2", "cx8", "fxsr", "cmov")),
    "avx2": ("x86-64-v3", ("cx16", "popcnt", "sahf", "sse3", "ssse3", "sse4.1", "sse4.2", "avx", "avx2", "bmi",
                           "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")),
    "avx512": ("x86-64-v4", ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")),
}
TARGET_ENV = cpu_knobs.descriptors()["target_cpu"].env[0]
FEATURES_ENV = cpu_knobs.descriptors()["target_features"].env[0]


def level_settings(name: str) -> dict[str, str]:
    """The knob settings that compile for level ``name`` (whether or not this host can run it)."""
    names = list(_LEVELS)
    feats = [f for n in names[:names.index(name) + 1] for f in _LEVELS[n][1]]
    return {TARGET_ENV: _LEVELS[name][0], FEATURES_ENV: ",".join("+" + f for f in feats)}


def _host_features() -> Optional[frozenset[str]]:
    import llvmlite.binding as llvm
    if not llvm.get_process_triple().startswith(("x86_64", "amd64")):
        return None
    try:
        return frozenset(k for k, on in llvm.get_host_cpu_features().items() if on)
    except RuntimeError:      # llvmlite cannot read this host's features
        return None


@functools.lru_cache(maxsize=None)
def runnable_levels() -> dict[str, dict[str, str]]:
    """``{level: {ENV_VAR: value}}`` for every level this host can execute, lowest first, then ``"native"``:
    the host's CPU with all of its features (what compiling with no knob set gives; it may have more than
    the highest named level, e.g. AVX512-FP16)."""
    import llvmlite.binding as llvm
    host = _host_features()
    out: dict[str, dict[str, str]] = {}
    for name, (_, needs) in _LEVELS.items():
        if host is None or not host.issuperset(needs):
            break
        out[name] = level_settings(name)
    try:
        features = llvm.get_host_cpu_features().flatten()
    except RuntimeError:      # then the CPU name alone selects them
        features = ""
    out["native"] = {TARGET_ENV: llvm.get_host_cpu_name(), FEATURES_ENV: features}
    return out


def check_features(text: str, var: str = FEATURES_ENV) -> str:
    """``text`` if it is a valid LLVM feature list; LLVM aborts the process on an entry without a sign."""
    bad = [f for f in text.split(",") if f.strip() and f.strip()[0] not in "+-"]
    if bad:
        raise ValueError(f"{var}={text!r}: every feature needs a sign, '+name' to enable or '-name' to "
                         f"disable (got {', '.join(repr(b) for b in bad)}); e.g. {var}=+avx2,+fma")
    return ",".join(f.strip() for f in text.split(",") if f.strip())


def native_class() -> str:
    """The highest named level the host runs: the class its native compilation belongs to ("native" if none)."""
    named = [n for n in runnable_levels() if n != "native"]
    return named[-1] if named else "native"


def environment_selects_level() -> bool:
    """Whether TRITIUM_CPU_TARGET/FEATURES already pick what to compile for (a lower level of make test's matrix,
    which runs the suite once per level)."""
    return cpu.target_cpu is not None or cpu.target_features is not None


def levels_to_check() -> list[str]:
    """The levels a check of compiled code should run at: every level this host runs (lowest first, then
    "native"), or only "selected" when the environment picks one."""
    return ["selected"] if environment_selects_level() else list(runnable_levels())


@contextlib.contextmanager
def compiling_for(name: str) -> Iterator[None]:
    """Compile for level ``name`` inside the block ("selected": as the environment says)."""
    with cpu.scope():
        if name != "selected":
            settings = runnable_levels()[name]
            cpu.target_cpu = settings[TARGET_ENV]
            cpu.target_features = settings[FEATURES_ENV]
        yield


def _main(argv: list[str]) -> None:
    levels = runnable_levels()
    if argv == ["--native"]:
        print(native_class())
        return
    # --lower: the named levels below the native one (the native run covers its own class)
    names = [n for n in reversed(levels) if n not in ("native", native_class())] if argv == ["--lower"] \
        else list(reversed(levels))
    for name in names:
        shown = "the host's CPU and features" if name == "native" else " ".join(f"{k}={v}" for k, v in
                                                                             levels[name].items())
        print(name, shown)


if __name__ == "__main__":
    _main(sys.argv[1:])
