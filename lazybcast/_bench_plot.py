"""The chart of ``python -m lazybcast bench --plot FILE.png`` (needs matplotlib: the plot extra).

Three panels, readable without the table:

* left, one row per case, sorted: how many times faster lazybcast is than NumPy (bars) and
  than torch with 1 and 2 threads (markers), on a log axis with a line at 1x (left of it:
  slower);
* top right: throughput (GB/s of output written) against output size for lazybcast, NumPy
  and torch (best of its two thread counts), with the write limits (non-zero ``memset``; a
  ``memcpy`` for sources as large as the output) as lines;
* bottom right: for outputs of 64 MiB or more, the fraction of the limit each case reaches,
  with the targets (0.9 of the ``memset``, 0.7 of the copy).
"""

from lazybcast._bench_report import TARGETS
from lazybcast._bench_machine import cpu_line

__all__ = ["plot", "plot_problem"]

COLORS = {"lazybcast": "tab:blue", "numpy": "tab:orange", "torch 1t": "tab:green",
          "torch 2t": "tab:red", "memset": "black", "copy": "0.45"}


def plot_problem():
    """None when the chart can be drawn, else why not (matplotlib missing)."""
    try:
        import matplotlib  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except ImportError:
        return ("matplotlib is not installed (python -m pip install 'lazybcast[plot]' "
                "installs it)")
    return None


def _fmt(v):
    if v is None:
        return "n/a"
    return f"{v:.2f}x" if v < 10 else f"{v:.0f}x"


def _speedups(ax, results):
    rows = sorted(results, key=lambda r: r["speedup"])
    ys = range(len(rows))
    ax.barh(ys, [r["speedup"] - 1 for r in rows], left=1, height=0.7, color=COLORS["numpy"],
            alpha=0.75, label="vs NumPy np.copyto", zorder=2)
    for peer, key, marker in (("torch 1t", "speedup_torch_1t", "o"),
                              ("torch 2t", "speedup_torch_2t", "D")):
        pts = [(r[key], y) for y, r in zip(ys, rows) if r.get(key) is not None]
        if pts:
            ax.scatter(*zip(*pts), marker=marker, s=16, color=COLORS[peer], zorder=3,
                       label=f"vs torch copy_, {peer[-2]} thread" + ("s" if peer[-2] != "1"
                                                                      else ""))
    ax.axvline(1.0, color="black", lw=1, zorder=4)
    ax.set_xscale("log")
    ax.set_yticks(list(ys))
    ax.set_yticklabels([r["name"] for r in rows], fontsize=6.5)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    # The numbers, in a column right of the plot: NumPy, torch 1t, torch 2t.
    where = ax.get_yaxis_transform()  # x in axes fraction, y in data
    for x, key, peer in ((1.02, "speedup", "numpy"), (1.11, "speedup_torch_1t", "torch 1t"),
                         (1.20, "speedup_torch_2t", "torch 2t")):
        ax.text(x, len(rows) - 0.2, peer.replace("numpy", "NumPy"), transform=where,
                fontsize=6.5, color=COLORS[peer], va="bottom", clip_on=False)
        for y, r in zip(ys, rows):
            ax.text(x, y, _fmt(r.get(key)), transform=where, va="center", fontsize=6.5,
                    color=COLORS[peer], clip_on=False)
    ax.set_xlabel("speedup: the peer's time / lazybcast's time (log; right of 1x: "
                  "lazybcast faster)", fontsize=8)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("materialize(out=) speedup per case, sorted", fontsize=10)


def _throughput(ax, results):
    rows = sorted(results, key=lambda r: r["nbytes"])

    def gbs(r, key):
        t = r["times"].get(key)
        return None if t is None else r["nbytes"] / t["best"] / 1e9

    for bound, style in (("memset", "-"), ("copy", "--")):
        best = {}  # output size -> the fastest limit measured at that size
        for r in rows:
            keys = [k for k in (f"{bound} 1t", f"{bound} 2t") if k in r["times"]]
            if keys:
                best[r["nbytes"]] = max([best.get(r["nbytes"], 0)]
                                        + [gbs(r, k) for k in keys])
        pts = sorted(best.items())
        if len(pts) > 1:
            ax.plot(*zip(*pts), style, color=COLORS[bound], lw=1.2, alpha=0.8, zorder=2,
                    label="limit: memset of a non-zero byte" if bound == "memset"
                    else "limit: memcpy (sources as large as the output)")
    series = [("lazybcast", "lazybcast materialize(out=)", "o", 18),
              ("numpy", "NumPy np.copyto", "s", 12)]
    for key, label, marker, size in series:
        pts = [(r["nbytes"], gbs(r, key)) for r in rows]
        ax.scatter(*zip(*pts), marker=marker, s=size, color=COLORS[key], alpha=0.8,
                   label=label, zorder=4 if key == "lazybcast" else 3)
    pts = []
    for r in rows:
        vals = [v for v in (gbs(r, "torch 1t"), gbs(r, "torch 2t")) if v is not None]
        if vals:
            pts.append((r["nbytes"], max(vals)))
    if pts:
        ax.scatter(*zip(*pts), marker="^", s=12, color=COLORS["torch 2t"], alpha=0.7,
                   label="torch copy_ (faster of 1 and 2 threads)", zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("output size (bytes)", fontsize=8)
    ax.set_ylabel("GB/s of output written", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="best", fontsize=6.5, framealpha=0.8)
    ax.set_title("throughput against output size, with the write limits", fontsize=10)


def _fractions(ax, results):
    rows = sorted((r for r in results if "huge" in r["tags"]),
                  key=lambda r: r["fraction_of_limit"])
    if not rows:
        ax.text(0.5, 0.5, "no output of 64 MiB or more in this run", ha="center",
                va="center", transform=ax.transAxes, fontsize=9)
        ax.set_axis_off()
        return
    ys = range(len(rows))
    ax.barh(ys, [r["fraction_of_limit"] for r in rows], height=0.7,
            color=[COLORS["lazybcast"] if r["bound"] == "memset" else "tab:purple"
                   for r in rows], alpha=0.8)
    for bound, target in TARGETS.items():
        if any(r["bound"] == bound for r in rows):
            ax.axvline(target, color=COLORS[bound], ls=":" if bound == "memset" else "--",
                       lw=1, label=f"target {target} of the {bound} limit")
    ax.set_yticks(list(ys))
    ax.set_yticklabels([f"{r['name']} [{r['bound']}]" for r in rows], fontsize=6.5)
    ax.set_xlim(0, max(1.05, max(r["fraction_of_limit"] for r in rows) * 1.05))
    ax.set_xlabel("fraction of the write limit (limit time / lazybcast time)", fontsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize=7)
    ax.set_title("outputs of 64 MiB or more: fraction of the write limit\n"
                 "(blue: memset bound; purple: copy bound)", fontsize=9)


def plot(report, path):
    """plot(report, path)

    Draw the chart of a bench ``report`` (the dict ``run`` writes as JSON) into ``path``.
    """
    import matplotlib  # type: ignore[import-not-found, unused-ignore]  # the plot extra

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # type: ignore[import-not-found, unused-ignore]

    results = report["results"]
    width, height = 17.0, max(7.5, 0.15 * len(results) + 2.0)
    fig = plt.figure(figsize=(width, height), dpi=110)

    def axes(left, bottom, w, h):  # a rectangle in inches
        return fig.add_axes((left / width, bottom / height, w / width, h / height))

    top = height - 1.0  # room for the title
    _speedups(axes(3.4, 0.7, 4.6, top - 0.9), results)
    right_h = top - 0.7
    _throughput(axes(10.1, 0.7 + right_h * 0.45 + 0.5, 6.6, right_h * 0.55 - 0.6), results)
    _fractions(axes(13.2, 0.7, 3.5, right_h * 0.45 - 0.4), results)
    m, s = report["machine"], report["summary"]
    geo = [f"{s['peers'][p]['geomean']:.2f}x over {p}" for p in ("numpy", "torch 1t", "torch 2t")
           if s["peers"][p]["geomean"] is not None]
    fig.suptitle(f"lazybcast materialize(), {s['cases']} cases: geometric mean "
                 + ", ".join(geo) + f"\n{cpu_line(m)}; kernels "
                 + (" + ".join(m.get("simd") or []) or "portable") + f"; {m.get('date')}; "
                 f"NumPy {m.get('numpy')}, torch {m.get('torch') or 'n/a'}", fontsize=10)
    fig.savefig(path)
    plt.close(fig)
