"""tritium.llvmir.native_call: builtins that call C function pointers (the GPU launchers' driver call) run here
on the host against real C functions: libc's and one JIT-compiled with a launch-shaped signature."""
from __future__ import annotations

import ctypes
import os
import sys
import threading

import pytest

from tritium.llvmir import native_call as nc

libc = ctypes.CDLL(None)


def _address(fn) -> int:
    return ctypes.cast(fn, ctypes.c_void_p).value


# cuLaunchKernel's shape: a handle, seven 32-bit values, three pointers (the last five on the stack on x86-64);
# the probe stores what it received, so the test sees every argument's bits as the callee saw them
_PROBE_KINDS = ("u64", "u32", "u32", "u32", "u32", "u32", "u32", "u32", "u64", "u64", "u64")
_received = (ctypes.c_uint64 * len(_PROBE_KINDS))()


def _probe_address() -> int:
    import llvmlite.binding as llvm
    out = ctypes.addressof(_received)
    params = ", ".join(f"{'i64' if k.endswith('64') else 'i32'} %a{i}" for i, k in enumerate(_PROBE_KINDS))
    body = []
    for i, k in enumerate(_PROBE_KINDS):
        value = f"%a{i}"
        if k == "u32":
            body.append(f"  %z{i} = zext i32 %a{i} to i64")
            value = f"%z{i}"
        body += [f"  %q{i} = getelementptr i64, ptr inttoptr (i64 {out} to ptr), i64 {i}",
                 f"  store i64 {value}, ptr %q{i}"]
    text = (f"define i32 @launch_probe({params}) {{\n" + "\n".join(body)
            + "\n  %r = trunc i64 %a0 to i32\n  %s = sub i32 0, %r\n  ret i32 %s\n}\n")
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(text),
                                        llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    _probe_address.engine = engine  # type: ignore[attr-defined]  # the code lives as long as its engine
    return engine.get_function_address("launch_probe")


@pytest.fixture(scope="module")
def probe():
    return nc.native_function(_probe_address(), _PROBE_KINDS, "i32", name="probe")


@pytest.fixture(scope="module")
def labs():
    return nc.native_function(_address(libc.labs), ("i64", ), "i64", name="labs")


def test_calls_libc(labs):
    assert type(labs).__name__ == "builtin_function_or_method"
    assert labs(-5) == 5 and labs(7) == 7 and labs(-(1 << 62)) == 1 << 62
    abs32 = nc.native_function(_address(libc.abs), ("i32", ), "i32", name="abs32", release_gil=False)
    assert abs32(-123) == 123 and abs32(-(1 << 31) + 1) == (1 << 31) - 1


def test_every_argument_arrives(probe):
    values = (0x1234_5678_9ABC_DEF0, 1, 2, 3, 32, 1, 1, 49152, 0xFFFF_FFFF_FFFF_FFFF, 0x7FFF_0000_1000, 0)
    result = probe(*values)
    assert list(_received) == list(values)
    assert result == (1 << 32) - 0x9ABC_DEF0  # the low 32 bits of the handle, negated, as a C int
    assert probe(5, *([0xFFFF_FFFF] * 7), 0, 0, 0) == -5
    assert list(_received)[1:8] == [0xFFFF_FFFF] * 7


def test_index_objects_are_integers(probe):
    class Handle:
        def __index__(self) -> int:
            return 77

    class Wide(int):
        pass

    np = pytest.importorskip("numpy")
    probe(Handle(), True, np.uint32(2), np.int64(3), Wide(4), 5, 6, 7, np.uint64(1 << 63), Wide(1 << 62), 10)
    assert list(_received) == [77, 1, 2, 3, 4, 5, 6, 7, 1 << 63, 1 << 62, 10]


@pytest.mark.parametrize("bad, error, text", [
    ((), TypeError, r"probe\(\) takes exactly 11 arguments \(0 given\)"),
    ((1, ) * 12, TypeError, r"takes exactly 11 arguments \(12 given\)"),
    ((1.0, ) + (1, ) * 10, TypeError, "'float' object cannot be interpreted as an integer"),
    ((1, None) + (1, ) * 9, TypeError, "'NoneType' object cannot be interpreted as an integer"),
    ((1, 1 << 32) + (1, ) * 9, OverflowError, r"argument 1 does not fit in its C type \(u32\)"),
    ((1, -1) + (1, ) * 9, OverflowError, "negative"),
    ((1 << 64, ) + (1, ) * 10, OverflowError, "too (big|large)"),
    ((1, ) * 10 + (-1, ), OverflowError, "negative"),
])
def test_bad_arguments_raise(probe, bad, error, text):
    _received[0] = 999
    with pytest.raises(error, match=text):
        probe(*bad)
    assert _received[0] == 999  # refused before the C function ran


def test_keywords_and_signed_ranges():
    abs32 = nc.native_function(_address(libc.abs), ("i32", ), "i32", name="abs32")
    with pytest.raises(TypeError, match="keyword"):
        abs32(x=1)
    with pytest.raises(OverflowError):
        abs32(1 << 31)
    with pytest.raises(OverflowError):
        abs32(-(1 << 31) - 1)
    with pytest.raises(OverflowError):
        nc.native_function(_address(libc.labs), ("i64", ), "i64", name="labs")(1 << 63)


def test_no_reference_or_memory_leaks(probe, labs):
    big = 1 << 40
    other = 1 << 41

    class Handle:
        def __index__(self) -> int:
            return other

    handle = Handle()
    args = (big, 1, 1, 1, 32, 1, 1, 0, other, big, 0)
    before = (sys.getrefcount(big), sys.getrefcount(other), sys.getrefcount(handle))
    for _ in range(1000):
        probe(*args)
        probe(handle, *args[1:])
    blocks = sys.getallocatedblocks()
    for _ in range(100_000):
        probe(*args)
        probe(handle, *args[1:])
        labs(-big)
    refused = 0
    for _ in range(100_000):  # the error paths release what they took too
        try:
            probe(handle, 1 << 33, *args[2:])
        except OverflowError:
            refused += 1
    assert refused == 100_000
    # one object kept per call would be 400_000 blocks; what is left is the interpreter's own caches
    assert sys.getallocatedblocks() - blocks < 10_000
    assert (sys.getrefcount(big), sys.getrefcount(other), sys.getrefcount(handle)) == before


def test_void_result_and_unsigned_result():
    buf = ctypes.create_string_buffer(b"abc")
    memset = nc.native_function(_address(libc.memset), ("u64", "i32", "u64"), "void", name="memset")
    assert memset(ctypes.addressof(buf), ord("z"), 2) is None
    assert buf.value == b"zzc"
    strlen = nc.native_function(_address(libc.strlen), ("u64", ), "u64", name="strlen")
    assert strlen(ctypes.addressof(buf)) == 3


def test_built_once_per_signature_across_threads():
    addr = _address(libc.labs)
    got = []
    threads = [threading.Thread(target=lambda: got.append(nc.native_function(addr, ("i64", ), "i64", name="labs_t")))
               for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 6 and all(g is got[0] for g in got)
    assert got[0](-9) == 9


def test_release_gil_lets_threads_call_at_once(probe, labs):
    errors = []

    def work() -> None:
        try:
            for i in range(20_000):
                assert labs(-i) == i
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_child_calls_and_builds(labs):
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        ok = False
        try:
            ok = labs(-3) == 3
            strlen = nc.native_function(_address(libc.strlen), ("u64", ), "u64", name="strlen_child")
            ok = ok and strlen(ctypes.addressof(ctypes.create_string_buffer(b"four"))) == 4
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_caller_takes_the_address_first():
    call = nc.native_caller(("i64", ), "i64", name="call_i64")
    assert call(_address(libc.labs), -12) == 12
    assert call(_address(libc.llabs), -(1 << 40)) == 1 << 40
    assert nc.native_caller(("i64", ), "i64", name="call_i64") is call
    with pytest.raises(ValueError, match=r"call_i64\(\): the function's address is null"):
        call(0, 1)
    with pytest.raises(TypeError, match=r"takes exactly 2 arguments \(1 given\)"):
        call(_address(libc.labs))


def test_bytes_are_passed_as_their_contents():
    strlen = nc.native_function(_address(libc.strlen), ("bytes", ), "u64", name="strlen_bytes")
    assert strlen(b"hello\0world") == 5 and strlen(b"") == 0
    for wrong in (bytearray(b"x"), "text", 5):
        with pytest.raises(TypeError):
            strlen(wrong)
    call = nc.native_caller(("bytes", "u64"), "u64", name="strnlen_call")
    assert call(_address(libc.strnlen), b"abcdef", 3) == 3


def test_refuses_bad_specifications():
    with pytest.raises(ValueError, match="argument kind"):
        nc.native_function(_address(libc.labs), ("f64", ), "i64")
    with pytest.raises(ValueError, match="result kind"):
        nc.native_function(_address(libc.labs), ("i64", ), "f32")
    with pytest.raises(ValueError, match="non-null"):
        nc.native_function(0, ("i64", ), "i64")
    with pytest.raises(ValueError, match="identifier"):
        nc.native_function(_address(libc.labs), ("i64", ), "i64", name="not a name")
