"""A Redis store for the remote kernel cache, on the ``redis`` client (PyPI ``redis``). This module is imported
only when ``TRITON_REMOTE_CACHE_BACKEND`` names it, so ``redis`` is needed only then.

``TRITON_REMOTE_CACHE_BACKEND=tritium.cache_redis:RedisRemoteCacheBackend`` with ``TRITON_REDIS_HOST``,
``TRITON_REDIS_PORT`` and ``TRITON_REDIS_KEY_FORMAT`` (Triton's names; default keys start with ``tritium:`` so
that Triton and tritium can share one server without mixing entries). Read the trust note in
``cache_remote``: whoever can write to this Redis can run code in the processes that read from it.
"""
from __future__ import annotations

import os
from typing import Any

import redis

from . import knobs
from .cache_remote import RemoteCacheBackend

_clients: dict[tuple, Any] = {}


def _client(host: str, port: int, timeout_ms: int) -> Any:
    # one connection pool per server and process (a forked child must not share its parent's sockets)
    ident = (host, port, timeout_ms, os.getpid())
    client = _clients.get(ident)
    if client is None:
        seconds = max(timeout_ms, 1) / 1000.0
        client = _clients[ident] = redis.Redis(host=host, port=port, socket_connect_timeout=seconds,
                                               socket_timeout=seconds)
    return client


class RedisRemoteCacheBackend(RemoteCacheBackend):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self._format = knobs.redis.key_format or "tritium:{key}:{filename}"
        self._redis = _client(knobs.redis.host or "localhost", knobs.redis.port, knobs.redis.timeout_ms)

    @staticmethod
    def describe_location() -> str:
        return f"redis://{knobs.redis.host or 'localhost'}:{knobs.redis.port}"

    def _name(self, filename: str) -> str:
        return self._format.format(key=self.key, filename=filename)

    def get(self, filenames: list[str]) -> dict[str, bytes]:
        if not filenames:
            return {}
        values = self._redis.mget([self._name(f) for f in filenames])
        return {f: v for f, v in zip(filenames, values) if v is not None}

    def put(self, filename: str, data: bytes) -> None:
        self._redis.set(self._name(filename), data)
