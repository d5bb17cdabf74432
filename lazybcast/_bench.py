"""``python -m lazybcast bench``: materialize() against NumPy, PyTorch and the write limit.

For every case of :mod:`lazybcast._bench_cases`, on one preallocated output, time

* ``view.materialize(out=out)`` (lazybcast; ``threads=`` as given, default the library's own
  choice);
* ``np.copyto(out, np.broadcast_to(...))`` (NumPy; the broadcast view is made once, outside
  the timing, exactly as the lazybcast view is);
* the same copy in PyTorch with one and with two threads (``torch 1t``, ``torch 2t``; optional,
  ``n/a`` without torch; see :mod:`lazybcast._bench_peers`);
* the write limit, with one and two threads: a ``memset`` of the output with a non-zero byte,
  and for cases whose source is as large as the output (transposes, layout changes) a
  ``memcpy`` of the same bytes. "of limit" is the faster of the right bound's two timings over
  lazybcast's time.

Each timed sample is one call between two ``time.perf_counter()`` reads. The callables take
turns within every round, so machine noise hits them alike; a case stops after its time budget
(and at least ``min_repeat`` rounds). Best and median are kept; the table shows best. The
values written by lazybcast and torch are checked against NumPy's after timing.

Extra case groups (:data:`lazybcast._bench_groups.EXTRA_GROUPS`, e.g. ufunc chains) follow, one
table each, against NumPy and torch.

The ``--json`` report: ``command``, ``quick``, ``budget``, ``threads``, ``elapsed``,
``machine`` (:func:`lazybcast._bench_machine.describe`), ``summary`` (:func:`summarize`),
``results`` (one dict per case: ``name``, ``tags``, ``shape``, ``dtype``, ``nbytes``,
``source_nbytes`` (bytes that must be read), ``times`` (per callable: ``best``, ``median``,
``n``; callables ``lazybcast``, ``numpy``, ``torch 1t``, ``torch 2t``, ``memset 1t``,
``memset 2t``, ``copy 1t``, ``copy 2t``, those that ran), ``torch`` (the torch code timed, or
why not), ``bound`` (``memset`` or ``copy``), ``limit`` (the fastest callable of the bound),
``speedup`` / ``speedup_torch_1t`` / ``speedup_torch_2t`` (peer time / lazybcast time, None
without the peer), ``speedup_median``, ``fraction_of_limit``, ``correct``,
``torch_correct``), ``scaling`` (``--scaling``: per case ``times`` of ``threads=1``,
``threads=2``, ``torch 1t``, ``torch 2t``, ``speedup`` (2t over 1t), ``limit`` (name, time),
``fraction_of_limit_1t`` / ``_2t``, ``vs_torch_1t`` / ``_2t``) and ``groups`` (per extra group:
``title``, ``results``, ``ops``, ``summary``).
"""

import json
import sys
import textwrap
import time

from lazybcast._bench_cases import Case, select
from lazybcast._bench_groups import EXTRA_GROUPS, groups
from lazybcast._bench_machine import describe, machine_line
from lazybcast._bench_peers import Limits, load_torch
from lazybcast._bench_report import (_LEGEND, _OP_WIDTHS, _SCALING_WIDTHS, _WIDTHS, COLUMNS,
                                     OP_COLUMNS, PEERS, SCALING_COLUMNS, _fmt_bytes, _text_line,
                                     op_row, row, scaling_row, summarize, summarize_ops,
                                     summary_lines)
from lazybcast._bench_timing import _measure, _measure_op, _measure_scaling, _Setup

__all__ = ["run", "run_cases", "summarize", "PEERS"]

_SCALING_MIN = 4 << 20  # outputs this large or larger get the threads=1 vs threads=2 table

# -- running ----------------------------------------------------------------------------------

def run_cases(cases, *, budget=1.0, min_repeat=5, max_repeat=2000, threads=None, torch=None,
              progress=None, on_result=None):
    """Time materialize ``cases`` and return the list of per-case result dicts.

    ``torch`` is the torch module for the peer columns (None: n/a). ``progress(i, n, case)``
    is called before each case, ``on_result(result)`` after it.
    """
    results = []
    with Limits() as limits:
        setup = _Setup(budget, min_repeat, max_repeat, threads, torch, limits)
        for i, case in enumerate(cases, 1):
            if progress is not None:
                progress(i, len(cases), case)
            result = _measure(case, setup)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


class _Printer:
    """Progress on stderr (one rewritten line on a terminal), table rows on stdout."""

    def __init__(self):
        self.tty = sys.stderr.isatty()

    def progress(self, i, n, case):
        msg = f"[{i}/{n}] {case.name} ({_fmt_bytes(case.nbytes)})"
        sys.stderr.write("\r\033[K" + msg if self.tty else msg + "\n")
        sys.stderr.flush()

    def line(self, text):
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
        print(text, flush=True)


def _table_head(printer, columns, widths):
    header = _text_line(columns, widths)
    printer.line(header)
    printer.line("-" * len(header))
    return header


def run(quick=False, *, json_path=None, plot_path=None, markdown_paths=(), threads=None,
        pattern=None, budget=None, max_bytes=None, scaling=False, torch=True, command=None,
        extra_groups=None):
    """Run the suite, print the machine line, the tables and summary; return an exit code.

    ``quick`` runs the cases tagged ``quick`` with a short budget per case (about 20 s with
    torch). ``scaling`` adds ``threads=1`` against ``threads=2`` for outputs of 4 MiB or more.
    ``torch=False`` leaves torch out (its columns say n/a). ``markdown_paths``: files whose
    ``bench`` markers get the results (see :mod:`lazybcast._bench_markdown`).
    ``extra_groups``: module names instead of :data:`~lazybcast._bench_groups.EXTRA_GROUPS`.
    The exit code is 1 when lazybcast wrote wrong values, else 0.
    """
    if isinstance(markdown_paths, str):
        markdown_paths = [markdown_paths]
    if plot_path is not None:
        from lazybcast._bench_plot import plot_problem

        problem = plot_problem()
        if problem:
            print(f"note: {problem}; no chart will be written", file=sys.stderr)
            plot_path = None
    torch_module = load_torch() if torch else None
    machine = describe(torch_module)
    saved_torch_threads = None if torch_module is None else torch_module.get_num_threads()

    cases = select(quick=quick, max_bytes=max_bytes, pattern=pattern)
    extra = []
    for module in EXTRA_GROUPS if extra_groups is None else extra_groups:
        try:
            found = groups([module])
        except Exception as exc:  # one broken group must not stop the suite: say why, go on
            print(f"note: case group {module} skipped: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            continue
        for title, group in found:
            chosen = select(quick=quick, max_bytes=max_bytes, pattern=pattern, cases=group)
            if chosen:
                extra.append((title, chosen))
    if budget is None:
        budget = 0.4 if quick else 1.0
    min_repeat = 3 if quick else 5
    max_repeat = 300 if quick else 2000

    printer = _Printer()
    printer.line("Machine: " + machine_line(machine))
    if torch_module is None:
        printer.line("torch: n/a (" + ("not installed" if torch else "--no-torch")
                     + "); its columns say n/a")
    printer.line("")
    name_width = max([len(COLUMNS[0])] + [len(c.name) for c in cases]) + 2
    t0 = time.perf_counter()
    results, scaled, group_reports = [], [], []
    try:
        with Limits() as limits:
            setup = _Setup(budget, min_repeat, max_repeat, threads, torch_module, limits)
            if cases:
                _table_head(printer, COLUMNS, (name_width,) + _WIDTHS)
            for i, case in enumerate(cases, 1):
                printer.progress(i, len(cases), case)
                result = _measure(case, setup)
                results.append(result)
                printer.line(_text_line(row(result), (name_width,) + _WIDTHS))
            summary = summarize(results)
            if cases:
                printer.line("-" * (name_width + sum(w + 1 for w in _WIDTHS)))
            for line in summary_lines(summary):
                printer.line(line)
            for line in textwrap.wrap(_LEGEND, 100):
                printer.line(line)

            big = [(case, r) for case, r in zip(cases, results)
                   if case.nbytes >= _SCALING_MIN] if scaling else []
            if big:
                printer.line("")
                printer.line(f"threads: materialize(threads=1) against threads=2, outputs >= "
                             f"{_SCALING_MIN >> 20} MiB; torch with 1 and 2 threads beside")
                _table_head(printer, SCALING_COLUMNS, (name_width,) + _SCALING_WIDTHS)
                for i, (case, r) in enumerate(big, 1):
                    printer.progress(i, len(big), case)
                    limit = (r["limit"], r["times"][r["limit"]]["best"])
                    s = _measure_scaling(case, setup, limit)
                    scaled.append(s)
                    printer.line(_text_line(scaling_row(s), (name_width,) + _SCALING_WIDTHS))

            for title, group in extra:
                printer.line("")
                printer.line(f"{title}:")
                ops = [c for c in group if not isinstance(c, Case)]
                views = [c for c in group if isinstance(c, Case)]
                width = max([len(OP_COLUMNS[0])] + [len(c.name) for c in group]) + 2
                op_results, view_results = [], []
                if views:
                    _table_head(printer, COLUMNS, (width,) + _WIDTHS)
                    for i, case in enumerate(views, 1):
                        printer.progress(i, len(views), case)
                        view_results.append(_measure(case, setup))
                        printer.line(_text_line(row(view_results[-1]), (width,) + _WIDTHS))
                errors = []
                if ops:
                    _table_head(printer, OP_COLUMNS, (width,) + _OP_WIDTHS)
                    for i, case in enumerate(ops, 1):
                        printer.progress(i, len(ops), case)
                        try:
                            op_results.append(_measure_op(case, setup))
                        except Exception as exc:  # a broken case: say so, time the others
                            errors.append(case.name)
                            printer.line(f"{case.name}  [ERROR: {type(exc).__name__}: {exc}]")
                            continue
                        printer.line(_text_line(op_row(op_results[-1]), (width,) + _OP_WIDTHS))
                group_summary = summarize_ops(op_results + view_results)
                group_summary["wrong"] += errors
                for line in summary_lines({**group_summary, "huge": {}}):
                    printer.line(line)
                group_reports.append({"title": title, "results": view_results,
                                      "ops": op_results, "summary": group_summary})
    finally:
        if saved_torch_threads is not None:
            torch_module.set_num_threads(saved_torch_threads)
    elapsed = time.perf_counter() - t0
    printer.line(f"{len(results) + sum(len(g['results']) + len(g['ops']) for g in group_reports)}"
                 f" cases in {elapsed:.1f} s.")

    report = {
        "command": command or "python -m lazybcast bench" + (" --quick" if quick else ""),
        "quick": quick,
        "budget": budget,
        "threads": threads,
        "elapsed": elapsed,
        "machine": machine,
        "summary": summary,
        "results": results,
        "scaling": scaled,
        "groups": group_reports,
    }
    if json_path is not None:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
        print(f"wrote {json_path}", file=sys.stderr)
    if markdown_paths:
        from lazybcast._bench_markdown import write_blocks

        for path in markdown_paths:
            write_blocks(path, report)
            print(f"wrote {path}", file=sys.stderr)
    if plot_path is not None:
        from lazybcast._bench_plot import plot

        plot(report, plot_path)
        print(f"wrote {plot_path}", file=sys.stderr)
    wrong = summary["wrong"] + [n for g in group_reports for n in g["summary"]["wrong"]]
    return 1 if wrong else 0
