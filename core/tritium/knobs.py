"""Typed configuration knobs: the only module that reads tritium's environment variables.

Each knob is a descriptor on a group (``knobs.compilation.always_compile``). Reading a knob returns the
value set from Python if there is one, otherwise the first environment variable of its names that is
set, otherwise its default. The names follow Triton's (``TRITON_ALWAYS_COMPILE``); where Triton says
``TRITON_`` the ``TRITIUM_`` spelling is accepted too and wins when both are set.

    tritium.knobs.compilation.always_compile = True
    with tritium.knobs.compilation.scope():
        tritium.knobs.compilation.dump_ir = True       # restored when the block ends

Plugins declare their own groups through the ``tritium_knobs`` hook; they appear as attributes of this
module (``tritium.knobs.<group>``) once plugins are loaded. This module holds the declarations, the registry
of groups and the change counter; the knob types and groups themselves are :mod:`tritium.knob_types`
(re-exported here: plugins and backends import them from ``tritium.knobs``).
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Iterator

from .knob_types import (  # noqa: F401  (the public knob types, at their import path)
    BoolKnob, ClassKnob, DumpKnob, FlagsKnob, IntKnob, Knob, KnobError, KnobGroup, ListKnob, ObjectKnob, StrKnob,
    on_change, parse_bool, unset_check)

#: bumped whenever a knob is set, deleted or restored from Python, so that caches derived from knob values
#: (the runtime's in-memory kernel keys) can tell in one comparison that they are still valid; also bumped
#: (:func:`settings_changed`) when the plugin registry in effect or the active driver changes
generation = 0


def _changed() -> None:
    global generation
    generation += 1


on_change(_changed)


def settings_changed() -> None:
    """Tell the caches keyed on :data:`generation` that something they depend on besides knobs changed (the
    plugin registry in effect, the active driver)."""
    _changed()


def _default_home() -> str:
    return os.path.expanduser("~")


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
    override_arch = StrKnob("TRITON_OVERRIDE_ARCH", doc="Compile for this architecture instead of the current "
                            "device's, spelled as the active backend spells it (sm80, sm90...); a launch's `arch` "
                            "option wins over it")
    add_stages_inspection_hook = ObjectKnob(
        None, doc="fn(self, stages, options, language, capability): inspect or change the stage pipeline; "
        "called with no arguments it returns a (key, hash) pair for the cache")
    launch_enter_hook = ObjectKnob(None, doc="Called with launch metadata before every launch")
    launch_exit_hook = ObjectKnob(None, doc="Called with launch metadata after every launch")
    jit_cache_hook = ObjectKnob(None, doc="Called before compiling; returning False skips the compile")
    jit_post_compile_hook = ObjectKnob(None, doc="Called after a kernel was compiled")
    num_threads = IntKnob("TRITIUM_NUM_THREADS", 0, doc="Host threads a CPU launch may use; 0: all cores")
    native_dispatch = BoolKnob("TRITIUM_NATIVE_DISPATCH", True,
                               doc="Let native code take cached launches the Python frame would launch the same "
                               "way (runtime/native_front.py), where the driver offers a native launch step; read "
                               "when a kernel's launch is remembered")


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
