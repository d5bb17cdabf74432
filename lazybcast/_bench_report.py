"""The reporting half of ``python -m lazybcast bench`` (:mod:`lazybcast._bench`): the
table rows, the summaries and their lines, from the result dicts that
:mod:`lazybcast._bench_timing` makes.
"""

import math

from lazybcast._bench_cases import HUGE

PEERS = ("numpy", "torch 1t", "torch 2t")
"""What lazybcast is compared with; the ratio keys are ``speedup``, ``speedup_torch_1t``,
``speedup_torch_2t`` (the peer's best time over lazybcast's: > 1 means lazybcast is faster)."""

_RATIO_KEY = {"numpy": "speedup", "torch 1t": "speedup_torch_1t",
              "torch 2t": "speedup_torch_2t"}

TARGETS = {"memset": 0.9, "copy": 0.7}
"""Issue 12's targets for outputs >= 64 MB: fraction of the write limit by kind of bound."""


def _fmt_time(seconds):
    if seconds is None:
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / 1e-9:.0f} ns"


def _fmt_bytes(n):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _fmt_ratio(value, suffix="x"):
    return "n/a" if value is None else f"{value:.2f}{suffix}"


def _best(times, key):
    return times[key]["best"] if key in times else None


def _flag(r):
    flags = []
    if not r["correct"]:
        flags.append("[WRONG VALUES]")
    if r.get("torch_correct") is False:
        flags.append("[torch: wrong values]")
    return r["name"] + "".join("  " + f for f in flags)


COLUMNS = ("case", "out", "lazybcast", "numpy", "torch 1t", "torch 2t", "limit", "bound",
           "vs numpy", "median", "vs torch 1t", "vs torch 2t", "of limit")
_WIDTHS = (9, 10, 10, 10, 10, 10, 9, 8, 8, 11, 11, 8)


def row(r):
    """The table cells of one materialize result."""
    t = r["times"]
    return (
        _flag(r),
        _fmt_bytes(r["nbytes"]),
        _fmt_time(_best(t, "lazybcast")),
        _fmt_time(_best(t, "numpy")),
        _fmt_time(_best(t, "torch 1t")),
        _fmt_time(_best(t, "torch 2t")),
        _fmt_time(_best(t, r["limit"])),
        r["limit"],
        _fmt_ratio(r["speedup"]),
        _fmt_ratio(r["speedup_median"]),
        _fmt_ratio(r["speedup_torch_1t"]),
        _fmt_ratio(r["speedup_torch_2t"]),
        f"{r['fraction_of_limit']:.2f}",
    )


OP_COLUMNS = ("case", "lazybcast", "numpy", "torch 1t", "torch 2t", "vs numpy", "median",
              "vs torch 1t", "vs torch 2t")
_OP_WIDTHS = (10, 10, 10, 10, 8, 8, 11, 11)


def op_row(r):
    """The table cells of one extra-group (OpCase) result."""
    t = r["times"]
    return (_flag(r), _fmt_time(_best(t, "lazybcast")), _fmt_time(_best(t, "numpy")),
            _fmt_time(_best(t, "torch 1t")), _fmt_time(_best(t, "torch 2t")),
            _fmt_ratio(r["speedup"]), _fmt_ratio(r["speedup_median"]),
            _fmt_ratio(r["speedup_torch_1t"]), _fmt_ratio(r["speedup_torch_2t"]))


SCALING_COLUMNS = ("case", "out", "threads=1", "threads=2", "2t / 1t", "median", "limit",
                   "of limit 1t", "of limit 2t", "1t vs torch 1t", "2t vs torch 2t")
_SCALING_WIDTHS = (9, 10, 10, 8, 8, 9, 11, 11, 14, 14)


def scaling_row(r):
    """The table cells of one threads=1 / threads=2 result."""
    t = r["times"]
    limit = r["limit"]
    return (r["name"], _fmt_bytes(r["nbytes"]), _fmt_time(_best(t, "threads=1")),
            _fmt_time(_best(t, "threads=2")), _fmt_ratio(r["speedup"]),
            _fmt_ratio(r["speedup_median"]), "n/a" if limit is None else limit[0],
            _fmt_ratio(r["fraction_of_limit_1t"], ""), _fmt_ratio(r["fraction_of_limit_2t"], ""),
            _fmt_ratio(r["vs_torch_1t"]), _fmt_ratio(r["vs_torch_2t"]))


def _text_line(cells, widths):
    first, *rest = cells
    return f"{first:<{widths[0]}}" + "".join(f" {c:>{w}}" for c, w in zip(rest, widths[1:]))


def _geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _peer_summary(results):
    peers = {}
    for peer, key in _RATIO_KEY.items():
        rated = [r for r in results if r.get(key) is not None]
        worst = min(rated, key=lambda r: r[key]) if rated else None
        peers[peer] = {
            "cases": len(rated),
            "geomean": _geomean([r[key] for r in rated]),
            "worst": None if worst is None else {"name": worst["name"], "speedup": worst[key]},
            "slower": [r["name"] for r in rated if r[key] < 1.0],
        }
    return peers


def summarize(results):
    """Headline numbers of a list of materialize results (the ``results`` of :func:`run_cases`).

    Returns a dict: ``cases``; ``geomean_speedup``, ``worst`` and ``slower_than_numpy`` (against
    NumPy); ``peers`` (for each of :data:`PEERS`: ``cases`` compared, ``geomean``, ``worst``
    name and speedup, ``slower`` names); ``huge`` (for each kind of bound, ``memset`` and
    ``copy``: the name, fraction of the limit and target of the worst case of at least 64 MiB,
    or None); ``wrong`` and ``torch_wrong`` (names of cases whose output did not match NumPy's).
    """
    peers = _peer_summary(results)
    huge = {}
    for bound, target in TARGETS.items():
        rows = [r for r in results if r["nbytes"] >= HUGE and r.get("bound") == bound]
        worst = min(rows, key=lambda r: r["fraction_of_limit"]) if rows else None
        huge[bound] = None if worst is None else {
            "name": worst["name"], "fraction": worst["fraction_of_limit"], "target": target,
            "cases": len(rows)}
    numpy_peer = peers["numpy"]
    return {
        "cases": len(results),
        "geomean_speedup": numpy_peer["geomean"],
        "worst": numpy_peer["worst"],
        "slower_than_numpy": numpy_peer["slower"],
        "peers": peers,
        "huge": huge,
        "wrong": [r["name"] for r in results if not r["correct"]],
        "torch_wrong": [r["name"] for r in results if r.get("torch_correct") is False],
    }


def summarize_ops(results):
    """Headline numbers of an extra group's results: ``cases``, ``peers``, ``wrong``,
    ``torch_wrong`` (as :func:`summarize`)."""
    return {"cases": len(results), "peers": _peer_summary(results),
            "wrong": [r["name"] for r in results if not r["correct"]],
            "torch_wrong": [r["name"] for r in results if r.get("torch_correct") is False]}


def summary_lines(summary):
    """The summary as lines of text (printed, and bold in the markdown)."""
    if not summary["cases"]:
        return ["no cases selected"]
    peers = summary["peers"]
    geo, low, slow = [], [], []
    for peer in PEERS:
        p = peers[peer]
        if not p["cases"]:
            geo.append(f"{peer} n/a")
            continue
        geo.append(f"{p['geomean']:.2f}x over {peer} ({p['cases']} case"
                   + ("s)" if p["cases"] != 1 else ")"))
        low.append(f"{p['worst']['speedup']:.2f}x vs {peer} ({p['worst']['name']})")
        slow.append(f"{len(p['slower'])} vs {peer}")
    lines = ["geometric-mean speedup: " + ", ".join(geo)]
    if low:
        lines.append("lowest: " + "; ".join(low))
        lines.append("cases slower than the peer: " + ", ".join(slow))
    huge = summary.get("huge") or {}
    parts = []
    for bound in TARGETS:
        h = huge.get(bound)
        if h is not None:
            parts.append(f"{h['fraction']:.2f} of the {bound} limit ({h['name']}; "
                         f"target >= {h['target']})")
    if parts:
        lines.append("outputs >= 64 MiB, lowest: " + "; ".join(parts))
    if summary["wrong"]:
        lines.append(f"WRONG VALUES in {len(summary['wrong'])} case(s): "
                     + "; ".join(summary["wrong"]))
    if summary.get("torch_wrong"):
        lines.append(f"torch wrote different values in {len(summary['torch_wrong'])} case(s) "
                     f"(the torch equivalent is wrong): " + "; ".join(summary["torch_wrong"]))
    return lines


_LEGEND = ("lazybcast = view.materialize(out=out); numpy = np.copyto(out, broadcast view); "
           "torch 1t/2t = out.copy_(src.expand(...)) (permute/flip for layout cases) with "
           "torch.set_num_threads(1)/(2); limit = the faster of 1 and 2 threads of the case's "
           "bound: memset = memset of a non-zero byte, copy = memcpy of the same bytes (sources "
           "as large as the output); vs X = X's time / lazybcast's (> 1: lazybcast faster); "
           "median = vs numpy on median times; of limit = limit time / lazybcast time.")
