"""A worker process: runs kernels for one target (a backend in one variant, or the interpreter) on request.

The parent talks to it through pickled messages on stdin/stdout; the worker moves its own stdout to
stderr first, so a kernel's prints or a library's chatter cannot corrupt the channel. A crash of the
backend (a segfault in generated code) ends only this process: the parent reports it and starts another.

    python -m tritium.testing.fuzz.worker BACKEND PLUGIN_MODULE
"""
from __future__ import annotations

import os
import pickle
import struct
import sys
import traceback
from contextlib import ExitStack
from typing import Any, BinaryIO

from tritium.backends import backends
from tritium.runtime.driver import driver


def send(f: BinaryIO, msg: Any) -> None:
    data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(struct.pack("<Q", len(data)) + data)
    f.flush()


def recv(f: BinaryIO) -> Any:
    head = f.read(8)
    if len(head) < 8:
        raise EOFError("the other side closed the channel")
    (n,) = struct.unpack("<Q", head)
    data = f.read(n)
    if len(data) < n:
        raise EOFError("the other side closed the channel")
    return pickle.loads(data)


def _describe(backend: str) -> dict:
    """What kernels this target can take: its capability flags and dot input precisions."""
    if backend == "interpreter":
        return {"features": None}
    from . import gen
    b = backends()[backend]
    feats = set(b.spec.capabilities)
    try:
        target = driver.active.get_current_target()
        opts = b.compiler(target).parse_options({})
        feats |= set(getattr(opts, "allowed_dot_input_precisions", ("ieee",)))
        if int(getattr(opts, "num_ctas", 1) or 1) > 1:
            feats.add(gen.CLUSTER_FEATURE)   # launched on clusters: dots wide enough to be split
    except Exception:  # a backend without these options: ieee only
        feats.add("ieee")
    return {"features": sorted(feats)}


def _run(job: dict) -> dict:
    from . import runner
    try:
        kernel = runner.load_kernel(job["path"], job.get("kernel", "kernel"))
        info: dict = {}
        out = runner.run(kernel, job["arrays"], job["dtypes"], job["scalars"], job["grid"], job["options"], info)
        return {"ok": True, "arrays": out, "form": info.get("form", "")}
    except BaseException as exc:  # the kernel's error is the answer, not the worker's end
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        tb = traceback.format_exc(limit=-6)
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": tb}


def main(argv: list) -> None:
    backend, plugin = argv[0], argv[1] if len(argv) > 1 else ""
    channel_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    channel_in = os.fdopen(os.dup(0), "rb")
    from . import runner
    with ExitStack() as stack:
        runner.use_target(stack, backend, plugin)
        while True:
            try:
                job = recv(channel_in)
            except EOFError:
                return
            if job.get("op") == "hello":
                try:
                    send(channel_out, {"ok": True, **_describe(backend)})
                except Exception as exc:
                    send(channel_out, {"ok": False, "error": f"{type(exc).__name__}: {exc}"})
            elif job.get("op") == "run":
                send(channel_out, _run(job))
            else:
                return


if __name__ == "__main__":
    main(sys.argv[1:])
