"""Which function makes the launcher's ``cuLaunchKernel`` call, and what happens when that call fails.

Two callers of the same driver entry point: cuda-bindings' Cython wrapper (always there once cuda-bindings
imports) and the native builtin of :func:`cuda.native_launch` (~4 us cheaper per launch on the H200, but JIT-built
with llvmlite). A process starts on the wrapper and chooses once, at its ``NATIVE_AFTER``-th launch, so that a
process that launches little (a server loading ``.tritium`` artifacts, whose cold start must not import llvmlite)
never pays the build. ``launch`` is the current call; the launcher reads it from this module on every launch.

A failed launch queued nothing, so it may be made again: where the calling thread had no current context
(CUDA_ERROR_INVALID_CONTEXT) after making the device's primary one current, and where the native call failed,
through the wrapper (:func:`after_failure`).
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable

from .knobs import nvidia as nv_knobs

#: launches made through cuda-bindings' wrapper before the native call is built
NATIVE_AFTER = 100
INVALID_CONTEXT = 201  # CUDA_ERROR_INVALID_CONTEXT
_early_launches = 0


def choose(*args: Any) -> int:
    """The launch call until the process's NATIVE_AFTER-th launch, which chooses it once per process: the native
    builtin, or the wrapper where the builtin cannot be built or TRITIUM_NVIDIA_NATIVE_LAUNCH=0. Chosen under the
    compile lock, which a fork waits for (runtime/forksafe.py)."""
    global launch, is_native, packed, launch_values, _early_launches
    if _early_launches < NATIVE_AFTER:
        _early_launches += 1  # racy across threads on purpose: a launch more or less before the choice is harmless
        return bindings_launch()(*args)
    from tritium.runtime.forksafe import compile_lock
    with compile_lock:
        if launch is choose:
            call, native = make_call()
            packing = make_packed() if native else None
            # packed first: a launcher that sees the new launch call sees its packing variant with it
            packed = (call, packing) if packing is not None else (None, None)
            launch, is_native = call, native
            if packing is not None:
                launch_values = make_values_launch(packed, call)
    return launch(*args)


@functools.lru_cache(maxsize=None)
def bindings_launch() -> Callable[..., int]:
    """cuda-bindings' cuLaunchKernel returning the bare CUresult, built once (the first NATIVE_AFTER launches and
    every fallback use it)."""
    from . import cuda
    call_wrapper = cuda.cu.cuLaunchKernel

    def call(*args: Any) -> int:
        return call_wrapper(*args)[0]
    return call


def make_call() -> tuple[Callable[..., int], bool]:
    """The launch call this process should use, and whether it is the native builtin."""
    if not nv_knobs.native_launch:
        say("kernels launch through cuda-bindings' cuLaunchKernel (TRITIUM_NVIDIA_NATIVE_LAUNCH=0)")
        return bindings_launch(), False
    from . import cuda
    try:
        native, source = cuda.native_launch()
    except Exception as exc:  # noqa: BLE001 - whatever stops the builtin, the wrapper still launches
        say(f"kernels launch through cuda-bindings' cuLaunchKernel: the native call cannot be built: "
            f"{type(exc).__name__}: {exc}")
        return bindings_launch(), False
    say(f"kernels launch through a native builtin calling cuLaunchKernel (its address from {source})")
    return native, True


def make_packed() -> Any:
    """The native call's variant that builds ``kernelParams`` from packed bytes (cuda.native_packed_launch), or
    None where it cannot be built (the launcher then packs into its buffer under its lock)."""
    from . import cuda
    try:
        return cuda.native_packed_launch()
    except Exception as exc:  # noqa: BLE001 - the plain native call still launches
        say(f"the native call's packing variant cannot be built: {type(exc).__name__}: {exc}")
        return None


def make_values_launch(packed_now: tuple, call: Any) -> Callable[..., int]:
    """The cached launch's native last step (values_launch.py), built beside ``call`` and its packing variant;
    where it cannot be built, the stand-in that always leaves the launch to the launcher."""
    from . import cuda, faults, values_launch
    if not driver_globals:
        return no_values_launch
    try:
        address, _ = cuda.launch_kernel_address()
        built = values_launch.build(address, packed_now, call, globals(), driver_globals, faults._recent,
                                    values_launch.blocking_objects())
    except Exception as exc:  # noqa: BLE001 - the launcher's own path still launches
        say(f"the cached launch's native last step cannot be built: {type(exc).__name__}: {exc}")
        return no_values_launch
    # core's generated launches snapshot what the driver offers when a kernel is remembered: make them remember
    # again, now that the step is native (runtime/native_front.py)
    from tritium import knobs
    knobs.settings_changed()
    return built


def no_values_launch(*_: Any) -> int:
    """``launch_values`` before (or without) the native one: 1, the launcher launches."""
    return 1


def after_failure(err: int, call: tuple, device: int) -> int:
    """The CUresult of a launch whose first attempt returned ``err`` (nonzero), after what may be retried:
    a thread that has not used CUDA yet has no current context, so the device's primary one (which torch and the
    runtime use too, so their memory is valid) is made current, as torch does on first use; a failure of the
    native call is checked through the wrapper (:func:`confirm_failure`)."""
    if err == INVALID_CONTEXT:
        from . import cuda
        cuda.ensure_context(device)
        err = launch(*call)
    if err and is_native:
        err = confirm_failure(err, call)
    return err


def confirm_failure(err: int, call: tuple) -> int:
    """A launch the native call says failed is made again through cuda-bindings (a failed launch queued
    nothing). Where that one succeeds the native call is wrong for this driver: it is dropped for the process."""
    global launch, is_native, packed, launch_values
    again = bindings_launch()(*call)
    if again == 0:
        say(f"the native cuLaunchKernel returned {err} where cuda-bindings' succeeded: launching through "
            "cuda-bindings from now on")
        launch, is_native, packed, launch_values = bindings_launch(), False, (None, None), no_values_launch
    return again


def reset() -> None:
    """Back to the state before the process's first launch (the choice is made again NATIVE_AFTER launches on)."""
    global launch, is_native, packed, launch_values, _early_launches
    launch, is_native, packed, launch_values, _early_launches = choose, False, (None, None), no_values_launch, 0


def say(message: str) -> None:
    if nv_knobs.launch_debug:
        print(f"tritium-nvidia: {message}", file=sys.stderr, flush=True)


#: the current launch call: ``launch(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra) -> CUresult``
launch: Callable[..., int] = choose
is_native = False
#: (the native launch call, its packing variant): the launcher packs the parameters into fresh bytes and calls
#: the variant while the first item is ``launch`` (so a test or fallback that replaces ``launch`` turns it off)
packed: tuple = (None, None)
#: ``launch_values(c, grid, *values) -> 0 | 1``: the cached launch's last step, written into core's frame
#: (hot_launch.INLINE_BODY): 0 when it launched, 1 when the launcher must (see values_launch.py)
launch_values: Callable[..., int] = no_values_launch
#: the driver module's namespace, whose ``_torch_c`` the native step reads at every launch (tests replace it
#: there); driver.py hands it over when it loads, so that this module need not import the driver
driver_globals: dict = {}
