"""``tl.extra.cuda`` (Triton's ``triton.language.extra.cuda``): what only an NVIDIA GPU answers, provided to core
through the ``tritium_language_extras`` hook (plugin.py).

The special registers are read as Triton reads them, one PTX ``mov`` through ``tl.inline_asm_elementwise``, so the
PTX names them as Triton's does (``%globaltimer``, ``%smid``) and the GPU lowering needs nothing of its own: the
timer's read has side effects (two reads are two reads, in program order), the SM id is pure. ``num_warps`` and
``num_threads`` are the compilation's own option, a constexpr. On any other target, and in the interpreter, each
raises a compile-time error naming the function (the other backends' code does not depend on ``num_warps``, so
they must not answer with one).
"""
from __future__ import annotations

from typing import Any

from tritium.language import core
from tritium.language.core import CompileTimeError, builtin
from tritium.language.extra import libdevice  # noqa: F401  (tl.extra.cuda.libdevice: the portable set is CUDA's)
from tritium.language.functions import inline_asm_elementwise

# a package to the import system (no submodule files): Triton's `import triton.language.extra.cuda.libdevice` needs
# its parent to be one; tritium-triton-compat maps that name to tritium's portable libdevice, which is `libdevice` here
__path__: list[str] = []

__all__ = ["libdevice", "globaltimer", "smid", "num_threads", "num_warps", "gdc_wait", "gdc_launch_dependents"]

#: CUDAOptions.backend_name: the options a kernel is compiled with for this backend
_BACKEND = "cuda"


def _require_nvidia(what: str, semantic: Any) -> Any:
    options = getattr(semantic, "options", None)
    if getattr(options, "backend_name", None) != _BACKEND:
        from tritium.interpreter.semantic import InterpreterSemantic
        where = ("the interpreter" if isinstance(semantic, InterpreterSemantic) else
                 getattr(options, "backend_name", None) or "a target that is not an NVIDIA GPU")
        raise CompileTimeError(f"tl.extra.cuda.{what}() reads an NVIDIA GPU; this kernel is compiled for {where}. "
                               "Use it only in kernels for NVIDIA GPUs (guard it with a constexpr)")
    return options


def _register(what: str, asm: str, constraint: str, dtype: Any, pure: bool, semantic: Any) -> Any:
    _require_nvidia(what, semantic)
    # no arguments: one statement on scalars
    return inline_asm_elementwise(asm, constraint, [], dtype=dtype, is_pure=pure, pack=1, _semantic=semantic)


@builtin
def globaltimer(_semantic=None):
    """The GPU's global nanosecond timer (``%globaltimer``), an int64 scalar; each call reads it again."""
    return _register("globaltimer", "mov.u64 $0, %globaltimer;", "=l", core.int64, False, _semantic)


@builtin
def smid(_semantic=None):
    """The id of the streaming multiprocessor running this program (``%smid``), an int32 scalar."""
    return _register("smid", "mov.u32 $0, %smid;", "=r", core.int32, True, _semantic)


@builtin
def num_warps(_semantic=None):
    """The kernel's ``num_warps`` launch option, a constexpr."""
    return core.constexpr(_require_nvidia("num_warps", _semantic).num_warps)


@builtin
def num_threads(_semantic=None):
    """Threads per program (``num_warps`` times the warp size, 32), a constexpr."""
    options = _require_nvidia("num_threads", _semantic)
    return core.constexpr(options.num_warps * options.warp_size)


@builtin
def gdc_wait(_semantic=None):
    """Grid dependency control (sm_90+): wait until the grids this launch depends on completed and their memory
    operations are visible. Harmless when the launch is not a programmatic dependent launch."""
    _register("gdc_wait", "griddepcontrol.wait; // dummy $0", "=r", core.int32, False, _semantic)


@builtin
def gdc_launch_dependents(_semantic=None):
    """Grid dependency control (sm_90+): let the dependent grid launch once every program called this (or
    ended); a hint, repeated calls do nothing."""
    _register("gdc_launch_dependents", "griddepcontrol.launch_dependents; // dummy $0", "=r", core.int32, False,
              _semantic)
