"""``tritium compile FILE.py:KERNEL --signature SIG --target BACKEND:ARCH -o OUT``: ahead-of-time compilation.

Writes one self-describing file (:mod:`tritium.runtime.aot_format`) that ``tritium.load_compiled`` launches
later without compiling; the target's device need not be present here. The signature follows Triton's
``tools/compile.py``: one entry per kernel parameter, comma-separated, each a type (``*fp32``, ``i32``,
``fp16``...) optionally with a hint (``:16``: a multiple of 16, or for a pointer a 16-byte aligned address;
``:1``: the value 1, compiled in) or a number (a compile-time value; required for ``tl.constexpr``
parameters).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from .. import __version__
from ..backends import backends
from ..backends.compiler import GPUTarget
from ..compiler import ASTSource, compile, make_backend
from ..compiler.errors import CompilationError
from ..language.dtypes import SIGNATURE_TYPES
from ..plugins import registry
from ..runtime import aot_format, aot_grid
from ..runtime.driver import driver
from ..runtime.jit import JITFunction


class UsageError(ValueError):
    """A mistake in the command line (what is wrong and what to write instead)."""


def _number(text: str) -> Any:
    if text in ("True", "False"):
        return text == "True"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return None


def parse_signature(text: str, fn: Any) -> list[dict]:
    """One dict per parameter of ``fn``: ``name``, ``type`` (a signature type or ``"constexpr"``), ``hint``
    (16, or None) and ``value`` (the compile-time value)."""
    items = [s.strip() for s in text.split(",")]
    names = fn.arg_names
    if len(items) != len(names):
        raise UsageError(f"--signature has {len(items)} entries but kernel `{fn.__name__}` has {len(names)} "
                         f"parameters ({', '.join(names)}): give one entry per parameter, in order")
    out = []
    for p, item in zip(fn.params, items):
        entry: dict[str, Any] = {"name": p.name, "type": None, "hint": None, "value": None}
        value = _number(item)
        if value is not None:
            entry.update(type="constexpr", value=value)
        elif p.is_constexpr:
            raise UsageError(f"parameter `{p.name}` is tl.constexpr: give its value in the signature (e.g. 1024), "
                             f"not {item!r}")
        else:
            ty, _, hint = item.partition(":")
            base = ty[2:] if ty.startswith("*k") else ty[1:] if ty.startswith("*") else ty
            if base not in SIGNATURE_TYPES or base == "void":
                raise UsageError(f"--signature entry {item!r} for `{p.name}`: unknown type {ty!r}; write a scalar "
                                 f"type ({', '.join(t for t in SIGNATURE_TYPES if t != 'void')}), *TYPE for an "
                                 "array, or a number for a compile-time value")
            entry["type"] = ty
            if hint:
                h = _number(hint)
                if h not in (1, 16) or isinstance(h, bool):
                    raise UsageError(f"--signature entry {item!r}: the hint after ':' must be 16 (a multiple of 16 "
                                     "/ a 16-byte aligned pointer) or 1 (the value 1, compiled in)")
                if h == 1:
                    if ty.startswith("*"):
                        raise UsageError(f"--signature entry {item!r}: a pointer cannot be 1; use :16 or no hint")
                    entry.update(type="constexpr", value=1)
                else:
                    entry["hint"] = 16
        out.append(entry)
    return out


def parse_target(text: Optional[str]) -> Any:
    """``BACKEND[:ARCH[:WARP_SIZE]]``; the arch defaults to the device here, the warp size to that device's, else
    32. Refuses a target no installed backend compiles for, naming the one that is missing."""
    found = backends()
    if not text:
        try:
            return driver.active.get_current_target()
        except Exception as exc:
            raise UsageError(f"no device here to compile for by default ({exc}): give --target BACKEND:ARCH") from None
    parts = text.split(":")
    if len(parts) > 3 or not parts[0]:
        raise UsageError(f"--target {text!r}: write BACKEND, BACKEND:ARCH or BACKEND:ARCH:WARP_SIZE (e.g. cpu)")
    kind = parts[0]
    if not any(b.compiler.supports_target(GPUTarget(kind, parts[1] if len(parts) > 1 else "", 32))
               for b in found.values()):
        raise UsageError(f"--target {text!r}: no installed backend compiles for '{kind}' (installed backends: "
                         f"{', '.join(sorted(found)) or 'none'}); the '{kind}' backend is missing: install its "
                         "tritium backend distribution")
    here = _device_target(found, kind)
    arch: Any = parts[1] if len(parts) > 1 and parts[1] else (here.arch if here else None)
    if arch is None:
        raise UsageError(f"--target {text!r}: no {kind} device here to take the architecture from; give "
                         f"{kind}:ARCH")
    if isinstance(arch, str) and arch.isdigit():
        arch = int(arch)
    try:
        warp = int(parts[2]) if len(parts) > 2 else (here.warp_size if here else 32)
    except ValueError:
        raise UsageError(f"--target {text!r}: the warp size must be an integer") from None
    return GPUTarget(kind, arch, warp)


def _device_target(found: dict, kind: str) -> Any:
    """The target of a device of kind ``kind`` on this machine, if one is present."""
    for b in found.values():
        try:
            if b.driver.is_active():
                t = b.driver().get_current_target()
                if t.backend == kind:
                    return t
        except Exception:   # a driver that cannot tell: as if absent
            continue
    return None


def load_kernel(spec: str) -> Any:
    """``path/to/file.py:kernel`` -> the JITFunction (autotune/heuristics wrappers are unwrapped)."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"{spec!r}: write FILE.py:KERNEL_NAME")
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{spec!r}: no file {path}")
    sys.path.insert(0, str(file.resolve().parent))
    mod_spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(mod_spec)  # type: ignore[arg-type]
    sys.modules.setdefault(file.stem, module)
    mod_spec.loader.exec_module(module)  # type: ignore[union-attr]
    obj = getattr(module, name, None)
    while obj is not None and not isinstance(obj, JITFunction) and hasattr(obj, "fn"):
        obj = obj.fn
    if not isinstance(obj, JITFunction):
        raise UsageError(f"{spec!r}: {path} defines no @jit kernel named {name!r}")
    return obj


def compile_artifact(fn: Any, params: list[dict], target: Any, options: dict, grid: Optional[str],
                     out: str, emit_c: bool = False) -> dict:
    """Compile and write the artifact; returns its header."""
    gridx = None
    if grid:
        ints = [p["name"] for p in params if p["type"] in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")]
        ints += [p["name"] for p in params if p["type"] == "constexpr" and type(p["value"]) is int]
        try:
            gridx = aot_grid.parse(grid, ints)
        except ValueError as exc:
            raise UsageError(f"--grid: {exc}") from None
    backend = make_backend(target)
    owner = [(n, info) for n, (spec, info) in registry().backends.items()
             if type(backend).__module__ + ":" + type(backend).__name__ == spec.compiler]
    if not owner:
        raise UsageError(f"cannot tell which installed backend owns {type(backend).__name__}")
    be_name, info = owner[0]
    spec = registry().backends[be_name][0]
    drv_module, _, drv_attr = spec.driver.partition(":")
    drv_cls = getattr(importlib.import_module(drv_module), drv_attr)
    abi = getattr(drv_cls, "aot_abi", None)
    c_launcher = getattr(drv_cls, "c_launcher", None)
    if emit_c and c_launcher is None:
        raise UsageError(f"--emit-c: backend '{be_name}' ({info.distribution}) writes no C launcher; leave out "
                         "--emit-c and launch the artifact with tritium.load_compiled")
    if abi is None:
        raise UsageError(f"backend '{be_name}' ({info.distribution}) cannot load precompiled kernels, so tritium "
                         "compile cannot build for it")
    signature = {p["name"]: p["type"] for p in params}
    constexprs = {p["name"]: p["value"] for p in params if p["type"] == "constexpr"}
    attrs = {p["name"]: [["tt.divisibility", 16]] for p in params if p["hint"] == 16}
    kernel = compile(ASTSource(fn, signature, constexprs, attrs), target=target, options=options)
    binary = kernel.asm[backend.binary_ext]
    md = dict(kernel.metadata_dict)
    md["target"] = [target.backend, target.arch, target.warp_size]
    header = {"format": aot_format.FORMAT_VERSION, "kernel": kernel.name, "tritium_version": __version__,
              "backend": {"name": be_name, "distribution": info.distribution, "version": info.version, "abi": abi},
              "target": md["target"], "binary_stage": backend.binary_ext, "params": params, "grid": gridx,
              "metadata": md, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    aot_format.write(out, header, binary)
    if emit_c:
        base = out[:-len(aot_format.SUFFIX)] if out.endswith(aot_format.SUFFIX) else out
        # a backend may build its C host's files from another stage than the artifact's binary
        stage = getattr(drv_cls, "c_launcher_stage", backend.binary_ext)
        for suffix, data in c_launcher(header, kernel.asm[stage], Path(base).name).items():
            Path(base + suffix).write_bytes(data)
    return header


def add_parser(sub: Any) -> None:
    c = sub.add_parser("compile", help="compile a kernel ahead of time into a file that tritium.load_compiled runs",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("kernel", help="FILE.py:KERNEL_NAME (the file is executed to find the @jit function)")
    c.add_argument("--signature", "-s", required=True, help='e.g. "*fp32:16, *fp32:16, i32, 1024"')
    c.add_argument("--target", "-t", default=None, help="BACKEND[:ARCH[:WARP_SIZE]], e.g. cpu or cuda:90 "
                   "(default: this machine's device)")
    c.add_argument("--grid", "-g", default=None, help='launch grid as expressions of the arguments, e.g. '
                   '"cdiv(n, 1024), 1, 1"; then k(*args) launches on it')
    c.add_argument("--num-warps", "-w", type=int, default=None)
    c.add_argument("--num-stages", "-ns", type=int, default=None)
    c.add_argument("--out", "-o", default=None, help="output file (default: KERNEL.tritium)")
    c.add_argument("--emit-c", action="store_true", help="also write a C header and launcher beside OUT (OUT "
                   "without .tritium, plus .h and .c, and what else the backend's launcher needs) for C/C++ hosts")


def run(args: Any) -> int:
    try:
        fn = load_kernel(args.kernel)
        params = parse_signature(args.signature, fn)
        target = parse_target(args.target)
        options = {k: v for k, v in (("num_warps", args.num_warps), ("num_stages", args.num_stages))
                   if v is not None}
        out = args.out or f"{fn.__name__}.tritium"
        header = compile_artifact(fn, params, target, options, args.grid, out, args.emit_c)
    except UsageError as exc:
        print(f"tritium compile: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if not isinstance(exc, CompilationError):
            raise
        print(f"tritium compile: kernel `{fn.__name__}` does not compile for this signature:\n{exc}",
              file=sys.stderr)
        return 1
    t = header["target"]
    print(f"wrote {out}: kernel `{header['kernel']}` for {t[0]}:{t[1]} ({header['backend']['distribution']} "
          f"{header['backend']['version']})")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="tritium")
    add_parser(parser.add_subparsers(dest="command", required=True))
    return run(parser.parse_args(["compile", *(sys.argv[1:] if argv is None else argv)]))
