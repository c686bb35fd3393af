"""The x86-64 feature levels this host can execute, as settings of the CPU backend's knobs.

Vector width changes how reductions, masks and shuffles are compiled, so a miscompile on one width can hide
on another: the test matrix (``make test``) and differential fuzzers compile for each level below, not only
for the host. The backend registers :func:`runnable_levels` as its ``BackendSpec.variants``.

``python -m tritium_cpu.isa`` prints one line per runnable level (``name native|lower VAR=value ...``),
the host's own level first; the Makefile reads it.
"""
from __future__ import annotations

import functools
import sys
from typing import Optional

from .knobs import cpu_knobs

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
    """``{level: {ENV_VAR: value}}`` for every level this host can execute, lowest first ({} off x86-64)."""
    host = _host_features()
    if host is None:
        return {}
    out: dict[str, dict[str, str]] = {}
    for name, (_, needs) in _LEVELS.items():
        if not host.issuperset(needs):
            break
        out[name] = level_settings(name)
    return out


def native_level() -> Optional[str]:
    """The highest runnable level: the one the host's default compilation (no knobs set) belongs to."""
    levels = list(runnable_levels())
    return levels[-1] if levels else None


def check_features(text: str, var: str = FEATURES_ENV) -> str:
    """``text`` if it is a valid LLVM feature list; LLVM aborts the process on an entry without a sign."""
    bad = [f for f in text.split(",") if f.strip() and f.strip()[0] not in "+-"]
    if bad:
        raise ValueError(f"{var}={text!r}: every feature needs a sign, '+name' to enable or '-name' to "
                         f"disable (got {', '.join(repr(b) for b in bad)}); e.g. {var}=+avx2,+fma")
    return ",".join(f.strip() for f in text.split(",") if f.strip())


def _main() -> None:
    native = native_level()
    levels = runnable_levels()
    order = ([native] if native else []) + [n for n in reversed(levels) if n != native]
    for name in order:
        env = " ".join(f"{k}={v}" for k, v in levels[name].items())
        print(name, "native" if name == native else "lower", env)


if __name__ == "__main__":
    _main()
    sys.exit(0)
