"""Plugin file for TRITIUM_PLUGIN_PATHS: registers the GPU emulator backend ("gpu-emu"), e.g. to run the
conformance suite through the GPU lowering without a GPU:

    TRITIUM_PLUGIN_PATHS=tests/gpu/gpu_emu_plugin.py pytest --pyargs tritium.testing.conformance --backend=gpu-emu

Registered this way the backend has variants for the differential fuzzer: "ctas1" (as launched), "ctas2" and
"ctas4" (kernels launched without num_ctas get 2 or 4, so the cluster split or its one-CTA form runs on every
kernel):

    TRITIUM_PLUGIN_PATHS=tests/gpu/gpu_emu_plugin.py python -m tritium.testing.fuzz \\
        --backend gpu-emu:ctas2 --backend gpu-emu:ctas4 --budget 600
"""
from __future__ import annotations

import dataclasses

from tritium.gpu.emulator import TRITIUM_PLUGIN_API, hookimpl  # noqa: F401
from tritium.gpu.emulator import tritium_backends as _emulator_backends

#: the knob's environment variable (tritium.knobs.compilation.emulator_num_ctas)
NUM_CTAS_ENV = "TRITIUM_EMULATOR_NUM_CTAS"


def variants() -> dict:
    return {f"ctas{n}": {NUM_CTAS_ENV: str(n)} for n in (1, 2, 4)}


@hookimpl
def tritium_backends() -> list:
    return [dataclasses.replace(spec, variants=f"{__name__}:variants") for spec in _emulator_backends()]
