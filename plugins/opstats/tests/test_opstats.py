"""opstats on CPU kernels: the wrapped ttir stage records statistics in the metadata, also on cache hits."""
from __future__ import annotations

import numpy as np

import tritium
import tritium.language as tl
from tritium import knobs, plugins
from tritium_opstats import totals


@tritium.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tritium.jit
def row_sums(x_ptr, out_ptr, COLS: tl.constexpr, CHUNKS: tl.constexpr):
    acc = tl.zeros([COLS], dtype=tl.float32)
    for i in range(0, CHUNKS):
        acc += tl.load(x_ptr + i * COLS + tl.arange(0, COLS))
    tl.store(out_ptr + tl.arange(0, COLS), acc)


@tritium.jit
def matmul(a_ptr, b_ptr, c_ptr, M: tl.constexpr):
    r = tl.arange(0, M)
    a = tl.load(a_ptr + r[:, None] * M + r[None, :])
    b = tl.load(b_ptr + r[:, None] * M + r[None, :])
    tl.store(c_ptr + r[:, None] * M + r[None, :], tl.dot(a, b))


def test_vector_add_traffic_and_launch_totals():
    x = np.random.rand(1000).astype(np.float32)
    out = np.empty_like(x)
    k = add[(4,)](x, x, out, x.size, BLOCK=256)
    s = k.metadata.opstats
    assert s["load_bytes"] == 2 * 256 * 4 and s["store_bytes"] == 256 * 4
    assert s["ops"]["tt.load"] == 2 and s["ops"]["tt.store"] == 1 and s["dynamic_loops"] == 0
    assert s["flops"] == 256  # one addf per element; integer index math is not counted
    assert totals(k, (4,))["load_bytes"] == 4 * 2 * 256 * 4
    np.testing.assert_allclose(out, 2 * x)


def test_constant_loops_are_multiplied():
    x = np.random.rand(8 * 64).astype(np.float32)
    out = np.zeros(64, np.float32)
    k = row_sums[(1,)](x, out, COLS=64, CHUNKS=8)
    assert k.metadata.opstats["load_bytes"] == 8 * 64 * 4
    np.testing.assert_allclose(out, x.reshape(8, 64).sum(0), rtol=1e-5)


def test_dot_flops():
    a = np.random.rand(32, 32).astype(np.float32)
    c = np.empty_like(a)
    k = matmul[(1,)](a, a, c, M=32)
    assert 2 * 32 ** 3 <= k.metadata.opstats["flops"] <= 2 * 32 ** 3 + 32 * 32


def test_metadata_survives_the_cache_and_print_knob(capsys):
    x = np.ones(16, np.float32)
    out = np.empty_like(x)
    first = add[(1,)](x, x, out, 16, BLOCK=16)
    knobs.opstats.print = True
    again = tritium.jit(add.fn)[(1,)](x, x, out, 16, BLOCK=16)  # new JITFunction: comes from the disk cache
    assert again.hash == first.hash and again.metadata.opstats == first.metadata.opstats
    assert "[opstats] add:" in capsys.readouterr().err


def test_stage_is_wrapped_by_the_plugin_and_key_changes_without_it(registry):
    x = np.ones(16, np.float32)
    out = np.empty_like(x)
    with_stats = tritium.jit(add.fn)[(1,)](x, x, out, 16, BLOCK=16)
    bare_reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin"})
    with plugins.use(bare_reg):
        bare = tritium.jit(add.fn)[(1,)](x, x, out, 16, BLOCK=16)
    assert bare.hash != with_stats.hash and not hasattr(bare.metadata, "opstats")
