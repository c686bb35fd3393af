"""torch inductor's analysis of which tensor arguments a user's Triton kernel reads and writes, through the compat
package's ``triton._C.libtriton.ir`` (Triton's IR API over tritium's tile IR). Inductor builds the kernel's TTIR
with ``ASTSource.make_ir`` and walks it; where that fails it warns and treats every tensor argument as written.
Each case asserts the exact sets, and that no warning was logged."""
import contextlib
import logging

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
triton = pytest.importorskip("triton", reason="the tritium-triton-compat package is not installed")
wrap = pytest.importorskip("torch._higher_order_ops.triton_kernel_wrap", reason="this torch has no Triton HOP")

if not hasattr(triton, "__tritium_version__"):
    pytest.skip("`triton` is not tritium's compat package", allow_module_level=True)

import triton.language as tl  # noqa: E402

LOGGER = wrap.log.name  # the module logs through torch._dynamo's logger


@contextlib.contextmanager
def no_fallback_warning():
    """Fails if inductor logs its fall-back warning ("assuming every input is mutated"); a handler of its own, as
    torch's loggers do not propagate to pytest's caplog."""
    records = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
    assert not records, [r.getMessage() for r in records]


def accesses(kernel, **kwargs):
    """(read, written) argument names, as inductor finds them; fails on inductor's fall-back warning."""
    with no_fallback_warning():
        result = wrap.identify_accessed_tensors(kernel, kwargs, {})
    rw = result.read_writes
    return {d.name for d in rw.reads}, {d.name for d in rw.writes}


def t(n=64, dtype=None):
    return torch.zeros(n, dtype=dtype or torch.float32)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(out_ptr + o, tl.load(x_ptr + o, mask=m) + tl.load(y_ptr + o, mask=m), mask=m)


def test_writes_only_the_output():
    reads, writes = accesses(add_kernel, x_ptr=t(), y_ptr=t(), out_ptr=t(), n=64, BLOCK=16)
    assert writes == {"out_ptr"}
    assert reads == {"x_ptr", "y_ptr"}


@triton.jit
def _load_at(p, o):
    return tl.load(p + o)


@triton.jit(noinline=True)
def _store_at(p, v, o):
    tl.store(p + o, v)


@triton.jit
def control_flow_kernel(x_ptr, unused_ptr, out_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(n):
        if i % 2 == 0:
            acc += _load_at(x_ptr, o)
        else:
            acc -= 1.0
    j = 0
    while j < n:
        acc = acc * 0.5
        j += 1
    _store_at(out_ptr, acc, o)  # a tt.call of a noinline function that stores
    tl.store(acc_ptr, tl.sum(acc, 0))


def test_loops_ifs_and_calls():
    reads, writes = accesses(control_flow_kernel, x_ptr=t(), unused_ptr=t(), out_ptr=t(), acc_ptr=t(1),
                             n=5, BLOCK=16)
    assert writes == {"out_ptr", "acc_ptr"}
    assert reads == {"x_ptr"}


@triton.jit
def select_kernel(a_ptr, b_ptr, src_ptr, flag, BLOCK: tl.constexpr):
    # which pointer is written depends on a run-time value: both are written as far as inductor can tell
    o = tl.arange(0, BLOCK)
    v = tl.load(src_ptr + o)
    if flag > 0:
        p = a_ptr
    else:
        p = b_ptr
    tl.store(p + o, v)


def test_pointer_chosen_at_run_time():
    reads, writes = accesses(select_kernel, a_ptr=t(), b_ptr=t(), src_ptr=t(), flag=3, BLOCK=16)
    assert writes == {"a_ptr", "b_ptr"}
    assert reads == {"src_ptr"}


@triton.jit
def atomics_kernel(x_ptr, sum_ptr, lock_ptr, BLOCK: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.atomic_add(sum_ptr, tl.sum(v, 0))
    tl.atomic_cas(lock_ptr, 0, 1)


def test_atomics_write():
    reads, writes = accesses(atomics_kernel, x_ptr=t(), sum_ptr=t(1), lock_ptr=t(1, torch.int32),
                             BLOCK=16)
    assert writes == {"sum_ptr", "lock_ptr"}
    assert reads == {"x_ptr"}


@triton.jit
def block_ptr_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(out_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    for _ in range(2):
        tl.store(dst, tl.load(src, boundary_check=(0, 1)) * 2, boundary_check=(0, 1))
        src = tl.advance(src, (BM, 0))
        dst = tl.advance(dst, (BM, 0))


def test_block_pointer_store():
    reads, writes = accesses(block_ptr_kernel, x_ptr=t(), out_ptr=t(), M=8, N=8, BM=4, BN=8)
    assert writes == {"out_ptr"}
    assert reads == {"x_ptr"}


@triton.jit
def descriptor_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, [M, N], [N, 1], [BM, BN])
    dst.store([0, 0], src.load([0, 0]) + 1)


def test_device_tensor_descriptor_store():
    reads, writes = accesses(descriptor_kernel, x_ptr=t(), out_ptr=t(), M=8, N=8, BM=8, BN=8)
    assert writes == {"out_ptr"}
    assert reads == {"x_ptr"}


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def autotuned_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + o, tl.load(x_ptr + o, mask=o < n), mask=o < n)


def test_autotuned_kernel():
    # inductor analyses the kernel under the autotuner with its first config's meta-parameters
    reads, writes = accesses(autotuned_copy, x_ptr=t(), out_ptr=t(), n=64)
    assert (reads, writes) == ({"x_ptr"}, {"out_ptr"})


def test_ir_api_walks_the_kernel_first():
    """The module torch walks: the kernel's function comes first (callers take it for the kernel), names are
    Triton's, the walk is post-order, and every operand is a result or block argument seen before its use."""
    from triton._C.libtriton import ir
    ttir, names = wrap.generate_ttir(control_flow_kernel, dict(x_ptr=t(), unused_ptr=t(), out_ptr=t(),
                                                               acc_ptr=t(1), n=5, BLOCK=16), {})
    assert isinstance(ttir, ir.module) and ttir.verify()
    assert names == ["x_ptr", "unused_ptr", "out_ptr", "acc_ptr", "n"]
    ops = []
    ttir.walk(ops.append)
    funcs = [op.get_str_attr("sym_name") for op in ops if op.get_name() == "tt.func"]
    assert funcs[0] == "control_flow_kernel" and len(funcs) == 3
    seen = {op.get_name() for op in ops}
    assert {"tt.call", "tt.return", "tt.reduce.return", "scf.for", "scf.while", "scf.if", "tt.store"} <= seen
    assert not {"func.func", "func.call", "gpu.yield"} & seen
    assert ops[-1].get_name() == "builtin.module"
    calls = [op.get_flat_symbol_ref_attr("callee") for op in ops if op.get_name() == "tt.call"]
    assert all(ttir.has_function(c) for c in calls)


def test_inside_torch_compile_no_fallback(tmp_path, monkeypatch):
    """The kernel in a compiled function: inductor's functionalization asks which inputs it mutates; the answer
    comes from the TTIR (no 'assuming every input is mutated' warning) and the result matches eager."""
    import torch._dynamo
    import torch._inductor.config as inductor_config
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))

    def f(x, y):
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(x.numel(), 64), )](x, y, out, x.numel(), BLOCK=64)
        return out * 2 + x

    x, y = torch.randn(300), torch.randn(300)
    torch._dynamo.reset()
    try:
        with inductor_config.patch(fx_graph_cache=False), no_fallback_warning():
            got = torch.compile(f, fullgraph=True)(x, y)
    finally:
        torch._dynamo.reset()
    torch.testing.assert_close(got, (x + y) * 2 + x)


def test_epilogue_fused_into_user_kernel(tmp_path, monkeypatch):
    """With epilogue fusion for user kernels on, inductor folds the pointwise ops after a user kernel into that
    kernel's store, which it does only for a kernel its analysis shows writing exactly one tensor, once, without
    reading it back (before, the analysis fell back to 'every argument written' and nothing was fused)."""
    import torch._dynamo
    import torch._inductor.config as inductor_config
    from torch._inductor.utils import run_and_get_code
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))

    def f(x, y):
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(x.numel(), 64), )](x, y, out, x.numel(), BLOCK=64)
        return (out * 2).relu()

    x, y = torch.randn(300), torch.randn(300)
    torch._dynamo.reset()
    try:
        with inductor_config.patch(fx_graph_cache=False, cpu_backend="triton",
                                   epilogue_fusion_user_defined_triton_kernel=True), no_fallback_warning():
            got, codes = run_and_get_code(torch.compile(f, fullgraph=True), x, y)
    finally:
        torch._dynamo.reset()
    torch.testing.assert_close(got, ((x + y) * 2).relu())
    code = "\n".join(codes)
    assert code.count("@triton.jit") == 1  # the user kernel alone: no separate kernel for the epilogue
    store = [line for line in code.splitlines() if "tl.store(out_ptr + o" in line]
    assert store and "tl.load(x_ptr" not in store[0], store  # its store writes the fused epilogue's value
