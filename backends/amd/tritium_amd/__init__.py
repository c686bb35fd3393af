"""tritium-amd: AMD GPUs (CDNA: gfx90a, gfx942, gfx950; RDNA with wave32) through llvmlite's AMDGPU target, the
code object linked by the LLD of the ``ziglang`` wheel, launched through hip-python (imported only to run)."""
__version__ = "0.1.0"
