"""The cached launch's generated frame (runtime/dispatch.py) against the full path it stands in for: the same
specialization key and run-time values for every kind of argument, the full path for whatever it cannot answer,
and every setting changed between two launches taking effect on the second."""
from __future__ import annotations

import math
import os
import random

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.runtime.dispatch import remember
from tritium.runtime.launch import Entry, KernelState
from tritium.runtime.specialize import const_key, make_binder, specialize_arg

ENV = ("TRITON_INTERPRET", "TRITIUM_INTERPRET", "TRITON_DEBUG", "TRITIUM_DEBUG")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


# -- the key, without compiling ------------------------------------------------------------------------

def _plain(a, b, c, d):
    pass


def _mixed(a, B: tl.constexpr, c=3, *, e=None, F: tl.constexpr = 4):
    pass


def _dns(a, b, c):
    pass


def _annotated(a: tl.int32, p: "*fp32", c):
    pass


class _Driver:
    """Stands in for the driver so that the frame's key can be checked without a compiled kernel."""
    device_type = "cpu"

    def get_current_target(self):
        return None

    def max_grid(self):
        return (2**31 - 1, 65535, 65535)


class _Recording(dict):
    def __init__(self, entry):
        super().__init__()
        self.entry, self.asked = entry, []

    def get(self, key, default=None):
        hash(key)  # as dict.get: an unhashable key raises
        self.asked.append(key)
        return self.entry


def _values(torch):
    x = np.zeros(8, dtype=np.float32)
    vals = [0, 1, 2, 16, 17, 32, -16, -1, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**63 - 1, 2**63, 2**64 - 1,
            2**64, True, False, 3.5, float("nan"), None, np.int32(16), np.int64(7), np.uint8(255), np.float32(2.0),
            x, x[1:], np.zeros(4, dtype=np.float16), np.arange(4, dtype=np.int64)[::2], (1, 2), (x, 16),
            tl.constexpr(5), tl.float16, "text", [1, 2], object()]
    if torch is not None:
        t = torch.zeros(8)
        vals += [t, t[1:], torch.zeros(4, dtype=torch.bfloat16), torch.arange(4), torch.float32]
    return vals


def _reference(fn, bound):
    """(key, runtime) as the full path's pieces compute them, parameter by parameter."""
    keys, runtime = [], []
    for p, v in zip(fn.params, bound):
        if p.is_constexpr:
            keys.append(("C", type(v), v) if type(v) in (int, float, bool, str, type(None)) else const_key(v))
            continue
        if p.annotation_type:
            return make_binder(fn)(**{p.name: v for p, v in zip(fn.params, bound)})[:2]
        k, r = specialize_arg(v, not p.do_not_specialize, not p.do_not_specialize and
                              not p.do_not_specialize_on_alignment)
        keys.append(k)
        runtime.append(r)
    return tuple(keys), tuple(runtime)


def _same(a, b):
    if a is b:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("pyfn, jit_kw", [(_plain, {}), (_mixed, {}),
                                          (_dns, {"do_not_specialize": ["b"],
                                                  "do_not_specialize_on_alignment": ["c"]}),
                                          (_annotated, {})])
def test_frame_key_matches_the_full_paths_key(pyfn, jit_kw):
    try:
        import torch
    except ImportError:
        torch = None
    fn = triton.jit(**jit_kw)(pyfn)
    drv = _Driver()
    state = KernelState(fn, drv)
    state.refresh_settings()
    fn.device_caches[drv] = state
    launched, slow = [], []
    entry = Entry(object(), lambda g, r: launched.append((g, r)), None)
    names = [p.name for p in fn.params]
    positional = [p.name for p in fn.params if p._param.kind != p._param.KEYWORD_ONLY]
    defaults = {p.name: p.default for p in fn.params if p.has_default}
    first = {"a": 1, "B": 1, "c": 1, "d": 1, "p": np.zeros(2, dtype=np.float32), "b": 1, "e": 1, "F": 1}
    key0, _, _, _ = make_binder(fn)(**{n: first[n] for n in names})
    remember(fn, state, state.generation, key0, {}, entry)
    hp = fn._hot_path
    table = _Recording(entry)
    hp.ns["_hot"].fast = table
    hp.ns["_slow"] = lambda fn_, grid, args, kwargs: slow.append((args, kwargs))
    rng = random.Random(20261201)
    pool = _values(torch)
    checked = refused = 0
    for _ in range(3000):
        values = {n: rng.choice(pool) for n in names}
        given = positional[:rng.randint(0, len(positional))]
        args = [values[n] for n in given]
        kwargs = {}
        for n in names:
            if n in given:
                continue
            if n in defaults and rng.random() < 0.3:
                values[n] = defaults[n]  # left out
            else:
                kwargs[n] = values[n]
        options = {}
        if rng.random() < 0.3:
            options = rng.choice([{"num_warps": 4}, {"num_stages": 2, "num_warps": 8}, {"num_warps": [1]}])
        bound = [values[n] for n in names]
        try:
            key, runtime = _reference(fn, bound)
            hash((key, tuple(options.items())))
        except (TypeError, ValueError, OverflowError):
            key = None
        del launched[:], slow[:], table.asked[:]
        fn[(1, )](*args, **kwargs, **options)
        if key is None:
            assert slow and not launched, (values, options)
            refused += 1
            continue
        assert not slow, (values, options)
        want = key if not options else (key, tuple(options.items()))
        assert _same(table.asked[-1], want), (values, options, table.asked[-1], want)
        assert launched[0][0] == (1, 1, 1) and _same(launched[0][1], runtime), (values, launched, runtime)
        # the binder the full path uses agrees too
        assert _same(make_binder(fn)(**dict(zip(names, bound)), **options)[0], key)
        checked += 1
    assert checked > 300 and refused > 300  # both routes were exercised


# -- compiled launches --------------------------------------------------------------------------------

@triton.jit
def _store(out_ptr, value):
    tl.store(out_ptr, value)


@triton.jit
def _checked(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_assert(x < 5, "x too big")


@triton.jit
def _fill(out_ptr):
    tl.store(out_ptr + tl.program_id(0), 1.0)


def _entries(fn):
    return [e for state in fn.device_caches.values() for e in state.kernels.values()]


def _spy(fn, calls):
    for e in _entries(fn):
        real = e.launcher
        e.launcher = (lambda real: lambda g, r, *more: calls.append(g) or real(g, r, *more))(real)


def test_cached_launch_takes_the_frame_and_full_path_only_once(monkeypatch):
    fn = triton.jit(_store.fn)
    out = np.zeros(4, dtype=np.float32)
    fn[(1, )](out, 3)
    full = []
    real = fn._run
    monkeypatch.setattr(fn, "_run", lambda *a: full.append(a) or real(*a))
    for v in (4, 5):
        fn[(1, )](out, v)
        assert out[0] == v
    fn.run(out, 6, grid=(1, ))
    assert out[0] == 6 and full == []
    fn[(1, )](out, 7.5)  # a new key: the full path compiles it, then the frame has it too
    fn[(1, )](out, 8.5)
    assert out[0] == 8.5 and len(full) == 1


def test_environment_set_between_launches_takes_effect(monkeypatch):
    fn = triton.jit(_checked.fn)
    x = np.arange(8, dtype=np.int32)
    fn[(1, )](x, 8)  # no debug: the assertion is not compiled in
    fn[(1, )](x, 8)
    monkeypatch.setenv("TRITON_DEBUG", "1")
    with pytest.raises(AssertionError, match="x too big"):
        fn[(1, )](x, 8)
    monkeypatch.delenv("TRITON_DEBUG")
    fn[(1, )](x, 8)
    store = triton.jit(_store.fn)
    out = np.zeros(4, dtype=np.float32)
    store[(1, )](out, 2)
    calls = []
    _spy(store, calls)
    store[(1, )](out, 3)
    assert len(calls) == 1
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")  # interpreted: the compiled launcher does not run
    store[(1, )](out, 4)
    assert len(calls) == 1 and out[0] == 4
    monkeypatch.delenv("TRITIUM_INTERPRET")
    store[(1, )](out, 5)
    assert len(calls) == 2 and out[0] == 5
    with knobs.runtime.scope():
        knobs.runtime.interpret = True  # from Python, the same
        store[(1, )](out, 6)
    assert len(calls) == 2 and out[0] == 6
    store.interpret = True  # and per kernel
    store[(1, )](out, 7)
    assert len(calls) == 2 and out[0] == 7
    store.interpret = False
    store[(1, )](out, 8)
    assert len(calls) == 3 and out[0] == 8


def test_knobs_set_from_python_between_launches_take_effect():
    fn = triton.jit(_checked.fn)
    x = np.arange(8, dtype=np.int32)
    launch = fn[(1, )]
    launch(x, 8)
    launch(x, 8)
    with knobs.runtime.scope():
        knobs.runtime.debug = True
        with pytest.raises(AssertionError, match="x too big"):
            launch(x, 8)
    launch(x, 8)
    events = []
    with knobs.runtime.scope():
        knobs.runtime.launch_enter_hook = lambda md: events.append(("enter", md["grid"], md["args"]["N"]))
        knobs.runtime.launch_exit_hook = lambda md: events.append(("exit", md["name"]))
        launch(x, 8)
    launch(x, 8)
    assert events == [("enter", (1, 1, 1), 8), ("exit", "_checked")]


def test_cache_clear_global_change_and_hooks_added_later_are_seen():
    fn = triton.jit(_store.fn)
    out = np.zeros(4, dtype=np.float32)
    launch = fn[(1, )]
    launch(out, 2)
    compiled = []
    with knobs.runtime.scope():
        knobs.runtime.jit_post_compile_hook = lambda **kw: compiled.append(kw["key"])
        launch(out, 2)
        fn.device_caches.clear()
        launch(out, 3)
        assert len(compiled) == 1 and out[0] == 3
    seen = []
    fn.add_pre_run_hook(lambda *a, **k: seen.append((a, k)))
    launch(out, 4)  # bound before the hook was added
    fn[(1, )](out, value=5)
    assert seen == [((out, 4), {}), ((out, ), {"value": 5})] and out[0] == 5


def test_run_patched_on_the_instance_or_class_is_called(monkeypatch):
    fn = triton.jit(_store.fn)
    out = np.zeros(4, dtype=np.float32)
    fn[(1, )](out, 1)
    calls = []
    real = type(fn).run
    fn.run = lambda *a, **k: calls.append("instance") or real(fn, *a, **k)
    fn[(1, )](out, 2)
    del fn.run
    monkeypatch.setattr(type(fn), "run", lambda self, *a, **k: calls.append("class") or real(self, *a, **k))
    fn[(1, )](out, 3)
    monkeypatch.undo()
    fn[(1, )](out, 4)
    assert calls == ["instance", "class"] and out[0] == 4


def test_run_written_into_the_instance_dict_is_called():
    # __getitem__ reads the instance dict it kept (HotPath.attrs), not fn.__dict__: writes through vars() count too
    fn = triton.jit(_store.fn)
    out = np.zeros(4, dtype=np.float32)
    fn[(1, )](out, 1)
    calls = []
    real = type(fn).run
    vars(fn)["run"] = lambda *a, **k: calls.append("vars") or real(fn, *a, **k)
    fn[(1, )](out, 2)
    vars(fn).pop("run")
    fn[(1, )](out, 3)
    assert calls == ["vars"] and out[0] == 3


def test_getitem_builds_no_closure_cells():
    # a lambda inside __getitem__ made its grid and run cells on every call, the cached launch's included
    # (~400 instructions a launch under callgrind)
    from tritium.runtime.jit import JITFunction
    assert JITFunction.__getitem__.__code__.co_cellvars == ()


def test_errors_are_the_full_paths():
    fn = triton.jit(_store.fn)
    out = np.zeros(4, dtype=np.float32)
    fn[(1, )](out, 1)
    with pytest.raises(TypeError, match=r"_store\(\) takes 2 positional arguments but 3 were given"):
        fn[(1, )](out, 1, 2)
    with pytest.raises(TypeError, match=r"_store\(\) missing 1 required positional argument: 'value'"):
        fn[(1, )](out)
    with pytest.raises(TypeError, match=r"got multiple values for argument 'value'"):
        fn[(1, )](out, 1, value=2)
    with pytest.raises(TypeError, match=r"argument `value` \(list\) of kernel `_store`"):
        fn[(1, )](out, [1])
    with pytest.raises(TypeError, match="multiple values for keyword argument 'grid'"):
        fn[(1, )](out, 1, grid=(2, ))
    with pytest.raises(ValueError, match="kernel `_store` has a negative size"):
        fn[(-1, )](out, 1)
    with pytest.raises(TypeError, match="kernel `_store` must hold integers"):
        fn[(True, )](out, 1)


def test_grids_reused_or_changed_in_place():
    fn = triton.jit(_fill.fn)
    out = np.zeros(4, dtype=np.float32)
    grid = (2, )
    fn[grid](out)
    fn[grid](out)
    assert out.tolist() == [1, 1, 0, 0]
    listed = [3]
    fn[listed](out)
    out[:] = 0
    listed[0] = 4  # a list is not remembered: its new length counts
    fn[listed](out)
    assert out.tolist() == [1, 1, 1, 1]
    out[:] = 0
    fn[lambda meta: (1, )](out)
    fn[(2, 2)](out)
    assert out.tolist() == [1, 1, 0, 0]
    with pytest.raises(ValueError, match="more than this device allows"):
        fn[(2**40, )](out)


def test_settings_follow_the_plugin_registry_with_an_active_driver():
    # the in-memory key holds the plugin registry in effect; with a driver made active, entering
    # plugins.use(...) kept the key of the registry before (no setting changed), so a kernel compiled under
    # other plugins was reused
    from tritium import plugins
    from tritium.runtime.driver import driver
    fn = triton.jit(_store.fn)
    out = np.zeros(4, dtype=np.float32)
    compiled = []
    with knobs.runtime.scope():
        knobs.runtime.jit_post_compile_hook = lambda **kw: compiled.append(kw["key"])
        drv = driver.active
        driver.set_active(drv)
        try:
            fn[(1, )](out, 2)
            other = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin"})
            with plugins.use(other):
                fn[(1, )](out, 3)
        finally:
            driver.reset_active()
    assert len(compiled) == 2 and out[0] == 3


def test_unset_check_follows_the_environment(monkeypatch):
    ns = {}
    rt = type(knobs.runtime)
    expr = knobs.unset_check(rt.interpret, rt.debug, ns=ns)
    check = eval(f"lambda: {expr}", ns)
    assert check()
    for name in ENV:
        monkeypatch.setenv(name, "0")  # set, even to false: the caller reads the knob
        assert not check()
        monkeypatch.delenv(name)
        assert check()
    monkeypatch.setattr("os.environ", dict(os.environ))
    assert not check()


def test_grid_tuples_of_ints_check_as_lists_do():
    # grid3 answers tuples of ints before its general loop, which lists still take
    from tritium.runtime.grid import grid3
    rng = random.Random(7)
    edges = [0, 1, 2, 65535, 65536, 2**31 - 1, 2**31, 2**32, 2**62, 2**63, -1, True, 2.0, np.int64(3)]
    for limits in ((2**31 - 1, 65535, 65535), (2**64, 2**64, 2**64)):
        for _ in range(3000):
            grid = tuple(rng.choice(edges) for _ in range(rng.randint(0, 4)))
            outcomes = []
            for form in (grid, list(grid)):
                try:
                    outcomes.append(grid3("k", form, limits))
                except (TypeError, ValueError) as exc:
                    outcomes.append((type(exc), str(exc).replace("[", "(").replace("]", ")")))
            assert outcomes[0] == outcomes[1], (grid, limits)


def test_binder_for_a_device_type_keys_tensors_as_specialize_arg():
    # a driver's device type gives torch tensors a cheap location test (x.is_<type>); the meta device stands in
    # for a GPU's here
    torch = pytest.importorskip("torch")
    fn = triton.jit(_plain)
    for device_type in ("meta", "cpu", "no_such_device", None):
        binder = make_binder(fn, device_type)
        for t in (torch.zeros(4), torch.zeros(4, device="meta"), torch.zeros(4)[1:]):
            key, runtime, _, _ = binder(t, t, 1, 16)
            want = specialize_arg(t)
            assert key[0] == key[1] == want[0] and runtime[0] == want[1], (device_type, t.device)


@triton.jit
def _no_parameters():
    tl.static_assert(((3, 4) and (5, 6)) == (5, 6))


@triton.jit
def _keyword_only_constexpr(*, N: tl.constexpr):
    tl.static_assert(N == 4)


def test_kernels_without_positional_parameters_launch():
    # the frame's call to the full path once built `(*extra)`, a syntax error, for a kernel with none
    for _ in range(3):
        _no_parameters[(1, )]()
        _keyword_only_constexpr[(1, )](N=4)
