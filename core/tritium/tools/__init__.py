"""Command-line tools: ``tritium`` (:mod:`tritium.tools.cli`) and ``tritium-opt`` (:mod:`tritium.tools.opt`).

Both are also callable in process (``main(argv)`` returns the exit status), which is how the tests run
them against an explicit plugin registry."""
