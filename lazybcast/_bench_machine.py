"""The machine line of ``python -m lazybcast bench``: which CPU, caches and versions a table is from.

A benchmark figure means little without the CPU it was measured on: the kernels' choices
(vector paths, streaming stores, when a second thread pays) and the write limit depend on it.
:func:`describe` collects it once per run, :func:`machine_line` renders it as one line (printed
before the table, and written into ``RESULTS.md`` and the README).

On Linux the CPU comes from ``/proc/cpuinfo`` (vendor, family, model, model name) and the cache
sizes from ``/sys/devices/system/cpu/cpu0/cache/index*/``; on macOS from ``sysctl``; elsewhere
from :func:`platform.processor` (cache sizes then unknown).

>>> line = machine_line({"vendor": "AuthenticAMD", "family": "25", "model": "1",
...     "model_name": "AMD EPYC", "caches": {"L1d": 32768, "L2": 524288, "L3": 33554432},
...     "cores": 2, "simd": ["SSE2", "AVX2"], "date": "2026-11-23 19:00 UTC",
...     "python": "3.11.7", "numpy": "2.4.6", "torch": None, "lazybcast": "0.1.0",
...     "commit": None})
>>> print(line)
AMD EPYC (AuthenticAMD family 25 model 1), L1d 32 KiB, L2 512 KiB, L3 32 MiB, 2 cores; kernels SSE2 + AVX2; 2026-11-23 19:00 UTC; Python 3.11.7, NumPy 2.4.6, torch n/a, lazybcast 0.1.0
"""

import datetime
import glob
import os
import platform
import re
import subprocess

__all__ = ["describe", "machine_line", "cpu_line"]

_SYS_CACHE = "/sys/devices/system/cpu/cpu0/cache"


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _parse_size(text):
    """``"32K"``, ``"32768K"``, ``"1M"``, ``"512 KB"`` -> bytes (None if unreadable)."""
    found = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", text or "", re.I)
    if not found:
        return None
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[found.group(2).upper()]
    return int(found.group(1)) * scale


def _linux_cpu():
    text = _read("/proc/cpuinfo")
    if not text:
        return {}
    first = text.split("\n\n", 1)[0]  # the first processor's block
    fields = {}
    for line in first.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return {
        "vendor": fields.get("vendor_id") or fields.get("CPU implementer"),
        "family": fields.get("cpu family") or fields.get("CPU architecture"),
        "model": fields.get("model") or fields.get("CPU part"),
        "model_name": fields.get("model name") or fields.get("Model name")
        or fields.get("Processor"),
    }


def _linux_caches():
    """{"L1d": bytes, "L1i": ..., "L2": ..., "L3": ...} of cpu0, from sysfs."""
    caches = {}
    for index in sorted(glob.glob(os.path.join(_SYS_CACHE, "index*"))):
        level = (_read(os.path.join(index, "level")) or "").strip()
        kind = (_read(os.path.join(index, "type")) or "").strip()
        size = _parse_size(_read(os.path.join(index, "size")))
        if not level or size is None:
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        caches[f"L{level}{suffix}"] = size
    return caches


def _sysctl(*names):
    try:
        done = subprocess.run(["sysctl", "-n", *names], capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.SubprocessError):
        return [None] * len(names)
    values = done.stdout.splitlines()
    return values + [None] * (len(names) - len(values))


def _macos():
    brand, l1d, l2, l3 = _sysctl("machdep.cpu.brand_string", "hw.l1dcachesize",
                                 "hw.l2cachesize", "hw.l3cachesize")
    caches = {key: int(v) for key, v in (("L1d", l1d), ("L2", l2), ("L3", l3))
              if v and v.strip().isdigit() and int(v) > 0}
    return {"model_name": brand}, caches


def _fallback_cpu():
    # Windows: "AMD64 Family 25 Model 1 Stepping 1, AuthenticAMD".
    text = platform.processor() or platform.machine()
    found = re.search(r"Family (\d+) Model (\d+).*?,\s*(\S+)", text)
    if found:
        return {"vendor": found.group(3), "family": found.group(1), "model": found.group(2),
                "model_name": text}
    return {"model_name": text}


def _commit():
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        done = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def describe(torch=None):
    """describe(torch=None)

    The machine as a dict: ``vendor``, ``family``, ``model``, ``model_name``, ``caches``
    (level -> bytes, cpu0's view), ``cores``, ``simd`` (the kernels' vector paths in use),
    ``l3_counted`` (the shared cache the kernels' thresholds count on: the L3 reported; in
    a virtual machine at most 32 L2s per CPU sharing it), ``date`` (UTC), ``python``,
    ``numpy``, ``torch`` (the
    version of the ``torch`` module passed, None without one: this function imports nothing
    optional), ``lazybcast``, ``commit``, ``platform``. Unknown fields are None.
    """
    import numpy as np

    from lazybcast import __version__
    from lazybcast._kernels import L3_BYTES, simd_features

    system = platform.system()
    if system == "Linux":
        cpu, caches = _linux_cpu(), _linux_caches()
    elif system == "Darwin":
        cpu, caches = _macos()
    else:
        cpu, caches = {}, {}
    if not cpu.get("model_name"):
        cpu = {**_fallback_cpu(), **{k: v for k, v in cpu.items() if v}}
    return {
        "vendor": cpu.get("vendor"),
        "family": cpu.get("family"),
        "model": cpu.get("model"),
        "model_name": cpu.get("model_name"),
        "caches": caches,
        "l3_counted": L3_BYTES,
        "cores": os.cpu_count(),
        "simd": list(simd_features()),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": None if torch is None else getattr(torch, "__version__", "unknown"),
        "lazybcast": __version__,
        "commit": _commit(),
        "platform": platform.platform(),
    }


def _fmt_cache(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def cpu_line(m):
    """The CPU part of the machine line: model name, vendor/family/model, caches, cores."""
    name = m.get("model_name") or "unknown CPU"
    ids = " ".join(part for part in (
        m.get("vendor"),
        f"family {m['family']}" if m.get("family") else None,
        f"model {m['model']}" if m.get("model") else None,
    ) if part)
    text = name + (f" ({ids})" if ids else "")
    caches = m.get("caches") or {}
    shown = [f"{level} {_fmt_cache(caches[level])}" for level in ("L1d", "L2", "L3")
             if level in caches]
    counted = m.get("l3_counted")
    if "L3" in caches and counted and counted < caches["L3"]:
        shown[-1] += f" ({_fmt_cache(counted)} counted)"  # (a VM's share of its host's)
    text += ", " + (", ".join(shown) if shown else "cache sizes unknown")
    return text + f", {m.get('cores')} cores"


def machine_line(m):
    """machine_line(m)

    One line naming the CPU, its caches, the kernels' vector paths, the date and the versions,
    from a :func:`describe` dict.
    """
    simd = " + ".join(m.get("simd") or []) or "portable C loops"
    versions = (f"Python {m.get('python')}, NumPy {m.get('numpy')}, "
                f"torch {m.get('torch') or 'n/a'}, lazybcast {m.get('lazybcast')}"
                + (f" (commit {m['commit']})" if m.get("commit") else ""))
    return f"{cpu_line(m)}; kernels {simd}; {m.get('date')}; {versions}"
