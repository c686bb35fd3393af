"""What ``knobs.runtime.jit_cache_hook`` and ``jit_post_compile_hook`` are called with, as in Triton 3.6:
``key``, ``repr`` (``name[num_warps=.., num_ctas=.., ...](arg: type, ...)``), ``fn`` (a :class:`JitFunctionInfo`),
``compile`` (the compilation's description), ``is_manual_warmup`` and ``already_compiled``."""
from __future__ import annotations

from typing import Any


class JitFunctionInfo:
    """Triton's ``fn`` of a hook call: ``module`` (the module's name), ``name`` (the qualified name) and
    ``jit_function``. Other attributes are the JITFunction's, for hooks written against tritium's earlier
    ``fn`` (the JITFunction itself)."""

    def __init__(self, module: str, name: str, jit_function: Any) -> None:
        self.module = module
        self.name = name
        self.jit_function = jit_function

    def __getattr__(self, attr: str) -> Any:
        if attr == "jit_function":  # not set yet (copy, unpickling): no recursion through the fallback
            raise AttributeError(attr)
        return getattr(self.jit_function, attr)

    def __repr__(self) -> str:
        return f"JitFunctionInfo(module={self.module!r}, name={self.name!r})"


def hook_kwargs(fn: Any, key: Any, info: dict, warmup: bool) -> dict:
    """The keyword arguments of one hook call for a compilation of ``fn`` described by ``info``."""
    opts = info.get("options")
    shown = ", ".join(f"{name}={getattr(opts, name, None)}" for name in (
        "num_warps", "num_ctas", "num_stages", "enable_fp_fusion", "launch_cooperative_grid"))
    args = ", ".join(f"{name}: {ty}" for name, ty in info.get("signature", {}).items())
    inner = getattr(fn, "fn", fn)
    return {"key": key, "repr": f"{inner.__qualname__}[{shown}]({args})",
            "fn": JitFunctionInfo(inner.__module__, inner.__qualname__, fn), "compile": info,
            "is_manual_warmup": warmup, "already_compiled": False}
