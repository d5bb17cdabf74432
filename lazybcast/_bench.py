"""``python -m lazybcast bench``: materialize() against NumPy and the write limit, in one process.

For every case of :mod:`lazybcast._bench_cases`, on one preallocated output, time

* ``view.materialize(out=out)`` (lazybcast),
* ``np.copyto(out, np.broadcast_to(...))`` (NumPy; the broadcast view is made once, outside
  the timing, exactly as the lazybcast view is),
* the write limit: the faster of ``out.fill(0)`` and a C ``memset`` of the same buffer;
* a C ``memset`` of the same buffer with a non-zero byte: some machines write zeros to memory
  faster than any other value (on the 2-core EPYC VM this was measured on, twice as fast for
  outputs beyond the cache), so this is the limit for writing real data.

Each timed sample is one call between two ``time.perf_counter()`` reads. The four callables
take turns within every round, so machine noise hits them alike; a case stops after its time
budget (and at least ``min_repeat`` rounds). Best and median are kept; the table shows best.
"""

import ctypes
import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np

from lazybcast._bench_cases import HUGE, select

__all__ = ["run", "run_cases", "summarize"]

_NONZERO = 0x5A  # the byte of the non-zero memset

_BEGIN = "<!-- bench:begin -->"
_END = "<!-- bench:end -->"


# -- timing -----------------------------------------------------------------------------------

def _time_interleaved(fns, budget, min_repeat, max_repeat):
    """Best, median and count of single-call times of each callable, taking turns per round."""
    for fn in fns.values():  # warm up: page faults, caches, lazy imports
        fn()
    samples = {key: [] for key in fns}
    clock = time.perf_counter
    start = clock()
    for i in range(max_repeat):
        for key, fn in fns.items():
            t0 = clock()
            fn()
            samples[key].append(clock() - t0)
        if i + 1 >= min_repeat and clock() - start > budget:
            break
    return {key: {"best": min(v), "median": statistics.median(v), "n": len(v)}
            for key, v in samples.items()}


def _same_bytes(out, ref):
    a = out.reshape(-1).view(np.uint8)
    b = np.ascontiguousarray(ref).reshape(-1).view(np.uint8)
    return bool(np.array_equal(a, b))


def _measure(case, budget, min_repeat, max_repeat, threads):
    name, view, tags = case()
    out = np.empty(view.shape, view.dtype)
    ref = np.asarray(view)  # NumPy's zero-copy broadcast view of the same source
    address, nbytes, memset = out.ctypes.data, out.nbytes, ctypes.memset
    fns = {
        "lazybcast": lambda: view.materialize(out=out, threads=threads),
        "numpy": lambda: np.copyto(out, ref),
        "fill": lambda: out.fill(0),
        "memset": lambda: memset(address, 0, nbytes),
        "memset_nonzero": lambda: memset(address, _NONZERO, nbytes),
    }
    times = _time_interleaved(fns, budget, min_repeat, max_repeat)
    view.materialize(out=out, threads=threads)
    correct = _same_bytes(out, ref)
    limit = min(("fill", "memset"), key=lambda k: times[k]["best"])
    ours, theirs, lim = times["lazybcast"], times["numpy"], times[limit]
    return {
        "name": name,
        "tags": sorted(tags),
        "shape": list(view.shape),
        "dtype": str(view.dtype),
        "nbytes": int(nbytes),
        "times": times,
        "limit": limit,
        "speedup": theirs["best"] / ours["best"],
        "speedup_median": theirs["median"] / ours["median"],
        "fraction_of_limit": lim["best"] / ours["best"],
        "fraction_of_nonzero_limit": times["memset_nonzero"]["best"] / ours["best"],
        "correct": correct,
    }


# -- reporting --------------------------------------------------------------------------------

def _fmt_time(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / 1e-9:.0f} ns"


def _fmt_bytes(n):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


_COLUMNS = ("case", "out", "lazybcast", "numpy", "limit", "speedup", "median", "of limit",
            "of nz limit")


def _row(r):
    return (
        r["name"] + ("" if r["correct"] else "  [WRONG VALUES]"),
        _fmt_bytes(r["nbytes"]),
        _fmt_time(r["times"]["lazybcast"]["best"]),
        _fmt_time(r["times"]["numpy"]["best"]),
        _fmt_time(r["times"][r["limit"]]["best"]),
        f"{r['speedup']:.2f}x",
        f"{r['speedup_median']:.2f}x",
        f"{r['fraction_of_limit']:.2f}",
        f"{r['fraction_of_nonzero_limit']:.2f}",
    )


def _text_line(cells, widths):
    first, *rest = cells
    return f"{first:<{widths[0]}}" + "".join(f" {c:>{w}}" for c, w in zip(rest, widths[1:]))


def summarize(results):
    """Headline numbers of a list of case results (the ``results`` of :func:`run_cases`).

    Returns a dict: ``cases``, ``geomean_speedup``, ``worst`` (name and speedup of the case
    with the lowest speedup), ``slower_than_numpy`` (names), ``huge_min_fraction`` (name and
    fraction of the write limit of the worst case of at least 64 MiB, or None),
    ``huge_min_fraction_nonzero`` (the same against the non-zero memset) and ``wrong`` (names
    of cases whose output did not match NumPy's).
    """
    if not results:
        return {"cases": 0, "geomean_speedup": None, "worst": None, "slower_than_numpy": [],
                "huge_min_fraction": None, "huge_min_fraction_nonzero": None, "wrong": []}
    geo = math.exp(sum(math.log(r["speedup"]) for r in results) / len(results))
    worst = min(results, key=lambda r: r["speedup"])
    huge = [r for r in results if r["nbytes"] >= HUGE]
    worst_huge = min(huge, key=lambda r: r["fraction_of_limit"]) if huge else None
    worst_huge_nz = min(huge, key=lambda r: r["fraction_of_nonzero_limit"]) if huge else None
    return {
        "cases": len(results),
        "geomean_speedup": geo,
        "worst": {"name": worst["name"], "speedup": worst["speedup"]},
        "slower_than_numpy": [r["name"] for r in results if r["speedup"] < 1.0],
        "huge_min_fraction": None if worst_huge is None else {
            "name": worst_huge["name"], "fraction": worst_huge["fraction_of_limit"]},
        "huge_min_fraction_nonzero": None if worst_huge_nz is None else {
            "name": worst_huge_nz["name"],
            "fraction": worst_huge_nz["fraction_of_nonzero_limit"]},
        "wrong": [r["name"] for r in results if not r["correct"]],
    }


def _summary_lines(summary):
    if not summary["cases"]:
        return ["no cases selected"]
    lines = [
        f"geometric-mean speedup over NumPy: {summary['geomean_speedup']:.2f}x "
        f"({summary['cases']} cases; target >= 3x)",
        f"lowest speedup: {summary['worst']['speedup']:.2f}x ({summary['worst']['name']}); "
        f"{len(summary['slower_than_numpy'])} case(s) slower than NumPy",
    ]
    if summary["huge_min_fraction"] is not None:
        h = summary["huge_min_fraction"]
        lines.append(f"outputs >= 64 MiB: lowest fraction of the write limit {h['fraction']:.2f} "
                     f"({h['name']}; target >= 0.8)")
        h = summary["huge_min_fraction_nonzero"]
        lines.append(f"outputs >= 64 MiB: lowest fraction of the non-zero memset "
                     f"{h['fraction']:.2f} ({h['name']})")
    if summary["wrong"]:
        lines.append(f"WRONG VALUES in {len(summary['wrong'])} case(s): "
                     + "; ".join(summary["wrong"]))
    return lines


def _machine():
    model = platform.processor() or platform.machine()
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        found = re.search(r"^Model name:\s*(.+)$", text, re.M)
        if found:
            model = found.group(1).strip()
    except (OSError, subprocess.SubprocessError):
        pass
    from lazybcast import __version__

    commit = None
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        done = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        commit = done.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        pass
    from lazybcast._kernels import simd_features

    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "simd": list(simd_features()),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "lazybcast": __version__,
        "commit": commit,
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _markdown(report):
    m = report["machine"]
    lines = [
        f"Run: `{report['command']}` on {m['date']}.",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores; Python {m['python']}, NumPy {m['numpy']}, "
        f"lazybcast {m['lazybcast']}" + (f" (commit {m['commit']})" if m["commit"] else "")
        + f"; {m['platform']}; kernels with "
        + (" + ".join(m.get("simd", [])) or "portable C loops") + ".",
        f"Best of N single calls (each case ran for about {report['budget']:g} s, the five "
        f"callables taking turns); `threads={report['threads']}`.",
        "",
        "**" + "  \n".join(_summary_lines(report["summary"])) + "**",
        "",
        "| " + " | ".join(_COLUMNS) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(_COLUMNS) - 1)) + "|",
    ]
    for r in report["results"]:
        cells = list(_row(r))
        cells[0] = f"`{cells[0]}`"
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Columns: best single-call time of `view.materialize(out=out)` (lazybcast), of "
        "`np.copyto(out, np.broadcast_to(...))` (numpy) and of the faster of `out.fill(0)` and "
        "a C `memset` (limit); speedup = numpy / lazybcast on best times, median = the same on "
        "median times; of limit = limit / lazybcast (1.0 = as fast as filling the output with "
        "zeros); of nz limit = the same against a `memset` with a non-zero byte (writing zeros "
        "can be faster than writing data).",
    ]
    if report.get("scaling"):
        lines += ["", f"Threads: `materialize(out=out, threads=t)` for every output of "
                      f"{_SCALING_MIN >> 20} MiB or more, the thread counts taking turns "
                      f"(best of N; median speedup in brackets).", "",
                  "| case | out | threads=1 | threads=2 | speedup |",
                  "|---|---:|---:|---:|---:|"]
        for r in report["scaling"]:
            t1, t2 = r["times"]["threads=1"], r["times"]["threads=2"]
            lines.append(f"| `{r['name']}` | {_fmt_bytes(r['nbytes'])} | {_fmt_time(t1['best'])} "
                         f"| {_fmt_time(t2['best'])} | {r['speedup']:.2f}x "
                         f"({t1['median'] / t2['median']:.2f}x) |")
    return "\n".join(lines) + "\n"


def _write_markdown(path, block):
    """Replace the text between the bench markers of ``path`` (append them if absent)."""
    text = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    new = f"{_BEGIN}\n{block}{_END}"
    if _BEGIN in text and _END in text:
        head, rest = text.split(_BEGIN, 1)
        tail = rest.split(_END, 1)[1]
        text = head + new + tail
    else:
        text = text + ("\n" if text and not text.endswith("\n") else "") + new + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _plot(report, path):
    import matplotlib  # type: ignore[import-not-found, unused-ignore]  # the plot extra

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # type: ignore[import-not-found, unused-ignore]

    results = sorted(report["results"], key=lambda r: r["nbytes"])
    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=120)
    series = (("limit", "write limit (fill(0) / memset 0)", "^", "0.55"),
              ("memset_nonzero", "memset, non-zero byte", "v", "tab:green"),
              ("numpy", "NumPy np.copyto", "s", "tab:orange"),
              ("lazybcast", "lazybcast materialize(out=)", "o", "tab:blue"))
    for key, label, marker, color in series:
        xs = [r["nbytes"] for r in results]
        ys = [r["nbytes"] / r["times"][r["limit"] if key == "limit" else key]["best"] / 1e9
              for r in results]
        ax.scatter(xs, ys, marker=marker, s=22, color=color, alpha=0.75, label=label,
                   zorder=3 if key == "lazybcast" else 2)
        # Connect the size sweeps so the trend with size reads at a glance.
        for tag_name in ("rgb", "row"):
            sweep = [(x, y) for x, y, r in zip(xs, ys, results)
                     if "sweep" in r["tags"] and tag_name in r["tags"]]
            if len(sweep) > 1:
                ax.plot(*zip(*sweep), color=color, alpha=0.5, lw=1,
                        ls="-" if tag_name == "rgb" else "--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("output size (bytes)")
    ax.set_ylabel("throughput (GB/s of output written)")
    m = report["machine"]
    s = report["summary"]
    geo = s["geomean_speedup"]
    ax.set_title(f"materialize() throughput, {s['cases']} cases"
                 + (f", geomean {geo:.2f}x over NumPy" if geo else "")
                 + f"\n{m['cpu']}, {m['cores']} cores, NumPy {m['numpy']}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize=9,
              title="lines: RGB sweep (solid), 64-float row sweep (dashed)", title_fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _check_plot_available():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return ("--plot needs matplotlib, which is not installed; install the plot extra: "
                "python -m pip install 'lazybcast[plot]'")
    return None


# -- running ----------------------------------------------------------------------------------

_SCALING_MIN = 32 << 20  # outputs this large or larger get the threads=1 vs threads=2 table


def _measure_scaling(case, budget, min_repeat, max_repeat):
    name, view, _ = case()
    out = np.empty(view.shape, view.dtype)
    times = _time_interleaved(
        {f"threads={t}": (lambda t=t: view.materialize(out=out, threads=t)) for t in (1, 2)},
        budget, min_repeat, max_repeat)
    return {"name": name, "nbytes": int(out.nbytes), "times": times,
            "speedup": times["threads=1"]["best"] / times["threads=2"]["best"]}


def run_cases(cases, *, budget=1.0, min_repeat=5, max_repeat=2000, threads=None,
              progress=None, on_result=None):
    """Time ``cases`` and return the list of per-case result dicts.

    ``progress(i, n, case)`` is called before each case, ``on_result(result)`` after it.
    """
    results = []
    for i, case in enumerate(cases, 1):
        if progress is not None:
            progress(i, len(cases), case)
        result = _measure(case, budget, min_repeat, max_repeat, threads)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def run(quick=False, *, json_path=None, plot_path=None, markdown_path=None, threads=None,
        pattern=None, budget=None, max_bytes=None, scaling=False, command=None):
    """Run the suite, print the table and summary; returns a process exit code.

    ``quick`` runs the ``quick`` subset with a short budget per case (well under 30 s).
    ``scaling`` adds ``threads=1`` against ``threads=2`` for outputs of 32 MiB or more.
    """
    if plot_path is not None:
        problem = _check_plot_available()
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
    cases = select(quick=quick, max_bytes=max_bytes, pattern=pattern)
    if budget is None:
        budget = 0.4 if quick else 1.0
    min_repeat = 3 if quick else 5
    max_repeat = 300 if quick else 2000

    widths = [max([len(_COLUMNS[0])] + [len(c.name) for c in cases]) + 2,
              9, 10, 10, 10, 8, 8, 8, 11]
    tty = sys.stderr.isatty()

    def progress(i, n, case):
        msg = f"[{i}/{n}] {case.name} ({_fmt_bytes(case.nbytes)})"
        if tty:
            sys.stderr.write("\r\033[K" + msg)
        else:
            sys.stderr.write(msg + "\n")
        sys.stderr.flush()

    def on_result(result):
        if tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
        print(_text_line(_row(result), widths), flush=True)

    header = _text_line(_COLUMNS, widths)
    print(header)
    print("-" * len(header), flush=True)
    t0 = time.perf_counter()
    results = run_cases(cases, budget=budget, min_repeat=min_repeat, max_repeat=max_repeat,
                        threads=threads, progress=progress, on_result=on_result)
    elapsed = time.perf_counter() - t0
    summary = summarize(results)
    print("-" * len(header))
    for line in _summary_lines(summary):
        print(line)
    print("limit = the faster of out.fill(0) and memset(0); 'of limit' = limit time / lazybcast "
          "time; 'of nz limit' = the same for a memset with a non-zero byte. "
          f"{len(results)} cases in {elapsed:.1f} s.", flush=True)

    scaled = []
    big = [case for case in cases if case.nbytes >= _SCALING_MIN] if scaling else []
    if big:
        print()
        print(f"{'threads: case':{widths[0]}} {'out':>9} {'threads=1':>10} {'threads=2':>10} "
              f"{'speedup':>8} {'median':>8}")
        for i, case in enumerate(big, 1):
            progress(i, len(big), case)
            r = _measure_scaling(case, budget, min_repeat, max_repeat)
            scaled.append(r)
            if tty:
                sys.stderr.write("\r\033[K")
            t1, t2 = r["times"]["threads=1"], r["times"]["threads=2"]
            print(f"{r['name']:{widths[0]}} {_fmt_bytes(r['nbytes']):>9} "
                  f"{_fmt_time(t1['best']):>10} {_fmt_time(t2['best']):>10} "
                  f"{r['speedup']:>7.2f}x {t1['median'] / t2['median']:>7.2f}x", flush=True)

    report = {
        "command": command or "python -m lazybcast bench" + (" --quick" if quick else ""),
        "quick": quick,
        "budget": budget,
        "threads": threads,
        "elapsed": elapsed,
        "machine": _machine(),
        "summary": summary,
        "results": results,
        "scaling": scaled,
    }
    if json_path is not None:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
        print(f"wrote {json_path}", file=sys.stderr)
    if markdown_path is not None:
        _write_markdown(markdown_path, _markdown(report))
        print(f"wrote {markdown_path}", file=sys.stderr)
    if plot_path is not None:
        _plot(report, plot_path)
        print(f"wrote {plot_path}", file=sys.stderr)
    return 1 if summary["wrong"] else 0
