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
from typing import Callable

from . import faults, launch_call
from .knobs import nvidia as nv_knobs


def _unset_blocking(ns: dict) -> str:
    """An expression true only when CUDA_LAUNCH_BLOCKING is neither in the environment nor set from Python, i.e.
    the knob is its default (off): a few dict lookups per launch where reading the knob costs ~0.5 us of a ~8 us
    cached launch. Exact at every launch (the environment is looked up each time, not remembered)."""
    from tritium import knobs
    ns["_nv_group"] = nv_knobs.__dict__
    unset = knobs.unset_check(type(nv_knobs).launch_blocking, ns=ns, prefix="_blk")
    return f"({unset} and 'launch_blocking' not in _nv_group)"


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
