"""Every rule a host TensorDescriptor is checked against, with its message: validate() was rewritten for fewer
bytecodes (C calls instead of loops and generator expressions; examples/08 makes three descriptors per call), and
each rule must still refuse exactly what it refused, saying the same thing."""
from __future__ import annotations

import numpy as np
import pytest

from tritium.tools import tensor_descriptor as td

X = np.zeros((64, 64), np.float16)
MISALIGNED = np.zeros(300, np.uint8)[1:257].view(np.float16).reshape(8, 16)


class Fields:
    """A descriptor's fields without the constructor's check."""

    def __init__(self, base=X, shape=(64, 64), strides=(64, 1), block=(16, 32), padding="zero"):
        self.base, self.shape, self.strides, self.block_shape, self.padding = base, shape, strides, block, padding


@pytest.mark.parametrize("fields,error,message", [
    (Fields(shape=(64, 1.5)), TypeError, r"shape entries must be integers, got \(64, 1.5\)"),
    (Fields(strides=(64, 1.0)), TypeError, r"strides must be integers"),
    (Fields(block=(16, "32")), TypeError, r"block_shape entries must be integers"),
    (Fields(shape=(1, 1, 1, 1, 1, 1), strides=(8,) * 5 + (1,), block=(1,) * 6), ValueError, "1 to 5 dimensions"),
    (Fields(strides=(64, 8, 1)), ValueError, "rank mismatch"),
    (Fields(base=MISALIGNED, shape=(8, 16), strides=(16, 1)), ValueError, "16-byte aligned"),
    (Fields(strides=(60, 1)), ValueError, r"multiples of 16 bytes, got \[60, 1\] \(fp16, 2 bytes per element\)"),
    (Fields(strides=(64, 2)), ValueError, "last stride"),
    (Fields(shape=(64, 0)), ValueError, "positive int32"),
    (Fields(shape=(2**31, 64)), ValueError, "positive int32"),
    (Fields(block=(16, 24)), ValueError, r"powers of 2, got \[16, 24\] \(entry 1\)"),
    (Fields(block=(0, 32)), ValueError, r"powers of 2, got \[0, 32\] \(entry 0\)"),
    (Fields(block=(2048, 1024)), ValueError, "at most 1048576 elements"),
    (Fields(padding="inf"), ValueError, "padding must be 'zero' or 'nan'"),
    (Fields(base=np.zeros((64, 64), np.int32), padding="nan"), ValueError, "needs floating-point data, got i32"),
])
def test_each_rule_refuses_with_its_message(fields, error, message):
    with pytest.raises(error, match=message):
        td.validate(fields)


def test_what_passes():
    assert td.validate(Fields(strides=(np.int64(64), 1), padding="nan")) == ((64, 64), (64, 1), (16, 32), "nan")
    one = np.zeros(64, np.float16)
    assert td.validate(Fields(base=one, shape=[64], strides=[1], block=[64])) == ((64, ), (1, ), (64, ), "zero")
    # outer strides of 0 or negative multiples of 16 bytes pass this check (Triton's rule is divisibility)
    assert td.validate(Fields(strides=(-64, 1)))[1] == (-64, 1)
