"""Tile operations of the interpreter's builder: dot, gather, histogram, cat/join/split, block pointers and
atomics. Arrays carry the batch axis first (see :mod:`.values`)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from . import elementwise as ew
from . import floats
from .optable import INTERPRETER_OPS
from .values import MEMORY, UNSIGNED, V, as_type, signed, storage, unsigned


def _same_batch(*arrays: np.ndarray) -> list[np.ndarray]:
    b = max(a.shape[0] for a in arrays)
    return [a if a.shape[0] == b else np.broadcast_to(a, (b, ) + a.shape[1:]) for a in arrays]


def _as_result(ty: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    """Operands in the result's storage: one may hold integers of the other signedness (a cast between signed and
    unsigned of one width emits no op), and numpy would promote int64 with uint64 to float64."""
    dt = storage(ty.scalar)
    return [as_type(a, dt) for a in arrays]


class BlockPtr(V):
    """A block pointer (``tl.make_block_ptr``): ``a`` is the base address; shape, strides and offsets are
    lists of per-program scalars (arrays of shape (B,))."""
    __slots__ = ("shape", "strides", "offsets", "order")

    def __init__(self, base: V, type: Any, shape: list, strides: list, offsets: list, order: list) -> None:
        super().__init__(base.a, type, base.mem)
        self.shape, self.strides, self.offsets, self.order = shape, strides, offsets, order


class Descriptor(V):
    """A tensor descriptor (``tl.make_tensor_descriptor``): ``a`` is the base address."""
    __slots__ = ("shape", "strides", "padding")

    def __init__(self, base: V, type: Any, shape: list, strides: list, padding: str) -> None:
        super().__init__(base.a, type, base.mem)
        self.shape, self.strides, self.padding = shape, strides, padding


def _coords(offsets: list[np.ndarray], dims: list[int]) -> list[np.ndarray]:
    """Per dimension, the int64 coordinate ``offset + index`` shaped (B, 1.., n, 1..)."""
    out = []
    nd = len(dims)
    for d, n in enumerate(dims):
        view = [1] * (nd + 1)
        view[d + 1] = n
        off = signed(offsets[d]).astype(np.int64).reshape((-1, ) + (1, ) * nd)
        out.append(off + np.arange(n, dtype=np.int64).reshape(view))
    return out


def _addresses(base: np.ndarray, coords: list[np.ndarray], strides: list[np.ndarray], limits: list[np.ndarray],
               check: list[int], size: int) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """``base + sum(coord * stride) * size`` and the mask of the checked dimensions' bounds."""
    nd = len(coords)
    col = (-1, ) + (1, ) * nd
    addr = base.astype(np.int64).reshape(col)
    mask = None
    for d, c in enumerate(coords):
        addr = addr + c * (signed(strides[d]).astype(np.int64).reshape(col) * size)
        if d in check:
            ok = (c >= 0) & (c < signed(limits[d]).astype(np.int64).reshape(col))
            mask = ok if mask is None else mask & ok
    if mask is not None:
        mask = np.broadcast_to(mask, np.broadcast_shapes(mask.shape, addr.shape))
        addr = np.broadcast_to(addr, mask.shape)
    return addr, mask


class TileOps:
    memory: Any
    launch: Any

    # -- dot -----------------------------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("tt.dot")
    def tt_dot(self, o: dict, res: list, attrs: dict) -> V:
        # every input precision computes in full precision, like the compiled CPU backend (tf32 and the
        # bf16x3/x6 splits only exist to use tensor cores)
        a, b, c = o["a"], o["b"], o["c"]
        ret = res[0]
        elt = a.type.scalar
        out = ret.scalar
        if elt.is_int():
            # integer dots take int8 and accumulate in int32 (the semantic checks): signed, whatever the arrays hold
            # (a cast from uint8 or uint32 emits no op, and the value keeps the unsigned array and type)
            prod = np.matmul(signed(a.a).astype(np.float64), signed(b.a).astype(np.float64))  # exact below 2**53
            acc = prod.astype(np.int64) + signed(c.a).astype(np.int64)
            return V(acc.astype(storage(out)), ret)
        wide = np.float64 if elt.name == "fp64" else np.float32
        x = ew.fvalue(a.a, elt).astype(wide, copy=False)
        y = ew.fvalue(b.a, b.type.scalar).astype(wide, copy=False)
        acc = np.matmul(x, y) + ew.fvalue(c.a, c.type.scalar).astype(wide, copy=False)
        return V(ew.fround(acc, out), ret)

    # -- gather, histogram ---------------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("tt.gather")
    def tt_gather(self, o: dict, res: list, attrs: dict) -> V:
        src, idx = _same_batch(o["src"].a, o["indices"].a)
        axis = attrs["axis"] + 1
        n = src.shape[axis]
        i = signed(idx).astype(np.int64)
        i = np.where((i >= 0) & (i < n), i, 0)  # out of range reads element 0, as compiled
        return V(np.take_along_axis(src, i, axis=axis), res[0])

    @INTERPRETER_OPS.lowers("tt.histogram")
    def tt_histogram(self, o: dict, res: list, attrs: dict) -> V:
        src = signed(o["src"].a).astype(np.int64)
        mask = o.get("mask")
        bins = res[0].shape[0]
        b = src.shape[0]
        ok = (src >= 0) & (src < bins)
        if mask is not None:
            ok &= mask.a
        slot = src + (np.arange(b, dtype=np.int64) * bins).reshape((b, ) + (1, ) * (src.ndim - 1))
        counts = np.bincount(slot[ok], minlength=b * bins)
        return V(counts.reshape(b, bins).astype(np.int32), res[0])

    # -- cat, join, split ----------------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("tt.cat")
    def tt_cat(self, o: dict, res: list, attrs: dict) -> V:
        return V(np.concatenate(_same_batch(*_as_result(res[0], o["lhs"].a, o["rhs"].a)), axis=1), res[0])

    @INTERPRETER_OPS.lowers("tt.join")
    def tt_join(self, o: dict, res: list, attrs: dict) -> V:
        return V(np.stack(_same_batch(*_as_result(res[0], o["lhs"].a, o["rhs"].a)), axis=-1), res[0])

    @INTERPRETER_OPS.lowers("tt.split")
    def tt_split(self, o: dict, res: list, attrs: dict) -> list:
        a = o["src"].a
        return [V(a[..., 0], res[0]), V(a[..., 1], res[1])]

    # -- block pointers ------------------------------------------------------------------------------
    @INTERPRETER_OPS.lowers("tt.make_block_ptr")
    def tt_make_block_ptr(self, o: dict, res: list, attrs: dict) -> BlockPtr:
        return BlockPtr(o["base"], res[0], [v.a for v in o["shape"]], [v.a for v in o["strides"]],
                        [v.a for v in o["offsets"]], attrs["order"])

    @INTERPRETER_OPS.lowers("tt.advance")
    def tt_advance(self, o: dict, res: list, attrs: dict) -> BlockPtr:
        p = o["ptr"]
        offs = [as_type(a, np.dtype(np.int32)) + as_type(v.a, np.dtype(np.int32)) for a, v in zip(p.offsets, o["offsets"])]
        return BlockPtr(V(p.a, p.type, p.mem), res[0], p.shape, p.strides, offs, p.order)

    def _block_addresses(self, p: BlockPtr, check: list[int]) -> tuple[np.ndarray, Optional[np.ndarray]]:
        block = p.type.element_ty
        coords = _coords(p.offsets, list(block.shape))
        return _addresses(p.a, coords, p.strides, p.shape, check, MEMORY[block.element_ty.name].itemsize)

    def _load_masked(self, base: V, addr: np.ndarray, mask: Optional[np.ndarray], result: Any,
                     padding: str) -> V:
        elt = result.scalar
        raw = self.memory.load(addr, mask, base.mem, elt.name)
        vals = floats.bits_to_bf16(raw).reshape(raw.shape) if elt.name == "bf16" else raw
        if mask is not None:
            fill = ew.fround(np.array([np.nan], np.float32), elt)[0] if padding == "nan" and elt.is_floating() \
                else np.zeros((), vals.dtype)
            vals = np.where(mask, vals, fill)
        return V(vals, result)

    def _store_masked(self, base: V, addr: np.ndarray, mask: Optional[np.ndarray], value: V, elt: Any) -> None:
        vals = floats.bf16_to_bits(value.a).reshape(value.a.shape) if elt.name == "bf16" else \
            as_type(value.a, MEMORY[elt.name])
        shape = np.broadcast_shapes(addr.shape, vals.shape)
        self.memory.store(np.broadcast_to(addr, shape), np.broadcast_to(vals, shape),
                          None if mask is None else np.broadcast_to(mask, shape), base.mem, elt.name)

    def block_load(self, p: BlockPtr, result: Any, attrs: dict) -> V:
        addr, mask = self._block_addresses(p, attrs.get("boundary_check", []))
        return self._load_masked(p, addr, mask, result, attrs.get("padding", ""))

    def block_store(self, p: BlockPtr, value: V, attrs: dict) -> None:
        addr, mask = self._block_addresses(p, attrs.get("boundary_check", []))
        self._store_masked(p, addr, mask, value, p.type.element_ty.element_ty)

    # -- tensor descriptors: every dimension bounds-checked, out-of-bounds reads padded --------------
    @INTERPRETER_OPS.lowers("tt.make_tensor_descriptor")
    def tt_make_tensor_descriptor(self, o: dict, res: list, attrs: dict) -> "Descriptor":
        return Descriptor(o["base"], res[0], [v.a for v in o["shape"]], [v.a for v in o["strides"]],
                          attrs.get("padding", "zero"))

    def _desc_addresses(self, d: "Descriptor", indices: list) -> tuple[np.ndarray, np.ndarray]:
        block = d.type.block_type
        coords = _coords([i.a for i in indices], list(block.shape))
        return _addresses(d.a, coords, d.strides, d.shape, list(range(len(block.shape))),
                          MEMORY[block.element_ty.name].itemsize)  # type: ignore[return-value]

    @INTERPRETER_OPS.lowers("tt.descriptor_load")
    def tt_descriptor_load(self, o: dict, res: list, attrs: dict) -> V:
        d = o["desc"]
        addr, mask = self._desc_addresses(d, o["indices"])
        return self._load_masked(d, addr, mask, res[0], d.padding)

    @INTERPRETER_OPS.lowers("tt.descriptor_store")
    def tt_descriptor_store(self, o: dict, res: list, attrs: dict) -> None:
        d = o["desc"]
        addr, mask = self._desc_addresses(d, o["indices"])
        self._store_masked(d, addr, mask, o["src"], d.type.block_type.element_ty)

    @INTERPRETER_OPS.lowers("tt.descriptor_reduce")
    def tt_descriptor_reduce(self, o: dict, res: list, attrs: dict) -> None:
        d = o["desc"]
        addr, mask = self._desc_addresses(d, o["indices"])
        elt = d.type.block_type.element_ty
        src = o["src"]
        shape = np.broadcast_shapes(addr.shape, src.a.shape)
        shape = (max(shape[0], self.launch.progs.size), ) + shape[1:]
        self._rmw(d, np.broadcast_to(addr, shape), np.broadcast_to(mask, shape), np.broadcast_to(src.a, shape),
                  elt, attrs["kind"])

    def _gather_addresses(self, d: "Descriptor", rows: V, col: V) -> tuple[np.ndarray, np.ndarray]:
        cols = d.type.block_type.shape[1]
        r = signed(rows.a).astype(np.int64)[:, :, None]
        c = signed(col.a).astype(np.int64).reshape(-1, 1, 1) + np.arange(cols, dtype=np.int64)[None, None, :]
        size = MEMORY[d.type.block_type.element_ty.name].itemsize
        return _addresses(d.a, [r, c], d.strides, d.shape, [0, 1], size)  # type: ignore[return-value]

    @INTERPRETER_OPS.lowers("tt.descriptor_gather")
    def tt_descriptor_gather(self, o: dict, res: list, attrs: dict) -> V:
        d = o["desc"]
        addr, mask = self._gather_addresses(d, o["x_offsets"], o["y_offset"])
        return self._load_masked(d, addr, mask, res[0], d.padding)

    @INTERPRETER_OPS.lowers("tt.descriptor_scatter")
    def tt_descriptor_scatter(self, o: dict, res: list, attrs: dict) -> None:
        d = o["desc"]
        addr, mask = self._gather_addresses(d, o["x_offsets"], o["y_offset"])
        self._store_masked(d, addr, mask, o["src"], d.type.block_type.element_ty)

    # -- atomics -------------------------------------------------------------------------------------
    def _atomic_operands(self, ptr: V, *others: Optional[V]) -> tuple[np.ndarray, list[Optional[np.ndarray]]]:
        arrays = [ptr.a] + [x.a for x in others if x is not None]
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
        # every program of the batch performs the atomic, even where they all pass the same operands
        shape = (max(shape[0], self.launch.progs.size), ) + shape[1:]
        out = [None if x is None else np.broadcast_to(x.a, shape) for x in others]
        return np.broadcast_to(ptr.a, shape), out

    @INTERPRETER_OPS.lowers("tt.atomic_rmw")
    def tt_atomic_rmw(self, o: dict, res: list, attrs: dict) -> V:
        ptr, val, mask = o["ptr"], o["val"], o.get("mask")
        p, (v, m) = self._atomic_operands(ptr, val, mask)
        old = self._rmw(ptr, p, m, v, ptr.type.scalar.element_ty, attrs["op"])
        return V(old, res[0])

    def _rmw(self, base: V, p: np.ndarray, m: Optional[np.ndarray], v: np.ndarray, elt: Any, op: str) -> np.ndarray:
        update, scan = _rmw(op, elt)
        mem_vals = floats.bf16_to_bits(v).reshape(v.shape) if elt.name == "bf16" else as_type(v, MEMORY[elt.name])
        old = self.memory.rmw(p, m, base.mem, elt.name, mem_vals, update, scan, f"atomic_{op.lstrip('uf')}")
        if elt.name == "bf16":
            old = floats.bits_to_bf16(old).reshape(old.shape)
        return as_type(old, storage(elt))

    @INTERPRETER_OPS.lowers("tt.atomic_cas")
    def tt_atomic_cas(self, o: dict, res: list, attrs: dict) -> V:
        ptr = o["ptr"]
        p, (cmp, val) = self._atomic_operands(ptr, o["cmp"], o["val"])
        elt = ptr.type.scalar.element_ty
        cmp_bits, val_bits = ew.to_bits(np.ascontiguousarray(cmp), elt), ew.to_bits(np.ascontiguousarray(val), elt)
        ubits = UNSIGNED[MEMORY[elt.name].itemsize]
        cmp_bits, val_bits = cmp_bits.reshape(-1), val_bits.reshape(-1)
        lanes = np.arange(p.size).reshape(p.shape)

        def update(old: np.ndarray, lane: np.ndarray) -> np.ndarray:
            return np.where(old == cmp_bits[lane], val_bits[lane], old)

        def scan(init: np.ndarray, lane: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            cur = init[0]
            olds = np.empty(lane.size, ubits)
            for k, i in enumerate(lane.tolist()):
                olds[k] = cur
                if cur == cmp_bits[i]:
                    cur = val_bits[i]
            return olds, np.array([cur], ubits)

        old = self.memory.rmw(p, None, ptr.mem, ubits.name, lanes, update, scan, "atomic_cas")
        return V(ew.from_bits(old.astype(ubits), elt), res[0])


def _rmw(op: str, elt: Any) -> tuple[Callable, Callable]:
    """(update, scan) on memory encodings for atomic ``op`` on elements of type ``elt``."""
    dt = MEMORY[elt.name]
    if op == "xchg":
        return (lambda old, v: v), (lambda init, v: (np.concatenate([init, v[:-1]]), v[-1:]))
    if elt.name == "bf16":
        def upd(old: np.ndarray, v: np.ndarray) -> np.ndarray:
            return floats.bf16_to_bits(floats.round_bf16(floats.bits_to_bf16(old) + floats.bits_to_bf16(v)))

        def scan(init: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            olds = np.empty(v.size, dt)
            cur = init
            for k in range(v.size):
                olds[k] = cur[0]
                cur = upd(cur, v[k:k + 1])
            return olds, cur
        return upd, scan
    ufunc = {"add": np.add, "fadd": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
             "max": np.maximum, "min": np.minimum, "umax": np.maximum, "umin": np.minimum, "fmax": np.fmax,
             "fmin": np.fmin}[op]
    view: Callable[[np.ndarray], np.ndarray] = (lambda a: a)
    if op in ("max", "min"):
        view = signed
    elif op in ("umax", "umin"):
        view = unsigned

    def update(old: np.ndarray, v: np.ndarray) -> np.ndarray:
        return as_type(ufunc(view(old), view(v)), dt)

    def scan(init: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        seq = view(np.concatenate([init, v]))
        acc = as_type(ufunc.accumulate(seq, dtype=seq.dtype), dt)
        return acc[:-1], acc[-1:]
    return update, scan
