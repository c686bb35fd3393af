"""Meta-test: every hook in hookspecs.py is documented (its docstring and the README) and has a test.

A test of hook ``tritium_X`` is a test function named ``test_hook_X...`` anywhere under tests/ or
plugins/*/tests. Adding a hook without both fails here."""
from __future__ import annotations

import re
from pathlib import Path

from tritium import hookspecs as hs

ROOT = Path(__file__).resolve().parents[2]


def test_sources() -> str:
    files = list((ROOT / "tests").rglob("test_*.py")) + list((ROOT / "plugins").glob("*/tests/test_*.py"))
    return "\n".join(f.read_text() for f in files)


test_sources.__test__ = False  # a helper, not a test


def gaps(hooks, sources: str, readme: str) -> list[str]:
    out = []
    for hook in hooks:
        short = hook[len("tritium_"):]
        if not re.search(rf"^\s*def test_hook_{short}(_\w*)?\(", sources, re.M):
            out.append(f"{hook}: no test named test_hook_{short}_...")
        if f"`{hook}`" not in readme:
            out.append(f"{hook}: not described in README.md")
        spec = getattr(hs.TritiumHookSpecs, hook, None)
        if spec is None or not (spec.__doc__ or "").strip():
            out.append(f"{hook}: no docstring in hookspecs.py")
    return out


def test_every_hook_has_a_test_and_documentation():
    assert gaps(hs.HOOK_NAMES, test_sources(), (ROOT / "README.md").read_text()) == []


def test_the_meta_test_can_fail():
    found = gaps(["tritium_not_a_hook"], test_sources(), (ROOT / "README.md").read_text())
    assert len(found) == 3 and "no test named test_hook_not_a_hook_" in found[0]


def test_hook_order_is_documented_where_hooks_are_declared():
    doc = hs.__doc__ or ""
    for words in ("core", "provide backends", "tryfirst", "add_stages_inspection_hook", "cache is written only"):
        assert words in doc
