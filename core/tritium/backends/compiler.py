"""What a backend's compiler must provide. A backend subclasses :class:`BaseBackend` and registers it
through the ``tritium_backends`` hook (see :mod:`tritium.hookspecs`)."""
from __future__ import annotations

import hashlib
from abc import ABCMeta, abstractmethod
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, Union


class Language(Enum):
    TRITON = 0
    GLUON = 1


@dataclass(frozen=True)
class GPUTarget:
    """The device code is made for: ``backend`` names the backend, ``arch`` its architecture (a number or a
    name, as the backend defines it; the CPU backend uses the host CPU's name), ``warp_size`` threads per
    warp."""
    backend: str
    arch: Union[int, str]
    warp_size: int


class BaseBackend(metaclass=ABCMeta):
    """A compiler for one kind of target.

    Subclasses declare ``name`` and ``binary_ext`` (the last stage's extension) and implement the
    abstract methods. ``capabilities`` are feature flags that tests and passes may ask about.
    """

    name: str = ""
    binary_ext: str = ""
    capabilities: frozenset[str] = frozenset()

    def __init__(self, target: GPUTarget) -> None:
        self.target = target
        assert self.supports_target(target)

    @staticmethod
    @abstractmethod
    def supports_target(target: GPUTarget) -> bool:
        ...

    @abstractmethod
    def hash(self) -> str:
        """A string that changes whenever this backend would compile something differently."""

    @abstractmethod
    def parse_options(self, options: dict) -> Any:
        """Turn user options (num_warps, debug...) into this backend's frozen options dataclass."""

    @abstractmethod
    def add_stages(self, stages: dict, options: Any, language: Language = Language.TRITON) -> None:
        """Fill ``stages`` (name/extension -> fn(src, metadata)) in order."""

    def load_dialects(self, context: Any) -> None:
        return None

    def get_module_map(self) -> dict[str, Any]:
        """Triton's map from interface modules (``triton.language.extra.libdevice``) to a target's own; tritium's
        libdevice serves every target, so no module is replaced."""
        return {}

    def get_codegen_implementation(self, options: Any) -> dict[str, Any]:
        """Triton's per-target frontend callbacks; tritium's frontend asks for capabilities instead, so none."""
        return {}

    # Triton's specialization protocol, by which callers written for Triton (torch inductor's kernel analysis)
    # turn an argument into a key ("D": divisible by 16) and a key into compiler attributes
    @staticmethod
    def parse_attr(desc: str) -> list:
        assert isinstance(desc, str)
        return [["tt.divisibility", 16]] if "D" in desc else []

    @staticmethod
    def get_int_specialization(arg: int, **kwargs: Any) -> str:
        return "D" if kwargs.get("align", False) and arg % 16 == 0 else ""

    @staticmethod
    def get_tensor_specialization(arg: Any, **kwargs: Any) -> str:
        return "D" if kwargs.get("align", False) and arg.data_ptr() % 16 == 0 else ""

    @staticmethod
    def get_tensordesc_specialization(arg: Any, **kwargs: Any) -> str:
        return ""

    def pack_metadata(self, metadata: Any) -> Any:
        return metadata

    def target_name(self, options: Any) -> str:
        """The target a module is compiled for, as Triton's ``ttg.target`` module attribute names it
        (``<backend>:<arch>``). A backend whose options can choose another architecture overrides it."""
        return f"{self.target.backend}:{self.target.arch}"

    def code_options(self, options: Any) -> Any:
        """``options`` with every option that this backend's code does not depend on set to one fixed value:
        kernels whose options give equal results here compile once and share the code (each keeps its own
        cache entry and metadata; see tritium.compiler.shared_code). Default: every option matters."""
        return options

    def pipeline(self, stage: str, options: Any) -> Any:
        """The pass pipeline of a stage, as data that plugins may edit (see tritium.passes.pipeline)."""
        raise KeyError(stage)

    @staticmethod
    def options_hash(options: Any) -> str:
        items = [(f.name, getattr(options, f.name)) for f in fields(options)]
        return hashlib.sha256(repr(sorted(items, key=lambda kv: kv[0])).encode()).hexdigest()
