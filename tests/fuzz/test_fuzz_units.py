"""The fuzzer's own parts: the generator (well-formed, deterministic), the tolerance table, the shrinker."""
from __future__ import annotations

import ast
from contextlib import ExitStack

import numpy as np
import pytest

from tritium.testing.fuzz import check, gen, inputs, runner, shrink, tolerance
from tritium.testing.fuzz import types as T


def test_generator_is_deterministic_per_seed():
    for seed in range(20):
        a, b = gen.generate(seed), gen.generate(seed)
        assert a.source() == b.source()
        for (ka, va), (kb, vb) in zip(sorted(inputs.make(a).items()), sorted(inputs.make(b).items())):
            assert ka == kb and va.tobytes() == vb.tobytes()
    assert len({gen.generate(s).source() for s in range(20)}) == 20


def test_generated_source_is_a_jit_kernel():
    for seed in range(40):
        p = gen.generate(seed)
        tree = ast.parse(p.source())
        kernels = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "kernel"]
        assert kernels and any(ast.unparse(d) == "triton.jit" for d in kernels[0].decorator_list)
        assert p.sinks, f"seed {seed}: a kernel without outputs"


def test_generator_covers_the_language():
    text = "\n".join(gen.generate(s).source() for s in range(300))
    for needle in ("tl.dot(", "input_precision=\"tf32\"", "tl.sum(", "tl.cumsum(", "tl.cumprod(", "tl.argmax(",
                   "tl.argmin(", "tl.xor_sum(", "tl.reduce(", "tl.associative_scan(", "tl.where(", "bitcast=True",
                   "fp_downcast_rounding", "tl.trans(", "tl.permute(", "tl.join(", "tl.split(", "tl.reshape(",
                   "tl.expand_dims(", "tl.broadcast_to(", "tl.range(", "while ", "tl.atomic_add(", "dev_",
                   "tl.bfloat16", "tl.uint64", "tl.int1", "tl.float64", "tl.exp(", " >> ", " // "):
        assert needle in text, needle


def test_inputs_hold_special_values():
    rng = np.random.default_rng(0)
    f = inputs.values(T.get("float32"), (4096,), rng)
    assert np.isnan(f).any() and np.isposinf(f).any() and np.isneginf(f).any()
    assert (np.signbit(f) & (f == 0)).any() and ((f != 0) & (np.abs(f) < np.finfo(np.float32).tiny)).any()
    i = inputs.values(T.get("int8"), (4096,), rng)
    assert {-128, 127, 0, -1, 1} <= set(i.tolist())
    b = inputs.values(T.get("bfloat16"), (4096,), rng)
    assert b.dtype == np.uint16 and np.isnan(T.bf16_to_f32(b)).any()


def test_promotion_follows_triton():
    P = lambda a, b, div=False: T.promote(T.get(a), T.get(b), div).name  # noqa: E731
    assert P("int8", "uint8") == "uint8" and P("int16", "uint8") == "int16" and P("int64", "uint32") == "int64"
    assert P("float16", "bfloat16") == "float16" and P("float16", "int64") == "float16"
    assert P("bfloat16", "int8") == "float32"
    assert P("bfloat16", "bfloat16") == "bfloat16" and P("bfloat16", "bfloat16", True) == "float32"
    assert P("int1", "int8") == "int8"


def test_tolerance_classes():
    f32 = T.get("float32")
    nan = np.array([np.nan], np.float32)
    other_nan = np.array([0xFFC00001], np.uint32).view(np.float32)
    assert not tolerance.mismatches("exact", f32, nan, other_nan).any()
    assert tolerance.mismatches("exact", f32, np.float32([0.0]), np.float32([-0.0])).all()
    assert not tolerance.mismatches("zero_sign", f32, np.float32([0.0]), np.float32([-0.0])).any()
    one = np.float32([1.0])
    assert not tolerance.mismatches("ulp_exp", f32, one, np.nextafter(one, 2) + 0).any()
    far = one + np.float32(1e-5)
    assert tolerance.mismatches("ulp_exp", f32, one, far).all()
    big = np.float32([np.finfo(np.float32).max])
    assert not tolerance.mismatches("ulp_exp", f32, np.float32([np.inf]), big).any()   # inf is max + 1 ulp
    s = np.float32([100.0])
    assert not tolerance.mismatches("sum", f32, np.float32([1.0]), np.float32([1.0 + 1e-5]), s, 8).any()
    assert tolerance.mismatches("sum", f32, np.float32([1.0]), np.float32([1.1]), s, 8).all()
    assert tolerance.mismatches("sum", f32, nan, one, nan, 8).all()                  # a NaN term: NaN
    assert not tolerance.mismatches("sum", f32, one, nan, np.float32([np.inf]), 8).any()   # not compared
    # a product that underflows in one order and meets an infinity: NaN or inf, both fine
    assert not tolerance.mismatches("prod", f32, nan, np.float32([np.inf]), nan, 8).any()
    i8 = T.get("int8")
    assert tolerance.mismatches("exact", i8, np.int8([1, 2]), np.int8([1, 3])).tolist() == [False, True]


def _interpret(p, patch=None):
    """Run ``p`` on the interpreter in this process; ``patch`` plants a wrong operation (a fake backend)."""
    from tritium.interpreter import elementwise
    j = check.job(p, _interpret.dir)
    saved = dict(elementwise._IBIN)
    if patch:
        elementwise._IBIN.update(patch)
    try:
        with ExitStack() as st:
            runner.use_target(st, runner.ORACLE, "")
            return runner.run(runner.load_kernel(j["path"]), j["arrays"], j["dtypes"], j["scalars"], j["grid"],
                              j["options"])
    finally:
        elementwise._IBIN.clear()
        elementwise._IBIN.update(saved)


def test_shrinker_reduces_a_planted_miscompile(tmp_path):
    """A fake backend computes integer xor as or: the shrinker keeps the xor and drops the rest."""
    _interpret.dir = str(tmp_path)
    wrong = {"arith.xori": np.bitwise_or}
    for seed in range(300):
        p = gen.generate(seed)
        if len(p.stmts) >= 7 and any(" ^ " in s.tmpl for s in p.stmts):
            p = shrink.freeze(p)
            if check.compare(p, _interpret(p), _interpret(p, wrong)):
                break
    else:
        pytest.fail("no generated kernel shows the planted bug")

    def still_bad(q):
        return bool(check.compare(q, _interpret(q), _interpret(q, wrong)))

    small, tried = shrink.shrink(p, still_bad, max_tries=300, deadline=240)
    assert still_bad(small)
    ops = [s for s in small.stmts if s.op != "load"]
    assert len(ops) <= 3 and len(small.stmts) < len(p.stmts), small.source()
    assert any(" ^ " in s.tmpl or "xor" in s.tmpl for s in small.stmts), small.source()
    assert len(small.sinks) == 1
    assert small.grid == 1


def test_shrink_candidates_keep_scales_and_their_meaning():
    """Every candidate still stores the scale of each bounded result, and a scale is never rewritten (a
    shrunk reproducer once compared a dot against its accumulator instead of the dot of |a|, |b|)."""
    for seed in range(120):
        p = shrink.freeze(gen.generate(seed))
        for make in shrink.PASSES:
            for q in make(p):
                names = {f"{r}_{v}" for r, v, _, _ in q.array_args()}
                st = q.by_var()
                owners = {st[k.var].scale for k in q.sinks if k.kind != "aux"}
                assert all(k.var in owners for k in q.sinks if k.kind == "aux"), (seed, make.__name__)
                for k in q.sinks:
                    s = st[k.var]
                    if s.scale:
                        assert f"out_{s.scale}" in names, (seed, make.__name__, s.out)
                        assert st[s.scale].tol == "aux" and "tl.abs(" in st[s.scale].tmpl, (seed, make.__name__)


def test_generator_covers_the_session20_operations(tmp_path):
    """Each operation ops_extra adds is generated, and the interpreter (the oracle) runs a kernel holding it: a
    kernel it refused would be counted as rejected and never compared."""
    _interpret.dir = str(tmp_path)
    needles = {"tl.sort(": None, "tl.gather(": None, "tl.flip(": None, "can_reorder=True": None,
               "tl.histogram(": None, "mask=rM < vM)": None, "[:, None], ": None, "tl.umulhi(": None,
               "descending=True": None}
    axis0_3d = None
    for seed in range(600):
        p = gen.generate(seed)
        st = p.by_var()
        for s in p.stmts:
            for n in needles:
                if needles[n] is None and n in s.tmpl and (n != "[:, None], " or s.op == "where_bcast"):
                    needles[n] = seed
            if axis0_3d is None and s.op in ("reduce", "scan", "sum", "cumsum", "cumprod") and "axis=0" in s.tmpl \
                    and len(st[s.args[0]].shape) == 3:
                axis0_3d = seed
    missing = [n for n, s in needles.items() if s is None]
    assert not missing, f"never generated in 600 seeds: {missing}"
    assert axis0_3d is not None, "no reduction or scan over axis 0 of a 3-D tile in 600 seeds"
    for seed in sorted(set(needles.values()) | {axis0_3d}):
        p = shrink.freeze(gen.generate(seed))
        out = _interpret(p)
        assert out, f"seed {seed}: the interpreter produced nothing"


def test_a_load_without_a_tail_takes_no_other(tmp_path):
    """A tile of only "2" dimensions (a reduction of a 3-D tile leaves one) has no masked tail: its load must not
    pass other= (Triton refuses other without a mask; two kernels of seeds 20033011 and 20033016 were refused)."""
    from tritium.testing.fuzz.program import Program, Sink, Stmt
    _interpret.dir = str(tmp_path)
    for extra_mask in (False, True):
        stmts = [Stmt("v1", "float32", ("2",), "load", "-0.0"),
                 Stmt("v2", "int1", ("2",), "cmp", "{out} = {0} == {0}", ["v1"]),
                 Stmt("v3", "float32", ("2",), "load", "1.5", ["v2"] if extra_mask else []),
                 Stmt("v4", "float32", ("2",), "arith", "{out} = {0} + {1}", ["v1", "v3"])]
        p = Program(1, stmts, [Sink("v4")], {}, {"M": 4, "N": 4, "K": 4}, {"M": 3, "N": 4, "K": 4})
        src = p.source()
        line = next(x for x in src.splitlines() if "v3 = tl.load" in x)
        assert ("other=1.5" in line) == extra_mask and "None" not in line, line
        assert _interpret(shrink.freeze(p)), src
