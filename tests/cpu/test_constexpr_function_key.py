"""A kernel's cache key covers what a @constexpr_function it calls returns: the key hashed the function's
bytecode, which is the same for ``return 64`` and ``return 128`` (the constants live apart from it), so editing
the constant in the source served the kernel compiled with the old value from the on-disk cache."""
import importlib.util
import textwrap

CODE = textwrap.dedent("""
    import tritium as triton
    import tritium.language as tl


    @triton.constexpr_function
    def block():
        return VALUE


    @triton.jit
    def kernel(X):
        tl.store(X, block())
""")


def _kernel(path, value):
    path.write_text(CODE.replace("VALUE", str(value)))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.kernel


def test_changed_constant_in_a_constexpr_function_changes_the_key(tmp_path):
    a = _kernel(tmp_path / "cf_a.py", 64)
    b = _kernel(tmp_path / "cf_b.py", 128)
    c = _kernel(tmp_path / "cf_c.py", 64)
    assert a.cache_key != b.cache_key
    assert a.cache_key == c.cache_key


def test_unsafe_update_src_changes_what_runs_and_the_key(tmp_path):
    # Triton's test_cache.py::test_constexpr_fn_change (its key part); here the new source also runs, so the
    # kernel compiled under the new key holds the new value
    import numpy as np
    mod_path = tmp_path / "cf_upd.py"
    kernel = _kernel(mod_path, 3)
    block = kernel.fn.__globals__["block"]
    x = np.zeros(1, np.int32)
    kernel[(1, )](x)
    assert x[0] == 3
    baseline = kernel.cache_key
    original = block.src
    block._unsafe_update_src(original.replace("return 3", "return 5"))
    kernel.hash = None
    assert kernel.cache_key != baseline
    kernel.device_caches.clear()
    kernel[(1, )](x)
    assert x[0] == 5
    block._unsafe_update_src(original)
    kernel.hash = None
    assert kernel.cache_key == baseline
