"""``import triton`` for tritium (the opt-in distribution ``tritium-triton-compat``).

Code written for Triton runs on tritium unchanged: ``triton`` offers tritium's public names, and every
``triton.X.Y`` module is the tritium module implementing it (see :mod:`._alias`), so ``triton.language.core`` is
``tritium.language.core``. ``triton.__version__`` reads like the Triton release whose API tritium follows (version
checks in libraries compare against it); ``triton.__tritium_version__`` is tritium's own. Uninstall this
distribution to opt out; it refuses to load beside a real Triton.
"""
from __future__ import annotations

from typing import Any

from ._guard import refuse_beside_real_triton

refuse_beside_real_triton()

import tritium as _tritium  # noqa: E402

from ._alias import install as _install  # noqa: E402

_install()

#: the Triton release whose API and semantics tritium follows
__version__ = "3.6.0"
__tritium_version__ = _tritium.__version__

from tritium import (JITFunction, MockTensor, TensorWrapper, cdiv, constexpr_function, jit, knobs,  # noqa: E402,F401
                     next_power_of_2, reinterpret)

_OWN = {"InterpreterError": ("triton._runtime_errors", "InterpreterError")}
#: submodules of this package reached as attributes of ``triton`` without an import (``triton._C.libtriton.ir``)
_OWN_MODULES = {"_C"}


def __getattr__(name: str) -> Any:
    if name in _OWN_MODULES:
        import importlib
        value = importlib.import_module(f"triton.{name}")
    elif name in _OWN:
        import importlib
        module, attr = _OWN[name]
        value = getattr(importlib.import_module(module), attr)
    elif name.startswith("__"):
        raise AttributeError(name)
    else:
        try:
            value = getattr(_tritium, name)
        except AttributeError:
            raise AttributeError(f"module 'triton' has no attribute {name!r} (tritium-triton-compat maps Triton's "
                                 "names onto tritium; this one has no tritium counterpart)") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(getattr(_tritium, "__all__", ())) | set(_OWN))
