"""Running code in a fresh interpreter, as a spawn worker, a dask worker or a new process's
first copy would (the checkout first on ``sys.path``)."""

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fresh_process(code, *args, env=None):
    """Run ``code`` (dedented) with ``args`` in a new interpreter; its stdout, or an
    AssertionError with what it printed."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)
    if done.returncode != 0:
        raise AssertionError(f"child failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout
