"""tritium-opstats: op counts, flops and memory traffic of every kernel, in ``kernel.metadata.opstats``."""
from .analysis import totals  # noqa: F401

__version__ = "0.1.0"
