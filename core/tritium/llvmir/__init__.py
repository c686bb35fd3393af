"""LLVM IR as text, shared by every backend that writes LLVM IR (the CPU code generator, the GPU lowering and
the GPU targets built on it).

- :mod:`.types`: MLIR element types to LLVM types, byte sizes, constant literals;
- :mod:`.text`: :class:`~.text.Function` and :class:`~.text.Module`, the builders of the text;
- :mod:`.fp8`: the 8-bit float formats, described once (bits, bias, NaN/inf rules, MLIR and Triton names);
- :mod:`.scalar`: arith/math ops on scalar SSA values: the op tables and one emitter whose target-specific
  choices (math libraries, integer division guards, NaN-ignoring min/max) are overridable methods.
- :mod:`.native_call`: builtins, JIT-compiled in process, that call a C function pointer with integer
  arguments at the cost of a builtin call (the launchers' driver and kernel calls);

Nothing here imports MLIR: callers pass type names and attribute values as Python strings and numbers.
"""
