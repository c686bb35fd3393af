"""Loads, stores, atomics and block pointers."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from .. import core as tl
from ..core import CompileTimeError
from .ops import Part

T = tl.tensor

LOAD_CACHE = ("", ".ca", ".cg", ".cv")
STORE_CACHE = ("", ".wb", ".cg", ".cs", ".wt")
EVICTION = ("", "evict_normal", "evict_first", "evict_last")
SEMANTICS = ("acquire", "release", "acq_rel", "relaxed")
SCOPES = ("gpu", "cta", "sys")


def _choice(value: Any, allowed: Sequence[str], what: str) -> str:
    value = tl._unwrap(value) or ""
    if value not in allowed:
        raise CompileTimeError(f"{what} {value!r} is not one of {', '.join(repr(a) for a in allowed if a)}")
    return value


class Memory(Part):
    def _mem_attrs(self, **kw: Any) -> dict[str, Any]:
        b = self.builder
        out = {}
        for k, v in kw.items():
            if v in (None, "", (), False):
                continue
            if isinstance(v, bool):
                out[k] = b.bool_attr(v)
            elif isinstance(v, str):
                out[k] = b.str_attr(v)
            else:
                out[k] = b.i32_array_attr(v)
        return out

    def _boundary_check(self, boundary_check: Any, rank: int) -> list[int]:
        bc = tl._unwrap(boundary_check)
        if not bc:
            return []
        if not isinstance(bc, (list, tuple, tl.tuple_value)):
            bc = [bc]
        dims = sorted(int(tl._unwrap(d)) for d in bc)
        for d in dims:
            if not 0 <= d < rank:
                raise CompileTimeError(f"boundary_check dimension {d} is out of range for a block of rank {rank}")
        if len(set(dims)) != len(dims):
            raise CompileTimeError("boundary_check names a dimension twice")
        return dims

    def _scalar_other(self, value: Any, elt: tl.dtype, what: str) -> T:
        """A Python number given as ``other``: it must be representable in the element type."""
        if elt.is_int():
            if isinstance(value, float):
                if value != int(value):
                    raise CompileTimeError(f"`other` is {value} but {what} reads {elt}: the fraction would be lost; "
                                           "pass an integer")
                value = int(value)
            if not elt.is_bool() and not elt.get_int_min_value() <= value <= elt.get_int_max_value():
                raise CompileTimeError(f"`other` is {value}, which is out of range for {elt}, the type {what} reads")
        return self.sem.scalar_constant(value if not elt.is_bool() else bool(value), elt)

    def _is_block_ptr(self, ptr: Any) -> bool:
        return isinstance(ptr, T) and ptr.type.is_ptr() and ptr.type.element_ty.is_block()

    def _mask_other(self, ptr: T, mask: Any, other: Any, what: str) -> tuple[T, Optional[T], Optional[T]]:
        if mask is not None:
            mask = self.sem.to_tensor(mask)
            if not mask.type.scalar.is_bool():
                raise CompileTimeError(f"the mask of {what} must be boolean (int1), got {mask.type.scalar}; "
                                       "compare it with a value to make one")
        elt = ptr.type.scalar.element_ty
        if isinstance(tl._unwrap(other), (int, float, bool)):
            other = self._scalar_other(tl._unwrap(other), elt, what)
        elif other is not None:
            other = self.sem.to_tensor(other)
            if other.dtype != elt and not (elt == tl.int1 and other.dtype == tl.int8):
                # converted to the loaded type, as Triton does (FlagGems' topk passes an fp32 finfo bound for fp16)
                other = self.sem.cast(other, elt)
        if ptr.type.is_block():
            shape = list(ptr.type.shape)
            for name, val in (("mask", mask), ("other", other)):
                if isinstance(val, T) and val.type.is_block():
                    vshape = list(val.type.shape)
                    ok = len(vshape) <= len(shape) and all(
                        v in (1, p) for v, p in zip(reversed(vshape), reversed(shape)))
                    if not ok:
                        raise CompileTimeError(f"the {name} of shape {vshape} cannot broadcast to the pointer block "
                                               f"of shape {shape}; build it from the same offsets as the pointers "
                                               "(e.g. `mask=offs < n`), or add axes with [:, None]")
            if mask is not None:
                ptr, mask = self.sem.broadcast_impl_value(ptr, mask)
            if other is not None:
                other = self.sem.to_tensor(other)
                ptr, other = self.sem.broadcast_impl_value(ptr, other)
        else:
            for name, val in (("mask", mask), ("other", other)):
                if isinstance(val, T) and val.type.is_block():
                    raise CompileTimeError(f"the {name} is a block but the pointer is a scalar")
        return ptr, mask, other

    def load(self, ptr: Any, mask: Any = None, other: Any = None, boundary_check: Any = (), padding_option: Any = "",
             cache_modifier: Any = "", eviction_policy: Any = "", volatile: Any = False) -> T:
        cache = _choice(cache_modifier, LOAD_CACHE, "cache_modifier")
        evict = _choice(eviction_policy, EVICTION, "eviction_policy")
        padding = _choice(padding_option, ("", "zero", "nan"), "padding_option")
        if not isinstance(ptr, T) or not (ptr.type.scalar.is_ptr() or ptr.type.is_ptr()):
            raise CompileTimeError(f"tl.load needs a pointer or a block of pointers, got {_describe(ptr)}; "
                                   "pass a tensor argument, or add offsets to one")
        if self._is_block_ptr(ptr):
            if mask is not None or other is not None:
                raise CompileTimeError("mask and other cannot be used with a block pointer; use boundary_check "
                                       "and padding_option instead")
            block = ptr.type.element_ty
            if block.element_ty.is_int() and padding == "nan":
                raise CompileTimeError("padding_option='nan' is not available for integer blocks")
            bc = self._boundary_check(boundary_check, len(block.shape))
            attrs = self._mem_attrs(cache=cache, evict=evict, is_volatile=bool(tl._unwrap(volatile)),
                                    boundary_check=bc, padding=padding)
            return T(self.builder.load(ptr.handle, None, None, self.sem.ir_type(block), attrs), block)
        if padding or tl._unwrap(boundary_check):
            raise CompileTimeError("boundary_check and padding_option need a block pointer (tl.make_block_ptr); "
                                   "with a tensor of pointers use mask and other")
        if mask is None and other is not None:
            raise CompileTimeError("`other` needs a `mask`: it gives the value of masked-off elements")
        ptr, mask, other = self._mask_other(ptr, mask, other, "this load")
        elt = ptr.type.scalar.element_ty
        is_bool = elt == tl.int1
        if is_bool:
            elt = tl.int8
            ptr = self.sem.cast(ptr, ptr.type.with_element_ty(tl.pointer_type(tl.int8)) if ptr.type.is_block()
                                else tl.pointer_type(tl.int8))
        if other is not None:
            other = self.sem.cast(other, elt)
        dst = ptr.type.with_element_ty(elt) if ptr.type.is_block() else elt
        attrs = self._mem_attrs(cache=cache, evict=evict, is_volatile=bool(tl._unwrap(volatile)))
        r = T(self.builder.load(ptr.handle, mask.handle if mask is not None else None,
                                other.handle if other is not None else None, self.sem.ir_type(dst), attrs), dst)
        return self.sem.cast(r, tl.int1) if is_bool else r

    def store(self, ptr: Any, value: Any, mask: Any = None, boundary_check: Any = (), cache_modifier: Any = "",
              eviction_policy: Any = "") -> T:
        cache = _choice(cache_modifier, STORE_CACHE, "cache_modifier")
        evict = _choice(eviction_policy, EVICTION, "eviction_policy")
        if not isinstance(ptr, T) or not (ptr.type.scalar.is_ptr() or ptr.type.is_ptr()):
            raise CompileTimeError(f"tl.store needs a pointer or a block of pointers, got {_describe(ptr)}")
        if ptr.type.scalar.is_const() or (ptr.type.is_ptr() and ptr.type.is_const()):
            raise CompileTimeError("Cannot store to a constant pointer: its parameter is annotated tl.const; store "
                                   "through a pointer that is not tl.const")
        value = self.sem.to_tensor(value)
        if self._is_block_ptr(ptr):
            if mask is not None:
                raise CompileTimeError("mask cannot be used with a block pointer; use boundary_check instead")
            block = ptr.type.element_ty
            value = self.sem.broadcast_impl_shape(value, list(block.shape))
            value = self.sem.cast(value, block.element_ty)
            bc = self._boundary_check(boundary_check, len(block.shape))
            self.builder.store(ptr.handle, value.handle, None, self._mem_attrs(cache=cache, evict=evict,
                                                                                boundary_check=bc))
            return T(None, tl.void)
        if tl._unwrap(boundary_check):
            raise CompileTimeError("boundary_check needs a block pointer (tl.make_block_ptr); use mask instead")
        if not ptr.type.is_block() and isinstance(value, T) and value.type.is_block():
            raise CompileTimeError("cannot store a block through a scalar pointer")
        if ptr.type.is_block() and value.type.is_block():
            vshape, pshape = list(value.type.shape), list(ptr.type.shape)
            if len(vshape) > len(pshape) or not all(v in (1, p) for v, p in zip(reversed(vshape), reversed(pshape))):
                raise CompileTimeError(f"the value of shape {vshape} does not fit the pointer block of shape {pshape}")
        ptr, mask, _ = self._mask_other(ptr, mask, None, "this store")
        if ptr.type.is_block():
            value = self.sem.broadcast_impl_shape(value, list(ptr.type.shape))
        elt = ptr.type.scalar.element_ty
        if elt == tl.int1:
            elt = tl.int8
            ptr = self.sem.cast(ptr, ptr.type.with_element_ty(tl.pointer_type(tl.int8)) if ptr.type.is_block()
                                else tl.pointer_type(tl.int8))
        value = self.sem.cast(value, elt)
        self.builder.store(ptr.handle, value.handle, mask.handle if mask is not None else None,
                           self._mem_attrs(cache=cache, evict=evict))
        return T(None, tl.void)

    # -- atomics ----------------------------------------------------------------------------------
    def _atomic_prep(self, ptr: Any, val: Any, mask: Any, op: str) -> tuple[T, T, Optional[T]]:
        if not isinstance(ptr, T) or not ptr.type.scalar.is_ptr():
            raise CompileTimeError(f"atomic_{op} needs a pointer or a block of pointers, got {_describe(ptr)}")
        if ptr.type.scalar.is_const():
            raise CompileTimeError("cannot update memory through a pointer to const data")
        elt = ptr.type.scalar.element_ty
        if elt in (tl.float16, tl.bfloat16) and op != "add":
            raise CompileTimeError(f"atomic_{op} does not support {elt}")
        if elt.primitive_bitwidth < 16 or elt in (tl.int16, tl.uint16):
            raise CompileTimeError(f"atomic_{op} does not support {elt}")
        val = self.sem.to_tensor(val)
        if mask is not None:
            mask = self.sem.to_tensor(mask)
        if ptr.type.is_block():
            shape = list(ptr.type.shape)
            if mask is not None:
                mask = self.sem.broadcast_impl_shape(mask, shape)
            val = self.sem.broadcast_impl_shape(val, shape)
        val = self.sem.cast(val, elt)
        return ptr, val, mask

    def atomic_rmw(self, op: str, ptr: Any, val: Any, mask: Any, sem: Any, scope: Any) -> T:
        name = op
        ptr, val, mask = self._atomic_prep(ptr, val, mask, op)
        sem = _choice(sem or "acq_rel", SEMANTICS, "sem")
        scope = _choice(scope or "gpu", SCOPES, "scope")
        elt = val.type.scalar
        if op == "add" and elt.is_floating():
            name = "fadd"
        elif op in ("max", "min"):
            if elt.is_floating():
                if elt not in (tl.float32, tl.float64):
                    raise CompileTimeError(f"atomic_{op} does not support {elt}")
                name = "f" + op
            elif elt.is_int_unsigned():
                name = "u" + op
        attrs = {"op": self.builder.str_attr(name), "sem": self.builder.str_attr(sem),
                 "scope": self.builder.str_attr(scope)}
        r = self.builder.tt("atomic_rmw", {"ptr": ptr.handle, "val": val.handle,
                                           "mask": mask.handle if mask is not None else None},
                            [self.sem.ir_type(val.type)], attrs)
        return T(r.result, val.type)

    def atomic_cas(self, ptr: Any, cmp: Any, val: Any, sem: Any, scope: Any) -> T:
        if not isinstance(ptr, T) or not ptr.type.scalar.is_ptr():
            raise CompileTimeError(f"atomic_cas needs a pointer, got {_describe(ptr)}")
        elt = ptr.type.scalar.element_ty
        if elt.primitive_bitwidth not in (16, 32, 64):
            raise CompileTimeError("atomic_cas supports 16, 32 and 64-bit elements only")
        cmp = self.sem.to_tensor(cmp)
        val = self.sem.to_tensor(val)
        if ptr.type.is_block():
            cmp = self.sem.broadcast_impl_shape(cmp, list(ptr.type.shape))
            val = self.sem.broadcast_impl_shape(val, list(ptr.type.shape))
        cmp, val = self.sem.cast(cmp, elt), self.sem.cast(val, elt)
        sem = _choice(sem or "acq_rel", SEMANTICS, "sem")
        scope = _choice(scope or "gpu", SCOPES, "scope")
        attrs = {"sem": self.builder.str_attr(sem), "scope": self.builder.str_attr(scope)}
        r = self.builder.tt("atomic_cas", {"ptr": ptr.handle, "cmp": cmp.handle, "val": val.handle},
                            [self.sem.ir_type(val.type)], attrs)
        return T(r.result, val.type)

    # -- block pointers ---------------------------------------------------------------------------
    def _index_values(self, items: Any, ty: tl.dtype, what: str) -> list[Any]:
        items = tl._unwrap(items)
        if isinstance(items, tl.tuple_value):
            items = items.values
        if not isinstance(items, (list, tuple)):
            items = [items]
        out = []
        for it in items:
            t = self.sem.to_tensor(tl._unwrap(it))
            if t.type.is_block() or not t.type.scalar.is_int():
                raise CompileTimeError(f"{what} must be integer scalars, got {t.type}")
            out.append(self.sem.cast(t, ty).handle)
        return out

    def make_block_ptr(self, base: Any, shape: Any, strides: Any, offsets: Any, block_shape: Any, order: Any) -> T:
        if not isinstance(base, T) or not base.type.is_ptr() or base.type.element_ty.is_block():
            raise CompileTimeError(f"make_block_ptr's base must be a pointer to scalars, got {_describe(base)}")
        block_shape = [int(tl._unwrap(s)) for s in tl._unwrap(block_shape)]
        order = [int(tl._unwrap(o)) for o in tl._unwrap(order)]
        shape_v = self._index_values(shape, tl.int64, "make_block_ptr shape entries")
        strides_v = self._index_values(strides, tl.int64, "make_block_ptr strides")
        offsets_v = self._index_values(offsets, tl.int32, "make_block_ptr offsets")
        n = len(block_shape)
        if not (len(shape_v) == len(strides_v) == len(offsets_v) == len(order) == n):
            raise CompileTimeError(f"make_block_ptr: shape, strides, offsets, block_shape and order must all have "
                                   f"{n} entries")
        if sorted(order) != list(range(n)):
            raise CompileTimeError(f"make_block_ptr order must be a permutation of 0..{n - 1}, got {order}")
        self.sem._check_shape(block_shape)
        elt = base.type.element_ty
        if elt == tl.int1:
            elt = tl.int8
            base = self.sem.cast(base, tl.pointer_type(tl.int8))
        ty = tl.pointer_type(tl.block_type(elt, block_shape))
        op = self.builder.tt("make_block_ptr", {"base": base.handle, "shape": shape_v, "strides": strides_v,
                                                "offsets": offsets_v}, [self.sem.ir_type(ty)],
                             {"order": self.builder.i32_array_attr(order)})
        return T(op.result, ty)

    def advance(self, ptr: Any, offsets: Any) -> T:
        if not self._is_block_ptr(ptr):
            raise CompileTimeError(f"advance needs a block pointer (tl.make_block_ptr), got {_describe(ptr)}")
        offs = self._index_values(offsets, tl.int32, "advance offsets")
        if len(offs) != len(ptr.type.element_ty.shape):
            raise CompileTimeError(f"advance needs {len(ptr.type.element_ty.shape)} offsets, got {len(offs)}")
        op = self.builder.tt("advance", {"ptr": ptr.handle, "offsets": offs}, [ptr.handle.type])
        return T(op.result, ptr.type)


def _describe(x: Any) -> str:
    if isinstance(x, T):
        return f"a value of type {x.type}"
    if isinstance(x, tl.constexpr):
        return f"the constant {x.value!r}"
    return f"{type(x).__name__} {x!r}"
