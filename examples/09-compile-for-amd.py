"""
Compiling for AMD Instinct GPUs on a laptop
===========================================

tritium-amd builds AMD code objects (hsaco) with nothing from ROCm: llvmlite's AMDGPU target writes the AMDGCN
assembly and the LLD of the `ziglang` wheel links it. No AMD GPU (or any GPU) is needed to compile, the Triton way:

    tritium.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("hip", "gfx942", 64))

This script compiles a fused softmax for MI210 (gfx90a), MI300X (gfx942) and MI355X (gfx950) and prints what each
kernel uses of the chip, read back from the code object itself (its kernel descriptor and metadata note).

Run: python examples/09-compile-for-amd.py          (needs tritium-amd: pip install -e backends/amd)
"""
import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource


@tritium.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * in_row_stride + offs, mask=offs < n_cols, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    tl.store(out_ptr + row * out_row_stride + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)


SIGNATURE = {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": "i32", "out_row_stride": "i32", "n_cols": "i32",
             "BLOCK": "constexpr"}
#: what CI compiles for GPU targets without a GPU (tests/nvidia_compile, tests/amd): (kernel, signature, constexprs)
COMPILE_CASES = [(softmax_kernel, SIGNATURE, {"BLOCK": 1024})]


def main():
    from tritium_amd import codeobj
    from tritium_amd.chips import CDNA, CHIPS
    attrs = {name: [["tt.divisibility", 16]] for name, ty in SIGNATURE.items() if ty.startswith("*")}
    print(f"{'chip':8} {'VGPRs':>6} {'AGPRs':>6} {'SGPRs':>6} {'LDS':>8} {'scratch':>8} {'kernarg':>8}  code object")
    for chip in CDNA:
        k = tritium.compile(ASTSource(softmax_kernel, SIGNATURE, {"BLOCK": 1024}, attrs),
                            target=GPUTarget("hip", chip, 64), options={"num_warps": 4})
        co = codeobj.read(k.asm["hsaco"])
        info = co.kernels[0]
        print(f"{chip:8} {info.vgprs:>6} {info.agprs:>6} {info.sgprs:>6} {info.group_segment:>8} "
              f"{info.private_segment:>8} {info.kernarg_size:>8}  {len(k.asm['hsaco'])} bytes, "
              f"{CHIPS[chip].name} ({co.mach:#x}), wave{info.wavefront_size}")
    print("stages:", list(k.asm))
    body = [line for line in k.asm["amdgcn"].splitlines() if line.startswith("\t") and not line.startswith("\t.")]
    print(f"AMDGCN of {k.name} for {chip}: {len(body)} lines, e.g.")
    for line in [x for x in body if "ds_" in x or "global_load" in x or "v_exp" in x][:6]:
        print("   ", line.strip())


if __name__ == "__main__":
    main()
