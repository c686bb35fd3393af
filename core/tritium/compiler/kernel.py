"""A compiled kernel: its stages (``kernel.asm``), its metadata, and its launcher."""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Optional

from ..backends.compiler import BaseBackend, GPUTarget

# the launch API of Triton's CompiledKernel is the runtime's (the layer above); these runtime modules never import
# the compiler (runtime.launch, which compiles, is not among them)
from ..runtime.compiled_launch import run_compiled
from ..runtime.driver import driver
from ..runtime.triton_run import TritonRun
from ..runtime.triton_run import launch_metadata as triton_launch_metadata


class AsmDict(dict):
    """Stage name -> artifact (text, or bytes for binaries)."""


class CompiledKernel:
    def __init__(self, src: Any, files: dict[str, Any], metadata: dict, key: str,
                 backend: Optional[BaseBackend] = None) -> None:
        self.src = src
        self.hash = key
        self.name = metadata["name"]
        t = metadata["target"]
        md = dict(metadata)
        md["target"] = GPUTarget(t[0], t[1], t[2])
        md.setdefault("shared", 0)
        self.metadata = namedtuple("KernelMetadata", sorted(md))(**md)
        self.metadata_dict = md
        binary_ext = backend.binary_ext if backend is not None else ""
        asm = AsmDict()
        order = {ext: i for i, ext in enumerate(md.get("stages", ()))}   # compile order, also on a cache hit
        for fname, data in sorted(files.items(), key=lambda kv: order.get(kv[0].rsplit(".", 1)[-1], len(order))):
            ext = fname.rsplit(".", 1)[-1]
            if ext == "json":
                continue
            if ext == binary_ext:
                asm[ext] = data if isinstance(data, bytes) else data.encode("latin-1")
            else:
                asm[ext] = data.decode() if isinstance(data, bytes) else data
        self.asm = asm
        self.kernel = asm.get(binary_ext)
        self.backend = backend
        self._launcher: Any = None
        self.function: Any = None
        self.module: Any = None
        # what Triton's _init_handles reports; a driver's make_launcher may set them
        self.n_regs = 0
        self.n_spills = 0
        self.n_max_threads = 0

    @classmethod
    def from_cache(cls, src: Any, entry: Any, key: str, backend: BaseBackend) -> "CompiledKernel":
        return cls(src, entry.files, entry.metadata, key, backend)

    @property
    def launcher(self) -> Any:
        """``launcher(grid, args)``: the driver's launcher for this kernel, built on first use."""
        if self._launcher is None:
            self._launcher = driver.active.make_launcher(self)
        return self._launcher

    @property
    def run(self) -> Any:
        """Triton's launcher protocol: ``run(gx, gy, gz, stream, function, packed_metadata, launch_metadata,
        enter_hook, exit_hook, *args)`` (code generated against Triton's CompiledKernel calls it)."""
        return TritonRun(self)

    def launch_metadata(self, grid: tuple, stream: Any, *args: Any) -> Any:
        """Triton's: None unless a launch enter hook is set, else what the hooks receive (``.get()``)."""
        return triton_launch_metadata(self, grid, stream, *args)

    def _init_handles(self) -> None:
        """Load the binary (build the launcher) now rather than on the first launch."""
        self.launcher

    def __getitem__(self, grid: Any) -> Any:
        """``kernel[grid](*args)`` with every argument of the @jit function, constexprs included (as Triton)."""
        def runner(*args: Any, stream: Any = None) -> None:
            run_compiled(self, grid, args)
        return runner

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.name} stages={list(self.asm)}>"
