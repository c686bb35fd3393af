"""Launch grids are checked before they reach native code, the same way compiled and interpreted: integers
only (numpy integers too), no negative sizes, at most the driver's limit per axis; an empty grid runs nothing."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def count_programs(out):
    tl.atomic_add(out, 1)


@pytest.fixture(params=["compiled", "interpreted"])
def mode(request):
    count_programs.interpret = request.param == "interpreted"
    yield request.param
    count_programs.interpret = False


def _programs(grid) -> int:
    out = np.zeros(1, np.int32)
    count_programs[grid](out)
    return int(out[0])


@pytest.mark.parametrize("grid, expected", [((3, ), 3), (5, 5), ((np.int64(3), ), 3), ((np.int32(2), 3), 6),
                                            ([2, 2], 4), ((2, 2, 2), 8), (lambda meta: (4, ), 4)])
def test_integer_grids_run(mode, grid, expected):
    assert _programs(grid) == expected


@pytest.mark.parametrize("grid", [(0, ), (3, 0), (0, 5, 5), (2**31 - 1, 0), 0])
def test_empty_grid_is_a_no_op(mode, grid):
    assert _programs(grid) == 0


@pytest.mark.parametrize("grid, words", [
    ((2.9, ), ["2.9", "float", "cdiv"]),        # was: 2 programs
    ((2.0, ), ["2.0", "float"]),
    ((True, ), ["True", "integers"]),
    ((np.bool_(True), ), ["True", "integers"]),
    (("4", ), ["'4'"]),
    ((np.float32(4), ), ["4.0"]),
])
def test_non_integer_grid_is_refused(mode, grid, words):
    with pytest.raises(TypeError) as info:
        _programs(grid)
    msg = str(info.value)
    assert "count_programs" in msg
    for w in words:
        assert w in msg


@pytest.mark.parametrize("grid, axis", [((2**32 + 4, ), "x"),  # was: 4 programs (taken modulo 2**32)
                                        ((2**31, ), "x"), ((1, 2**31), "y"), ((1, 1, 2**40), "z")])
def test_too_large_grid_is_refused(mode, grid, axis):
    with pytest.raises(ValueError, match=rf"count_programs.*axis {axis}.*\(2147483647\)"):
        _programs(grid)


@pytest.mark.parametrize("grid", [(-1, ), (2, -3), (1, 1, -1)])
def test_negative_grid_is_refused(mode, grid):
    with pytest.raises(ValueError, match="count_programs.*negative"):
        _programs(grid)


@pytest.mark.parametrize("grid", [(), (1, 2, 3, 4)])
def test_grid_rank_is_checked(mode, grid):
    with pytest.raises(ValueError, match="count_programs.*1 to 3 dimensions"):
        _programs(grid)


def test_driver_limits_apply(monkeypatch):
    """A device with narrower y/z axes (65535 on many GPUs) says so through DriverBase.max_grid."""
    from tritium.runtime.driver import driver
    drv = driver.active
    monkeypatch.setattr(type(drv), "max_grid", lambda self: (2**31 - 1, 65535, 65535), raising=False)

    @triton.jit
    def narrow(out):
        tl.atomic_add(out, 1)

    out = np.zeros(1, np.int32)
    narrow[(2, 65535)](out)
    assert out[0] == 2 * 65535
    with pytest.raises(ValueError, match=r"narrow.*65536 programs on axis y.*\(65535\)"):
        narrow[(1, 65536)](out)
    with pytest.raises(ValueError, match=r"axis z"):
        narrow[(1, 1, 70000)](out)


def test_compiled_kernel_launch_checks_its_grid():
    k = count_programs.warmup(np.zeros(1, np.int32), grid=(1, ))
    out = np.zeros(1, np.int32)
    k[(3, )](out)
    assert out[0] == 3
    with pytest.raises(TypeError, match="count_programs"):
        k[(1.5, )](out)
    with pytest.raises(ValueError, match="count_programs"):
        k[(2**32 + 1, )](out)
