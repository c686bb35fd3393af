"""The cached launch in one generated function per kernel.

``kernel[grid](*args)`` of a kernel already compiled for these arguments is what a program does millions of
times, so it runs in one Python frame, generated per kernel (:func:`make_hot_path`): Python binds the arguments
to the kernel's own parameter names, the binding statements of :mod:`.binder` key them, one dictionary lookup
finds the compiled kernel, the grid is checked and the driver's launcher called. Whatever that frame cannot
answer alone goes to the full path (:func:`.launch.launch`, through ``JITFunction._run``) with the same
arguments, which also gives every error message: an argument that does not bind or cannot be keyed, a key not
compiled yet, pre-run hooks, the interpreter, debug mode.

The frame trusts a snapshot (:class:`Hot`) that the full path takes after it found or compiled a kernel, and
checks on every launch that it still holds:

- ``knobs.generation`` is the snapshot's: no knob was set from Python since, no plugin registry was installed
  and no driver was made active (those bump it too), so the kernels' settings, the hooks and the driver are
  the same;
- no environment variable of ``TRITON_INTERPRET``/``TRITON_DEBUG`` is set (a few dict lookups written by
  :func:`tritium.knobs.unset_check`), so both hold their Python-set value or default: a variable exported
  between two launches takes effect on the next one;
- the function's globals are unchanged (``check_globals``) and its cache for the driver is still the
  snapshot's (``device_caches.clear()`` forgets it).

The snapshot's ``fast`` table maps the specialization key (with the launch options in call order, when there
are any) to the compiled kernel; it only holds kernels compiled without debug, the only ones the frame can
tell it wants.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

from .. import knobs
from ..backends.driver import tells_pinned_apart
from .binder import binder_code, rename, tuple_expr
from .grid import grid3
from .inline_launch import InlineLaunch
from .specialize import binder_helpers


class Hot:
    """What the generated launch of one kernel may assume while ``knobs.generation == gen``."""
    __slots__ = ("gen", "driver", "state", "fast", "max_x", "max_grid", "enter", "exit", "grid_seen", "plain")

    def __init__(self, gen: int, state: Any) -> None:
        self.gen = gen
        self.state = state
        self.driver = None if state is None else state.driver
        #: specialization key, or (key, tuple(options.items())), to the launch cache's Entry
        self.fast: dict[Any, Any] = {}
        self.max_x = 0 if state is None else state.max_x
        self.max_grid = (0, 0, 0) if state is None else state.max_grid
        self.enter = None if state is None else state.enter_hook
        self.exit = None if state is None else state.exit_hook
        #: no launch hook is set: the driver's inline launch may run
        self.plain = self.enter is None and self.exit is None
        #: (a 1-D grid tuple of an int, its checked three-int form): a launch passing the same tuple object
        #: again (a constant, or a grid kept in a variable) skips the check; tuples and ints cannot change
        self.grid_seen: tuple = (None, None)


_DEAD = Hot(-1, None)  # trusted by nothing: generation never goes negative


class HotPath:
    """The generated launch of one kernel (``call(grid, *args, **kwargs)``) and the namespace holding its
    snapshot."""
    __slots__ = ("fn", "call", "ns", "device_type", "pinned_apart", "bound", "attrs", "inline", "front",
                 "front_state")

    def __init__(self, fn: Any, call: Callable, ns: dict, device_type: Optional[str],
                 inline: Optional[InlineLaunch] = None, pinned_apart: bool = False) -> None:
        # fn: whose frame this is (a copy of the JITFunction object carries the attribute, not the frame)
        self.fn, self.call, self.ns, self.device_type = fn, call, ns, device_type
        #: the frame keys pinned CPU tensors apart (binder.binder_code), which the native front does not test
        self.pinned_apart = pinned_apart
        #: the driver's launch written into the frame (None: every launch calls the launcher)
        self.inline = inline
        #: fn's instance dict, where a ``run`` set on the instance lands (``fn.run = f``, setattr, monkeypatch,
        #: ``vars(fn)["run"] = f``): __getitem__ looks there instead of reading ``fn.__dict__`` at every launch (a
        #: descriptor call, ~200 instructions). The one write it does not see is a whole new dict assigned to
        #: ``fn.__dict__`` (nothing in this repository does that).
        self.attrs: dict = vars(fn)
        #: (grid, call bound to it) of the last kernel[grid]: the same grid object again reuses the bound call
        self.bound: tuple = (object(), None)
        #: the native front bound to ``front_state`` ([this frame, plan]), once armed (native_front.py); ``call``
        #: is then the front
        self.front: Any = None
        self.front_state: Optional[list] = None


def _slow(fn: Any, grid: Any, args: tuple, kwargs: dict) -> Any:
    """The full launch path, for what the generated frame does not answer itself."""
    for name in ("grid", "warmup"):
        if name in kwargs:  # as `run(*args, grid=grid, warmup=False, **kwargs)` would refuse it
            raise TypeError(f"{fn.__name__}[grid](...) got multiple values for keyword argument '{name}'")
    return fn._run(args, kwargs, grid, False)


def launch_metadata(fn: Any, kernel: Any, g: tuple, bound: tuple) -> dict:
    """What launch enter/exit hooks receive."""
    args = dict(zip(fn.arg_names, bound))
    md = {"name": kernel.name, "function": fn, "grid": g, "kernel": kernel, "args": args}
    if fn.launch_metadata is not None:
        md.update(fn.launch_metadata(g, kernel.metadata, args) or {})
    return md


def make_hot_path(fn: Any, device_type: Optional[str], inline: Optional[InlineLaunch] = None,
                  pinned_apart: bool = False) -> HotPath:
    code = binder_code(fn, binder_helpers(), device_type, pinned_apart)
    P = code.pre
    ns = code.ns
    ns.update(_fn=fn, _knobs=knobs, _slow=_slow, _grid3=grid3, _md=launch_metadata, _hot=_DEAD,
              _KT=(TypeError, ValueError, OverflowError))
    rt = type(knobs.runtime)
    env_unset = knobs.unset_check(rt.interpret, rt.debug, ns=ns)  # type: ignore[arg-type]
    kw_only = inspect.Parameter.KEYWORD_ONLY
    sig = list(code.sig)
    # surplus positional arguments land here and take the full path, whose binder gives Python's own message
    if "*" in sig:
        sig[sig.index("*")] = f"*{P}extra"
    else:
        sig.append(f"*{P}extra")
    positional = [a for p, a in zip(fn.params, code.names) if p._param.kind != kw_only]
    named = [f"{p.name!r}: {a}" for p, a in zip(fn.params, code.names) if p._param.kind == kw_only]
    args = f"({''.join(a + ', ' for a in positional)}*{P}extra, )"  # a tuple, even for a kernel without parameters
    kwargs = "{" + ", ".join(named + [f"**{P}options"]) + "}" if named else f"{P}options"
    slow = f"return _slow(_fn, {P}grid, {args}, {kwargs})"
    bound, key = tuple_expr(code.names), tuple_expr(code.keys)
    meta = "{" + ", ".join([f"{p.name!r}: {a}" for p, a in zip(fn.params, code.names)] + [f"**{P}options"]) + "}"
    h, e, g = f"{P}hot", f"{P}entry", f"{P}grid"
    folded: list[str] = []
    if inline is not None:
        # the driver's launch in this frame, for entries whose launcher offers it (see inline_launch.py)
        inline.check_names(ns)
        ns.update(inline.names)
        c = f"{P}inline"
        folded = [f"    {c} = {e}.inline",
                  f"    if {c} is not None and {h}.plain and ({inline.condition}):",
                  *("        " + line for line in inline.lines(g, ", ".join(code.runtime), c, f"{e}.kernel"))]
    src = "\n".join([
        f"def dispatch({g}, {', '.join(sig + [f'**{P}options'])}):",
        f"    {h} = _hot",
        f"    if {h}.gen != _knobs.generation or {P}extra or _fn.pre_run_hooks or _fn.interpret or _fn.debug "
        f"or not {env_unset}:",
        f"        {slow}",
        "    if _fn.used_globals:",
        "        _fn.check_globals()",
        f"    if _fn.device_caches.get({h}.driver) is not {h}.state:",
        f"        {slow}",
        "    try:",
        *("        " + line for line in code.body),
        f"        {e} = {h}.fast.get({key} if not {P}options else ({key}, tuple({P}options.items())))",
        "    except _KT:",
        f"        {e} = None",
        f"    if {e} is None:",
        f"        {slow}",
        f"    {P}seen = {h}.grid_seen",
        f"    if {g} is {P}seen[0]:",
        f"        {g} = {P}seen[1]",
        "    else:",
        f"        if callable({g}):",
        f"            {g} = {g}({meta})",
        f"        if type({g}) is tuple and len({g}) == 1 and type({g}[0]) is int and 0 <= {g}[0] <= {h}.max_x:",
        f"            {h}.grid_seen = {P}seen = ({g}, ({g}[0], 1, 1))",
        f"            {g} = {P}seen[1]",
        "        else:",
        f"            {g} = _grid3(_fn.__name__, {g}, {h}.max_grid)",
        *folded,
        f"    if {e}.guard is not None:",
        f"        {e}.guard({bound})",
        f"    {P}r = {tuple_expr(code.runtime)}",
        f"    if {e}.select is not None:",
        f"        {P}r = {e}.select({P}r)",
        f"    if {h}.enter is not None:",
        f"        {h}.enter(_md(_fn, {e}.kernel, {g}, {bound}))",
        f"    if {e}.with_arguments:",
        f"        {e}.launcher({g}, {P}r, {bound})",
        "    else:",
        f"        {e}.launcher({g}, {P}r)",
        f"    if {h}.exit is not None:",
        f"        {h}.exit(_md(_fn, {e}.kernel, {g}, {bound}))",
        f"    return {e}.kernel",
    ])
    exec(compile(src, f"<launch of {fn.__name__}>", "exec"), ns)
    return HotPath(fn, rename(ns["dispatch"], fn, lead=1), ns, device_type, inline, pinned_apart)


def remember(fn: Any, state: Any, gen: int, key: tuple, options: dict, entry: Any) -> None:
    """After the full path found or compiled ``entry`` for ``key`` (without debug, under the settings of
    generation ``gen``): let the generated launch find it from now on."""
    hp = getattr(fn, "_hot_path", None)  # (an instance made without __init__ has none)
    device_type = getattr(state.driver, "device_type", None)
    inline = getattr(state.driver, "inline_launch", None)
    pinned_apart = tells_pinned_apart(state.driver)
    if (hp is None or hp.fn is not fn or hp.device_type != device_type or hp.inline is not inline
            or hp.pinned_apart != pinned_apart):
        if not fn._hot_eligible():
            return
        hp = make_hot_path(fn, device_type, inline, pinned_apart)
        fn._hot_path = hp
    hot = hp.ns["_hot"]
    if hot.gen != gen or hot.state is not state:
        rt = knobs.runtime.__dict__
        if gen != knobs.generation or rt.get("interpret") or rt.get("debug"):
            return  # settings changed meanwhile (another thread), or set so that the frame would never hit
        hot = Hot(gen, state)
        hp.ns["_hot"] = hot
    hot.fast[key if not options else (key, tuple(options.items()))] = entry
    if inline is not None and inline.step is not None:
        from .native_front import arm
        arm(fn, hp, hot, key, options, entry)
