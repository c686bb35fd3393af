"""triton.tools.mxfp (Triton's tests import it at module level): E2M1 and E8M0 encodings against hand values."""
import pytest

torch = pytest.importorskip("torch")


def test_e2m1_round_trip_ties_to_even():
    from triton.tools.mxfp import MXFP4Tensor
    x = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -0.0, -1.5, float("inf"), -3.0])
    t = MXFP4Tensor(x)
    assert t.data.tolist() == [0, 2, 2, 4, 4, 6, 6, 7, 8, 11, 7, 13]
    assert t.to(torch.float32).tolist() == [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 6.0, -0.0, -1.5, 6.0, -3.0]


@pytest.mark.parametrize("shape, dim", [((3, 5), 1), ((4, 6), 0), ((2, 3, 7), 2)])
def test_e2m1_packing(shape, dim):
    from triton.tools.mxfp import MXFP4Tensor
    t = MXFP4Tensor(size=shape).random()
    packed = t.to_packed_tensor(dim)
    assert packed.shape[dim] == (shape[dim] + 1) // 2
    first = t.data.narrow(dim, 0, 1)
    assert torch.equal(packed.narrow(dim, 0, 1) & 0xF, first)
    assert torch.equal(t.unpack_packed_tensor(packed, dim, shape), t.data)


def test_e8m0_scales():
    from triton.tools.mxfp import MXScaleTensor
    s = MXScaleTensor(torch.tensor([3.0, -1.0, 0.5, float("nan"), 1.0]))
    assert s.data.tolist() == [128, 255, 126, 255, 127]
    v = s.to(torch.float32)
    assert v[0] == 2.0 and v[2] == 0.5 and v[4] == 1.0 and torch.isnan(v[1]) and torch.isnan(v[3])
    r = MXScaleTensor(size=(1000, )).random(low=0.25, high=64.0)
    assert int(r.data.min()) >= 125 and int(r.data.max()) <= 133
