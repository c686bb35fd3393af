"""A kernel's cache key covers the line it starts on, as Triton's does (test_cache.py::
test_changed_line_numbers_invalidate_cache): compiled code carries line numbers (IR locations, the text of a
failed device_assert), so the same source moved down a file must not be served from the cache with the old
ones."""
import importlib.util
import textwrap

CODE = textwrap.dedent("""
    import tritium as triton
    import tritium.language as tl


    @triton.jit
    def kernel(X):
        tl.device_assert(tl.load(X) == 0, "x must be zero")
""")


def _load(path, code):
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.kernel


def test_moving_a_kernel_down_changes_its_key(tmp_path):
    a = _load(tmp_path / "lines_a.py", CODE)
    b = _load(tmp_path / "lines_b.py", "\n\n" + CODE)
    same = _load(tmp_path / "lines_c.py", CODE)
    assert a.src == b.src
    assert a.cache_key != b.cache_key
    assert a.cache_key == same.cache_key
