"""The package version, in a module of its own: the compiler (cache keys, metadata) and the remote cache
(entry records) need it, and importing it from the package root would be an upward import (ARCHITECTURE.md)."""
__version__ = "0.1.0"
