"""Python modules of tritium's own MLIR dialects, as the MLIR bindings look for them (see ``tritium._mlir``)."""
