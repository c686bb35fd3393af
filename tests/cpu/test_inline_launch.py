"""A driver's launch written into core's cached-launch frame (runtime/inline_launch.py), with a driver of this
file's own: the statements run for the entries whose launcher offers constants, receive every run-time value as
bound, and leave to the launcher's own call whatever they do not finish (a launch hook, a guard, a replaced
launcher, statements that give up)."""
from __future__ import annotations

import types

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.runtime.dispatch import remember
from tritium.runtime.inline_launch import InlineLaunch
from tritium.runtime.launch import Entry, KernelState
from tritium.runtime.specialize import make_binder

INLINED: list = []
COMPILED = types.SimpleNamespace(name="_kernel")
# finishes the launch only while the constants say so: the test's way to make the statements give up
BODY = """
_t_ready, _t_tag = $c
if _t_ready:
    _t_log.append((_t_tag, $grid, ($args)))
    return $result
"""


class _Driver:
    device_type = "cpu"
    inline_launch = InlineLaunch(body=BODY, condition="_t_on[0]", names={"_t_log": INLINED, "_t_on": [True]},
                                 prefix="_t_")

    def get_current_target(self):
        return None

    def max_grid(self):
        return (2**31 - 1, 65535, 65535)


class _Launcher:
    def __init__(self, ready: bool = True) -> None:
        self.calls: list = []
        self.ready = ready
        self.offered: list = []

    def hot_call(self, grid, args):
        self.calls.append((grid, args))

    def inline_constants(self, keep, n):
        self.offered.append((keep, n))
        return (self.ready, "k")


def _kernel(x_ptr, a, b, C: tl.constexpr):
    pass


def _prepared(launcher, keep=None, select=None, guard=None):
    fn = triton.jit(_kernel)
    drv = _Driver()
    state = KernelState(fn, drv)
    state.refresh_settings()
    fn.device_caches[drv] = state
    entry = Entry(COMPILED, launcher, select, guard, keep, 3)
    x = np.zeros(4, dtype=np.float32)
    key = make_binder(fn)(x, 5, 7, C=2)[0]
    remember(fn, state, state.generation, key, {}, entry)
    return fn, x, entry


@pytest.fixture(autouse=True)
def _clean():
    INLINED.clear()
    _Driver.inline_launch.names["_t_on"][0] = True
    yield
    knobs.runtime.launch_enter_hook = None


def test_the_statements_launch_with_every_value_as_bound():
    launcher = _Launcher()
    fn, x, entry = _prepared(launcher)
    assert launcher.offered == [(None, 3)]
    assert fn[(4, 2)](x, 5, 7, C=2) is COMPILED
    assert INLINED == [("k", (4, 2, 1), (x.ctypes.data, 5, 7))]
    assert launcher.calls == []


def test_an_entry_that_drops_values_still_receives_them_all():
    launcher = _Launcher()
    fn, x, entry = _prepared(launcher, keep=(0, 2), select=lambda r: (r[0], r[2]))
    assert launcher.offered == [((0, 2), 3)]
    fn[(1, )](x, 5, 7, C=2)
    assert INLINED == [("k", (1, 1, 1), (x.ctypes.data, 5, 7))] and launcher.calls == []


@pytest.mark.parametrize("why", ["gives up", "condition", "replaced", "guard", "path keep"])
def test_the_launchers_call_does_what_the_statements_do_not(why):
    launcher = _Launcher(ready=why != "gives up")
    kw = {}
    if why == "guard":
        kw = {"guard": lambda bound: None}
    if why == "path keep":
        kw = {"keep": ((0, ), 2), "select": lambda r: r}
    fn, x, entry = _prepared(launcher, **kw)
    if why == "condition":
        _Driver.inline_launch.names["_t_on"][0] = False
    if why == "replaced":
        recorded: list = []
        entry.launcher = lambda g, r: recorded.append((g, r))
        assert entry.inline is None
    fn[(3, )](x, 5, 7, C=2)
    assert INLINED == []
    calls = recorded if why == "replaced" else launcher.calls
    assert len(calls) == 1 and calls[0][0] == (3, 1, 1)
    assert (entry.inline is None) == (why in ("replaced", "guard", "path keep"))


def test_a_launch_hook_sends_the_launch_to_the_launcher():
    launcher = _Launcher()
    seen: list = []
    knobs.runtime.launch_enter_hook = seen.append
    fn, x, entry = _prepared(launcher)
    fn[(1, )](x, 5, 7, C=2)
    assert INLINED == [] and len(launcher.calls) == 1 and len(seen) == 1


def test_globals_must_carry_the_prefix_and_not_meet_cores():
    with pytest.raises(ValueError, match="does not start with the prefix"):
        InlineLaunch(body="pass", names={"log": []}, prefix="_t_").check_names({})
    with pytest.raises(ValueError, match="already a name of core's launch frame"):
        InlineLaunch(body="pass", names={"_t_x": 1}, prefix="_t_").check_names({"_t_x": 0})
