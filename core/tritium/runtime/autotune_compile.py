"""Compiling an autotuner's candidate configs in worker processes before it times them.

Timing compiles each config lazily, one after another. With ``knobs.autotuning.compile_workers`` > 1 the
autotuner first hands every config whose kernel is not in the on-disk cache to worker processes, which
compile it into that cache (safe under concurrent writers: private temporaries renamed into place); the
timing runs then find every kernel there. Threads would not help: compiling holds llvmlite's process-wide
lock. Nothing here changes what the timing does: a config a worker could not compile (OutOfResources, a
CompilationError, a crashed worker) is simply compiled again by the timing run, which fails and is treated
exactly as without workers.

Workers are fresh interpreters (``subprocess``, which execs at once: no fork of a process holding MLIR or
LLVM state, see forksafe.py). They are not ``multiprocessing`` children: spawn re-runs the parent's
``__main__`` script in every child, and a script without a ``__main__`` guard would then run its own
work again there. A worker imports the kernel's module and finds the kernel by qualified name, so kernels
that cannot be found that way (``__main__``, a function's locals, ``exec``) are compiled in the parent,
as before. A worker rebuilds the parent's plugin registry and the knob values set from Python, and only
compiles when it computes the parent's cache key for the kernel; anything that would change the key and
cannot reach it (a stage inspection hook set from Python) makes the parent compile serially.
"""
from __future__ import annotations

import importlib
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
from multiprocessing.spawn import get_executable
from types import ModuleType
from typing import Any, Optional

from .. import knobs, plugins
from ..cache import KernelCache
from ..compiler.compiler import ASTSource, cache_key, compile, make_backend
from ..compiler.shared_code import code_options
from ..hookspecs import PluginInfo
from .driver import driver
from .launchable import Heuristics, _Launchable
from .signature import compile_inputs
from .specialize import make_binder

log = logging.getLogger("tritium.autotune")

_WORKER = "from tritium.runtime.autotune_compile import _worker_main; _worker_main()"


# -- parent ------------------------------------------------------------------------------------------

def precompile(tuner: Any, configs: list, args: tuple, kwargs: dict) -> int:
    """Compile ``configs`` of ``tuner`` for this launch in worker processes; the number of kernels the
    workers stored. Never raises for a kernel or a worker: whatever is not stored compiles as before."""
    workers = knobs.autotuning.compile_workers
    if workers <= 1 or len(configs) <= 1:
        return 0
    why = _serial_reason(tuner)
    if why is not None:
        log.debug("autotune %s: compiling configs serially: %s", tuner.__name__, why)
        return 0
    try:
        jobs = _jobs(tuner, configs, args, kwargs)
    except Exception as exc:  # the timing run reports binding errors as it always did
        log.debug("autotune %s: compiling configs serially: %s: %s", tuner.__name__, type(exc).__name__, exc)
        return 0
    if len(jobs) <= 1:
        return 0  # nothing to gain from a worker for one kernel
    try:
        setup = pickle.dumps(_setup())
    except Exception as exc:
        log.debug("autotune %s: compiling configs serially: a knob or plugin cannot reach a worker (%s)",
                  tuner.__name__, exc)
        return 0
    done = _run_workers(setup, jobs, min(workers, len(jobs)))
    log.debug("autotune %s: %d of %d configs compiled by workers", tuner.__name__, done, len(jobs))
    return done


def _serial_reason(tuner: Any) -> Optional[str]:
    fn = tuner.base_fn
    wrapper = tuner.fn
    while isinstance(wrapper, _Launchable):
        if not isinstance(wrapper, Heuristics):
            return f"wrapped in {type(wrapper).__name__}"
        wrapper = wrapper.fn
    rt = knobs.runtime
    if rt.interpret or getattr(fn, "interpret", False):
        return "the interpreter compiles nothing"
    if rt.add_stages_inspection_hook is not None:
        return "knobs.runtime.add_stages_inspection_hook is set from Python and cannot reach a worker"
    if rt.jit_cache_hook is not None:
        return "knobs.runtime.jit_cache_hook decides about compilations"
    if knobs.compilation.always_compile or knobs.compilation.override:
        return "TRITON_ALWAYS_COMPILE or TRITON_KERNEL_OVERRIDE is on"
    if getattr(fn, "src", None) is None:
        return "the kernel has no source file"
    if _find_kernel(fn.module, fn.__qualname__) is not fn:
        return f"{fn.module}.{fn.__qualname__} is not importable as this kernel"
    try:
        if KernelCache().location(create=True) is None:
            return "the kernel cache keeps entries in memory only"
    except OSError as exc:
        return f"the kernel cache cannot be written ({exc})"
    return None


def _find_kernel(module: str, qualname: str, load: bool = False) -> Any:
    """The @jit function at ``module.qualname`` (under any @autotune/@heuristics), or None. The parent's
    ``__main__`` is never a worker's, and ``<locals>`` are not reachable by name. Only a worker imports
    (``load``): the parent looks in the modules it has, and never runs a module's code again."""
    if module in ("__main__", "__mp_main__") or "<" in qualname:
        return None
    try:
        obj: Any = importlib.import_module(module) if load else sys.modules.get(module)
    except Exception:
        return None
    if getattr(obj, "__spec__", None) is None:
        return None  # made by exec or types.ModuleType: a worker cannot import it
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    while isinstance(obj, _Launchable):
        obj = obj.fn
    return obj


def _jobs(tuner: Any, configs: list, args: tuple, kwargs: dict) -> list[bytes]:
    """One pickled job per config whose kernel the on-disk cache lacks: exactly the inputs the launch path
    would compile (the binder's specialization of these arguments, the config's options)."""
    fn = tuner.base_fn
    target = (driver._active or driver.default).get_current_target()
    cache = KernelCache()
    jobs, seen = [], set()
    for config, (expected, code, signature, constexprs, attrs, opts) in zip(configs, _compiles(tuner, configs,
                                                                                                args, kwargs)):
        # configs whose code is the same (they differ in options the backend ignores) compile once: the worker
        # stores that code, and the timing run makes each config's entry from it without compiling
        if code in seen or cache.get(expected) is not None or cache.get(code) is not None:
            continue
        seen.add(code)
        try:
            jobs.append(pickle.dumps((fn.module, fn.__qualname__, fn.cache_key, signature, constexprs, attrs,
                                      opts, target, expected)))
        except Exception as exc:  # an unpicklable constexpr: this one compiles in the parent
            log.debug("autotune %s: config %s compiles in this process: %s", tuner.__name__, config, exc)
    return jobs


def code_keys(tuner: Any, configs: list, args: tuple, kwargs: dict) -> list[Optional[str]]:
    """For each config, a key of the code its launch runs, or None where that is not known here. Configs with
    one key run the same code the same way: they differ only in options that the backend says its code does not
    depend on (``BaseBackend.code_options``), so timing one of them times them all."""
    if _serial_reason_for_keys(tuner) is not None:
        return [None] * len(configs)
    try:
        keys = [code for _, code, *_ in _compiles(tuner, configs, args, kwargs)]
    except Exception as exc:  # the timing run reports binding errors as it always did
        log.debug("autotune %s: every config timed: %s: %s", tuner.__name__, type(exc).__name__, exc)
        return [None] * len(configs)
    # a config's own pre_hook may prepare its launch differently
    return [None if c.pre_hook is not None else k for c, k in zip(configs, keys)]


def _serial_reason_for_keys(tuner: Any) -> Optional[str]:
    wrapper = tuner.fn
    while isinstance(wrapper, _Launchable):
        if not isinstance(wrapper, Heuristics):
            return f"wrapped in {type(wrapper).__name__}"
        wrapper = wrapper.fn
    if knobs.runtime.interpret or getattr(tuner.base_fn, "interpret", False):
        return "interpreted"
    return None


def _compiles(tuner: Any, configs: list, args: tuple, kwargs: dict) -> list[tuple]:
    """For each config: its cache key, the key of the code it compiles to, and the compile's inputs
    (signature, constexprs, attrs, options)."""
    fn = tuner.base_fn
    if fn.used_globals:
        fn.check_globals()
    drv = driver._active or driver.default
    state = fn.device_caches.get(drv)
    binder = state.binder if state is not None else make_binder(fn)
    backend = make_backend(drv.get_current_target())
    debug = bool(fn.debug or knobs.runtime.debug)
    out = []
    for config in configs:
        call = {k: v for k, v in {**kwargs, **config.all_kwargs()}.items() if k not in ("grid", "warmup")}
        wrapper = tuner.fn
        while isinstance(wrapper, Heuristics):  # the meta-parameters they add on every launch
            for name, heur in wrapper.values.items():
                call[name] = heur({**dict(zip(wrapper.arg_names, args)), **call})
            wrapper = wrapper.fn
        key, _, bound, options = binder(*args, **call)
        signature, constexprs, attrs, _ = compile_inputs(fn, key, bound)
        opts = dict(options, **({"debug": True} if debug else {}))
        src = ASTSource(fn, signature, constexprs, attrs)
        parsed = backend.parse_options(dict(opts))
        expected = cache_key(src, backend, parsed)
        canonical = code_options(backend, parsed)
        code = expected if canonical is None else cache_key(src, backend, canonical)
        out.append((expected, code, signature, constexprs, attrs, opts))
    return out


def _setup() -> dict:
    """What a worker needs to compute the parent's cache keys: import path, plugins, knobs set from Python."""
    reg = plugins.registry()
    spec = None
    if plugins._override:
        # an explicit registry (tests, embedding applications): rebuilt from its plugin modules
        spec = []
        for name in reg.order:
            info = reg.infos[name]
            mod = getattr(info.module, "__name__", None)
            if not isinstance(info.module, ModuleType) or sys.modules.get(mod) is not info.module:
                raise ValueError(f"plugin {name!r} is not an importable module")
            spec.append((info.name, info.distribution, info.version, info.source, info.api,
                         dict(info.extra_key), mod))
    values = {}
    for gname, group in knobs.groups().items():
        descriptors = type(group).descriptors()
        # hooks (ObjectKnobs) are Python objects of this process; those that matter made us go serial
        values[gname] = {k: v for k, v in group.__dict__.items()
                         if k in descriptors and not isinstance(descriptors[k], knobs.ObjectKnob)}
    values["autotuning"].pop("compile_workers", None)   # a worker never starts workers (see _run_workers)
    return {"sys_path": list(sys.path), "plugins": spec, "identity": reg.identity(), "knobs": values}


def _run_workers(setup: bytes, jobs: list[bytes], n: int) -> int:
    """Feed ``jobs`` to ``n`` workers, one at a time each, so that a slow kernel does not hold others back."""
    pending = list(reversed(jobs))
    lock = threading.Lock()
    stored = [0]
    procs: list[subprocess.Popen] = []

    def feed(proc: subprocess.Popen) -> None:
        try:
            proc.stdin.write(setup)
            proc.stdin.flush()
            while True:
                with lock:
                    if not pending:
                        return
                    job = pending.pop()
                proc.stdin.write(job)
                proc.stdin.flush()
                status, detail = pickle.load(proc.stdout)
                if status == "ok":
                    with lock:
                        stored[0] += 1
                else:
                    log.debug("autotune worker: %s: %s", status, detail)
                    if status == "setup":
                        return   # this worker cannot compute our keys: leave its share to the others
        except (OSError, ValueError, EOFError, pickle.UnpicklingError) as exc:   # ValueError: closed pipe
            log.debug("autotune worker %d stopped: %s", proc.pid, exc)  # its job compiles in the parent

    # multiprocessing's interpreter: an application embedding Python sets it (its sys.executable is itself)
    python = get_executable()
    if not python:
        return 0
    # a kernel module that tunes when imported must not start workers of its own in a worker
    env = dict(os.environ, TRITIUM_AUTOTUNE_COMPILE_WORKERS="0")
    threads = []
    finished = False
    try:
        for _ in range(n):
            procs.append(subprocess.Popen([python, "-c", _WORKER], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, cwd=os.getcwd(), env=env))
            threads.append(threading.Thread(target=feed, args=(procs[-1], ), daemon=True))
            threads[-1].start()
        for t in threads:
            t.join()
        finished = True
    except OSError as exc:
        log.debug("autotune: cannot start a compile worker: %s", exc)
        for t in threads:
            t.join()
        finished = True
    finally:
        for proc in procs:
            _close(proc, kill=not finished)   # interrupted (Ctrl-C): no worker outlives the tuning
    return stored[0]


def _close(proc: subprocess.Popen, kill: bool) -> None:
    if kill:
        proc.kill()
    try:
        proc.stdin.close()   # end of jobs: the worker exits
    except OSError:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()


# -- worker ------------------------------------------------------------------------------------------

def _worker_main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's: it stops us without a traceback
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)   # whatever a compile prints (dumps, overrides) goes to stderr, not into the replies
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    try:
        setup = pickle.load(inp)
    except EOFError:
        return
    problem = _apply_setup(setup)
    while True:
        try:
            job = pickle.load(inp)
        except EOFError:
            return
        reply = ("setup", problem) if problem else _compile_job(*job)
        pickle.dump(reply, out)
        out.flush()


_kept: list[Any] = []


def _apply_setup(setup: dict) -> Optional[str]:
    sys.path[:] = setup["sys_path"]

    def apply_knobs() -> None:
        groups = knobs.groups()
        for gname, values in setup["knobs"].items():
            if gname in groups:
                groups[gname].__dict__.update(values)
        knobs._changed()

    try:
        apply_knobs()   # before discovery, which reads the plugins group (enable, disable, paths)
        if setup["plugins"] is not None:
            items = [(PluginInfo(name=n, distribution=d, version=v, source=s, api=tuple(api),
                                 extra_key=extra), importlib.import_module(mod))
                     for n, d, v, s, api, extra, mod in setup["plugins"]]
            _kept.append(plugins.use(plugins.PluginRegistry(items)))   # for the worker's whole life: a
            _kept[-1].__enter__()                                       # dropped block would end at once
        identity = plugins.registry().identity()
        apply_knobs()   # again: the plugins' own groups exist now
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    if identity != setup["identity"]:
        return "the plugins found here differ from the parent's"
    return None


def _compile_job(module: str, qualname: str, fn_key: str, signature: dict, constexprs: dict, attrs: dict,
                 opts: dict, target: Any, expected: str) -> tuple[str, str]:
    try:
        fn = _find_kernel(module, qualname, load=True)
        if fn is None or getattr(fn, "cache_key", None) != fn_key:
            return "mismatch", f"{module}.{qualname} is not the parent's kernel here"
        src = ASTSource(fn, signature, constexprs, attrs)
        backend = make_backend(target)
        key = cache_key(src, backend, backend.parse_options(dict(opts)))
        if key != expected:   # a knob or plugin the parent sees differently: the parent compiles this one
            return "mismatch", f"{module}.{qualname}: key {key[:12]} here, {expected[:12]} in the parent"
        compile(src, target=target, options=opts)
        return "ok", key
    except Exception as exc:   # the parent's timing run meets (and handles) the same error
        return "failed", f"{type(exc).__name__}: {exc}"
