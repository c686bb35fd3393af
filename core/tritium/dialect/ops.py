"""Declaration of the ``tt`` dialect, from which its IRDL definition is generated.

An operand or result spec is ``name`` (exactly one), ``name?`` (optional), ``name*N`` (1 to N values,
each of its own type) or ``name*N?`` (0 to N). Optional and repeated groups are encoded with the standard
``operandSegmentSizes``/``resultSegmentSizes`` attributes; :func:`tritium.compiler.builder` fills
them in. Ops print in MLIR's generic form (``"tt.load"(%p) : (...) -> ...``).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class OpDef:
    name: str
    operands: tuple[str, ...] = ()
    results: tuple[str, ...] = ()
    regions: int = 0
    pure: bool = True
    #: attribute names and their meaning (documentation; IRDL does not check attributes)
    attrs: dict[str, str] = field(default_factory=dict)
    doc: str = ""

    def slots(self, specs: tuple[str, ...]) -> list[tuple[str, str]]:
        """Expand specs into IRDL slots: (name, variadicity)."""
        out = []
        for spec in specs:
            if "*" in spec:
                base, count = spec.rstrip("?").split("*")
                out.append((f"{base}0", "optional" if spec.endswith("?") else "single"))
                out += [(f"{base}{i}", "optional") for i in range(1, int(count))]
            elif spec.endswith("?"):
                out.append((spec[:-1], "optional"))
            elif spec.endswith("+"):
                out.append((spec[:-1], "variadic"))
            else:
                out.append((spec, "single"))
        return out

    def needs_segments(self, specs: tuple[str, ...]) -> bool:
        """MLIR needs a segment-size attribute once a list has two or more non-single groups."""
        return sum(v != "single" for _, v in self.slots(specs)) >= 2


def _op(name: str, operands: tuple[str, ...] = (), results: tuple[str, ...] = ("result", ), *,
        regions: int = 0, pure: bool = True, attrs: dict[str, str] | None = None, doc: str = "") -> OpDef:
    return OpDef(name, operands, results, regions, pure, attrs or {}, doc)


OPS: dict[str, OpDef] = {op.name: op for op in [
    # program identity
    _op("get_program_id", attrs={"axis": "0, 1 or 2"}, doc="index of this program along an axis of the grid"),
    _op("get_num_programs", attrs={"axis": "0, 1 or 2"}, doc="size of the grid along an axis"),
    _op("get_cluster_cta_rank", doc="this CTA's index in its program's cluster (num_ctas > 1); made only by the GPU "
                                    "stages' cluster split (tritium/gpu/cluster_split.py), never by the frontend"),
    # creation and shape
    _op("make_range", attrs={"start": "i32", "end": "i32"}, doc="1-D tensor start, start+1, ..., end-1"),
    _op("splat", ("src", ), doc="a scalar repeated to a tensor's shape"),
    _op("broadcast", ("src", ), doc="size-1 dimensions of src repeated to the result's shape"),
    _op("expand_dims", ("src", ), attrs={"axis": "i32"}, doc="insert a size-1 dimension"),
    _op("reshape", ("src", ), attrs={"allow_reorder": "unit: elements may be reordered"}),
    _op("trans", ("src", ), attrs={"order": "array<i32>: result dim i is source dim order[i]"}),
    _op("cat", ("lhs", "rhs"), attrs={}, doc="concatenate along dim 0 (elements may be reordered)"),
    _op("join", ("lhs", "rhs"), doc="stack along a new minor dimension of size 2"),
    _op("split", ("src", ), ("lhs", "rhs"), doc="split a minor dimension of size 2"),
    _op("gather", ("src", "indices"), attrs={"axis": "i32"}),
    _op("histogram", ("src", "mask?"), doc="count of values in [0, bins) (bins: result length)"),
    # pointers and casts
    _op("addptr", ("ptr", "offset"), doc="ptr + offset elements"),
    _op("int_to_ptr", ("src", )),
    _op("ptr_to_int", ("src", )),
    _op("bitcast", ("src", ), doc="reinterpret bits, or cast between pointer types"),
    _op("fp_to_fp", ("src", ), attrs={"rounding": "rtne or rtz (downcasts)"},
        doc="float conversion that arith lacks (fp8 variants, explicit rounding)"),
    # math that arith/math do not cover
    _op("precise_sqrt", ("x", )),
    _op("precise_divf", ("x", "y")),
    _op("mulhiui", ("x", "y"), doc="high half of the integer product"),
    _op("clampf", ("x", "min", "max"), attrs={"propagate_nan": "i32: 0 none, 0xffff all"}),
    _op("extern_elementwise", ("srcs*4", ), attrs={"libname": "str", "libpath": "str", "symbol": "str",
                                                   "pure": "bool"},
        doc="an elementwise library function; for libname \"libdevice\" (tl.extra.libdevice) symbol is "
            "<function>_<argument types>, e.g. mulhi_u32_u32 or float2int_rd_f32 (types i32 u32 i64 u64 f32 f64), "
            "and every backend provides the whole set; other libnames are backend-specific"),
    _op("elementwise_inline_asm", ("srcs*16?", ), ("results*8", ), pure=False,
        attrs={"asm_string": "str", "constraints": "str", "pure": "bool", "packed_element": "i32"},
        doc="target assembly applied to each group of `packed_element` elements of the same-shaped srcs "
            "(tl.inline_asm_elementwise; with no srcs, once, on scalars); elements narrower than 32 bits share 32-bit registers within a group. "
            "Kept even when pure is true (the tile passes do not read assembly); GPU backends only"),
    # matrix and reductions
    _op("dot", ("a", "b", "c"), attrs={"input_precision": "ieee|tf32|tf32x3|bf16x3|bf16x6",
                                        "max_num_imprecise_acc": "i32"}),
    _op("dot_scaled", ("a", "b", "c", "a_scale?", "b_scale?"),
        attrs={"a_elem_type": "str", "b_elem_type": "str", "fast_math": "bool"}),
    _op("reduce", ("srcs*8", ), ("results*8", ), regions=1, attrs={"axis": "i32"},
        doc="combine along an axis with the region (block args: accumulators then new values)"),
    _op("scan", ("srcs*8", ), ("results*8", ), regions=1, attrs={"axis": "i32", "reverse": "bool"}),
    _op("map_elementwise", ("srcs*8", ), ("results*8", ), regions=1, attrs={"pack": "i32"},
        doc="apply the region to each group of `pack` consecutive elements (row-major) of the same-shaped srcs; "
            "block args: pack scalars per src (src-major), gpu.yield: pack scalars per result (result-major)"),
    _op("unsplat", ("src", ), doc="the only element of a one-element tensor, as a scalar"),
    # hints and debugging
    _op("assume", ("cond", ), (), pure=False),
    _op("print", ("args*16", ), (), pure=False, attrs={"prefix": "str", "hex": "bool", "is_signed": "array<i32>"}),
    _op("assert", ("cond", ), (), pure=False, attrs={"message": "str"}),
    _op("debug_barrier", (), (), pure=False),
    # memory
    _op("load", ("ptr", "mask?", "other?"), pure=False,
        attrs={"cache": "str", "evict": "str", "is_volatile": "bool", "boundary_check": "array<i32>",
               "padding": "zero|nan"}),
    _op("store", ("ptr", "value", "mask?"), (), pure=False,
        attrs={"cache": "str", "evict": "str", "boundary_check": "array<i32>"}),
    _op("atomic_rmw", ("ptr", "val", "mask?"), pure=False,
        attrs={"op": "add|fadd|and|or|xor|xchg|max|min|umax|umin", "sem": "str", "scope": "str"}),
    _op("atomic_cas", ("ptr", "cmp", "val"), pure=False, attrs={"sem": "str", "scope": "str"}),
    _op("make_block_ptr", ("base", "shape+", "strides+", "offsets+"), attrs={"order": "array<i32>"}),
    _op("advance", ("ptr", "offsets+")),
    _op("make_tensor_descriptor", ("base", "shape+", "strides+"), attrs={"padding": "zero|nan"},
        doc="descriptor of the tensor at base (shape: i32 per dim, strides: i64 per dim, last stride 1); the "
            "result type !tt.tensordesc<tensor<block>> gives the block shape and element type"),
    _op("descriptor_load", ("desc", "indices+"), pure=False,
        doc="the block at element offsets indices (i32 per dim); out-of-bounds elements read as the padding"),
    _op("descriptor_store", ("desc", "src", "indices+"), (), pure=False,
        doc="write the block src at offsets indices; out-of-bounds elements are dropped"),
    _op("descriptor_reduce", ("desc", "src", "indices+"), (), pure=False,
        attrs={"kind": "add|fadd|min|max|umin|umax|and|or|xor"},
        doc="atomically combine src into the block at offsets indices (relaxed); out-of-bounds elements dropped"),
    _op("descriptor_gather", ("desc", "x_offsets", "y_offset"), pure=False,
        doc="rows x_offsets (1-D int block) of a 2-D descriptor with a one-row block, columns y_offset.."
            "y_offset+block[1]-1; result [len(x_offsets), block[1]]; out-of-bounds elements read as padding"),
    _op("descriptor_scatter", ("desc", "src", "x_offsets", "y_offset"), (), pure=False,
        doc="the inverse of descriptor_gather: write src rows to rows x_offsets; out-of-bounds elements dropped"),
]}

#: a discardable attribute on an ``arith`` float op: it rounds its own result and must not be contracted with
#: another op into an fma (libdevice's ``add_rn``/``sub_rn``/``mul_rn``; every other float op may be fused
#: where the compile options allow it)
ROUNDED_ALONE = "tritium.rn"

PURE_OPS = frozenset(f"tt.{n}" for n, op in OPS.items() if op.pure)


def inline_asm_elements_per_register(bits: int, pack: int) -> int:
    """How many elements of ``bits`` bits (an i1 counts 32, a pointer 64) one register of a
    ``tt.elementwise_inline_asm`` statement holds when it takes groups of ``pack``: narrower than 32 bits, they share
    32-bit registers; wider ones take one each. The frontend counts the constraints by it, the GPU lowering forms
    the registers by it."""
    return min(32 // bits, pack) if bits < 32 else 1

TYPES = {
    "ptr": "pointer to elements of its parameter type (scalar, or a tensor type for block pointers)",
    "tensordesc": "descriptor of a tensor in memory, loaded and stored in blocks of its parameter's shape",
}


def irdl_source() -> str:
    lines = ["irdl.dialect @tt {"]
    for tname in TYPES:
        lines += [f"  irdl.type @{tname} {{", "    %0 = irdl.any", "    irdl.parameters(pointee: %0)", "  }"]
    for op in OPS.values():
        lines.append(f"  irdl.operation @{op.name} {{")
        var = 0
        for kind, specs in (("operands", op.operands), ("results", op.results)):
            slots = op.slots(specs)
            if not slots:
                continue
            parts = []
            for name, variadicity in slots:
                lines.append(f"    %{var} = irdl.any")
                prefix = "" if variadicity == "single" else f"{variadicity} "
                parts.append(f"{name}: {prefix}%{var}")
                var += 1
            lines.append(f"    irdl.{kind}({', '.join(parts)})")
        if op.regions:
            regs = []
            for i in range(op.regions):
                lines.append(f"    %r{i} = irdl.region")
                regs.append(f"region{i}: %r{i}")
            lines.append(f"    irdl.regions({', '.join(regs)})")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines)
