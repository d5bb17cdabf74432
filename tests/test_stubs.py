"""The hand-written stubs (``lazybcast/*.pyi``) match the compiled modules.

Runs ``python -m mypy.stubtest lazybcast`` in a subprocess against the lazybcast that the tests
import (an in-place build or the installed package), from a temporary directory so that the
source tree cannot shadow it.
"""

import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

import lazybcast

ALLOWLIST = Path(__file__).with_name("stubtest_allowlist.txt")


def _environment():
    """The subprocess environment: the same lazybcast for Python and for mypy."""
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    parent = Path(lazybcast.__file__).resolve().parent.parent
    site_dirs = {Path(p).resolve() for p in site.getsitepackages() + [site.getusersitepackages()]}
    if parent not in site_dirs:  # an in-place build: point both at the tree
        env["PYTHONPATH"] = str(parent)
        env["MYPYPATH"] = str(parent)
    return env


@pytest.mark.slow
def test_stubs_match_build(tmp_path):
    pytest.importorskip("mypy.stubtest")
    env = _environment()
    where = subprocess.run(
        [sys.executable, "-c", "import lazybcast._view as m; print(m.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert Path(where).resolve() == Path(lazybcast._view.__file__).resolve()
    package = Path(where).parent
    for name in ("_view.pyi", "_kernels.pyi", "_api.pyi", "py.typed"):
        assert (package / name).is_file(), f"{name} is not shipped next to the build"
    # Every compiled module has a stub, unless it is compiled from a .py (its own source then
    # types it; that .py may live in the source tree while the build is installed).
    compiled = {p.name.split(".")[0] for p in package.iterdir() if p.suffix in (".so", ".pyd")}
    assert compiled >= {"_view", "_kernels"}
    sources = {package, Path(lazybcast.__file__).resolve().parent}
    missing = sorted(m for m in compiled
                     if not any((d / f"{m}.pyi").is_file() or (d / f"{m}.py").is_file()
                                for d in sources))
    assert not missing, f"compiled modules without a .pyi stub: {missing}"
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "lazybcast", "--allowlist", str(ALLOWLIST)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout
