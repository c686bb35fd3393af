"""``triton._C.libtriton``: Triton's IR API (:mod:`.ir`) over tritium's tile IR, and the native argument
specializer (tritium's, see :mod:`tritium.runtime.triton_specialize`). Triton's other bindings (its passes, LLVM,
its GPU dialects) have no counterpart here: tritium runs its own pipeline."""
from tritium.runtime.triton_specialize import native_specialize_impl  # noqa: F401

from . import ir  # noqa: F401
