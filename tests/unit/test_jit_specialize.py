"""How launch arguments become a specialization key (no compilation): Triton's rules for ints, floats, None,
arrays, ``do_not_specialize``, defaults and keywords; the TypeErrors of bad calls; import cost."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.runtime.signature import compile_inputs
from tritium.runtime.specialize import make_binder


def _kernel(x_ptr, n, scale, flag, opt=None, BLOCK: tl.constexpr = 16):
    pass


def _bind(*args, fn=None, **kwargs):
    fn = fn or tritium.jit(_kernel)
    return make_binder(fn)(*args, **kwargs), fn


def test_ints_by_value():
    x = np.zeros(4, np.float32)
    for n, expected in [(17, ("i32", "")), (32, ("i32", "D")), (0, ("i32", "D")), (-16, ("i32", "D")),
                        (1, ("C", int, 1)), (2**31, ("i64", "D")), (2**31 + 1, ("i64", "")), (2**63, ("u64", "D"))]:
        (key, runtime, bound, options), fn = _bind(x, n, 1.5, True)
        assert key[1] == expected, n
    with pytest.raises(OverflowError, match="64 bits"):
        _bind(x, 2**64, 1.5, True)


def test_int_equal_to_one_is_compiled_in():
    x = np.zeros(4, np.float32)
    (key, runtime, bound, _), fn = _bind(x, 1, 1.5, True)
    signature, constexprs, attrs, keep = compile_inputs(fn, key, bound)
    assert signature["n"] == "constexpr" and constexprs[(1, )] == 1
    assert signature["scale"] == "fp32" and signature["flag"] == "u1" and signature["x_ptr"] == "*fp32"
    assert signature["opt"] == "constexpr" and constexprs[(4, )] is None
    assert signature["BLOCK"] == "constexpr" and constexprs[(5, )] == 16
    # run-time values: x, n, scale, flag, opt -> the kernel takes x, scale, flag
    assert keep == (0, 2, 3)
    assert runtime[1] == 1 and runtime[2] == 1.5


def test_do_not_specialize():
    fn = tritium.jit(_kernel, do_not_specialize=["n"], do_not_specialize_on_alignment=["x_ptr"])
    x = np.zeros(8, np.float32)
    keys = {_bind(x, n, 1.0, False, fn=fn)[0][0][1] for n in (1, 16, 17)}
    assert keys == {("i32", "")}
    (key, _, bound, _), _ = _bind(x, 16, 1.0, False, fn=fn)
    assert key[0][3] is False  # alignment not specialized
    signature, constexprs, attrs, keep = compile_inputs(fn, key, bound)
    assert attrs == {} and signature["n"] == "i32"


def test_arrays_dtype_alignment_and_address():
    torch = pytest.importorskip("torch")
    t = torch.zeros(64, dtype=torch.float16)
    (key, runtime, _, _), _ = _bind(t, 5, 1.0, True)
    assert key[0] == ("*", torch.float16, "cpu", True) and runtime[0] == t.data_ptr()
    (key, runtime, _, _), _ = _bind(t[1:], 5, 1.0, True)
    assert key[0][3] is False and runtime[0] == t.data_ptr() + 2
    a = np.arange(10, dtype=np.int64)
    (key, runtime, _, _), _ = _bind(a[3:], 5, 1.0, True)
    assert runtime[0] == a[3:].__array_interface__["data"][0] and key[0][1] == np.dtype(np.int64)


def test_defaults_keywords_and_options():
    x = np.zeros(4, np.float32)
    (key, _, bound, options), fn = _bind(x, n=3, scale=2.0, flag=False, BLOCK=64, num_warps=8)
    assert bound == (x, 3, 2.0, False, None, 64) and options == {"num_warps": 8}
    assert key[5] == ("C", int, 64)
    # constexpr values of different types never share a key
    k_int = _bind(x, 3, 2.0, False, BLOCK=1)[0][0][5]
    k_bool = _bind(x, 3, 2.0, False, BLOCK=True)[0][0][5]
    k_float = _bind(x, 3, 2.0, False, BLOCK=1.0)[0][0][5]
    assert len({k_int, k_bool, k_float}) == 3


@pytest.mark.parametrize("call, message", [
    (lambda b, x: b(x, 1), r"_kernel\(\) missing 2 required positional arguments: 'scale' and 'flag'"),
    (lambda b, x: b(x, 1, 2.0, True, None, 4, 5), r"_kernel\(\) takes from 4 to 6 positional arguments"),
    (lambda b, x: b(x, 1, 2.0, True, n=3), r"_kernel\(\) got multiple values for argument 'n'"),
])
def test_bad_calls_name_the_kernel(call, message):
    binder = make_binder(tritium.jit(_kernel))
    with pytest.raises(TypeError, match=message):
        call(binder, np.zeros(4, np.float32))


def _odd_names(t, options, h, __k0=None):
    pass


def test_parameter_names_cannot_clash_with_the_binder():
    fn = tritium.jit(_odd_names)
    key, runtime, bound, options = make_binder(fn)(3, 4, h=5)
    assert bound == (3, 4, 5, None) and options == {}


def test_unsupported_argument_type():
    with pytest.raises(TypeError, match="cannot pass a object"):
        _bind(object(), 1, 1.0, True)


def test_import_is_light():
    """Heavy dependencies load when first needed (examples/06-launch-overhead.py times the import)."""
    code = ("import sys\nimport tritium, tritium.language\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('mlir', 'llvmlite', 'torch', 'cuda', 'numpy', 'pluggy')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"import tritium loaded {out.strip()}"


def test_set_allocator():
    from tritium.runtime import allocation
    # start from the default and leave things as found: the allocator is process state that other tests (and
    # torch inductor's generated code, in the compat tests) set too
    token = allocation._allocator.set(allocation._no_allocator)
    try:
        with pytest.raises(RuntimeError, match="no allocator is set"):
            allocation.get_allocator()(64, 16, None)
        tritium.set_allocator(lambda size, alignment, stream: bytearray(size))
        assert len(allocation.get_allocator()(64, 16, None)) == 64
        with pytest.raises(TypeError, match="takes a callable"):
            tritium.set_allocator(3)
    finally:
        allocation._allocator.reset(token)


def _kw_only(x_ptr, n, *, BLOCK: tl.constexpr = 8, scale=1.5):
    pass


def _var_meta(x_ptr, **meta):
    pass


def test_keyword_only_parameters_and_var_keywords():
    binder = make_binder(tritium.jit(_kw_only))
    key, runtime, bound, options = binder(np.zeros(2, np.float32), 3, scale=2.0)
    assert bound[1:] == (3, 8, 2.0) and options == {}
    with pytest.raises(TypeError, match="takes 2 positional arguments"):
        binder(np.zeros(2, np.float32), 3, 16)
    with pytest.raises(TypeError, match=r"kernel `_var_meta` takes \*\*meta"):
        make_binder(tritium.jit(_var_meta))
