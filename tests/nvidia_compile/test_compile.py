"""Compiling without a GPU, the Triton way: ``tritium.compile(ASTSource(...), target=GPUTarget("cuda", cap, 32))``
gives every stage (ttir, ttgir, llir, ptx text, cubin bytes) for sm_80 and sm_90, on any machine with ptxas.

The kernels: those of the GPU tests, the benchmark kernels (Triton's tutorials), and every example that
declares ``COMPILE_CASES`` (a list of ``(jit_function, signature, constexprs)``)."""
from __future__ import annotations

import atexit
import glob
import importlib.util
import os
import shutil
import sys
import tempfile

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _module(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _bench_kernels():
    src = open(os.path.join(ROOT, "backends", "nvidia", "bench", "kernels.py.in")).read()
    # @jit reads a kernel's source from its file, so the kernels need a real file; a private temporary one
    # keeps collection from writing into the source tree
    folder = tempfile.mkdtemp(prefix="tritium-bench-kernels-")
    atexit.register(shutil.rmtree, folder, True)   # the kernels keep their source: the file is not read again
    path = os.path.join(folder, "_bench_kernels_generated.py")
    head = "import tritium.language as tl\nfrom tritium import jit\n"
    with open(path, "w") as f:
        f.write(head + src)
    return _module(path, "_bench_kernels_generated")


def _cases():
    T = _module(os.path.join(ROOT, "tests", "gpu", "test_kernels.py"), "_gpu_test_kernels")
    B = _bench_kernels()
    f32, i32 = "*fp32", "*i32"
    c = [
        ("add_f32", T.add_kernel, {"x_ptr": f32, "y_ptr": f32, "out_ptr": f32, "n": "i32", "BLOCK": "constexpr"},
         {"BLOCK": 1024}),
        ("add_f16", T.add_kernel, {"x_ptr": "*fp16", "y_ptr": "*fp16", "out_ptr": "*fp16", "n": "i32",
                                   "BLOCK": "constexpr"}, {"BLOCK": 1024}),
        ("reduce", T.reduce_kernel, {"x_ptr": f32, "out_ptr": i32, "M": "constexpr", "N": "constexpr",
                                     "AXIS": "constexpr", "OP": "constexpr"},
         {"M": 32, "N": 64, "AXIS": 1, "OP": "argmax"}),
        ("softmax", T.softmax_kernel, {"x_ptr": f32, "y_ptr": f32, "stride": "i32", "n": "i32",
                                       "BLOCK": "constexpr"}, {"BLOCK": 1024}),
        ("loops", T.loop_kernel, {"x_ptr": f32, "out_ptr": f32, "n_iter": "i32", "BLOCK": "constexpr"}, {"BLOCK": 64}),
        ("dot_f16", T.dot_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": f32, "M": "constexpr",
                                   "N": "constexpr", "K": "constexpr"}, {"M": 64, "N": 64, "K": 32}),
        ("dot_tf32", T.dot_kernel, {"a_ptr": f32, "b_ptr": f32, "c_ptr": f32, "M": "constexpr", "N": "constexpr",
                                    "K": "constexpr"}, {"M": 32, "N": 32, "K": 16}),
        ("transpose", T.transpose_kernel, {"x_ptr": f32, "y_ptr": f32, "M": "constexpr", "N": "constexpr"},
         {"M": 32, "N": 64}),
        ("shapes", T.shapes_kernel, {"x_ptr": f32, "out_ptr": f32, "N": "constexpr"}, {"N": 64}),
        ("scan", T.scan_kernel, {"x_ptr": i32, "out_ptr": i32, "M": "constexpr", "N": "constexpr",
                                 "AXIS": "constexpr", "REV": "constexpr"}, {"M": 4, "N": 256, "AXIS": 1, "REV": True}),
        ("atomics", T.atomic_kernel, {"x_ptr": i32, "sum_ptr": i32, "hist_ptr": i32, "n": "i32",
                                      "BLOCK": "constexpr"}, {"BLOCK": 256}),
        ("sort", T.gather_sort_kernel, {"x_ptr": i32, "out_ptr": i32, "N": "constexpr"}, {"N": 128}),
        ("math", T.math_kernel, {"x_ptr": f32, "out_ptr": f32, "N": "constexpr"}, {"N": 256}),
        ("print", T.print_kernel, {"x_ptr": i32, "N": "constexpr"}, {"N": 8}),
        ("bench_add", B.add_kernel, {"x_ptr": f32, "y_ptr": f32, "out_ptr": f32, "n": "i32", "BLOCK": "constexpr"},
         {"BLOCK": 1024}),
        ("bench_softmax", B.softmax_kernel, {"out_ptr": f32, "in_ptr": f32, "in_stride": "i32", "out_stride": "i32",
                                             "n_cols": "i32", "BLOCK": "constexpr"}, {"BLOCK": 4096}),
        ("bench_layernorm", B.layernorm_kernel, {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16",
                                                 "Mean": f32, "Rstd": f32, "stride": "i32", "N": "i32",
                                                 "eps": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 4096}),
        ("bench_matmul", B.matmul_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32",
                                           "N": "i32", "K": "i32", "stride_am": "i32", "stride_ak": "constexpr",
                                           "stride_bk": "i32", "stride_bn": "constexpr", "stride_cm": "i32",
                                           "stride_cn": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
                                           "BLOCK_K": "constexpr", "GROUP_M": "constexpr"},
         {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32,
          "GROUP_M": 8}),
    ]
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        text = open(path).read()
        if "COMPILE_CASES" not in text:
            continue
        mod = _module(path, f"_example_{name}")
        for i, (fn, sig, consts) in enumerate(getattr(mod, "COMPILE_CASES", [])):
            c.append((f"example_{name}_{i}", fn, sig, consts))
    return c


CASES = _cases()


@pytest.fixture(scope="module")
def nvidia_registry(isolated_tritium):
    from tritium import plugins
    return plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})


@pytest.mark.parametrize("capability", [80, 90])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_compiles_to_cubin(nvidia_registry, case, capability):
    from tritium import plugins
    name, fn, sig, consts = case
    attrs = {k: [["tt.divisibility", 16]] for k, v in sig.items() if v.startswith("*")}
    with plugins.use(nvidia_registry):
        k = tritium.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", capability, 32))
    assert list(k.asm)[:5] == ["ttir", "ttgir", "llir", "ptx", "cubin"]
    assert isinstance(k.asm["ptx"], str) and f".target sm_{capability}" in k.asm["ptx"]
    assert isinstance(k.asm["cubin"], bytes) and k.asm["cubin"][:4] == b"\x7fELF"
    assert "ttg.layout" in k.asm["ttgir"]
    assert k.metadata.num_warps == 4 and k.metadata.n_regs > 0
    if name.startswith(("dot", "bench_matmul")):
        # tensor cores: wgmma on Hopper for 16-bit operands (4 warps = one warpgroup), mma.sync otherwise
        want = "wgmma.mma_async" if capability == 90 and name in ("dot_f16", "bench_matmul") else "mma.sync.aligned"
        assert want in k.asm["ptx"]


def test_targets_below_sm80_are_refused_clearly(nvidia_registry):
    from tritium import plugins
    T = _module(os.path.join(ROOT, "tests", "gpu", "test_kernels.py"), "_gpu_test_kernels")
    with plugins.use(nvidia_registry), pytest.raises(ValueError, match=r"sm_80 and newer.*the target is sm_75"):
        tritium.compile(ASTSource(T.add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                                 "BLOCK": "constexpr"}, {"BLOCK": 64}),
                        target=GPUTarget("cuda", 75, 32))


def test_stages_can_be_overridden_and_dumped(nvidia_registry, tmp_path):
    """The PTX stage read back from TRITON_KERNEL_OVERRIDE is what ptxas assembles."""
    from tritium import knobs, plugins
    T = _module(os.path.join(ROOT, "tests", "gpu", "test_kernels.py"), "_gpu_test_kernels")
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    with plugins.use(nvidia_registry), knobs.compilation.scope(), knobs.cache.scope():
        knobs.cache.dump_dir = str(tmp_path / "dump")
        knobs.cache.dir = str(tmp_path / "cache")
        knobs.compilation.dump_ir = True
        k = tritium.compile(ASTSource(T.add_kernel, sig, {"BLOCK": 256}), target=GPUTarget("cuda", 90, 32))
        dumped = glob.glob(str(tmp_path / "dump" / "*" / "add_kernel.ptx"))
        assert dumped and open(dumped[0]).read() == k.asm["ptx"]
        override = tmp_path / "override" / os.path.basename(os.path.dirname(dumped[0]))
        override.mkdir(parents=True)
        (override / "add_kernel.ptx").write_text(k.asm["ptx"].replace("// .globl", "// overridden .globl"))
        knobs.cache.override_dir = str(tmp_path / "override")
        knobs.compilation.override = True
        knobs.compilation.always_compile = True
        k2 = tritium.compile(ASTSource(T.add_kernel, sig, {"BLOCK": 256}), target=GPUTarget("cuda", 90, 32))
    assert "overridden .globl" in k2.asm["ptx"] and k2.asm["cubin"][:4] == b"\x7fELF"
