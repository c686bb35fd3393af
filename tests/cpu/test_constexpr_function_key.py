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
