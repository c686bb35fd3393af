"""Grouping a function's top-level loops into chunks, so that extracting them costs linear time.

LLVM's loop extractor builds a cache over the whole function (``CodeExtractorAnalysisCache``: every instruction
of every block) for each loop it extracts, so moving n loops out of one function of size S took n * S: an
unrolled ``static_range(64)`` of row reductions (~1000 loops) spent seconds there, quadratically more as it grew.
Here the function's straight-line spine is cut into chunks of about sqrt(n) loops; each chunk is wrapped in a
loop that never repeats (``br i1 false``), so the extractor first moves the ~sqrt(n) chunks out of the function,
then each chunk's own loops out of the chunk: sqrt(n) * S + n * S / sqrt(n). The chunk functions are kept out
of line like the loops; their never-taken back edge folds away at once.

This works on the text LLVM prints for a module, and only where it can prove the cut sound: a chunk starts and
ends at blocks without phis that every path through the function crosses (no edge jumps over them, no loop
spans them), and every loop of the function lies in some chunk. Anything else leaves the function as it was.
"""
from __future__ import annotations

import math
import re
from typing import Optional

#: chunks are worth their extra extraction from this many top-level loops in one function
MIN_LOOPS = 64
LATCH = "tritium.chunk."

_LABEL = re.compile(r'^("[^"]+"|[\w.$-]+):')
_TARGET = re.compile(r'label %("[^"]+"|[\w.$-]+)')
_DEFINE_NAME = re.compile(r'^define [^@]*@("[^"]+"|[\w.$-]+)\(')


def wrap_module(text: str) -> tuple[str, int]:
    """``text`` with the top-level loops of each large function grouped into chunk loops; the number of chunks."""
    lines = text.split("\n")
    out: list[str] = []
    chunks = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("define ") and line.endswith("{"):
            end = lines.index("}", i)
            body = _wrap_function(lines[i + 1:end], chunks)
            if body is not None:
                chunks += sum(1 for b in body if b.startswith(LATCH))
                out.append(line)
                out.extend(body)
            else:
                out.extend(lines[i:end])
            out.append("}")
            i = end + 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out), chunks


def _blocks(body: list[str]) -> Optional[list[tuple[str, list[str]]]]:
    blocks: list[tuple[str, list[str]]] = []
    for line in body:
        m = _LABEL.match(line)
        if m:
            blocks.append((m.group(1), []))
        elif blocks:
            blocks[-1][1].append(line)
        elif line.strip():
            return None     # an unnamed entry block: leave the function alone
    return blocks


def _terminator(lines: list[str]) -> Optional[int]:
    """Index of the block's terminator among ``lines``, or None for one this does not follow."""
    for j in range(len(lines) - 1, -1, -1):
        s = lines[j].strip()
        if not s or s.startswith(";"):
            continue
        if s.startswith(("br ", "ret ", "ret\t")) or s in ("ret void", "unreachable") or s.startswith("unreachable"):
            return j
        return None
    return None


def _wrap_function(body: list[str], first: int) -> Optional[list[str]]:
    blocks = _blocks(body)
    if not blocks or len(blocks) < 3:
        return None
    found = _cuts(blocks)
    if found is None:
        return None
    cuts, loops, _ = found
    if len(loops) < MIN_LOOPS:
        return None
    # a cut at a join block (phis: an if's results) moves past the phis: the block is split in two
    split = {b for b in cuts if _has_phi(blocks[b][1])}
    if split:
        blocks = _split(blocks, split)
        found = _cuts(blocks)
        if found is None:
            return None
        cuts, loops, _ = found
    cuts = [b for b in cuts if not _has_phi(blocks[b][1])]
    terms = [_terminator(lines) for _, lines in blocks]
    per_chunk = max(2, math.isqrt(len(loops)))
    chunks: list[tuple[int, int]] = []
    start, count, li = (cuts[0] if cuts else 0), 0, 0
    for c in cuts[1:]:
        while li < len(loops) and loops[li] < c:
            if loops[li] >= start:
                count += 1
            li += 1
        if count >= per_chunk or (li == len(loops) and count):
            chunks.append((start, c))
            start, count = c, 0
        elif count == 0:
            start = c
    # loops before the first cut or after the last one are extracted from the function itself, as without chunks
    if len(chunks) < 2:
        return None
    return _emit(blocks, terms, chunks, first)


def _cuts(blocks: list[tuple[str, list[str]]]) -> Optional[tuple[list[int], list[int], list[list[int]]]]:
    """The blocks that every path through the function enters from the block before them (no edge jumps over
    them, no loop spans them), the headers of the top-level loops, and each block's successors."""
    pos = {name: k for k, (name, _) in enumerate(blocks)}
    n = len(blocks)
    succ: list[list[int]] = []
    for _, lines in blocks:
        t = _terminator(lines)
        if t is None:
            return None
        targets = _TARGET.findall(lines[t])
        if any(x not in pos for x in targets):
            return None
        succ.append([pos[x] for x in targets])
    bad = [0] * (n + 1)          # boundary b (before block b) is a cut when no edge crossing it goes elsewhere
    inner = [0] * (n + 1)        # back edges spanning a boundary from a header before it: loops around it
    headers = [False] * n
    entering = [False] * n
    for u, vs in enumerate(succ):
        for v in vs:
            if u < v:
                bad[u + 1] += 1
                bad[v] -= 1          # boundaries u+1 .. v-1 are jumped over
                entering[v] = True
            else:                    # a back edge: a loop over blocks v..u, headed by v
                headers[v] = True
                bad[v] += 1
                bad[u + 1] -= 1
                inner[v + 1] += 1
                inner[u + 1] -= 1
    cuts, loops = [], []
    run = nest = 0
    for b in range(n):
        run += bad[b]
        nest += inner[b]
        if b >= 1 and run == 0 and entering[b]:
            cuts.append(b)
        if headers[b] and nest == 0:
            loops.append(b)
    return cuts, loops, succ


def _split(blocks: list[tuple[str, list[str]]], at: set) -> list[tuple[str, list[str]]]:
    """``blocks`` with each block of index in ``at`` split after its phis; its successors' phis name the new
    block as their predecessor."""
    succ = _cuts(blocks)[2]     # type: ignore[index]
    renamed: dict[int, list[tuple[str, str]]] = {}
    out: list[tuple[str, list[str]]] = []
    for k, (name, lines) in enumerate(blocks):
        if k not in at:
            out.append((name, lines))
            continue
        n_phi = 0
        for j, line in enumerate(lines):
            s = line.strip()
            if s and not s.startswith(";") and " = phi " not in s:
                n_phi = j
                break
        rest = f"{LATCH}s{len(renamed)}"
        out.append((name, lines[:n_phi] + [f"  br label %{rest}"]))
        out.append((rest, lines[n_phi:]))
        for v in succ[k]:
            renamed.setdefault(v, []).append((name, rest))
    result = []
    index = {name: k for k, (name, _) in enumerate(blocks)}
    for name, lines in out:
        k = index.get(name)
        if k in renamed and not name.startswith(LATCH):
            new_lines = []
            for line in lines:
                if " = phi " in line:
                    for old, new in renamed[k]:
                        line = re.sub(rf"%{re.escape(old)} \]", f"%{new} ]", line)
                new_lines.append(line)
            lines = new_lines
        result.append((name, lines))
    return result


def _has_phi(lines: list[str]) -> bool:
    for line in lines:
        s = line.strip()
        if s and not s.startswith(";"):
            return " = phi " in s
    return False


def _emit(blocks: list[tuple[str, list[str]]], terms: list[int], chunks: list[tuple[int, int]],
          first: int) -> list[str]:
    ends = {e: (s, first + i) for i, (s, e) in enumerate(chunks)}
    owner = {}
    for i, (s, e) in enumerate(chunks):
        for k in range(s, e):
            owner[k] = (blocks[e][0], first + i)
    out: list[str] = []
    for k, (name, lines) in enumerate(blocks):
        if k in ends:
            s, i = ends[k]
            out.append(f"{LATCH}{i}:")
            out.append(f"  br i1 false, label %{blocks[s][0]}, label %{name}")
        out.append(f"{name}:")
        lines = list(lines)
        if k in owner:
            exit_name, i = owner[k]
            t = terms[k]
            lines[t] = re.sub(rf'label %{re.escape(exit_name)}(?=[,\s]|$)', f"label %{LATCH}{i}", lines[t])
        out.extend(lines)
    return out
