"""tritium.llvmir: the LLVM IR layer every LLVM-emitting backend builds on (no MLIR needed)."""
from __future__ import annotations

import math

import pytest

from tritium.llvmir import fp8
from tritium.llvmir.scalar import SCALAR_OPS, ScalarEmitter, ScalarOp
from tritium.llvmir.text import Function, Module
from tritium.llvmir.types import ELEMENT_TYPES, const


def test_fp8_formats_are_described_once_with_both_names():
    assert fp8.FP8 == {"f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5", "f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16",
                       "f8E4M3B11FNUZ": "fp8e4b15"}
    assert {fp8.MLIR_OF[v]: v for v in fp8.FP8.values()} == fp8.FP8
    assert all(ELEMENT_TYPES[m] == "i8" for m in fp8.FP8)
    assert [fp8.FORMATS[n].max_finite for n in ("fp8e4nv", "fp8e5", "fp8e4b8", "fp8e5b16", "fp8e4b15")] == \
        [448.0, 57344.0, 240.0, 57344.0, 1.875]


@pytest.mark.parametrize("name", sorted(fp8.FORMATS))
def test_fp8_every_finite_code_round_trips(name):
    f = fp8.FORMATS[name]
    for code in range(256):
        v = f.decode(code)
        if math.isnan(v):
            assert f.encode(v) == f.nan_code
            continue
        if v == 0:
            want = 0 if f.kind == "fnuz" else code   # fnuz has no -0
            assert f.encode(v) == want
            continue
        assert f.encode(v) == code, (name, code, v)


def test_fp8_specials_follow_each_format():
    inf = float("inf")
    # inf is a value only in e5m2; the fnuz formats have one NaN (0x80), e4m3fn the NaN 0x7f, e4b15 saturates.
    # (The GPU lowering's own encoder gave 0 for +-inf.)
    assert [fp8.encode(inf, "fp8e5"), fp8.encode(-inf, "fp8e5")] == [0x7C, 0xFC]
    assert [fp8.encode(inf, "fp8e4b8"), fp8.encode(-inf, "fp8e5b16")] == [0x80, 0x80]
    assert [fp8.encode(inf, "fp8e4b15"), fp8.encode(-inf, "fp8e4b15")] == [0x7F, 0xFF]
    assert fp8.encode(inf, "fp8e4nv") == 0x7F
    # not representable: nearest, ties to the even code, saturating at the largest finite value
    assert fp8.encode(1.0625, "fp8e4nv") == fp8.encode(1.0, "fp8e4nv")      # halfway 1 .. 1.125: even code
    assert fp8.encode(1e9, "fp8e4nv") == 0x7E


def test_constants():
    assert const("float", 1.0) == "0x3FF0000000000000"
    assert const("bfloat", float("nan")) == "0xR7FC0"
    assert const("half", -2.0) == "0xHC000"
    assert const("ptr addrspace(1)", 0) == "null"
    assert const("i1", 1) == "true"


def _function_with(emitter: ScalarEmitter, name: str, types: list[str], ret: str, attrs: dict) -> Function:
    fn = Function("f", ret, [(t, f"%a{i}") for i, t in enumerate(types)])
    r = emitter.emit(fn, name, [f"%a{i}" for i in range(len(types))], types, ret, attrs)
    fn.emit(f"ret {ret} {r}")
    return fn


def _signature(name: str) -> tuple[list[str], str, dict]:
    """Operand types, result type and attributes that make a valid instance of op ``name``."""
    if name in ("arith.cmpi",):
        return ["i32", "i32"], "i1", {"predicate": 2}
    if name == "arith.cmpf":
        return ["float", "float"], "i1", {"predicate": 4}
    if name == "arith.select":
        return ["i1", "float", "float"], "float", {}
    if name in ("math.isnan", "math.isinf", "math.isfinite"):
        return ["float"], "i1", {}
    if name in ("arith.extf",):
        return ["half"], "float", {}
    if name == "arith.truncf":
        return ["float"], "half", {}
    if name in ("arith.extsi", "arith.extui", "arith.index_cast", "arith.index_castui"):
        return ["i32"], "i64", {}
    if name == "arith.trunci":
        return ["i64"], "i32", {}
    if name in ("arith.sitofp", "arith.uitofp"):
        return ["i32"], "float", {}
    if name in ("arith.fptosi", "arith.fptoui"):
        return ["float"], "i32", {}
    if name in ("arith.bitcast", "tt.bitcast"):
        return ["float"], "i32", {}
    if name == "tt.int_to_ptr":
        return ["i64"], "ptr", {}
    if name == "tt.ptr_to_int":
        return ["ptr"], "i64", {}
    if name == "math.fpowi":
        return ["float", "i32"], "float", {}
    if name == "tt.clampf":
        return ["float"] * 3, "float", {"propagate_nan": 0}
    if name in ("math.fma",):
        return ["float"] * 3, "float", {}
    integer = name.endswith(("i", "si", "ui")) or name in ("math.ctlz", "math.cttz", "math.ctpop", "math.absi",
                                                          "tt.mulhiui")
    binary = name.startswith("arith.") or name in ("math.copysign", "math.powf", "math.atan2", "tt.mulhiui",
                                                  "tt.precise_divf")
    t = "i32" if integer else "float"
    return [t] * (2 if binary else 1), t, {}


@pytest.mark.parametrize("safe", [False, True])
def test_every_scalar_op_emits_valid_llvm_ir(safe):
    llvm = pytest.importorskip("llvmlite.binding")
    module = Module()
    emitter = ScalarEmitter(module, fp_fusion=True)
    emitter.safe_int_div = safe
    for i, name in enumerate(sorted(SCALAR_OPS.entries)):
        types, ret, attrs = _signature(name)
        fn = _function_with(emitter, name, types, ret, attrs)
        fn.name = f"op{i}"
        module.functions.append(fn)
    llvm.parse_assembly(module.text()).verify()


def test_target_choices_are_hooks_not_copies():
    class Host(ScalarEmitter):
        MINMAX = {**ScalarEmitter.MINMAX, "arith.maxnumf": "maximumnum"}

        def special(self, o: ScalarOp):
            return o.fn.inst(f"call float @fast_exp(float {o.args[0]})") if o.name == "math.exp" else None

        def fpowi(self, o: ScalarOp) -> str:
            return "%overridden"

    m = Module()
    e = Host(m)
    assert "@fast_exp" in _function_with(e, "math.exp", ["float"], "float", {}).text()
    assert "@llvm.maximumnum.f32" in _function_with(e, "arith.maxnumf", ["float"] * 2, "float", {}).text()
    assert "@llvm.maximumnum.f32" in _function_with(e, "tt.clampf", ["float"] * 3, "float", {}).text()
    assert _function_with(e, "math.fpowi", ["float", "i32"], "float", {}).text().endswith("ret float %overridden\n}")
    # the portable form stays for everyone else
    assert "@llvm.exp.f32" in _function_with(ScalarEmitter(m), "math.exp", ["float"], "float", {}).text()
    with pytest.raises(NotImplementedError, match="cannot lower tt.nope"):
        ScalarEmitter(m).emit(Function("g", "void", []), "tt.nope", [], [], "float")


def test_floor_and_ceil_division_round_toward_their_infinity():
    llvm = pytest.importorskip("llvmlite.binding")
    import ctypes
    m = Module()
    e = ScalarEmitter(m)
    for name in ("arith.floordivsi", "arith.ceildivsi"):
        fn = _function_with(e, name, ["i32", "i32"], "i32", {})
        fn.name = name.split(".")[1]
        m.functions.append(fn)
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    mod = llvm.parse_assembly(m.text())
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    proto = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)
    floor = proto(engine.get_function_address("floordivsi"))
    ceil = proto(engine.get_function_address("ceildivsi"))
    for a in (-7, -6, 0, 6, 7):
        for b in (-2, 3):
            assert floor(a, b) == a // b and ceil(a, b) == -(-a // b), (a, b)


def test_metadata_ids_of_a_module_and_its_functions_never_collide():
    llvm = pytest.importorskip("llvmlite.binding")
    m = Module()
    own = [m.next_metadata_id() for _ in range(3)]      # e.g. a line table's nodes
    fn = Function("f", "void", [])
    loop = fn.loop_metadata("llvm.loop.unroll.disable")
    fn.emit("br label %l")
    fn.start_block("l")
    fn.cond_br("true", "l", "e", loop)
    fn.start_block("e")
    fn.emit("ret void")
    m.functions.append(fn)
    m.metadata += [f"!{i} = !{{i32 {i}}}" for i in own]
    assert int(loop[1:]) not in own
    llvm.parse_assembly(m.text()).verify()
