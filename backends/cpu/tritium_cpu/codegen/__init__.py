"""Lowering of tile IR to LLVM IR for the host CPU (see :mod:`.lower`)."""
from .module import lower_to_llvm  # noqa: F401
