"""The file format of ahead-of-time compiled kernels (``tritium compile``, ``tritium.load_compiled``).

One file holds everything a launch needs, so that it can be copied to a machine that has the device but no
compiler: the backend's final binary (a host object file, a cubin, ...), the compiled kernel's metadata, the
kernel's signature, and who made it (tritium's version, the backend's name, distribution, version and binary
ABI). Layout, all integers little-endian::

    MAGIC (16 bytes)  format version (u32)  header length (u32)  binary length (u64)
    header (JSON, UTF-8)  binary  SHA-256 of everything before it (32 bytes)

The magic's CR LF / LF / ^Z bytes, as in PNG's, show a file mangled by a text-mode copy; the trailing digest
shows any other damage (a truncated download, a flipped bit) before a byte of it reaches native code.
Reading imports nothing but the standard library.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct

from ..cache import atomic_write

MAGIC = b"\x89TRITIUM-AOT\r\n\x1a\n"
#: bumped whenever the layout above or the meaning of a header field changes; readers refuse other versions
FORMAT_VERSION = 1
_FIXED = struct.Struct("<16sIIQ")
_DIGEST = 32
SUFFIX = ".tritium"


class ArtifactError(ValueError):
    """A compiled-kernel file that cannot be used: damaged, of another format, or for another machine."""


def pack(header: dict, binary: bytes) -> bytes:
    head = json.dumps(header, sort_keys=True, default=str).encode()
    body = _FIXED.pack(MAGIC, FORMAT_VERSION, len(head), len(binary)) + head + bytes(binary)
    return body + hashlib.sha256(body).digest()


def unpack(data: bytes, where: str = "<bytes>") -> tuple[dict, bytes]:
    """(header, binary) of an artifact's bytes; :class:`ArtifactError` naming ``where`` for anything wrong."""
    if len(data) < _FIXED.size + _DIGEST or not data.startswith(MAGIC[:12]):
        raise ArtifactError(f"{where} is not a tritium compiled-kernel file (it does not start with tritium's "
                            "marker); make one with `tritium compile FILE.py:KERNEL --signature ... -o OUT`")
    magic, version, head_len, bin_len = _FIXED.unpack_from(data)
    if magic != MAGIC:
        raise ArtifactError(f"{where} was altered by a text-mode transfer (its line-ending bytes changed): copy "
                            "it as binary (e.g. `scp`, or FTP in binary mode)")
    if version != FORMAT_VERSION:
        newer = "a newer" if version > FORMAT_VERSION else "an older"
        raise ArtifactError(f"{where} has compiled-kernel format {version}, written by {newer} tritium; this "
                            f"tritium reads format {FORMAT_VERSION}: compile the kernel again with this "
                            "installation's `tritium compile`, or install a tritium that reads that format")
    expected = _FIXED.size + head_len + bin_len + _DIGEST
    if len(data) != expected:
        raise ArtifactError(f"{where} is damaged: it has {len(data)} bytes where its header announces "
                            f"{expected} (truncated or appended to); copy or build it again")
    body = data[:-_DIGEST]
    if hashlib.sha256(body).digest() != data[-_DIGEST:]:
        raise ArtifactError(f"{where} is damaged: its checksum does not match its contents; copy or build it "
                            "again")
    try:
        header = json.loads(body[_FIXED.size:_FIXED.size + head_len])
    except ValueError:
        raise ArtifactError(f"{where} is damaged: its header is not valid JSON") from None
    return header, bytes(body[_FIXED.size + head_len:])


def write(path: str, header: dict, binary: bytes) -> None:
    """Write atomically: a reader (a server starting up) never sees half a file. Artifacts are deployed, not
    cached, so they are readable by others (0644)."""
    atomic_write(os.path.abspath(path), pack(header, binary), mode=0o644)


def read(path: str) -> tuple[dict, bytes]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"no compiled kernel at {path}: build it with `tritium compile FILE.py:KERNEL "
                                f"--signature ... -o {path}`") from None
    return unpack(data, path)

