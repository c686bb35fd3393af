"""Operations whose body is user code: ``map_elementwise``; and ``unsplat`` (one-element block to scalar)."""
from __future__ import annotations

from typing import Callable, Sequence

from .. import core as tl
from ..core import CompileTimeError
from .ops import Part

T = tl.tensor


class Regions(Part):
    def unsplat(self, x: T) -> T:
        """The single element of a one-element block (``tt.unsplat``)."""
        ty = x.type.scalar
        op = self.builder.tt("unsplat", {"src": x.handle}, [self.sem.ir_type(ty)])
        return T(op.result, ty)

    def map_elementwise(self, inputs: Sequence[T], body: Callable[[list[T]], list[T]], pack: int) -> tuple[T, ...]:
        """Apply ``body`` (scalars in, scalars out) to every element of the broadcast ``inputs``.

        ``body`` receives ``pack`` consecutive elements of each input (input-major) and returns ``pack``
        values of each result (result-major). Builds ``tt.map_elementwise`` whose region ends in ``gpu.yield``.
        """
        inputs = list(self.sem.broadcast_tensors(*inputs))
        shape = list(inputs[0].type.shape) if inputs[0].type.is_block() else []
        numel = 1
        for d in shape:
            numel *= d
        if numel % pack:
            raise CompileTimeError(f"pack={pack} does not divide the {numel} elements of the arguments")
        b = self.builder
        scalars = [x.type.scalar for x in inputs]
        arg_types = [self.sem.ir_type(s) for s in scalars for _ in range(pack)]
        tmp = b.tt("map_elementwise", {"srcs": [x.handle for x in inputs]}, [], {"pack": b.i32_attr(pack)},
                   regions=1)
        block = tmp.regions[0].blocks.append(*arg_types)
        args = list(block.arguments)
        with b.at(block):
            vals = [T(args[i * pack + j], s) for i, s in enumerate(scalars) for j in range(pack)]
            results = [self.sem.to_tensor(r) for r in body(vals)]
            if not results or len(results) % pack:
                raise CompileTimeError(f"the mapped function returned {len(results)} values; with pack={pack} it "
                                       f"must return a multiple of {pack}")
            for r in results:
                if r.type.is_block():
                    raise CompileTimeError("the function given to map_elementwise must return scalars")
            res_scalars = [r.type.scalar for r in results[::pack]]
            for k in range(1, pack):
                if [r.type.scalar for r in results[k::pack]] != res_scalars:
                    raise CompileTimeError("the mapped function returned values of different types for the "
                                           "elements of one pack")
            b.yield_([r.handle for r in results], dialect="gpu")
        out_tys = [tl.block_type(s, shape) if shape else s for s in res_scalars]
        real = b.tt("map_elementwise", {"srcs": [x.handle for x in inputs]},
                    [self.sem.ir_type(t) for t in out_tys], {"pack": b.i32_attr(pack)}, regions=1)
        block.append_to(real.regions[0])
        tmp.erase()
        return tuple(T(real.results[i], t) for i, t in enumerate(out_tys))
