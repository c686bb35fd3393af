"""tritium's backend for NVIDIA GPUs: ttir -> ttgir -> llir -> ptx (llvmlite's NVPTX target) -> cubin (ptxas,
or the driver's JIT), launched through cuda-bindings. Importing this package imports no CUDA library."""
__version__ = "0.1.0"
