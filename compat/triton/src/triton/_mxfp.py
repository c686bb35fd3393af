"""``triton.tools.mxfp``: host-side helpers for the OCP microscaling formats that Triton's tests and
``tl.dot_scaled`` users build inputs with: ``MXFP4Tensor`` (E2M1 codes, one per uint8, packable two per byte)
and ``MXScaleTensor`` (E8M0 block scales, 2**(code - 127), code 255 is NaN)."""
from __future__ import annotations

import torch

#: the eight magnitudes of E2M1, indexed by the code's low three bits (exponent bits 2..1, mantissa bit 0)
_E2M1_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def _shape(size) -> tuple:
    return tuple(size) if isinstance(size, (tuple, list, torch.Size)) else (size, )


class MXFP4Tensor:
    """E2M1 values held as one 4-bit code per uint8 element of ``data`` (sign in bit 3)."""

    def __init__(self, data=None, size=None, device=None):
        self.device = device
        if data is not None:
            if not isinstance(data, torch.Tensor):
                raise TypeError("MXFP4Tensor(data=...) needs a torch tensor of float32 values")
            self.device = data.device
            self.data = self._encode(data)
            self.size = tuple(data.shape)
        elif size is not None:
            self.size = _shape(size)
        else:
            raise ValueError("MXFP4Tensor needs either data= or size=")

    def random(self):
        self.data = torch.randint(0, 16, self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype):
        if dtype != torch.float32:
            raise ValueError("MXFP4Tensor converts to torch.float32 only")
        table = torch.tensor(_E2M1_MAGNITUDES, dtype=torch.float32, device=self.data.device)
        magnitude = table[(self.data & 0x7).long()]
        return torch.where((self.data & 0x8) != 0, -magnitude, magnitude)

    def _encode(self, values):
        """Round to nearest E2M1 value, ties to the even code (mantissa bit 0); beyond 6 (and inf/NaN) saturate."""
        values = values.to(torch.float32)
        mag = values.abs().nan_to_num(nan=6.0, posinf=6.0)
        table = torch.tensor(_E2M1_MAGNITUDES, dtype=torch.float32, device=values.device)
        dist = (mag.reshape(-1, 1) - table).abs()
        best = dist.min(dim=1, keepdim=True).values
        # among equally near codes prefer the even one (lowest bit clear), then the smaller
        codes = torch.arange(8, device=values.device)
        rank = (dist > best).to(torch.int64) * 16 + (codes & 1) * 8 + codes
        code = rank.argmin(dim=1).reshape(values.shape).to(torch.uint8)
        sign = torch.signbit(values).to(torch.uint8) << 3
        return sign | code

    def to_packed_tensor(self, dim):
        """Two codes per byte along ``dim`` (the first in the low nibble); an odd length is padded with zero."""
        data = self.data
        if not 0 <= dim < data.ndim:
            raise ValueError(f"dim {dim} is not a dimension of a {data.ndim}-D tensor")
        if data.size(dim) % 2:
            pad = [0] * (2 * data.ndim)
            pad[2 * (data.ndim - 1 - dim) + 1] = 1
            data = torch.nn.functional.pad(data, pad)
        pairs = data.unflatten(dim, (data.size(dim) // 2, 2))
        return (pairs.select(dim + 1, 1) << 4) | pairs.select(dim + 1, 0)

    def unpack_packed_tensor(self, packed_tensor, dim, original_shape):
        both = torch.stack((packed_tensor & 0xF, (packed_tensor >> 4) & 0xF), dim=dim + 1)
        data = both.flatten(dim, dim + 1)
        return data.narrow(dim, 0, original_shape[dim]).to(torch.uint8)


class MXScaleTensor:
    """E8M0 scales: ``data`` holds biased exponents (uint8); 255 encodes NaN."""

    def __init__(self, data=None, size=None, device=None):
        self.device = device
        if data is not None:
            if not isinstance(data, torch.Tensor):
                raise TypeError("MXScaleTensor(data=...) needs a torch tensor of float32 values")
            self.device = data.device
            self.data = self._encode(data)
            self.size = tuple(data.shape)
        elif size is not None:
            self.size = _shape(size)
        else:
            raise ValueError("MXScaleTensor needs either data= or size=")

    def random(self, low=None, high=None):
        """Random scales between ``low`` and ``high`` (powers of two, rounded down), never NaN."""
        import math
        lo = 0 if low is None else max(0, math.floor(math.log2(low)) + 127)
        hi = 254 if high is None else min(254, max(0, math.floor(math.log2(high)) + 127))
        if lo > hi:
            raise ValueError(f"MXScaleTensor.random: low={low} is above high={high}")
        self.data = torch.randint(lo, hi + 1, self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype):
        if dtype != torch.float32:
            raise ValueError("MXScaleTensor converts to torch.float32 only")
        value = torch.exp2(self.data.to(torch.float32) - 127.0)
        return torch.where(self.data == 255, torch.full_like(value, float("nan")), value)

    def _encode(self, values):
        """floor(log2(v)) + 127, clamped to [0, 254]; non-positive, inf and NaN become 255."""
        values = values.to(torch.float32)
        bad = ~torch.isfinite(values) | (values <= 0)
        exp = torch.floor(torch.log2(torch.where(bad, torch.ones_like(values), values))) + 127
        code = exp.clamp(0, 254).to(torch.uint8)
        return torch.where(bad, torch.full_like(code, 255), code)
