"""The targets a kernel runs on: the interpreter (the oracle) and every active backend in each of its variants.

Backends are whatever the plugin registry holds, plus plugins that tritium ships but does not register by
default (the GPU host emulator, which runs the GPU lowering on OS threads). Nothing here knows a backend by
name: a backend declares its variants through ``BackendSpec.variants`` (a lazy ``"pkg.module:function"``
returning ``{variant name: {ENV_VAR: value}}``), and each variant runs in a worker process with those
environment settings, since knobs are read from the environment.
"""
from __future__ import annotations

import os
import select
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from ... import plugins
from ...backends import _load
from ...hookspecs import LazyCallable
from .runner import ORACLE
from .worker import recv, send

#: plugin modules shipped with tritium whose backends are not registered by default, and the share of kernels
#: they get (they are slow); their kernels use small tiles
SHIPPED_EXTRA = {"tritium.gpu.emulator": 0.2}


@dataclass
class Target:
    name: str                      # "backend" or "backend:variant"
    backend: str
    plugin: str                    # module path of the plugin providing the backend
    env: dict = field(default_factory=dict)
    share: float = 1.0             # fraction of kernels it runs
    small: bool = False            # wants small tiles
    features: Optional[frozenset] = None


def _variants(spec: Any) -> dict:
    path = getattr(spec, "variants", "") or ""
    if not path:
        return {}
    return dict(LazyCallable(path)() or {})


def _importable(module: Any) -> str:
    """How a worker imports the plugin ``module``: its name, or for a plugin file of TRITIUM_PLUGIN_PATHS (which
    no import path reaches) the file."""
    name = getattr(module, "__name__", "") or ""
    path = getattr(module, "__file__", "") or ""
    # asked of the import finders, as a fresh worker would import it (importlib.util.find_spec answers from
    # sys.modules, where a plugin file's module is too)
    found = False
    for finder in sys.meta_path if name else ():
        try:
            found = getattr(finder, "find_spec", lambda *a: None)(name.partition(".")[0], None) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            break
    if not found and path.endswith(".py"):
        return os.path.abspath(path)
    return name


def _active(spec: Any) -> bool:
    try:
        return bool(_load(spec.driver).is_active())
    except Exception:
        return False


def discover(wanted: Optional[list] = None) -> list[Target]:
    """Targets to compare against the interpreter. ``wanted`` filters by backend or target name."""
    found: dict[str, tuple] = {}
    for name, (spec, info) in plugins.registry().backends.items():
        found[name] = (spec, _importable(info.module), 1.0)
    for module, share in SHIPPED_EXTRA.items():
        try:
            reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "extra": module})
        except Exception:
            continue
        for name, (spec, _) in reg.backends.items():
            found.setdefault(name, (spec, module, share))
    out = []
    for name, (spec, module, share) in sorted(found.items()):
        if not module or not _active(spec):
            continue
        small = share < 1.0
        try:
            variants = _variants(spec)
        except Exception as exc:
            print(f"fuzz: variants of backend {name!r} could not be listed ({exc}); running its default only",
                  file=sys.stderr)
            variants = {}
        # a backend with variants runs in each of them (its default configuration is expected among them,
        # e.g. a "native" variant), else as it is
        for vname, env in sorted(variants.items()):
            out.append(Target(f"{name}:{vname}", name, module, dict(env), share, small))
        if not variants:
            out.append(Target(name, name, module, {}, share, small))
    if wanted:
        out = [t for t in out if t.name in wanted or t.backend in wanted]
    return out


def oracle() -> Target:
    return Target(ORACLE, ORACLE, "")


class Worker:
    """One worker process of a target; restarted after a crash, a timeout or ``recycle`` jobs."""

    def __init__(self, target: Target, home: str, logdir: str, recycle: int = 150) -> None:
        # every compiled kernel stays loaded in a worker: slow targets (one JIT engine per kernel) are
        # restarted sooner, before their memory runs out
        self.target, self.home, self.logdir = target, home, logdir
        self.recycle = recycle // 4 if target.small else recycle
        self.proc: Optional[subprocess.Popen] = None
        self.jobs = 0

    def start(self) -> None:
        env = dict(os.environ)
        env.update(self.target.env)
        env["TRITIUM_HOME"] = self.home             # a private cache: nothing reused from other runs
        env.pop("TRITON_INTERPRET", None)
        env.pop("TRITIUM_INTERPRET", None)
        safe = "".join(c if c.isalnum() else "_" for c in self.target.name)
        self.log = os.path.join(self.logdir, f"worker-{safe}.stderr")
        with open(self.log, "ab") as err:   # what a crashing worker said last goes into the finding
            self.proc = subprocess.Popen([sys.executable, "-m", "tritium.testing.fuzz.worker", self.target.backend,
                                          self.target.plugin], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=err, env=env)
        self.jobs = 0

    def stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except Exception:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def call(self, msg: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None or self.jobs >= self.recycle:
            self.stop()
            self.start()
        self.jobs += 1
        try:
            send(self.proc.stdin, msg)
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                self.proc.kill()
                self.proc.wait()
                self.proc = None
                return {"ok": False, "error": f"Timeout: no answer within {timeout:.0f} s", "crash": True}
            return recv(self.proc.stdout)
        except (EOFError, BrokenPipeError, OSError) as exc:
            code = None
            if self.proc is not None:
                try:
                    code = self.proc.wait(timeout=10)   # a negative code names the signal
                except subprocess.TimeoutExpired:
                    self.proc.kill()
            self.proc = None
            return {"ok": False, "error": f"WorkerCrash: the worker died (exit code {code}): {exc}; its last words: "
                    f"{self._tail()}", "crash": True}

    def _tail(self) -> str:
        try:
            with open(self.log, "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - 600))
                return f.read().decode(errors="replace").strip().replace("\n", " | ")[-500:]
        except OSError:
            return "(no log)"

    def hello(self) -> dict:
        return self.call({"op": "hello"}, timeout=300)
