"""The launcher's per-launch code, ``hot_call(grid, args)``: one closure per kernel over what the launcher fixed
once, written as text so that the CUDA_LAUNCH_BLOCKING check's dict lookups are inlined, and evaluated in the
driver module's namespace (:func:`launch_factory`): ``_torch_c``, launch_call's current call and the launcher's
methods are read at every launch, so that tests and the fallbacks can replace them.

Where it can, a launch packs the parameters into fresh bytes and hands them to the native call's packing variant
(launch_call.packed), which builds ``kernelParams`` on its stack: nothing is shared between threads, so no lock.
Everything else (the first launches through cuda-bindings, bf16 or out-of-range values struct refuses, tensor
maps, launches that must be ordered across streams, and every failed launch's retries) packs into the launcher's
own buffer under its lock.
"""
from __future__ import annotations

import struct
from typing import Any, Callable, Optional

from . import faults, launch_call, values_launch
from .knobs import nvidia as nv_knobs


def _unset_blocking(ns: dict, prefix: str = "_blk", group: str = "_nv_group") -> str:
    """An expression true only when CUDA_LAUNCH_BLOCKING is neither in the environment nor set from Python, i.e.
    the knob is its default (off): a few dict lookups per launch where reading the knob costs ~0.5 us of a ~8 us
    cached launch. Exact at every launch (the environment is looked up each time, not remembered)."""
    from tritium import knobs
    ns[group] = nv_knobs.__dict__
    unset = knobs.unset_check(type(nv_knobs).launch_blocking, ns=ns, prefix=prefix)
    return f"({unset} and 'launch_blocking' not in {group})"


LAUNCH_SOURCE = """
def make_launch(self, fast, pack, pack_into, offsets, buffer, handles, lock, shared, params, num_ctas, name,
                has_assert, write_maps):
    acquire, release = lock.acquire, lock.release

    def launch(grid, args):
        gx, gy, gz = grid
        if gx <= 0 or gy <= 0 or gz <= 0:
            if gx < 0 or gy < 0 or gz < 0:
                raise ValueError(f"kernel `{name}`: negative grid {grid}")
            return
        tc = _torch_c or _find_torch_c()
        if tc is not None:
            device = tc._cuda_getDevice()
            stream = tc._cuda_getCurrentRawStream(device)
        else:
            device, stream = self.driver.get_current_device(), 0
        try:
            handle = handles[device]
        except KeyError:
            handle = self._handle(device)
        if num_ctas != 1:
            gx = gx * num_ctas
        pk = _lc.packed
        if fast and pk[0] is _lc.launch:
            # the parameters packed into fresh bytes that the native call points the driver at: nothing shared,
            # so no lock (a lock's acquire alone costs ~400 instructions). Anything else takes the path below.
            try:
                data = pack(*args)
            except (_StructError, OverflowError):
                data = None
            if data is not None:
                try:
                    err = pk[1](handle, gx, gy, gz, self.block, 1, 1, shared, stream, offsets, data, 0)
                except (TypeError, OverflowError) as exc:
                    raise _grid_error(name, grid, exc) from None
                if not err:
                    _recent(name)
                    if has_assert or (not {UNSET} and nv_knobs.launch_blocking):
                        self._check_after(device, stream)
                    return
        acquire()
        try:
            if fast:
                try:
                    pack_into(buffer, 0, *args)
                except (_StructError, OverflowError):
                    self._pack(args, device, stream)
            elif write_maps is not None:
                # host tensor maps (every host TensorDescriptor): what ArgumentBuffer.pack does, without its two
                # frames; anything struct refuses takes that path
                try:
                    pack_into(buffer, 0, *args)
                except (_StructError, OverflowError):
                    self._pack(args, device, stream)
                else:
                    write_maps(args)
            else:
                self._pack(args, device, stream)
            try:
                err = _lc.launch(handle, gx, gy, gz, self.block, 1, 1, shared, stream, params, 0)
            except (TypeError, OverflowError) as exc:
                raise _grid_error(name, grid, exc) from None
            if err:
                err = _lc.after_failure(err, (handle, gx, gy, gz, self.block, 1, 1, shared, stream, params, 0),
                                        device)
        finally:
            release()
        if err:
            self._launch_error(err, grid)
        _recent(name)
        if has_assert or (not {UNSET} and nv_knobs.launch_blocking):
            self._check_after(device, stream)
    return launch
"""


def launch_factory(ns: dict) -> Callable[..., Callable[[tuple, tuple], None]]:
    """``make_launch(launcher, ...) -> hot_call``, evaluated in ``ns`` (the driver module's globals, which must hold
    ``_torch_c``, ``_find_torch_c`` and ``_recent``)."""
    ns.update(_lc=launch_call, _StructError=struct.error, nv_knobs=nv_knobs, _grid_error=faults.grid_error)
    source = LAUNCH_SOURCE.replace("{UNSET}", _unset_blocking(ns))
    exec(compile(source, "<tritium_nvidia launch>", "exec"), ns)  # noqa: S102 - our own text
    return ns.pop("make_launch")


def blocking_check(ns: dict) -> Callable[[], bool]:
    """True unless CUDA_LAUNCH_BLOCKING is certainly off (the expression the launch inlines, as a function)."""
    return eval(f"lambda: not {_unset_blocking(ns)}", ns)  # noqa: S307 - our own text


# The common launch written into core's cached-launch frame (tritium.runtime.inline_launch): one native call
# (values_launch.py) that packs the values by the kernel's layout ``$c`` (CudaLauncher.inline_constants), asks
# torch for the device and stream and calls cuLaunchKernel. Where it answers 1 (before the process's native
# launch call is chosen, a value or grid it leaves alone, a device not loaded yet, a failed launch), the frame
# falls through to hot_call, which does it all again.
INLINE_BODY = """
if not _nv_lc.launch_values($c, $grid, $args):
    return $result
"""


def inline_launch(driver_module: Any) -> Any:
    """The CudaDriver's ``inline_launch``: INLINE_BODY, whose step (launch_call.launch_values) checks that
    CUDA_LAUNCH_BLOCKING is off itself."""
    from tritium.runtime.inline_launch import InlineLaunch
    return InlineLaunch(body=INLINE_BODY, names={"_nv_lc": launch_call}, prefix="_nv_",
                        step=(vars(launch_call), "launch_values"))


def inline_constants(launcher: Any, keep: Optional[tuple[int, ...]], n: int) -> Optional[tuple]:
    """The ``$c`` of INLINE_BODY for a CudaLauncher whose kernel packs straight from its values, one CTA per
    program, no device assertion to check after (values_launch.constants).

    ``keep``: which of the ``n`` run-time values the kernel takes (None: all of them). The frame passes every
    value as bound; the ones compiled in (ints equal to 1, None) are skipped, the driver is pointed at the kept
    ones only."""
    codes = list(launcher.arguments.packer.format[1:])
    if keep is None:
        keep = tuple(range(len(codes)))
        n = len(codes)
    if len(codes) != len(keep) or list(keep) != sorted(set(keep)) or (keep and keep[-1] >= n):
        return None
    layout = ["?"] * n
    for code, i in zip(codes, keep):
        layout[i] = code
    return values_launch.constants(layout, list(keep), launcher.handles, launcher.block, launcher.shared,
                                   launcher.name)
