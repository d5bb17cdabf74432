"""Markdown of a ``python -m lazybcast bench`` report, written between markers in any file.

``--markdown FILE`` (repeatable) rewrites, in each FILE, the text between

* ``<!-- bench:begin -->`` and ``<!-- bench:end -->``: the full block (run, machine, summary,
  every table: :func:`results_block`), as in ``benchmarks/RESULTS.md``;
* ``<!-- bench-summary:begin -->`` and ``<!-- bench-summary:end -->``: a short block (machine,
  headline ratios by kind of case: :func:`summary_block`), as in the README's Performance
  section.

Text outside the markers is kept. A file with neither pair gets the full block appended.
"""

import math
import os

from lazybcast._bench_report import (COLUMNS, OP_COLUMNS, PEERS, SCALING_COLUMNS, _fmt_bytes,
                                     op_row, row, scaling_row, summary_lines)
from lazybcast._bench_machine import machine_line

__all__ = ["results_block", "summary_block", "write_blocks"]

MARKERS = {
    "full": ("<!-- bench:begin -->", "<!-- bench:end -->"),
    "summary": ("<!-- bench-summary:begin -->", "<!-- bench-summary:end -->"),
}

# Kinds of case for the README's summary: (label, test on a result).
KINDS = (
    ("small inner dimensions (RGB pixels, `(k,)` rows, `(N,1)` columns, 3-byte records)",
     lambda r: "small-inner" in r["tags"]),
    ("transposed sources (2-D)", lambda r: "transposed" in r["tags"] and "image" not in r["tags"]),
    ("images, CHW -> HWC", lambda r: "image" in r["tags"] and "CHW -> HWC" in r["name"]),
    ("images, HWC -> CHW", lambda r: "image" in r["tags"] and "HWC -> CHW" in r["name"]),
    ("reversed sources", lambda r: "negative-stride" in r["tags"]),
    ("scalar fills", lambda r: "scalar" in r["tags"]),
    ("channel vectors to NCHW / NHWC", lambda r: r["tags"] and {"nchw", "nhwc"} & set(r["tags"])),
    ("outputs of 16 kB or less (per-call cost)", lambda r: r["nbytes"] <= 16384),
    ("outputs of 64 MiB or more", lambda r: "huge" in r["tags"]),
)

_RATIO_KEYS = {"numpy": "speedup", "torch 1t": "speedup_torch_1t", "torch 2t": "speedup_torch_2t"}


def _table(columns, rows, code_first=True):
    lines = ["| " + " | ".join(columns) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(columns) - 1)) + "|"]
    for cells in rows:
        cells = list(cells)
        if code_first:
            cells[0] = f"`{cells[0]}`"
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _machine_sentence(report):
    return f"Machine: {machine_line(report['machine'])}."


def results_block(report):
    """The full markdown block: run line, machine, summary, the tables, the legend."""
    lines = [
        f"Run: `{report['command']}` ({report['elapsed']:.0f} s).",
        "",
        _machine_sentence(report),
        "",
        f"Best of N single calls (each case ran for about {report['budget']:g} s, its callables "
        f"taking turns); lazybcast with `threads={report['threads']}`.",
        "",
        "**" + "  \n".join(summary_lines(report["summary"])) + "**",
        "",
    ]
    lines += _table(COLUMNS, (row(r) for r in report["results"]))
    lines += [
        "",
        "Columns: best single-call times of `view.materialize(out=out)` (lazybcast), "
        "`np.copyto(out, np.broadcast_to(...))` (numpy), the torch equivalent with "
        "`torch.set_num_threads(1)` and `(2)` (`out.copy_(src.expand(shape))`; `permute` for "
        "layout changes; `torch.flip`, which allocates, for reversed sources; n/a where torch "
        "lacks the dtype or is not installed) and the write limit (limit; bound: a `memset` "
        "of a non-zero byte, or for sources as large as the output a `memcpy` of the same "
        "bytes, whichever of 1 and 2 threads (1t, 2t) is faster). vs X = X's time / "
        "lazybcast's (above 1: lazybcast is faster); median = vs numpy on median times; of "
        "limit = limit / lazybcast.",
    ]
    if report.get("scaling"):
        lines += ["", "Threads: `materialize(out=out, threads=t)` for every output of 4 MiB or "
                      "more, beside torch with 1 and 2 threads, taking turns (best of N; "
                      "median = 2t / 1t on median times; of limit = the limit above over the "
                      "time with t threads).", ""]
        lines += _table(SCALING_COLUMNS, (scaling_row(r) for r in report["scaling"]))
    for group in report.get("groups", ()):
        lines += ["", f"### {group['title']}", ""]
        if group["results"]:
            lines += _table(COLUMNS, (row(r) for r in group["results"]))
            lines.append("")
        if group["ops"]:
            lines += _table(OP_COLUMNS, (op_row(r) for r in group["ops"]))
            lines.append("")
        lines.append("**" + "  \n".join(summary_lines({**group["summary"], "huge": {}})) + "**")
    return "\n".join(lines) + "\n"


def _range(values):
    if not values:
        return "n/a"
    lo, hi = min(values), max(values)

    def f(v):
        return f"{v:.2f}x" if v < 10 else f"{v:.0f}x"

    return f(lo) if math.isclose(lo, hi, rel_tol=0.005) else f"{f(lo)}-{f(hi)}"


def summary_block(report):
    """The short markdown block for the README: machine, geometric means, ranges by kind."""
    results = report["results"]
    s = report["summary"]
    lines = [
        f"Measured on {machine_line(report['machine'])}, with "
        f"`{report['command']}` ({s['cases']} cases, "
        f"{_fmt_bytes(min(r['nbytes'] for r in results)) if results else 'none'} to "
        f"{_fmt_bytes(max(r['nbytes'] for r in results)) if results else 'none'}; "
        "full table in [benchmarks/RESULTS.md](benchmarks/RESULTS.md)). Speedup = the peer's "
        "time / lazybcast's (above 1x: lazybcast is faster).",
        "",
        "| cases | n | vs NumPy | vs torch, 1 thread | vs torch, 2 threads |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    geo = [s["peers"][p]["geomean"] for p in PEERS]
    lines.append(f"| all (geometric mean) | {s['cases']} | " + " | ".join(
        "n/a" if g is None else f"**{g:.2f}x**" for g in geo) + " |")
    for label, test in KINDS:
        chosen = [r for r in results if test(r)]
        if not chosen:
            continue
        cells = [_range([r[_RATIO_KEYS[p]] for r in chosen if r[_RATIO_KEYS[p]] is not None])
                 for p in PEERS]
        lines.append(f"| {label} | {len(chosen)} | " + " | ".join(cells) + " |")
    slower = [len(s["peers"][p]["slower"]) if s["peers"][p]["cases"] else None for p in PEERS]
    lines.append("| slower than the peer | | " + " | ".join(
        "n/a" if n is None else f"{n} case" + ("" if n == 1 else "s") for n in slower) + " |")
    huge = s.get("huge") or {}
    parts = [f"{h['fraction']:.2f} of the {bound} limit (target {h['target']}; "
             f"{h['cases']} case" + ("" if h["cases"] == 1 else "s") + ")"
             for bound, h in huge.items() if h is not None]
    if parts:
        lines += ["", "Outputs of 64 MiB or more, lowest: " + "; ".join(parts) + "."]
    return "\n".join(lines) + "\n"


def _replace(text, markers, block):
    begin, end = markers
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    return f"{head}{begin}\n{block}{end}{tail}"


def write_blocks(path, report):
    """Rewrite the marked blocks of ``path`` from ``report`` (append the full block if the file
    has no markers; create it if missing)."""
    text = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    found = False
    for kind, markers in MARKERS.items():
        if markers[0] in text and markers[1] in text:
            block = results_block(report) if kind == "full" else summary_block(report)
            text = _replace(text, markers, block)
            found = True
    if not found:
        begin, end = MARKERS["full"]
        text += ("\n" if text and not text.endswith("\n") else "") \
            + f"{begin}\n{results_block(report)}{end}\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
