"""The ``tt`` dialect's module for the MLIR bindings: empty on purpose (its ops have no OpView classes and print
in generic form). Its existence is what matters: the bindings import a module for every dialect whose ops they
wrap and, when none is found, search ``sys.path`` again on the next op (``tritium._mlir``)."""
