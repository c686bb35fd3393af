"""tritium's CPU backend: kernels compiled to native code for the host, the grid spread over its cores."""
__version__ = "0.1.0"
