"""``tritium.compile``: sources, the stage pipeline, the cache, dumps and overrides."""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Optional

from .. import knobs
from .._version import __version__
from ..backends import backends
from ..backends.compiler import BaseBackend, GPUTarget, Language
from ..cache import DumpFolder, KernelCache, OverrideFolder, package_fingerprint
from ..debug_knobs import check_artifacts
from ..plugins import PluginError, registry
from ..runtime.driver import driver
from .errors import CompilationError
from .ir_loc import check_stage, snapshot_locations
from .kernel import CompiledKernel
from .shared_code import code_options, options_as_input, share
from .stages import StageDict, inspection_hook_key
from .written import written_args_metadata


def kernel_name(fn: Any, signature: dict, constants: dict) -> str:
    """The compiled kernel's name: as in Triton, a ``repr=`` given to @jit names each specialization (called with
    an object whose ``signature`` and ``constants`` are keyed by parameter name); the part after its last dot."""
    user = getattr(fn, "_repr", None) is not None or "_repr_override" in getattr(fn, "__dict__", {})
    if not user or not hasattr(fn, "arg_names"):
        return fn.__name__
    named = {fn.arg_names[k[0]]: v for k, v in constants.items() if len(k) == 1 and k[0] < len(fn.arg_names)}
    name = str(fn.repr(_Specialization(named, signature)))
    name = name[name.rfind(".") + 1:]
    if not name.isidentifier():
        raise CompilationError(fn.__name__, None, None, f"the repr= of @jit function `{fn.__name__}` named a "
                               f"specialization {name!r}, which is not a valid kernel name: return an identifier")
    return name


class _Specialization:
    """What a ``repr=`` function reads: ``constants`` and ``signature`` by parameter name (Triton's
    SpecializationProxy)."""
    __slots__ = ("constants", "signature")

    def __init__(self, constants: dict, signature: dict) -> None:
        self.constants, self.signature = constants, signature


class ASTSource:
    """A @jit function with a signature: ``{name: "*fp32" | "i32" | "constexpr" ...}``, compile-time values
    ``constexprs`` (keyed by name or by ``(index,)``), and specialization ``attrs``."""

    def __init__(self, fn: Any, signature: dict, constexprs: Optional[dict] = None, attrs: Optional[dict] = None):
        self.fn = fn
        self.language = Language.TRITON
        self.ext = "ttir"
        self.signature = dict(signature)
        self.constants: dict[tuple, Any] = {}
        for k, v in (constexprs or {}).items():
            key = (fn.arg_names.index(k), ) if isinstance(k, str) else tuple(k)
            self.constants[key] = v
        self.name = kernel_name(fn, self.signature, self.constants)
        for k in self.signature:
            if not isinstance(k, str):
                raise TypeError("signature keys must be argument names (strings)")
        self.attrs = {(fn.arg_names.index(k), ) if isinstance(k, str) else tuple(k): v
                      for k, v in (attrs or {}).items()}

    def hash(self) -> str:
        sig = [v for _, v in sorted(self.signature.items())]
        consts = "-".join(f"{k}={_value_key(v)}" for k, v in sorted(self.constants.items()))
        key = f"{self.fn.cache_key}-{sorted(self.attrs.items())}-{sig}-{consts}"
        return hashlib.sha256(key.encode()).hexdigest()

    # Triton's signature (target, options, codegen_fns, module_map, context): callers written for Triton pass
    # all five; tritium's frontend uses neither codegen_fns nor module_map, so compile() passes None for both
    def make_ir(self, target: GPUTarget, options: Any, codegen_fns: Optional[dict], module_map: Optional[dict],
                context: Any, capabilities: Optional[frozenset] = None) -> Any:
        from .ast_to_ir import ast_to_ttir
        module = ast_to_ttir(self.fn, self, options=options, context=context, capabilities=capabilities)
        # a context of Triton's C++ API (the compat package's triton._C.libtriton.ir.context, an MLIR context)
        # gets the module back in that API, as Triton's make_ir returns its own module type
        as_triton = getattr(context, "module_from_mlir", None)
        return module if as_triton is None else as_triton(module)

    def parse_options(self) -> dict:
        return {}


class IRSource:
    """A stage file (``.ttir`` and later MLIR stages, or ``.llir``): compile from there on."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.ext = Path(path).suffix[1:]
        self.language = Language.TRITON
        self.src = Path(path).read_text()
        self.name = Path(path).stem.split(".")[0]
        m = re.search(r"func\.func\s+(?:public\s+)?@(\w+)", self.src)
        if m:
            self.name = m.group(1)
        self.signature: dict = {}

    def hash(self) -> str:
        return hashlib.sha256(self.src.encode()).hexdigest()

    def make_ir(self, target: GPUTarget, options: Any, codegen_fns: Optional[dict], module_map: Optional[dict],
                context: Any, capabilities: frozenset = frozenset()) -> Any:
        if self.ext in ("llir", ) or self.ext not in _mlir_exts():
            return self.src
        from .._mlir import parse_module
        return parse_module(self.src, context)

    def parse_options(self) -> dict:
        return {}


def _mlir_exts() -> set[str]:
    return {"ttir", "ttgir", "ttcir", "mlir"}


def _value_key(v: Any) -> str:
    return getattr(v, "cache_key", None) or repr(getattr(v, "value", v))


def make_backend(target: GPUTarget) -> BaseBackend:
    found = [b for b in backends().values() if b.compiler.supports_target(target)]
    if len(found) != 1:
        names = ", ".join(b.name for b in found) or "none"
        raise RuntimeError(f"{len(found)} installed backends support target {target} ({names}); "
                           "exactly one must")
    return found[0].compiler(target)


def triton_key() -> str:
    """The compiler's identity (version and a hash of its source), under Triton's name: libraries such as
    torch's inductor put it in their own cache keys."""
    return f"{__version__}-{package_fingerprint('tritium')}"


def cache_key(src: Any, backend: BaseBackend, options: Any) -> str:
    # the plugins' part: their identity (names, versions, source), tritium_cache_key and knob values
    plugin_key = registry().cache_key(options, backend)
    hook = inspection_hook_key(knobs.runtime.add_stages_inspection_hook)
    parts = [__version__, package_fingerprint("tritium"), src.hash(), backend.hash(), BaseBackend.options_hash(options),
             plugin_key, hook, str(knobs.language.fp32_default), str(knobs.compilation.disable_line_info),
             str(knobs.compilation.disable_llvm_opt), str(knobs.compilation.use_ir_loc),
             str(knobs.compilation.dump_ir_extract_di_local_variables)]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def build_stages(backend: BaseBackend, options: Any, language: Language) -> StageDict:
    """The backend's stages, then every plugin's ``tritium_add_stages``, then the seed's inspection hook."""
    stages = StageDict()
    backend.add_stages(stages, options, language)
    capability = getattr(backend, "capability", backend.target.arch)

    def owner(info: Any) -> None:
        stages.owner = info.describe()

    registry().call_each("tritium_add_stages", before=owner, stages=stages, options=options, language=language,
                         capability=capability, backend=backend)
    hook = knobs.runtime.add_stages_inspection_hook
    if hook is not None:
        stages.owner = "knobs.runtime.add_stages_inspection_hook"
        hook(backend, stages, options, language, capability)
    stages.owner = "backend"
    return stages


def _store_form(artifact: Any) -> Any:
    if isinstance(artifact, (str, bytes)):
        return artifact
    op = getattr(artifact, "operation", None)
    if op is not None:
        # like Triton's dumps, MLIR stages keep their source locations (unless line info is off), so that
        # an edited stage fed back through TRITON_KERNEL_OVERRIDE still points at the kernel's lines
        return op.get_asm(enable_debug_info=not knobs.compilation.disable_line_info, use_name_loc_as_prefix=True)
    return str(artifact)


def compile(src: Any, target: Optional[GPUTarget] = None, options: Optional[dict] = None,
            _base: bool = False) -> "CompiledKernel":
    """Compile ``src`` (an ASTSource or a path to a stage file) for ``target`` (default: the active driver's)."""
    if target is None:
        target = driver.active.get_current_target()
    backend = make_backend(target)
    if isinstance(src, (str, os.PathLike)):
        src = IRSource(str(src))
    opts = backend.parse_options(dict(options or {}, **src.parse_options()))
    key = cache_key(src, backend, opts)
    if knobs.compilation.override:
        # a kernel built from override files must never be served under the normal key once they are gone
        overridden = OverrideFolder(src.hash()).fingerprint()
        if overridden is not None:
            key = hashlib.sha256(f"{key}|override:{overridden}".encode()).hexdigest()
    cache = KernelCache()
    if not knobs.compilation.always_compile:
        entry = cache.get(key)
        if entry is not None:
            try:
                kernel = CompiledKernel.from_cache(src, entry, key, backend)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                cache.invalidate(key)   # intact but unusable (another writer's format): compile it again
            else:
                if not _base:
                    _notify(kernel)
                return kernel
    canonical = None if _base else code_options(backend, opts)
    if canonical is not None:
        # the backend compiles these options to the same code as `canonical`: compile (or find) that once
        base = compile(src, target=target, options=options_as_input(canonical), _base=True)
        if base.hash != key:
            kernel = share(src, key, _options_dict(opts), base, src.name[:150], CompiledKernel, cache)
            _notify(kernel)
            return kernel
    stages = build_stages(backend, opts, src.language)
    if src.ext not in stages:
        raise ValueError(f"cannot start compiling at stage {src.ext!r}: this backend's stages are "
                         f"{', '.join(stages)}")
    names = list(stages)
    if knobs.compilation.use_ir_loc:
        check_stage(names)
    first = names.index(src.ext) + (1 if isinstance(src, IRSource) else 0)
    from .._mlir import tile_context
    context = tile_context()
    t0 = time.perf_counter()
    module = src.make_ir(target, opts, None, None, context, getattr(backend, "capabilities", frozenset()))
    file_name = src.name[:150]
    metadata: dict[str, Any] = {"name": src.name, "hash": key, "target": list(_target_tuple(target)),
                                "tritium_version": __version__, **_options_dict(opts)}
    metadata.update(written_args_metadata(module))  # launches refuse read-only arrays among these
    files: dict[str, Any] = {}
    if isinstance(src, IRSource):
        files[f"{file_name}.{src.ext}"] = src.src
    src_hash = src.hash()
    dump = DumpFolder(src_hash) if knobs.compilation.dump_ir else None
    override = OverrideFolder(src_hash) if knobs.compilation.override else None
    timings = {}
    relocated = False
    for ext in names[first:]:
        t = time.perf_counter()
        try:
            module = stages[ext](module, metadata)
        except (CompilationError, PluginError):
            raise
        except Exception as exc:
            if stages.describe(ext) != "backend" and not knobs.compilation.front_end_debugging:
                raise PluginError(f"stage {ext!r} of kernel `{src.name}` failed in code added by "
                                  f"{stages.describe(ext)}: {type(exc).__name__}: {exc}") from exc
            raise
        fname = f"{file_name}.{ext}"
        if override is not None:
            path = override.get(fname)
            if path is not None:
                print(f"\nOverriding kernel with file {path}")
                module = _parse_override(path, module, context)
        if ext == knobs.compilation.use_ir_loc:
            relocated = snapshot_locations(module, os.path.join(knobs.cache.dump_path(), src_hash, "ir_loc", fname))
        files[fname] = _store_form(module)
        if dump is not None:
            dump.put(fname, files[fname])
        timings[ext] = round(time.perf_counter() - t, 6)
    check_artifacts(files, relocated)
    metadata["compile_seconds"] = round(time.perf_counter() - t0, 6)
    metadata["stage_seconds"] = timings
    # a list, so that a kernel loaded from the cache (whose manifest is canonical JSON) keeps the stage order
    metadata["stages"] = [name.rsplit(".", 1)[-1] for name in files]
    files[f"{file_name}.json"] = json.dumps(metadata, default=str)
    if dump is not None:
        dump.put(f"{file_name}.json", files[f"{file_name}.json"])
    cache.put(key, files, metadata)
    kernel = CompiledKernel(src, {k: _store_form(v) for k, v in files.items()}, metadata, key, backend)
    if not _base:
        _notify(kernel)
    return kernel


def _notify(kernel: Any) -> None:
    registry().call_each("tritium_kernel_compiled", kernel=kernel)


def _parse_override(path: str, previous: Any, context: Any) -> Any:
    if isinstance(previous, bytes):
        return Path(path).read_bytes()
    if isinstance(previous, str):
        return Path(path).read_text()
    from .._mlir import parse_module
    return parse_module(Path(path).read_text(), context)


def _target_tuple(t: GPUTarget) -> tuple:
    return (t.backend, t.arch, t.warp_size)


def _options_dict(opts: Any) -> dict:
    d = asdict(opts) if is_dataclass(opts) else dict(vars(opts))
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}
