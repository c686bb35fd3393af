"""``tritium``: the command that tells what this installation is made of.

    tritium plugins [--json]   backends (capabilities), plugins (distribution, version, API, source),
                               passes, stages per backend, knob groups
    tritium knobs [GROUP]      every knob: environment names, current value, meaning
    tritium compile FILE.py:KERNEL --signature SIG [--target T] [-o OUT]
                               ahead-of-time compilation into a file tritium.load_compiled launches
    tritium opt ...            the same as tritium-opt

Listing imports no MLIR: passes are registered lazily and stages are built without compiling.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional, Sequence

from .. import __version__, knobs
from ..backends import backends
from ..backends.compiler import Language
from ..compiler.compiler import build_stages
from ..hookspecs import HOOK_NAMES, PLUGIN_API
from ..passes.pipeline import make_pipeline
from ..plugins import PluginError, registry
from .compile_cmd import add_parser as add_compile
from .compile_cmd import run as compile_run
from .opt import main as opt_main


def _stages_of(name: str, backend_entry: Any) -> dict:
    """The stage names (with who added or wrapped each) and pass pipelines of one backend on this machine."""
    try:
        active = bool(backend_entry.driver.is_active())
    except Exception:
        active = False
    if not active:
        return {"active": False, "stages": [], "pipelines": {}}
    try:
        target = backend_entry.driver().get_current_target()
        backend = backend_entry.compiler(target)
        options = backend.parse_options({})
        stages = build_stages(backend, options, Language.TRITON)
        pipelines = {}
        for stage in stages:
            try:
                passes = backend.pipeline(stage, options)
            except KeyError:
                continue
            pipelines[stage] = list(make_pipeline(stage, passes, options, backend))
        return {"active": True, "target": f"{target.backend}/{target.arch}",
                "stages": [{"name": s, "by": [o for o in stages.owners.get(s, []) if o != "backend"]}
                           for s in stages], "pipelines": pipelines}
    except Exception as exc:  # a listing must still show everything else
        return {"active": True, "error": f"{type(exc).__name__}: {exc}", "stages": [], "pipelines": {}}


def collect() -> dict:
    """Everything ``tritium plugins`` shows, as data (``--json`` prints exactly this)."""
    reg = registry()
    found = backends()
    data: dict[str, Any] = {"tritium": __version__, "plugin_api": "%d.%d" % PLUGIN_API, "backends": [],
                            "plugins": [], "passes": [], "knob_groups": []}
    for name, (spec, info) in sorted(reg.backends.items()):
        data["backends"].append({
            "name": name, "plugin": info.name, "distribution": info.distribution, "version": info.version,
            "priority": spec.priority, "description": spec.description,
            "capabilities": sorted(spec.capabilities), **_stages_of(name, found[name])})
    for name in reg.order:
        info = reg.infos[name]
        hooks = [h for h in HOOK_NAMES if any(i.name == name for i, _, _ in reg.impls(h))]
        data["plugins"].append({"name": name, "distribution": info.distribution, "version": info.version,
                                "api": "%d.%d" % info.api, "source": info.source, "hooks": hooks})
    for name, (spec, info) in sorted(reg.passes.items()):
        data["passes"].append({"name": name, "plugin": info.name, "kind": "upstream" if spec.is_upstream else "python",
                               "doc": spec.doc})
    plugin_groups = {g: info for g, (_, info) in reg.knob_groups.items()}
    for gname, group in knobs.groups().items():
        if gname in plugin_groups:
            owner = f"{plugin_groups[gname].name} ({plugin_groups[gname].distribution})"
        elif type(group).__module__ == knobs.__name__:
            owner = "tritium"
        else:
            continue  # declared by a plugin that is not active now
        envs = sorted({e for k in type(group).descriptors().values() for e in k.env})
        data["knob_groups"].append({"group": gname, "owner": owner, "knobs": len(type(group).descriptors()),
                                    "environment": envs})
    return data


def _table(rows: list[list[str]], indent: str = "  ") -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def _short_env(names: list[str]) -> str:
    # TRITON_X is always also read as TRITIUM_X: show one spelling, and only the first few names
    shown = [n for n in names if not (n.startswith("TRITON_") and "TRITIUM_" + n[7:] in names)]
    more = f" (+{len(shown) - 4} more)" if len(shown) > 4 else ""
    return " ".join(shown[:4]) + more


def format_listing(data: dict) -> str:
    out = [f"tritium {data['tritium']} (plugin API {data['plugin_api']})", "", "Backends"]
    for b in data["backends"]:
        state = f"active, target {b['target']}" if b.get("target") else (
            "active" if b["active"] else "no device on this machine")
        out.append(f"  {b['name']}  from plugin {b['plugin']} ({b['distribution']} {b['version']}), "
                   f"priority {b['priority']}, {state}")
        if b["description"]:
            out.append(f"      {b['description']}")
        out.append(f"      capabilities: {', '.join(b['capabilities']) or '(none)'}")
    out += ["", "Plugins (in calling order)"]
    rows = [["name", "distribution", "version", "api", "source", "hooks"]]
    rows += [[p["name"], p["distribution"], p["version"], p["api"], p["source"],
              ", ".join(h[len("tritium_"):] for h in p["hooks"])] for p in data["plugins"]]
    out.append(_table(rows))
    out += ["", "Passes"]
    rows = [["name", "plugin", "kind", "what it does"]]
    rows += [[p["name"], p["plugin"], p["kind"], p["doc"]] for p in data["passes"]]
    out.append(_table(rows))
    out += ["", "Stages"]
    for b in data["backends"]:
        if b.get("error"):
            out.append(f"  {b['name']}: could not build its stages: {b['error']}")
            continue
        if not b["stages"]:
            out.append(f"  {b['name']}: (its driver is not active here)")
            continue
        chain = " -> ".join(s["name"] + (f" [{', '.join(s['by'])}]" if s["by"] else "") for s in b["stages"])
        out.append(f"  {b['name']}: {chain}")
        for stage, passes in b["pipelines"].items():
            out.append(f"      {stage} passes: {', '.join(passes)}")
    out += ["", "Knob groups (tritium.knobs.<group>; `tritium knobs GROUP` for details)"]
    rows = [["group", "owner", "knobs", "environment"]]
    rows += [[g["group"], g["owner"], str(g["knobs"]), _short_env(g["environment"])] for g in data["knob_groups"]]
    out.append(_table(rows))
    return "\n".join(out) + "\n"


def _knobs(group: Optional[str]) -> int:
    registry()  # plugin knob groups exist once plugins are loaded
    rows = [["knob", "type", "environment", "value", "meaning"]]
    for name, kind, env, value, doc in knobs.describe():
        if group and name.split(".")[0] != group:
            continue
        rows.append([name, kind, env or "-", repr(value) if not callable(value) else "<set>", doc])
    if len(rows) == 1:
        print(f"tritium knobs: no knob group {group!r} (groups: {', '.join(knobs.groups())})", file=sys.stderr)
        return 1
    print(_table(rows, indent=""))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="tritium", description="Inspect a tritium installation.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plugins", help="list backends, plugins, passes, stages and knob groups")
    p.add_argument("--json", action="store_true", help="print the listing as JSON")
    k = sub.add_parser("knobs", help="list knobs with their environment variables and values")
    k.add_argument("group", nargs="?", default=None)
    sub.add_parser("opt", help="run passes on an IR file (tritium-opt)", add_help=False)
    add_compile(sub)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["opt"]:
        return opt_main(argv[1:])
    args = parser.parse_args(argv)
    try:
        if args.command == "compile":
            return compile_run(args)
        if args.command == "knobs":
            return _knobs(args.group)
        data = collect()
    except PluginError as exc:
        print(f"tritium: {exc}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_listing(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
