"""Typed configuration knobs: the only module that reads tritium's environment variables.

Each knob is a descriptor on a group (``knobs.compilation.always_compile``). Reading a knob returns the
value set from Python if there is one, otherwise the first environment variable of its names that is
set, otherwise its default. The names follow Triton's (``TRITON_ALWAYS_COMPILE``); where Triton says
``TRITON_`` the ``TRITIUM_`` spelling is accepted too and wins when both are set.

    tritium.knobs.compilation.always_compile = True
    with tritium.knobs.compilation.scope():
        tritium.knobs.compilation.dump_ir = True       # restored when the block ends

Plugins declare their own groups through the ``tritium_knobs`` hook; they appear as attributes of this
module (``tritium.knobs.<group>``) once plugins are loaded.
"""
from __future__ import annotations

import os
import re
from contextlib import contextmanager
from typing import Any, Callable, Generic, Iterator, Optional, TypeVar

T = TypeVar("T")
_UNSET: Any = object()

_TRUE = {"1", "true", "on", "yes", "y"}
_FALSE = {"0", "false", "off", "no", "n", ""}


class KnobError(ValueError):
    pass


def parse_bool(text: str, name: str) -> bool:
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise KnobError(f"{name}={text!r}: expected a boolean (1/0, true/false, on/off)")


_ENVIRON_TYPE = type(os.environ)
#: bumped whenever a knob is set, deleted or restored from Python, so that caches derived from knob values
#: (the runtime's in-memory kernel keys) can tell in one comparison that they are still valid; also bumped
#: (:func:`settings_changed`) when the plugin registry in effect or the active driver changes
generation = 0


def _changed() -> None:
    global generation
    generation += 1


def settings_changed() -> None:
    """Tell the caches keyed on :data:`generation` that something they depend on besides knobs changed (the
    plugin registry in effect, the active driver)."""
    _changed()


def _encode_env_key(name: str) -> object:
    encode = getattr(os.environ, "encodekey", None)
    return encode(name) if encode is not None else name


def _env_names(name: str) -> tuple[str, ...]:
    """TRITON_X is also read as TRITIUM_X (which wins); other names are read as written."""
    if name.startswith("TRITON_"):
        return ("TRITIUM_" + name[len("TRITON_"):], name)
    return (name, )


class Knob(Generic[T]):
    """One typed setting. ``env`` lists the variable names in priority order."""

    kind = "str"

    def __init__(self, env: str | tuple[str, ...] | None, default: T, doc: str = "",
                 parse: Optional[Callable[[str, str], T]] = None) -> None:
        names: tuple[str, ...] = ()
        for n in ((env, ) if isinstance(env, str) else (env or ())):
            names += _env_names(n)
        self.env = names
        self._env_pairs = tuple((n, _encode_env_key(n)) for n in names)
        self.default = default
        self.doc = doc
        self._parse = parse
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def parse(self, text: str, var: str) -> T:
        if self._parse is not None:
            return self._parse(text, var)
        return text  # type: ignore[return-value]

    def from_env(self) -> T:
        env = os.environ
        if type(env) is _ENVIRON_TYPE:
            # os.environ.get raises and catches KeyError for an unset variable (~2 us); knobs are read on
            # every kernel launch, so look the pre-encoded name up in its backing dict instead
            get = env._data.get  # type: ignore[attr-defined]
            for var, key in self._env_pairs:
                raw = get(key)
                if raw is not None:
                    return self.parse(env.decodevalue(raw), var)  # type: ignore[attr-defined]
            return self.default
        for var in self.env:
            text = env.get(var)
            if text is not None:
                return self.parse(text, var)
        return self.default

    def env_source(self) -> Optional[str]:
        return next((v for v in self.env if v in os.environ), None)

    def __get__(self, group: Any, owner: type | None = None) -> Any:
        if group is None:
            return self
        value = group.__dict__.get(self.name, _UNSET)
        return self.from_env() if value is _UNSET else value

    def __set__(self, group: Any, value: Any) -> None:
        group.__dict__[self.name] = self.check(value)
        _changed()

    def __delete__(self, group: Any) -> None:
        group.__dict__.pop(self.name, None)
        _changed()

    def check(self, value: Any) -> Any:
        return value


class BoolKnob(Knob[bool]):
    kind = "bool"

    def __init__(self, env: str | tuple[str, ...] | None, default: bool = False, doc: str = "") -> None:
        super().__init__(env, default, doc)

    def parse(self, text: str, var: str) -> bool:
        return parse_bool(text, var)

    def check(self, value: Any) -> bool:
        if isinstance(value, str):
            return parse_bool(value, self.name)
        return bool(value)


class IntKnob(Knob[int]):
    kind = "int"

    def parse(self, text: str, var: str) -> int:
        try:
            return int(text.strip())
        except ValueError:
            raise KnobError(f"{var}={text!r}: expected an integer") from None

    def check(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise KnobError(f"knob {self.name} takes an int, got {value!r}")
        return value


class StrKnob(Knob[Optional[str]]):
    kind = "str"

    def __init__(self, env: str | tuple[str, ...] | None, default: Optional[str] = None, doc: str = "",
                 choices: tuple[str, ...] = ()) -> None:
        super().__init__(env, default, doc)
        self.choices = choices

    def parse(self, text: str, var: str) -> Optional[str]:
        return self.check(text, var)

    def check(self, value: Any, var: str = "") -> Optional[str]:
        if value is None:
            return None
        if not isinstance(value, str):
            raise KnobError(f"knob {self.name} takes a string, got {value!r}")
        if self.choices and value not in self.choices:
            raise KnobError(f"{var or self.name}={value!r}: expected one of {', '.join(self.choices)}")
        return value


def unset_check(*knobs: Knob, ns: dict, prefix: str = "_env") -> str:
    """A Python expression, for code generated per kernel launch, that is true when none of these knobs'
    environment variables is set, so that each knob holds its value set from Python or its default: a few
    dict lookups and no call, where reading the knobs costs a few hundred nanoseconds each. The names it reads
    go into ``ns``. It is false once ``os.environ`` was replaced by another mapping (the caller then reads the
    knobs)."""
    env = os.environ
    if type(env) is not _ENVIRON_TYPE:
        return "False"
    # os.environ keeps its backing dict (encoded names) up to date in place: setenv, del, monkeypatch
    ns[f"{prefix}_os"], ns[f"{prefix}_environ"], ns[f"{prefix}_data"] = os, env, env._data  # type: ignore
    parts = [f"{prefix}_os.environ is {prefix}_environ"]
    for i, key in enumerate(key for k in knobs for _, key in k._env_pairs):
        ns[f"{prefix}_k{i}"] = key
        parts.append(f"{prefix}_k{i} not in {prefix}_data")
    return "(" + " and ".join(parts) + ")"


def _bool_or_none(text: str) -> Optional[bool]:
    """True/False for the spellings of a boolean, None for any other text (a name or a list)."""
    low = text.strip().lower()
    return True if low in _TRUE else False if low in _FALSE else None


class DumpKnob(Knob[object]):
    """``1``/``0`` or a kernel name (MLIR_ENABLE_DUMP=1 dumps every kernel, =name only that one)."""
    kind = "bool|kernel-name"

    def __init__(self, env: str, doc: str = "") -> None:
        super().__init__(env, False, doc)

    def parse(self, text: str, var: str) -> object:
        flag = _bool_or_none(text)
        return text.strip() if flag is None else flag

    def check(self, value: Any) -> object:
        return value if isinstance(value, str) else bool(value)

    @staticmethod
    def wants(value: object, kernel_name: str) -> bool:
        return value is True or (isinstance(value, str) and value == kernel_name)


class ListKnob(Knob[tuple[str, ...]]):
    kind = "list"

    def __init__(self, env: str | tuple[str, ...] | None, sep: str = ",", doc: str = "") -> None:
        super().__init__(env, (), doc)
        self.sep = sep

    def parse(self, text: str, var: str) -> tuple[str, ...]:
        return tuple(p.strip() for p in text.split(self.sep) if p.strip())

    def check(self, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            return self.parse(value, self.name)
        return tuple(value or ())


class FlagsKnob(Knob[object]):
    """A boolean, or else a list of names (DISABLE_LLVM_OPT=1 turns all LLVM optimization off;
    DISABLE_LLVM_OPT=disable-lsr sets only LLVM's boolean option -disable-lsr)."""
    kind = "bool|list"

    def __init__(self, env: str, doc: str = "") -> None:
        super().__init__(env, False, doc)

    def parse(self, text: str, var: str) -> object:
        flag = _bool_or_none(text)
        return tuple(p.strip() for p in text.split(",") if p.strip()) if flag is None else flag

    def check(self, value: Any) -> object:
        if isinstance(value, str):
            return self.parse(value, self.name)
        if isinstance(value, (list, tuple)):
            return tuple(str(v).strip() for v in value if str(v).strip())
        return bool(value)


class ObjectKnob(Knob[Any]):
    """A Python-only setting (hooks, callables): no environment variable."""
    kind = "object"

    def __init__(self, default: Any = None, doc: str = "") -> None:
        super().__init__(None, default, doc)

    def __get__(self, group: Any, owner: type | None = None) -> Any:
        # no environment to consult: hooks are read on every launch, so keep this to one dict lookup
        if group is None:
            return self
        return group.__dict__.get(self.name, self.default)


class KnobGroup:
    """A set of knobs. Subclass it and declare knobs as class attributes."""

    group_name = ""

    @classmethod
    def descriptors(cls) -> dict[str, Knob]:
        out: dict[str, Knob] = {}
        for klass in reversed(cls.__mro__):
            out.update({k: v for k, v in vars(klass).items() if isinstance(v, Knob)})
        return out

    def values(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.descriptors()}

    def reset(self) -> None:
        """Forget values set from Python; the environment and defaults apply again."""
        for k in self.descriptors():
            self.__dict__.pop(k, None)
        _changed()

    @contextmanager
    def scope(self) -> Iterator["KnobGroup"]:
        """Values set inside the block are undone when it ends."""
        saved = dict(self.__dict__)
        try:
            yield self
        finally:
            self.__dict__.clear()
            self.__dict__.update(saved)
            _changed()

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self.values().items())
        return f"<knobs.{self.group_name}: {body}>"


# --------------------------------------------------------------------------------------------------

def _default_home() -> str:
    return os.path.expanduser("~")


_CLASS_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


class ClassKnob(Knob[Any]):
    """A class: set from Python as the class itself, or in the environment as ``"module:Class"`` (imported by
    whoever uses it, not here: the module may be heavy or absent)."""
    kind = "module:Class"

    def __init__(self, env: str | tuple[str, ...] | None, doc: str = "") -> None:
        super().__init__(env, None, doc)

    def parse(self, text: str, var: str) -> Any:
        text = text.strip()
        if not text:
            return None
        if not _CLASS_SPEC.fullmatch(text):
            raise KnobError(f"{var}={text!r}: expected module:Class, e.g. "
                            "tritium.cache_redis:RedisRemoteCacheBackend")
        return text

    def check(self, value: Any) -> Any:
        if value is None or isinstance(value, type):
            return value
        if isinstance(value, str):
            return self.parse(value, self.name)
        raise KnobError(f"knob {self.name} takes a class or a 'module:Class' string, got {value!r}")


class cache_knobs(KnobGroup):
    group_name = "cache"
    home_dir = Knob("TRITON_HOME", None,  # type: ignore[arg-type]
                    doc="Directory holding .tritium (cache, dumps); default: the user's home directory")
    dir = StrKnob("TRITON_CACHE_DIR", doc="Kernel cache directory; default: <home>/.tritium/cache")
    dump_dir = StrKnob("TRITON_DUMP_DIR", doc="Where TRITON_KERNEL_DUMP writes; default: <home>/.tritium/dump")
    override_dir = StrKnob("TRITON_OVERRIDE_DIR",
                           doc="Where TRITON_KERNEL_OVERRIDE reads; default: <home>/.tritium/override")
    trust_shared = BoolKnob("TRITIUM_CACHE_TRUST_SHARED",
                            doc="Load cache entries that other users own or can write (a shared cache whose "
                            "writers are all trusted); new entries then follow the umask instead of being "
                            "private")

    remote_manager_class = ClassKnob("TRITON_REMOTE_CACHE_BACKEND",
                                     doc="Remote kernel cache shared by a fleet (module:Class of a "
                                     "RemoteCacheBackend, e.g. tritium.cache_redis:RedisRemoteCacheBackend); "
                                     "whoever can write to it can run code in your process: opt in only "
                                     "for a store your fleet alone writes")

    def tritium_home(self) -> str:
        return os.path.join(self.home_dir or _default_home(), ".tritium")

    def cache_dir(self) -> str:
        return self.dir or os.path.join(self.tritium_home(), "cache")

    def dump_path(self) -> str:
        return self.dump_dir or os.path.join(self.tritium_home(), "dump")

    def override_path(self) -> str:
        return self.override_dir or os.path.join(self.tritium_home(), "override")


class redis_knobs(KnobGroup):
    group_name = "redis"
    host = StrKnob("TRITON_REDIS_HOST", "localhost", doc="Redis server of the remote kernel cache")
    port = IntKnob("TRITON_REDIS_PORT", 6379, doc="Port of that Redis server")
    key_format = StrKnob("TRITON_REDIS_KEY_FORMAT", "tritium:{key}:{filename}",
                         doc="Redis key of a remote cache item, from {key} and {filename}")
    timeout_ms = IntKnob("TRITIUM_REDIS_TIMEOUT_MS", 2000,
                         doc="Connect and read timeout of the remote kernel cache; past it the local cache "
                         "is used")


class compilation_knobs(KnobGroup):
    group_name = "compilation"
    always_compile = BoolKnob("TRITON_ALWAYS_COMPILE", doc="Compile even when the cache has the kernel")
    dump_ir = BoolKnob("TRITON_KERNEL_DUMP", doc="Write every stage of every compiled kernel to the dump dir")
    override = BoolKnob("TRITON_KERNEL_OVERRIDE", doc="Replace stages with files found in the override dir")
    front_end_debugging = BoolKnob("TRITON_FRONT_END_DEBUGGING",
                                   doc="Show the compiler's own traceback instead of a CompilationError")
    disable_line_info = BoolKnob("TRITON_DISABLE_LINE_INFO", doc="Strip source locations from the IR")
    mlir_dump = DumpKnob("MLIR_ENABLE_DUMP", doc="Dump the IR before every MLIR pass: 1, or a kernel name")
    mlir_dump_path = StrKnob("MLIR_DUMP_PATH", doc="File that MLIR_ENABLE_DUMP appends to; default: stderr")
    llvm_ir_dump = BoolKnob("LLVM_IR_ENABLE_DUMP", doc="Dump LLVM IR before and after LLVM optimization")
    mlir_timing = BoolKnob("MLIR_ENABLE_TIMING", doc="Print the time each MLIR pass takes")
    disable_llvm_opt = FlagsKnob("DISABLE_LLVM_OPT", doc="1: no LLVM optimization; or a comma-separated list of "
                                 "LLVM boolean options to turn on (e.g. disable-lsr)")
    llvm_timing = BoolKnob("LLVM_ENABLE_TIMING", doc="Print the time each LLVM pass takes")
    enable_llvm_debug = BoolKnob("TRITON_ENABLE_LLVM_DEBUG",
                                 doc="Pass -debug to LLVM: its debug output goes to stderr")
    llvm_debug_only = ListKnob("TRITON_LLVM_DEBUG_ONLY",
                               doc="LLVM's -debug-only: debug output of these DEBUG_TYPEs only (comma-separated)")
    reproducer_path = StrKnob("TRITON_REPRODUCER_PATH",
                              doc="Write an MLIR reproducer here before every pass run; after a failure it "
                              "holds the IR before the failing pass (replay: tritium-opt --reproduce FILE)")
    mlir_diagnostics = ListKnob("MLIR_ENABLE_DIAGNOSTICS",
                                doc="MLIR diagnostics to print besides errors: warnings, remarks, stacktraces, "
                                "operations (comma-separated)")
    mlir_remark = BoolKnob("MLIR_ENABLE_REMARK", doc="Deprecated: MLIR_ENABLE_DIAGNOSTICS=remarks")
    use_ir_loc = StrKnob("USE_IR_LOC", doc="Stage (ttir, ttgir) whose IR file lines become the locations "
                         "of later stages, instead of the Python source lines")
    dump_ir_extract_di_local_variables = BoolKnob(
        "LLVM_EXTRACT_DI_LOCAL_VARIABLES", doc="Full debug info: values bound to Python names become debugger "
        "variables (DILocalVariable; a tile shows its first element)")
    allow_non_constexpr_globals = BoolKnob("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS",
                                           doc="Let kernels read non-constexpr module globals")
    sanitize_overflow = BoolKnob("TRITON_SANITIZE_OVERFLOW",
                                 doc="Check signed integer arithmetic for overflow (debug mode)")
    # the cluster split is fuzzed and conformance-tested through this: kernels are launched without num_ctas there
    emulator_num_ctas = IntKnob("TRITIUM_EMULATOR_NUM_CTAS", 1,
                                doc="GPU emulator (gpu-emu): num_ctas of kernels launched without one (1, 2, 4 or 8)")


class runtime_knobs(KnobGroup):
    group_name = "runtime"
    interpret = BoolKnob("TRITON_INTERPRET", doc="Run kernels in the Python interpreter instead of compiling")
    debug = BoolKnob("TRITON_DEBUG", doc="Keep device_assert checks in compiled code")
    default_backend = StrKnob("TRITON_DEFAULT_BACKEND", doc="Backend to use when several drivers are active")
    add_stages_inspection_hook = ObjectKnob(
        None, doc="fn(self, stages, options, language, capability): inspect or change the stage pipeline; "
        "called with no arguments it returns a (key, hash) pair for the cache")
    launch_enter_hook = ObjectKnob(None, doc="Called with launch metadata before every launch")
    launch_exit_hook = ObjectKnob(None, doc="Called with launch metadata after every launch")
    jit_cache_hook = ObjectKnob(None, doc="Called before compiling; returning False skips the compile")
    jit_post_compile_hook = ObjectKnob(None, doc="Called after a kernel was compiled")
    num_threads = IntKnob("TRITIUM_NUM_THREADS", 0, doc="Host threads a CPU launch may use; 0: all cores")


class language_knobs(KnobGroup):
    group_name = "language"
    fp32_default = StrKnob("TRITON_F32_DEFAULT", choices=("ieee", "tf32", "tf32x3"),
                           doc="Default input_precision of tl.dot on fp32 inputs")
    default_fp_fusion = BoolKnob("TRITON_DEFAULT_FP_FUSION", True, doc="Allow mul+add to fuse into fma")


def _usable_cores() -> int:
    # the cores this process may run on (a container's or taskset's limit), not the machine's
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class autotuning_knobs(KnobGroup):
    group_name = "autotuning"
    print = BoolKnob("TRITON_PRINT_AUTOTUNING", doc="Print the best config and the time autotuning took")
    cache = BoolKnob("TRITON_CACHE_AUTOTUNING", doc="Keep autotuning results in the on-disk cache")
    # A worker costs ~1.3 s to start and warm up; on 2 cores under load, 4 configs tuned 2-3x slower with
    # workers than serially (measured), so parallel compiles are the default only from 4 usable cores on.
    compile_workers = IntKnob("TRITIUM_AUTOTUNE_COMPILE_WORKERS",
                              min(8, _usable_cores()) if _usable_cores() >= 4 else 0,
                              doc="Processes that compile an autotuner's configs in parallel into the kernel "
                              "cache before timing them; default: the usable cores, at most 8, when there are "
                              "4 or more, else 0; 0 or 1: compile one after another while timing")


class plugin_knobs(KnobGroup):
    group_name = "plugins"
    paths = ListKnob("TRITON_PLUGIN_PATHS", sep=":", doc="Plugin files or folders to load without installing")
    enable = ListKnob("TRITIUM_PLUGINS_ENABLE", doc="Only these plugins load (names; empty: all)")
    disable = ListKnob("TRITIUM_PLUGINS_DISABLE", doc="These plugins do not load (names)")


class interpreter_knobs(KnobGroup):
    group_name = "interpreter"
    bounds_check = BoolKnob("TRITIUM_INTERPRET_BOUNDS_CHECK", True,
                            doc="Interpreter: raise on loads and stores outside the argument's memory")
    batch = BoolKnob("TRITIUM_INTERPRET_BATCH", True,
                     doc="Interpreter: run the grid's programs as vectorized batches (0: one at a time)")


cache = cache_knobs()
redis = redis_knobs()
compilation = compilation_knobs()
runtime = runtime_knobs()
language = language_knobs()
autotuning = autotuning_knobs()
plugins = plugin_knobs()
interpreter = interpreter_knobs()

_groups: dict[str, KnobGroup] = {g.group_name: g for g in (cache, compilation, runtime, language, autotuning,
                                                            plugins, interpreter, redis)}
_group_owner: dict[str, str] = {name: "tritium" for name in _groups}


def register_group(group: KnobGroup, owner: str) -> None:
    """Add a plugin's knob group as ``tritium.knobs.<group_name>``. A name taken by another owner is an error."""
    name = group.group_name
    if not name.isidentifier():
        raise KnobError(f"knob group name {name!r} of {owner} is not an identifier")
    if name in _groups and _groups[name] is not group and _group_owner.get(name) != owner:
        raise KnobError(f"knob group {name!r} is declared by both {_group_owner[name]} and {owner}")
    # the same owner registering a new object (a plugin reloaded from its file) replaces the old one, so
    # that tritium.knobs.<name> is the object the plugin reads
    _groups[name] = group
    _group_owner[name] = owner
    globals()[name] = group


def groups() -> dict[str, KnobGroup]:
    return dict(_groups)


def describe() -> list[tuple[str, str, str, Any, str]]:
    """(group.knob, kind, environment variables, current value, doc) for every knob."""
    rows = []
    for gname, group in _groups.items():
        for kname, knob in type(group).descriptors().items():
            rows.append((f"{gname}.{kname}", knob.kind, " ".join(knob.env), getattr(group, kname), knob.doc))
    return rows


@contextmanager
def scope() -> Iterator[None]:
    """Undo, when the block ends, every knob set inside it, in every group."""
    saved = {name: dict(g.__dict__) for name, g in _groups.items()}
    try:
        yield
    finally:
        for name, g in _groups.items():
            if name in saved:
                g.__dict__.clear()
                g.__dict__.update(saved[name])
        _changed()


def reset() -> None:
    for g in _groups.values():
        g.reset()
