"""The command line: ``python -m lazybcast {bench,info}``.

``info`` is checked against NumPy: the same request written as ``np.broadcast_to`` of the data
with its axes placed by hand gives the output shape, the strides of the non-trivial axes and
which axes are broadcast. Subprocesses run from a temporary directory with the lazybcast the
tests import.
"""

import ast
import contextlib
import io
import json
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


# -- bench: the report's columns, machine line and files (never a timing) ----------------------

from lazybcast import _bench_machine, _bench_peers, _bench_reader  # noqa: E402
from lazybcast._bench_cases import OpCase  # noqa: E402
from lazybcast._bench_groups import groups  # noqa: E402

_TINY = ["--budget", "0.001"]
_PDPD_SMALL = "pdpd (3,4)"


def _bench(*args):
    return _run_main(["bench", *args, *_TINY])


def _table_row(out, name):
    for line in out.splitlines():
        if line.startswith(name):
            return line
    raise AssertionError(f"no row for {name!r} in:\n{out}")


def test_bench_machine_line_names_the_cpu():
    code, out, _ = _bench("-k", _PDPD_SMALL, "--no-torch")
    assert code == 0
    machine = out.splitlines()[0]
    m = _bench_machine.describe()
    assert machine.startswith("Machine: ")
    assert m["model_name"] and m["model_name"] in machine
    for level in ("L1d", "L2", "L3"):
        if level in m["caches"]:
            assert f"{level} " in machine
    assert f"{m['cores']} cores" in machine
    assert " + ".join(m["simd"]) in machine if m["simd"] else "portable C loops" in machine
    assert f"NumPy {np.__version__}" in machine
    assert "torch n/a" in machine  # --no-torch imports nothing optional
    assert m["date"][:10] in machine


def test_bench_torch_columns():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    code, out, _ = _bench("-k", _PDPD_SMALL)
    assert code == 0
    assert f"torch {torch.__version__}" in out.splitlines()[0]
    header = next(line for line in out.splitlines() if line.startswith("case"))
    for column in ("lazybcast", "numpy", "torch 1t", "torch 2t", "limit", "bound", "vs numpy",
                   "vs torch 1t", "vs torch 2t", "of limit"):
        assert column in header
    cells = _table_row(out, "pdpd (3,4) f4").split()
    assert "n/a" not in cells
    assert cells[-5].endswith("x") and cells[-2].endswith("x")  # vs numpy .. vs torch 2t
    assert "geometric-mean speedup:" in out and "over torch 2t (1 case)" in out
    assert torch.get_num_threads() == threads  # restored after the run


def test_bench_without_torch_says_na(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` raise ImportError
    code, out, err = _bench("-k", _PDPD_SMALL)
    assert code == 0, err
    assert "torch n/a" in out.splitlines()[0]
    assert "torch: n/a (not installed)" in out
    cells = _table_row(out, "pdpd (3,4) f4").split()
    assert cells.count("n/a") == 4  # two times, two ratios
    assert "torch 1t n/a, torch 2t n/a" in out


def test_bench_torch_lacking_a_dtype_says_na():
    pytest.importorskip("torch")
    code, out, _ = _bench("-k", "itemsize 3 (7,)")
    assert code == 0
    assert _table_row(out, "itemsize 3 (7,) rec3").split().count("n/a") == 4


def test_bench_json_and_markdown_files(tmp_path):
    results, readme = tmp_path / "RESULTS.md", tmp_path / "README.md"
    results.write_text("# Results\n\nbefore\n<!-- bench:begin -->\nold\n<!-- bench:end -->\n"
                       "after\n")
    readme.write_text("intro\n<!-- bench-summary:begin -->\nold\n<!-- bench-summary:end -->\n"
                      "rest\n")
    path = tmp_path / "r.json"
    code, _, err = _bench("-k", "transposed (1024,1024)", "--no-torch", "--json", str(path),
                          "--markdown", str(results), "--markdown", str(readme))
    assert code == 0, err
    report = json.loads(path.read_text())
    machine = report["machine"]
    for key in ("vendor", "family", "model", "model_name", "caches", "cores", "simd", "date",
                "numpy", "torch"):
        assert key in machine
    (r,) = report["results"]
    assert r["bound"] == "copy" and r["limit"] in ("copy 1t", "copy 2t")
    assert r["source_nbytes"] == r["nbytes"]
    assert r["speedup"] > 0 and r["speedup_torch_1t"] is None and r["correct"]
    assert set(r["times"]) == {"lazybcast", "numpy", "memset 1t", "memset 2t", "copy 1t",
                               "copy 2t"}
    text = results.read_text()
    assert text.startswith("# Results\n\nbefore\n<!-- bench:begin -->\nRun: `python -m lazybcast")
    assert text.endswith("<!-- bench:end -->\nafter\n") and "old" not in text
    assert "Machine: " + _bench_machine.cpu_line(machine) in text
    assert "| `transposed (1024,1024).T f4 -> (1024,1024)` |" in text
    summary = readme.read_text()
    assert summary.startswith("intro\n<!-- bench-summary:begin -->\nMeasured on ")
    assert _bench_machine.cpu_line(machine) in summary
    assert "| transposed sources (2-D) | 1 |" in summary and "old" not in summary
    assert summary.endswith("<!-- bench-summary:end -->\nrest\n")


def test_bench_bound_is_a_memset_for_broadcasts(tmp_path):
    path = tmp_path / "r.json"
    code, _, _ = _bench("-k", _PDPD_SMALL, "--no-torch", "--json", str(path))
    assert code == 0
    (r,) = json.loads(path.read_text())["results"]
    assert r["bound"] == "memset" and r["limit"] in ("memset 1t", "memset 2t")
    assert "copy 1t" not in r["times"]


def test_bench_scaling_table():
    code, out, _ = _bench("-k", "row (64,) f4 -> (16384,64)", "--scaling", "--no-torch")
    assert code == 0
    assert "threads: materialize(threads=1) against threads=2" in out
    assert _table_row(out.split("threads: ")[1], "row (64,) f4 -> (16384,64)").split()[-2:] \
        == ["n/a", "n/a"]


def test_bench_plot_skipped_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    png = tmp_path / "chart.png"
    code, out, err = _bench("-k", _PDPD_SMALL, "--no-torch", "--plot", str(png))
    assert code == 0
    assert "matplotlib is not installed" in err and "no chart" in err
    assert not png.exists()
    assert _table_row(out, "pdpd (3,4) f4")


def test_bench_plot(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "chart.png"
    code, _, err = _bench("-k", "pdpd", "--no-torch", "--plot", str(png))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- bench: extra case groups -------------------------------------------------------------------

_GROUP_MODULE = '''
import numpy as np
import lazybcast
from lazybcast._bench_cases import Case, OpCase

TITLE = "test group"
_src = np.arange(4.0)
CASES = [
    OpCase("sum of a view", {"quick"}, lambda: {
        "lazybcast": lambda: np.asarray(lazybcast.broadcast_to(_src, (8, 4))).sum(),
        "numpy": lambda: np.broadcast_to(_src, (8, 4)).sum()}, nbytes=32),
    OpCase("wrong on purpose", set(), lambda: {
        "lazybcast": lambda: 1.0, "numpy": lambda: 2.0}),
    OpCase("raises on purpose", set(), lambda: {
        "lazybcast": lambda: 1 / 0, "numpy": lambda: 2.0}),
    Case("view case (4,) f8 -> (8,4)", (8, 4), np.float64, set(),
         lambda: lazybcast.broadcast_to(_src, (8, 4))),
]
'''


@pytest.fixture
def group_module(tmp_path, monkeypatch):
    (tmp_path / "lzb_test_bench_group.py").write_text(_GROUP_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "lzb_test_bench_group"
    sys.modules.pop("lzb_test_bench_group", None)


def test_groups_skip_missing_modules(group_module):
    assert groups(["lazybcast._no_such_module", "no_such_package.cases"]) == []
    ((title, cases),) = groups([group_module, "lazybcast._no_such_module"])
    assert title == "test group" and len(cases) == 4


def test_bench_runs_extra_groups(group_module):
    from lazybcast._bench import run

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = run(pattern="e", budget=0.001, torch=False, extra_groups=[group_module],
                   max_bytes=1 << 10)
    text = out.getvalue()
    assert "test group:" in text
    assert _table_row(text, "sum of a view").count("n/a") == 4
    assert "[WRONG VALUES]" in _table_row(text, "wrong on purpose")
    assert "[ERROR: ZeroDivisionError" in _table_row(text, "raises on purpose")
    assert _table_row(text, "view case (4,) f8 -> (8,4)")
    assert code == 1  # a wrong value in any group fails the run


def test_a_broken_group_is_skipped_with_a_note(tmp_path, monkeypatch):
    (tmp_path / "lzb_test_bad_group.py").write_text("CASES = [object()]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match="must hold lazybcast._bench_cases.OpCase or Case"):
        groups(["lzb_test_bad_group"])
    from lazybcast._bench import run

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(pattern="pdpd (3,4)", budget=0.001, torch=False,
                   extra_groups=["lzb_test_bad_group"])
    sys.modules.pop("lzb_test_bad_group", None)
    assert code == 0
    assert "note: case group lzb_test_bad_group skipped: TypeError" in err.getvalue()
    assert _table_row(out.getvalue(), "pdpd (3,4) f4")


def test_opcase_checks_its_impls():
    case = OpCase("bad", (), lambda: {"numpy": lambda: 0, "jax": lambda: 0})
    with pytest.raises(ValueError, match=r"missing \['lazybcast'\], unknown \['jax'\]"):
        case()


@pytest.mark.parametrize("case", _bench_reader.CASES, ids=lambda case: case.name)
def test_reader_group_sums_what_numpy_sums(case):
    # Every peer's copy-then-sum returns NumPy's sum of a C-ordered copy of
    # np.broadcast_to(source, shape) (the same summation order), twice in a row (the bench
    # times the second call, after the first wrote the output). Each peer runs in a case
    # of its own, the other peers' outputs unwritten: a peer that summed another's output
    # would not find the values there.
    name, impls, tags = case()
    src_shape, shape, dtype = _bench_reader.SHAPES[name]
    expected = np.broadcast_to(_bench_reader.source(src_shape, dtype), shape).copy().sum()
    assert "reader" in tags and case.nbytes == np.prod(shape) * np.dtype(dtype).itemsize
    for peer in impls:
        fn = case()[1][peer]
        assert fn() == expected and fn() == expected, (name, peer)


# -- bench: the torch equivalent writes NumPy's values; machine parsing ---------------------------

@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=1, min_dims=1, max_dims=4, max_side=5),
    dtype=st.sampled_from(["uint8", "int16", "float32", "float64", "complex64"]),
    flip=st.lists(st.booleans(), min_size=4, max_size=4),
    permute=st.booleans(),
)
def test_torch_copy_matches_numpy(shapes, dtype, flip, permute):
    torch = pytest.importorskip("torch")
    (src_shape,), out_shape = shapes.input_shapes, shapes.result_shape
    src = (np.arange(int(np.prod(src_shape)), dtype=np.int64) % 97 + 1).astype(dtype)
    src = src.reshape(src_shape)
    if permute:
        src = np.ascontiguousarray(src.T).T  # same values, transposed layout
    src = src[tuple(slice(None, None, -1) if f else slice(None) for f in flip[:src.ndim])]
    ref = np.broadcast_to(src, out_shape)
    out = np.zeros(out_shape, dtype)
    fn, what = _bench_peers.torch_copy(torch, ref, out)
    result = fn().numpy()
    assert np.array_equal(result, ref), what


def test_source_bytes():
    assert _bench_peers.source_bytes(np.broadcast_to(np.ones((3, 1), np.int16), (3, 7))) == 6
    assert _bench_peers.source_bytes(np.ones((4, 5))[::-1].T) == 160


@pytest.mark.parametrize("text, size", [("32K", 32768), ("32768K", 32 << 20), ("1M", 1 << 20),
                                        ("512 KB", 512 << 10), ("7", 7), ("", None),
                                        ("lots", None)])
def test_parse_cache_size(text, size):
    assert _bench_machine._parse_size(text) == size


def test_machine_without_proc_or_sysfs(monkeypatch):
    monkeypatch.setattr(_bench_machine, "_read", lambda path: None)
    monkeypatch.setattr(_bench_machine.platform, "system", lambda: "Linux")
    monkeypatch.setattr(_bench_machine.platform, "processor",
                        lambda: "AMD64 Family 25 Model 1 Stepping 1, AuthenticAMD")
    m = _bench_machine.describe()
    assert (m["vendor"], m["family"], m["model"]) == ("AuthenticAMD", "25", "1")
    assert m["caches"] == {}
    line = _bench_machine.machine_line(m)
    assert "(AuthenticAMD family 25 model 1), cache sizes unknown" in line


def test_machine_line_says_how_much_of_a_large_l3_is_counted():
    """A VM's L3 larger than the kernels count on (at most 32 L2s per CPU sharing it) is shown
    with the count beside it; an L3 counted whole is shown alone."""
    m = {"model_name": "Intel(R) Xeon(R) Processor", "vendor": "GenuineIntel", "family": "6",
         "model": "167", "caches": {"L1d": 48 << 10, "L2": 2 << 20, "L3": 480 << 20},
         "l3_counted": 128 << 20, "cores": 2}
    assert _bench_machine.cpu_line(m) == (
        "Intel(R) Xeon(R) Processor (GenuineIntel family 6 model 167), L1d 48 KiB, L2 2 MiB, "
        "L3 480 MiB (128 MiB counted), 2 cores")
    m.update(caches={"L1d": 48 << 10, "L2": 1 << 20, "L3": 32 << 20}, l3_counted=32 << 20)
    assert _bench_machine.cpu_line(m).endswith("L2 1 MiB, L3 32 MiB, 2 cores")
    # (where the kernels found no shared cache in sysfs and count 32 MiB, while the machine
    # description read a smaller L3 elsewhere: that L3 alone, not a count above it)
    m.update(caches={"L1d": 32 << 10, "L2": 256 << 10, "L3": 8 << 20}, l3_counted=32 << 20)
    assert _bench_machine.cpu_line(m).endswith("L2 256 KiB, L3 8 MiB, 2 cores")
