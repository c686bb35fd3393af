"""``tritium-opt FILE.mlir -p PIPELINE``: run named passes on an IR file and print the result.

The passes are those the active plugins register (``tritium plugins`` lists them), upstream MLIR passes and
Python passes alike, so a plugin's pass is testable on IR files without compiling a kernel::

    tritium-opt kernel.ttir -p tt-combine,canonicalize,tt-dce
    tritium-opt cases.mlir -p tt-cse --split-input-file | filecheck cases.mlir

This is what the IR tests (``tests/ir/*.mlir``) run through their ``// RUN:`` lines.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from ..backends import backends
from ..passes import reproducer
from ..passes.diagnostics import capture
from ..passes.pipeline import PassContext, Pipeline, PipelineError, run_pipeline
from ..plugins import PluginError, registry

SPLIT_MARKER = "// -----"


def split_pipeline(text: str) -> list[str]:
    """``"a,b{x=1,y=2},c"`` -> ``["a", "b{x=1,y=2}", "c"]`` (commas inside braces belong to options)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [p for p in out if p]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tritium-opt", description="Run tritium passes on an MLIR file.")
    p.add_argument("file", nargs="?", default="-", help="input IR file ('-' or nothing: standard input)")
    p.add_argument("-p", "--pipeline", action="append", default=[],
                   help="comma-separated pass names, e.g. 'tt-combine,canonicalize{max-iterations=2}'; "
                        "may be given several times")
    p.add_argument("-o", "--output", default="-", help="where to write the result (default: standard output)")
    p.add_argument("--split-input-file", action="store_true",
                   help=f"treat each chunk between '{SPLIT_MARKER}' lines as its own module")
    p.add_argument("--stage", default="opt", help="stage name the passes see in their context (default: opt)")
    p.add_argument("--backend", default=None,
                   help="give passes this backend and its default options in their context")
    p.add_argument("--list-passes", action="store_true", help="list the registered passes and exit")
    p.add_argument("--debug-info", action="store_true", help="print source locations")
    p.add_argument("--reproduce", action="store_true",
                   help="FILE is a reproducer written under TRITON_REPRODUCER_PATH: run the passes it names, "
                        "with its stage, kernel name and backend")
    return p


def _list_passes(out) -> int:
    for name, (spec, info) in sorted(registry().passes.items()):
        kind = "upstream" if spec.is_upstream else "python"
        print(f"{name:32} {kind:8} {info.name:12} {spec.doc}", file=out)
    return 0


def _context(args: argparse.Namespace):
    ctx = PassContext(stage=args.stage, kernel_name="")
    if args.backend:
        found = backends()
        if args.backend not in found:
            raise SystemExit(f"tritium-opt: no backend {args.backend!r} (installed: {', '.join(sorted(found))})")
        b = found[args.backend]
        target = b.driver().get_current_target()
        ctx.backend = b.compiler(target)
        ctx.options = ctx.backend.parse_options({})
        ctx.capability = target
    return ctx


def _installed(backend: str) -> Optional[str]:
    """The reproducer's backend, if it is installed here (passes that ask for none still replay without it)."""
    if not backend:
        return None
    return backend if backend in backends() else None


def run_text(text: str, passes: Sequence[str], ctx, source: str = "<input>", debug_info: bool = False) -> str:
    """Parse ``text``, run ``passes`` and return the printed module (what one chunk of the input becomes)."""
    from .._mlir import parse_module, tile_context
    try:
        with capture(tile_context()):       # the parser's warnings too, under MLIR_ENABLE_DIAGNOSTICS
            module = parse_module(text, tile_context())
    except Exception as exc:
        raise ValueError(f"{source}: cannot parse the input as MLIR: {exc}") from None
    run_pipeline(module, Pipeline(ctx.stage, passes, owner="the command line"), ctx)
    return module.operation.get_asm(enable_debug_info=debug_info)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.list_passes:
        return _list_passes(sys.stdout)
    passes = [p for chunk in args.pipeline for p in split_pipeline(chunk)]
    try:
        text = sys.stdin.read() if args.file == "-" else open(args.file).read()
    except OSError as exc:
        print(f"tritium-opt: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    if args.reproduce:
        try:
            repro = reproducer.read(text)
        except ValueError as exc:
            print(f"tritium-opt: {args.file}: {exc}", file=sys.stderr)
            return 2
        text, passes = repro.ir, repro.passes + passes
        args.stage = repro.stage
        args.backend = args.backend or _installed(repro.backend)
    chunks = text.split(f"\n{SPLIT_MARKER}\n") if args.split_input_file else [text]
    results = []
    ctx = _context(args)
    if args.reproduce:
        ctx.kernel_name = repro.kernel
    for i, chunk in enumerate(chunks):
        where = args.file if len(chunks) == 1 else f"{args.file} (chunk {i + 1})"
        try:
            results.append(run_text(chunk, passes, ctx, where, args.debug_info))
        except (ValueError, PipelineError, PluginError) as exc:
            print(f"tritium-opt: {exc}", file=sys.stderr)
            return 1
    out_text = f"\n{SPLIT_MARKER}\n".join(r.rstrip("\n") for r in results) + "\n"
    if args.output == "-":
        sys.stdout.write(out_text)
    else:
        with open(args.output, "w") as f:
            f.write(out_text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
