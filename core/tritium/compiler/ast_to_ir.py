"""Build the tile IR module of a kernel from its ASTSource."""
from __future__ import annotations

from typing import Any, Optional

from .. import knobs
from .._mlir import ir
from ..language import core as tl
from ..language.dtypes import str_to_ty
from ..language.semantic import Semantic
from ..language.target_info import compiling_for
from .builder import Builder
from .code_generator import CodeGenerator
from .errors import CompilationError, without_frontend_frames
from .kernel_args import ArgSpec, flat_args, is_structured, parse


def kernel_arg_types(fn: Any, src: Any) -> tuple[list[Any], list[Any]]:
    """(tl type, None or a :class:`~.kernel_args.ArgSpec` per parameter, compile-time value or None per
    parameter)."""
    types: list[Any] = []
    values: list[Any] = []
    for i, name in enumerate(fn.arg_names):
        sig = src.signature.get(name)
        if (i, ) in src.constants or sig == "constexpr" or fn.is_constexpr_param(name):
            if (i, ) not in src.constants and sig != "constexpr":
                raise CompilationError(fn.__name__, None, None,
                                       f"parameter `{name}` is a tl.constexpr but no value was given for it")
            types.append(None)
            values.append(tl.constexpr(src.constants.get((i, ))))
        elif sig is None:
            raise CompilationError(fn.__name__, None, None, f"the signature has no type for parameter `{name}`")
        elif is_structured(sig):
            try:
                types.append(parse(sig, (i, ), src.constants))
            except TypeError as exc:
                raise CompilationError(fn.__name__, None, None, f"parameter `{name}`: {exc}") from None
            values.append(None)
        else:
            types.append(str_to_ty(sig))
            values.append(None)
    return types, values


def ast_to_ttir(fn: Any, src: Any, options: Any, context: Any, capabilities: Optional[frozenset] = None) -> Any:
    """``capabilities``: the compiling backend's; None (a caller that does not know them) leaves
    tl.target_info.has_capability asking the active driver."""
    builder = Builder(context, options)
    builder.disable_line_info = knobs.compilation.disable_line_info
    builder.name_values = knobs.compilation.dump_ir_extract_di_local_variables and not builder.disable_line_info
    module = builder.create_module()
    semantic = Semantic(builder, options, frozenset() if capabilities is None else capabilities)
    types, values = kernel_arg_types(fn, src)
    kernel_name = getattr(src, "name", fn.__name__)  # a repr= given to @jit names the kernel (ASTSource.name)
    gen = CodeGenerator(fn, semantic, module, {}, arg_values=values, func_name=kernel_name, is_kernel=True,
                        options=options)
    with context, ir.Location.unknown(context), compiling_for(capabilities):
        try:
            fop = gen.generate(types)
        except CompilationError as err:
            if knobs.compilation.front_end_debugging:
                raise
            raise without_frontend_frames(err)
    # specialization facts the lowering can use: pointer/integer arguments divisible by 16
    with context:
        arg_attrs = []
        for i, ty in enumerate(types):
            if ty is None:
                continue
            # a tuple or descriptor parameter has one IR argument per run-time part, attrs keyed by path
            flat = flat_args(ty, (i, )) if isinstance(ty, ArgSpec) else [(ty, (i, ), [])]
            for _, path, extra in flat:
                attrs = {}
                for name, value in (src.attrs.get(path, []) if path is not None else []) + extra:
                    attrs[name] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(value))
                arg_attrs.append(ir.DictAttr.get(attrs))
        if arg_attrs:
            fop.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
        module.operation.attributes["tt.kernel"] = ir.StringAttr.get(kernel_name)
    try:
        ok = module.operation.verify()
    except Exception as exc:  # the bindings raise with the diagnostics; users get no IR dump
        first = str(exc).strip().splitlines()
        detail = next((ln for ln in first if "error:" in ln), first[0] if first else "")
        detail = detail.split("error:", 1)[-1].strip()
        raise CompilationError(fn.__name__, None, None, "internal compiler error: the generated IR does not "
                               f"verify ({detail}); please report it with the kernel's source") from None
    if not ok:
        raise CompilationError(fn.__name__, None, None, "internal compiler error: the generated IR does not verify")
    return module
