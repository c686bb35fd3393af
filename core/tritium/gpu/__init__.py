"""Target-neutral GPU compilation, a library that GPU backends parameterize.

- :mod:`.layout`: linear layouts (which thread holds which element of a tile) and their algebra;
- :mod:`.axis_info`: contiguity, divisibility and constancy analysis (vector widths, coalescing);
- :mod:`.assign`: the ``ttgir`` stage, layouts assigned to every tile value;
- :mod:`.lower`: ``ttgir`` -> LLVM IR text, distributing tile ops over threads (reductions through warp
  shuffles and shared memory, layout conversions, loops as phi nodes);
- :mod:`.target`: :class:`TargetHooks`, what a backend supplies (identity, barriers, shuffles, shared
  memory, math, printf, tensor-core dot strategies);
- :mod:`.emulator`: a host target that runs the lowered code with one OS thread per GPU thread, so the
  library can be tested without a GPU.

Nothing here names a vendor; backends pass their specifics in through :class:`TargetHooks`.
"""
