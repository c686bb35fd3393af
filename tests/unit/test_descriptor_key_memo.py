"""A host TensorDescriptor launched again is not validated again when its fields are those it last passed with
(the checks cost ~10 us a descriptor inside every launch: bench/tma_ranks.py's batched matmul passes three; nor
at its first launch, its constructor having checked it), and a field changed after a launch, reassigned or
mutated in place, is still checked at the next launch."""
from __future__ import annotations

import numpy as np
import pytest

from tritium.tools import tensor_descriptor as td


def _desc():
    return td.TensorDescriptor.from_tensor(np.zeros((4, 64, 64), np.float16), [1, 32, 64])


def test_a_descriptor_launched_again_is_not_validated_again(monkeypatch):
    d = _desc()
    calls = []
    real = td.validate
    monkeypatch.setattr(td, "validate", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = td.descriptor_key(d)
    assert td.descriptor_key(d) == first and td.descriptor_key(d) == first
    assert len(calls) == 0      # the constructor (before the patch) checked it
    # a new descriptor is checked by its constructor, not again at its first launch (one made for each call
    # paid the checks twice)
    before = len(calls)
    other = _desc()
    td.descriptor_key(other)
    td.descriptor_key(other)
    assert len(calls) == before + 1


@pytest.mark.parametrize("change,message", [
    (lambda d: setattr(d, "block_shape", [1, 24, 64]), "powers of 2"),
    (lambda d: d.block_shape.__setitem__(1, 24), "powers of 2"),
    (lambda d: d.strides.__setitem__(2, 2), "last stride"),
    (lambda d: setattr(d, "shape", [4, 64, 0]), "positive"),
    (lambda d: setattr(d, "padding", "inf"), "padding"),
])
def test_a_field_changed_after_a_launch_is_checked_again(change, message):
    d = _desc()
    td.descriptor_key(d)
    change(d)
    with pytest.raises(ValueError, match=message):
        td.descriptor_key(d)


def test_a_new_base_gives_its_own_key_and_address():
    d = _desc()
    key, value = td.descriptor_key(d)
    d.base = np.zeros((4, 64, 64), np.float32)
    key2, value2 = td.descriptor_key(d)
    assert key2 != key and value2[0] != value[0]


def test_the_launch_key_is_remembered_with_the_check():
    """The constructor's memo also holds the launch key and values, so a launch of an unchanged descriptor
    builds neither (examples/08 makes three descriptors per call: ~45k instructions each before)."""
    d = _desc()
    assert td.descriptor_key(d) is d._tritium_checked[2]
    assert td.descriptor_key(d, align=False)[0][5] is False     # the rows-end fact is not taken from the memo


def test_valid_changes_give_the_new_values_not_the_remembered_ones():
    d = _desc()
    td.descriptor_key(d)
    d.shape[2] = 48                 # in place, still valid
    key, value = td.descriptor_key(d)
    assert value[1:4] == (4, 64, 48) and key[5] is True
    d.shape[2] = 40
    key, value = td.descriptor_key(d)
    assert value[1:4] == (4, 64, 40) and key[5] is False
    d.base = np.zeros((4, 64, 64), np.float16)   # same dtype, another buffer
    key2, value2 = td.descriptor_key(d)
    assert key2 == key and value2[0] == d.base.ctypes.data != value[0]
