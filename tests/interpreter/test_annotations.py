"""Type annotations on kernel parameters fix the parameter's type, as in Triton (``v: tl.uint8`` makes ``v`` a
u8 even when a Python int is passed), compiled (CPU backend) and interpreted; the values are converted as
Triton's launcher converts them (ints wrap to the width, fp16 refuses values beyond its range...)."""

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


def _kernel_storing(ann, expect):
    """A kernel ``k(out, v: ann)`` that checks v's type while compiling and stores v."""
    def k(out, v):
        tl.static_assert(v.dtype == expect)
        tl.store(out, v)
    k.__annotations__ = {"v": ann}
    return triton.jit(k)


def _launch(kernel, interpret, *args):
    from tritium import knobs
    with knobs.runtime.scope():
        knobs.runtime.interpret = False
        kernel.interpret = interpret
        try:
            return kernel[(1, )](*args)
        finally:
            kernel.interpret = False


INTS = [
    # annotation, value, the kernel's type, output array type, the value Triton's launcher passes
    (tl.uint8, 300, tl.uint8, np.int64, 44),
    ("tl.uint8", 255, tl.uint8, np.int64, 255),
    (tl.int8, 200, tl.int8, np.int64, -56),
    ("int16", 40000, tl.int16, np.int64, 40000 - 65536),
    (tl.uint16, 70000, tl.uint16, np.int64, 70000 - 65536),
    (tl.int32, 2**31, tl.int32, np.int64, -2**31),
    (int, 2**31 + 5, tl.int32, np.int64, -2**31 + 5),   # Python's int means i32, as in Triton
    (tl.uint32, 2**32 + 7, tl.uint32, np.int64, 7),
    (tl.int64, 5, tl.int64, np.int64, 5),
    (tl.uint64, 2**64 - 1, tl.uint64, np.uint64, 2**64 - 1),
    (tl.uint8, 1, tl.uint8, np.int64, 1),   # not turned into a compile-time 1
    (tl.uint8, True, tl.uint8, np.int64, 1),
]


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("ann, value, ty, out_dtype, want", INTS, ids=[f"{a}-{v}" for a, v, *_ in INTS])
def test_int_annotation_fixes_type_and_wraps(interpret, ann, value, ty, out_dtype, want):
    out = np.zeros(1, out_dtype)
    _launch(_kernel_storing(ann, ty), interpret, out, value)
    assert int(out[0]) == want


FLOATS = [
    (tl.float16, 1 / 3, tl.float16, np.float32, float(np.float16(1 / 3))),
    ("tl.float16", 3, tl.float16, np.float32, 3.0),      # an int for a float parameter is converted
    (tl.bfloat16, 1 / 3, tl.bfloat16, np.float32, 0.33203125),   # fp32 bits truncated, as Triton's launcher
    (tl.bfloat16, float("inf"), tl.bfloat16, np.float32, float("inf")),
    (tl.float32, 1 / 3, tl.float32, np.float32, float(np.float32(1 / 3))),
    (tl.float64, 1 / 3, tl.float64, np.float64, 1 / 3),     # unannotated, a float is fp32 and loses this
    (float, 0.1, tl.float32, np.float64, float(np.float32(0.1))),
]


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("ann, value, ty, out_dtype, want", FLOATS, ids=[f"{a}-{v}" for a, v, *_ in FLOATS])
def test_float_annotation_fixes_type(interpret, ann, value, ty, out_dtype, want):
    out = np.zeros(1, out_dtype)
    _launch(_kernel_storing(ann, ty), interpret, out, value)
    assert out[0] == want


def test_float_nan_stays_nan():
    for interpret in (False, True):
        for ann in (tl.float16, tl.bfloat16, tl.float64):
            out = np.zeros(1, np.float64)
            _launch(_kernel_storing(ann, ann), interpret, out, float("nan"))
            assert np.isnan(out[0]), (ann, interpret)


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("ann, value, error, words", [
    (tl.uint8, -1, OverflowError, "negative"),
    (tl.uint64, 2**64, OverflowError, "64 bits"),
    (tl.int64, 2**63, OverflowError, "64-bit"),
    (tl.float16, 1e6, OverflowError, "fp16"),
    (tl.int32, 2.5, TypeError, "float"),
])
def test_values_the_annotated_type_cannot_take_are_refused(interpret, ann, value, error, words):
    out = np.zeros(1, np.float64)
    k = _kernel_storing(ann, ann)
    with pytest.raises(error) as info:
        _launch(k, interpret, out, value)
    msg = str(info.value)
    assert "`v`" in msg and words in msg
    if not interpret:
        assert "`k`" in msg


@triton.jit
def _read_as_fp16(out, src: "*fp16"):  # noqa: F722  (Triton's spelling of a pointer type)
    tl.static_assert(src.dtype.element_ty == tl.float16)
    tl.store(out, tl.load(src).to(tl.float32))


@pytest.mark.parametrize("interpret", [False, True])
def test_pointer_annotation_fixes_the_element_type(interpret):
    src = np.array([np.float16(1.5)]).view(np.uint16)   # the array's own type says u16
    out = np.zeros(1, np.float32)
    _launch(_read_as_fp16, interpret, out, src)
    assert out[0] == 1.5


@triton.jit
def _unknown(X: "torch.Tensor", n: "something else", BLOCK: tl.constexpr):  # noqa: F821,F722
    tl.store(X + tl.arange(0, BLOCK), n, mask=tl.arange(0, BLOCK) < 1)


def test_unknown_annotations_are_ignored():
    out = np.zeros(4, np.float32)
    _unknown[(1, )](out, 2.5, 4)   # n stays fp32 (unannotated rules)
    assert out[0] == 2.5


@triton.jit
def _annotated_int(out, n: tl.uint16, m: tl.uint16):
    tl.store(out, n + m)


def test_compiled_signature_and_divisibility():
    out = np.zeros(1, np.int64)
    h = _annotated_int[(1, )](out, 32, 3)
    ttir = h.asm["ttir"]
    head = ttir[ttir.index("func.func"):].split("\n")[0]
    # n (32) is known divisible by 16, as an unannotated int would be; both are i16 whatever the Python values
    assert head.count(": i16") == 2 and head.count("tt.divisibility") == 2, head
    assert "arith.extui" in ttir   # unsigned: widened with zeros
    assert out[0] == 35
    # another value of the same annotated types uses the same compiled kernel
    h2 = _annotated_int[(1, )](out, 48, 5)
    assert h2 is h and out[0] == 53


@pytest.mark.parametrize("ann, want", [
    (tl.uint8, "u8"), ("tl.uint8", "u8"), ("uint8", "u8"), ("u8", "u8"), (tl.int1, "u1"), (bool, "u1"),
    (int, "i32"), (float, "fp32"), ("float16", "fp16"), (tl.bfloat16, "bf16"), ("*fp16", "*fp16"),
    ("fp32*", "*fp32"), ("const *fp16", "*kfp16"), (tl.pointer_type(tl.float32), "*fp32"),
    (tl.constexpr, ""), ("torch.Tensor", ""), ("anything", ""), (None, ""), (list, ""),
])
def test_annotation_spelling(ann, want):
    from tritium.runtime.annotations import annotation_type
    assert annotation_type(ann) == want


def test_fp8_scalar_annotation_is_refused_with_advice():
    def k(out, v):
        tl.store(out, v)
    k.__annotations__ = {"v": tl.float8e4nv}
    kernel = triton.jit(k)
    with pytest.raises(TypeError, match="through pointers"):
        kernel[(1, )](np.zeros(1, np.float32), 1.0)
