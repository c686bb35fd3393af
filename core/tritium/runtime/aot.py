"""``tritium.load_compiled(path)``: launch a kernel compiled ahead of time, with no compiler in the process.

An inference server's cold start should cost reading a file and loading a binary, not a compilation: this
module imports no MLIR, no frontend and no backend compiler. It reads the artifact (:mod:`.aot_format`), asks
the plugin registry which driver runs its backend, and hands the backend's binary to that driver's ordinary
``make_launcher``, the path a JIT-compiled kernel takes.

What a backend's driver class offers for this (both optional; without ``aot_abi`` its binaries are refused):

- ``aot_abi: int``: the version of what a launcher expects of a binary and its metadata (calling convention,
  metadata keys). The artifact records it; a backend that changed it refuses the old binaries.
- ``check_binary(metadata) -> None``: raise (with a message that says what to do) when the device here cannot
  run a binary compiled with that metadata (another CPU architecture, missing instruction sets, another GPU).

Launching checks the arguments as a JIT launch does, against the signature the artifact was compiled for:
count, array element types and devices, integer ranges, the divisibility the compiler was told to assume,
compile-time values, unsafe host arrays (negative strides, read-only memory the kernel writes).
"""
from __future__ import annotations

import importlib
import operator
from collections import namedtuple
from typing import Any, Callable, Optional

from ..backends.compiler import GPUTarget
from ..errors import ArgumentDeviceError
from ..plugins import registry
from . import aot_format, aot_grid
from .aot_format import ArtifactError
from .driver import driver as active_driver
from .grid import grid3
from .safety import check_array
from .specialize import dtype_name, specialize_arg

_INT_RANGES = {"i1": (0, 1), "i8": (-2**7, 2**7), "i16": (-2**15, 2**15), "i32": (-2**31, 2**31),
               "i64": (-2**63, 2**63), "u1": (0, 2), "u8": (0, 2**8), "u16": (0, 2**16), "u32": (0, 2**32),
               "u64": (0, 2**64)}
_FLOATS = ("fp16", "bf16", "fp32", "fp64")
_drivers: dict[type, Any] = {}


class _Source:
    """What a driver's launcher reads of ``kernel.src``: the signature, the compile-time values."""

    def __init__(self, params: list[dict]) -> None:
        self.fn = None
        self.signature = {p["name"]: p["type"] for p in params}
        self.constants = {(i, ): p["value"] for i, p in enumerate(params) if p["type"] == "constexpr"}


class LoadedKernel:
    """The compiled kernel as a driver sees it: the same attributes a JIT-compiled kernel has."""

    def __init__(self, header: dict, binary: bytes, target: Any) -> None:
        md = dict(header["metadata"])
        md["target"] = target
        md.setdefault("shared", 0)
        self.name = header["kernel"]
        self.hash = md.get("hash", "")
        self.metadata_dict = md
        self.metadata = namedtuple("KernelMetadata", sorted(md))(**md)
        self.kernel = binary
        self.asm = {header["binary_stage"]: binary}
        self.src = _Source(header["params"])
        self.n_regs = self.n_spills = self.n_max_threads = 0


class CompiledArtifact:
    """A loaded artifact: ``k[grid](*args)``, ``k.run(grid, *args)``, or ``k(*args)`` on the grid it was
    compiled with (``--grid``). ``args`` are every parameter of the kernel (compile-time ones must equal the
    values compiled in) or only its run-time ones."""

    def __init__(self, path: str, header: dict, kernel: LoadedKernel, drv: Any, launcher: Callable) -> None:
        self.path = path
        self.header = header
        self.kernel = kernel
        self.name = kernel.name
        self.driver = drv
        self.launcher = launcher
        self.params = header["params"]
        self.target = kernel.metadata_dict["target"]
        self.signature = {p["name"]: p["type"] for p in self.params}
        self.constants = {p["name"]: p["value"] for p in self.params if p["type"] == "constexpr"}
        self.runtime_names = [p["name"] for p in self.params if p["type"] != "constexpr"]
        self.grid = header.get("grid")
        if self.grid is not None:
            ints = [p["name"] for p in self.params if p["type"] in _INT_RANGES] + list(self.constants)
            try:
                self.grid = aot_grid.parse(", ".join(self.grid), ints)
            except ValueError as exc:
                raise ArtifactError(f"{path}: {exc}") from None
        self.max_grid = tuple(drv.max_grid())
        written = kernel.metadata_dict.get("written_args")
        self._checks = [self._arg_check(j, p, written) for j, p in
                        enumerate(p for p in self.params if p["type"] != "constexpr")]

    def __repr__(self) -> str:
        t = self.target
        sig = ", ".join(f"{p['name']}: {p['type'] if p['type'] != 'constexpr' else repr(p['value'])}"
                        for p in self.params)
        return f"<CompiledArtifact {self.name}({sig}) for {t.backend}:{t.arch} from {self.path}>"

    # -- launching ---------------------------------------------------------------------------------------
    def __getitem__(self, grid: Any) -> Callable[..., None]:
        return lambda *args: self.run(grid, *args)

    def __call__(self, *args: Any) -> None:
        self.run(None, *args)

    def run(self, grid: Any, *args: Any) -> None:
        runtime = self._runtime_args(args)
        values = tuple(check(a) for check, a in zip(self._checks, runtime))
        if grid is None:
            if self.grid is None:
                raise TypeError(f"kernel `{self.name}` was compiled without --grid: launch it as k[grid](*args) or "
                                "k.run(grid, *args)")
            named = dict(zip(self.runtime_names, runtime), **self.constants)
            grid = aot_grid.evaluate(self.grid, named)
        elif callable(grid):
            grid = grid(dict(zip(self.runtime_names, runtime), **self.constants))
        self.launcher(grid3(self.name, grid, self.max_grid), values)

    def _runtime_args(self, args: tuple) -> tuple:
        n_all, n_rt = len(self.params), len(self.runtime_names)
        if len(args) == n_all and n_all != n_rt:
            for p, a in zip(self.params, args):
                if p["type"] == "constexpr":
                    a = getattr(a, "value", a)
                    if a != p["value"] or isinstance(a, bool) != isinstance(p["value"], bool):
                        raise ValueError(f"argument `{p['name']}` of kernel `{self.name}` was compiled in as "
                                         f"{p['value']!r}, got {a!r}: pass {p['value']!r}, or compile another "
                                         f"artifact with that value ({self.path})")
            return tuple(a for p, a in zip(self.params, args) if p["type"] != "constexpr")
        if len(args) != n_rt:
            every = ", ".join(p["name"] for p in self.params)
            raise TypeError(f"kernel `{self.name}` takes its {n_all} arguments ({every}) or only its {n_rt} run-time "
                            f"ones ({', '.join(self.runtime_names)}); got {len(args)}")
        return args

    def _arg_check(self, j: int, p: dict, written: Optional[list]) -> Callable[[Any], Any]:
        name, ty, hint, kernel = p["name"], p["type"], p.get("hint"), self.name
        if ty.startswith("*"):
            return _pointer_check(self, name, ty, hint, written is None or j in written,
                                  (self.kernel.metadata_dict.get("written_at") or {}).get(str(j)))
        if ty in _INT_RANGES:
            lo, hi = _INT_RANGES[ty]

            def int_check(v: Any) -> int:
                try:
                    n = operator.index(v)
                except TypeError:
                    raise TypeError(f"argument `{name}` of kernel `{kernel}` was compiled as {ty}: pass an integer, "
                                    f"got {type(v).__name__} {v!r}") from None
                if not lo <= n < hi:
                    raise ValueError(f"argument `{name}` of kernel `{kernel}` was compiled as {ty}, whose range is "
                                     f"{lo}..{hi - 1}; got {n}: compile it with a wider type (e.g. i64)")
                if hint == 16 and n % 16:
                    raise ValueError(f"argument `{name}` of kernel `{kernel}` was compiled assuming it is a multiple "
                                     f"of 16 ({ty}:16), got {n}: pass a multiple of 16 or compile without the hint")
                return n
            return int_check
        if ty in _FLOATS:
            def float_check(v: Any) -> float:
                try:
                    return float(v)
                except (TypeError, ValueError):
                    raise TypeError(f"argument `{name}` of kernel `{kernel}` was compiled as {ty}: pass a number, "
                                    f"got {type(v).__name__} {v!r}") from None
            return float_check
        raise ArtifactError(f"{self.path}: argument `{name}` has type {ty!r}, which this tritium cannot pass")


def _pointer_check(art: CompiledArtifact, name: str, ty: str, hint: Any, written: bool,
                   where: Optional[str]) -> Callable[[Any], int]:
    want = ty[2:] if ty.startswith("*k") else ty[1:]
    kernel, drv = art.name, art.driver

    def check(v: Any) -> int:
        try:
            key, addr = specialize_arg(v)
        except TypeError as exc:
            raise TypeError(f"argument `{name}` of kernel `{kernel}` ({ty}): {exc}") from None
        if key[0] != "*":
            raise TypeError(f"argument `{name}` of kernel `{kernel}` was compiled as {ty}: pass an array (a tensor "
                            f"or numpy array of {want}), got {type(v).__name__} {v!r}")
        got = dtype_name(key[1])
        if got != want:
            raise TypeError(f"argument `{name}` of kernel `{kernel}` was compiled as {ty}: pass an array of {want}, "
                            f"got one of {got} (convert it, e.g. x.to(...)/x.astype(...), or compile an artifact "
                            f"for {got})")
        if not drv.accepts_device(key[2]):
            raise ArgumentDeviceError(f"argument `{name}` of kernel `{kernel}` lives on device '{key[2]}', which this "
                                      f"kernel's device ({art.target.backend}) cannot reach: move it there first")
        if hint == 16 and addr % 16:
            raise ValueError(f"argument `{name}` of kernel `{kernel}` was compiled assuming a 16-byte aligned "
                             f"address ({ty}:16), got one at {addr:#x}: pass an aligned array (a fresh allocation, not "
                             "an offset view) or compile without the :16 hint")
        check_array(kernel, name, v, written, where)
        return addr
    return check


def _driver_for(header: dict, path: str) -> Any:
    """The driver that runs the artifact's backend here, after checking that it can load the binary."""
    be = header["backend"]
    t = header["target"]
    found = registry().backends
    if be["name"] not in found:
        raise ArtifactError(f"{path} holds a kernel for {t[0]}:{t[1]}, compiled by backend '{be['name']}' "
                            f"({be.get('distribution')} {be.get('version')}), which is not installed here "
                            f"(installed: {', '.join(sorted(found)) or 'none'}): install {be.get('distribution')}")
    spec, info = found[be["name"]]
    module, _, attr = spec.driver.partition(":")
    cls = getattr(importlib.import_module(module), attr)
    abi = getattr(cls, "aot_abi", None)
    if abi is None:
        raise ArtifactError(f"{path}: backend '{be['name']}' ({info.distribution} {info.version}) cannot load "
                            "precompiled kernels (its driver declares no aot_abi)")
    if abi != be.get("abi"):
        raise ArtifactError(f"{path} was compiled by {be.get('distribution')} {be.get('version')}, whose binaries "
                            f"have ABI {be.get('abi')}; the installed {info.distribution} {info.version} loads ABI "
                            f"{abi}: compile the kernel again with this installation (`tritium compile`)")
    if not cls.is_active():
        raise ArtifactError(f"{path} holds a kernel for {t[0]}:{t[1]}, but backend '{be['name']}' finds no "
                            "device on this machine")
    drv = active_driver._active if isinstance(active_driver._active, cls) else _drivers.get(cls)
    if drv is None:
        drv = _drivers.setdefault(cls, cls())
    return drv


def load_compiled(path: Any) -> CompiledArtifact:
    """Load a kernel written by ``tritium compile`` and return it ready to launch (see the module doc)."""
    path = str(path)
    header, binary = aot_format.read(path)
    try:
        params, md, target = header["params"], header["metadata"], header["target"]
        header["kernel"], header["backend"]["name"], header["binary_stage"]  # noqa: B018
    except (KeyError, TypeError):
        raise ArtifactError(f"{path}: its header lacks required fields; it was not written by `tritium compile`")
    drv = _driver_for(header, path)
    check = getattr(drv, "check_binary", None)
    if check is not None:
        try:
            check(md)
        except (RuntimeError, ValueError) as exc:
            raise ArtifactError(f"{path}: {exc}") from None
    n_rt = sum(1 for p in params if p["type"] != "constexpr")
    if "arg_types" in md and len(md["arg_types"]) != n_rt:
        raise ArtifactError(f"{path}: its signature has {n_rt} run-time arguments but its binary takes "
                            f"{len(md['arg_types'])}; it was not written by `tritium compile`")
    kernel = LoadedKernel(header, binary, GPUTarget(target[0], target[1], target[2]))
    launcher = drv.make_launcher(kernel)
    return CompiledArtifact(path, header, kernel, drv, launcher)
