"""Plugin file for TRITIUM_PLUGIN_PATHS: registers the GPU emulator backend ("gpu-emu"), e.g. to run the
conformance suite through the GPU lowering without a GPU:

    TRITIUM_PLUGIN_PATHS=tests/gpu/gpu_emu_plugin.py pytest --pyargs tritium.testing.conformance --backend=gpu-emu
"""
from tritium.gpu.emulator import TRITIUM_PLUGIN_API, tritium_backends  # noqa: F401
