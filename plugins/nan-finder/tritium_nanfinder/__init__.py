"""tritium-nanfinder: kernels report the first non-finite value they write (pass ``nonfinite-check``)."""
__version__ = "0.1.0"
