"""The Triton language: ``import tritium.language as tl``."""
from __future__ import annotations

from . import core, extra, math, random, standard, target_info  # noqa: F401
from .core import (  # noqa: F401
    TRITON_MAX_TENSOR_NUMEL, CompileTimeError, base_value, block_type, builtin, const, constexpr,
    constexpr_function, constexpr_type, dtype, is_builtin, pointer_type, tensor, tuple_type, tuple_value)
from .core import tuple  # noqa: A004,F401
from .aggregate import _aggregate  # noqa: F401  (Triton's tl.core._aggregate, which tl.core finds here)
from .dtypes import (  # noqa: F401
    bfloat16, float8e4b8, float8e4b15, float8e4nv, float8e5, float8e5b16, float16, float32, float64, int1,
    int8, int16, int32, int64, pi32_t, str_to_ty, uint8, uint16, uint32, uint64, void)
from .functions import (  # noqa: F401
    PropagateNan, advance, arange, assume, associative_scan, atomic_add, atomic_and, atomic_cas, atomic_max,
    atomic_min, atomic_or, atomic_xchg, atomic_xor, broadcast, broadcast_to, cast, cat, clamp, debug_barrier,
    device_assert, device_print, dot, expand_dims, full, gather, histogram, inline_asm_elementwise, join, load,
    make_block_ptr, max_constancy, max_contiguous, maximum, minimum, multiple_of, num_programs, permute,
    program_id, reduce, reshape, split, static_assert, static_print, store, trans, view, where, zeros,
    zeros_like)
from .math import (  # noqa: F401
    abs, ceil, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, rsqrt, sin, sqrt, sqrt_rn, umulhi)
from .iterators import range, static_range  # noqa: F401,A004
from .descriptor import (  # noqa: F401
    load_tensor_descriptor, make_tensor_descriptor, store_tensor_descriptor, tensor_descriptor,
    tensor_descriptor_base, tensor_descriptor_base_type, tensor_descriptor_type)
from .elementwise import add, condition, item, map_elementwise, mul, slice, sub  # noqa: F401,A004
from .random import (  # noqa: F401
    pair_uniform_to_normal, philox, philox_impl, rand, rand4x, randint, randint4x, randn, randn4x,
    uint_to_uniform_float)
from .scaled import dot_scaled  # noqa: F401
from .sorting import bitonic_merge, sort, topk  # noqa: F401
from .standard import (  # noqa: F401
    argmax, argmin, cdiv, cumprod, cumsum, flip, interleave, max, min, ravel, reduce_or, sigmoid, softmax,
    sum, swizzle2d, xor_sum)

# helpers Triton keeps in triton.language.core, which library code reaches as tl.core.<name>
from . import extern as _extern  # noqa: E402
for _name in ("extern", "extern_elementwise", "dispatch", "to_tensor", "get_int_dtype", "must_use_result",
              "is_negative_zero", "validate_block_shape", "binary_op_type_legalization"):
    setattr(core, _name, getattr(_extern, _name))
core.base_type = dtype
del _name

# methods of tensors, as in Triton (x.sum(0), x.to(tl.float16), x.reshape(...))
for _name in ("sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce_or", "cumsum", "cumprod", "reduce",
              "associative_scan", "reshape", "view", "permute", "trans", "expand_dims", "broadcast_to", "split",
              "ravel", "flip", "sigmoid", "softmax", "cdiv", "exp", "exp2", "log", "log2", "cos", "sin", "sqrt",
              "rsqrt", "abs", "erf", "floor", "ceil", "histogram", "gather", "cast", "store", "atomic_add",
              "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
              "advance", "sort", "topk", "item", "sqrt_rn", "log2", "exp2"):
    setattr(tensor, _name, globals()[_name])
del _name

