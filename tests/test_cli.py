"""The command line: ``python -m lazybcast {bench,info}``.

``info`` is checked against NumPy: the same request written as ``np.broadcast_to`` of the data
with its axes placed by hand gives the output shape, the strides of the non-trivial axes and
which axes are broadcast. Subprocesses run from a temporary directory with the lazybcast the
tests import.
"""

import ast
import contextlib
import io
import os
import site
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazybcast
from lazybcast._cli import main


def _env():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    parent = Path(lazybcast.__file__).resolve().parent.parent
    site_dirs = {Path(p).resolve() for p in site.getsitepackages() + [site.getusersitepackages()]}
    if parent not in site_dirs:  # an in-place build
        env["PYTHONPATH"] = str(parent)
    return env


@pytest.fixture
def cli(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "lazybcast", *args], cwd=tmp_path,
                              env=_env(), capture_output=True, text=True, timeout=120)
    return run


def _field(text, label):
    """The value after ``label`` on its line of ``info`` output."""
    for line in text.splitlines():
        if line.strip().startswith(label):
            return line.strip()[len(label):].strip()
    raise AssertionError(f"no {label!r} line in:\n{text}")


def _tuple_field(text, label):
    value = _field(text, label)
    return ast.literal_eval(value[:value.index(")") + 1])


def _check_info(text, placed, out_shape):
    """Compare ``info`` output with NumPy: ``placed`` is the data with its axes already in
    their output positions (size-1 axes inserted), broadcast by NumPy to ``out_shape``."""
    expected = np.broadcast_to(placed, out_shape)
    assert _tuple_field(text, "output shape") == expected.shape
    strides = _tuple_field(text, "strides")
    assert len(strides) == expected.ndim
    for d, n in enumerate(expected.shape):
        # NumPy's stride on a size-1 axis is arbitrary; lazybcast reports 0 there.
        assert strides[d] == (expected.strides[d] if n > 1 else 0), (d, strides, expected.strides)
    broadcast = [d for d in range(expected.ndim) if placed.shape[d] == 1 and out_shape[d] != 1]
    listed = _field(text, "broadcast axes")
    assert listed == (", ".join(map(str, broadcast)) if broadcast else "none")
    logical = int(np.prod(out_shape)) * placed.itemsize
    assert _field(text, "logical bytes").split(" B")[0].replace(",", "") == str(logical)
    assert _field(text, "bytes held").split(" B")[0].replace(",", "") == str(placed.nbytes)


# The specification's examples, each with the NumPy equivalent of its axis placement.
SPEC_CASES = [
    (["--data-shape", "16", "--target", "1,16,50,50", "--mode", "explicit", "--axes", "1"],
     lambda a: a[None, :, None, None], (16,), (1, 16, 50, 50), "float32"),
    (["--data-shape", "50,50", "--target", "1,50,50,16", "--mode", "explicit", "--axes", "1,2"],
     lambda a: a[None, :, :, None], (50, 50), (1, 50, 50, 16), "float32"),
    (["--data-shape", "16,1,1", "--target", "1,16,50,50", "--dtype", "int8"],
     lambda a: a[None], (16, 1, 1), (1, 16, 50, 50), "int8"),
    (["--data-shape", "3,1", "--target", "2,1,6", "--mode", "bidirectional", "--dtype", "f8"],
     lambda a: a[None], (3, 1), (2, 3, 6), "float64"),
    (["--data-shape", "3,4", "--target", "2,1,4,5", "--mode", "pdpd", "--axis", "1",
      "--dtype", "complex128"],
     lambda a: a[None, :, :, None], (3, 4), (2, 3, 4, 5), "complex128"),
]


@pytest.mark.parametrize("args, place, data_shape, out_shape, dtype", SPEC_CASES,
                         ids=["explicit-1", "explicit-2", "numpy", "bidirectional", "pdpd"])
def test_info_spec_examples(cli, args, place, data_shape, out_shape, dtype):
    proc = cli("info", *args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    _check_info(proc.stdout, place(np.empty(data_shape, dtype)), out_shape)


def test_info_issue_example_text(cli):
    proc = cli("info", "--data-shape", "16", "--target", "1,16,50,50", "--mode", "explicit",
               "--axes", "1")
    assert proc.returncode == 0
    assert "output shape  (1, 16, 50, 50)" in proc.stdout
    assert "strides       (0, 4, 0, 0)" in proc.stdout
    assert "broadcast axes  2, 3" in proc.stdout
    assert "logical bytes   160,000 B (160.0 kB)" in proc.stdout
    assert "bytes held      64 B" in proc.stdout


def test_info_huge_data_allocates_nothing(cli):
    # 1e15 bytes of data, 1e17 logical: only possible if nothing is allocated.
    proc = cli("info", "--data-shape", "100000,100000,100000", "--target", "100,1,1,1",
               "--mode", "bidirectional", "--dtype", "uint8")
    assert proc.returncode == 0, proc.stderr
    assert _tuple_field(proc.stdout, "output shape") == (100, 100000, 100000, 100000)
    assert _tuple_field(proc.stdout, "strides") == (0, 10**10, 10**5, 1)
    assert _field(proc.stdout, "bytes held").startswith("1,000,000,000,000,000 B")


@pytest.mark.parametrize("args, call", [
    (["--data-shape", "3,1,5", "--target", "4,4,5", "--mode", "bidirectional"],
     lambda d: lazybcast.broadcast(d, [4, 4, 5], mode="bidirectional")),
    (["--data-shape", "16", "--target", "1,16,50,50", "--mode", "explicit"],
     lambda d: lazybcast.broadcast(d, [1, 16, 50, 50], mode="explicit")),
    (["--data-shape", "16", "--target", "1,16,50,50", "--mode", "explicit", "--axes", "2"],
     lambda d: lazybcast.broadcast(d, [1, 16, 50, 50], [2], mode="explicit")),
    (["--data-shape", "16", "--target", "16", "--mode", "sideways"],
     lambda d: lazybcast.broadcast(d, [16], mode="sideways")),
    (["--data-shape", "16", "--target=-16"], lambda d: lazybcast.broadcast(d, [-16])),
])
def test_info_reports_the_library_error(cli, args, call):
    data = np.ones(ast.literal_eval(args[1] + ","), dtype=np.float32)
    with pytest.raises((ValueError, TypeError)) as raised:
        call(data)
    proc = cli("info", *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert f"{type(raised.value).__name__}: {raised.value}" in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--data-shape", "2,x", "--target", "3"], "argument --data-shape: expected comma-separated"),
    (["--target", "3"], "the following arguments are required: --data-shape"),
    (["--data-shape", "2", "--target", "2", "--dtype", "nope"], "dtype 'nope' is not a NumPy"),
    (["--data-shape", "2", "--target", "2", "--axis", "one"], "argument --axis: invalid int"),
])
def test_info_bad_arguments(cli, args, message):
    proc = cli("info", *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", [[], ["bench"], ["info"]])
def test_help_on_every_command(cli, command):
    proc = cli(*command, "--help")
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: python -m lazybcast")
    assert "--help" in proc.stdout


def test_no_command_is_an_error(cli):
    proc = cli()
    assert proc.returncode == 2
    assert "usage:" in proc.stderr


# -- in process, randomized -----------------------------------------------------------------


def _run_main(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=5, max_side=4),
    dtype=st.sampled_from(["uint8", "int16", "float32", "complex128", "V3"]),
    mode=st.sampled_from(["numpy", "bidirectional"]),
)
def test_info_matches_numpy(shapes, dtype, mode):
    data_shape, target = shapes.input_shapes
    text = ",".join(map(str, data_shape))
    code, out, err = _run_main(["info", "--data-shape", text, "--target",
                                ",".join(map(str, target)), "--mode", mode, "--dtype", dtype])
    out_shape = np.broadcast_shapes(data_shape, target)
    if mode == "numpy" and out_shape != tuple(target):
        # NumPy's broadcast_to refuses the same requests.
        with pytest.raises(ValueError):
            np.broadcast_to(np.empty(data_shape, dtype), target)
        assert code == 2 and out == "" and "ValueError" in err
        return
    assert code == 0 and err == ""
    placed = np.empty(data_shape, dtype)[(None,) * (len(out_shape) - len(data_shape))]
    _check_info(out, placed, out_shape)
