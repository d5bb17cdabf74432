"""The README's examples and every module's docstring examples run and pass.

Compiled modules are included: Cython keeps their docstrings (and a ``__test__`` table), so
``doctest.testmod`` finds the examples of ``lazybcast._view`` and ``lazybcast._kernels`` too.
"""

import doctest
import importlib
import pathlib
import pkgutil

import pytest

import lazybcast

ROOT = pathlib.Path(__file__).resolve().parents[1]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

#: Modules known to carry examples: each must run at least one.
WITH_EXAMPLES = {
    "lazybcast",
    "lazybcast._along_axis",
    "lazybcast._api",
    "lazybcast._batches",
    "lazybcast._elementwise",
    "lazybcast._gufuncs",
    "lazybcast._joining",
    "lazybcast._masks",
    "lazybcast._moments",
    "lazybcast._nonzero",
    "lazybcast._norms",
    "lazybcast._quantiles",
    "lazybcast._repetition",
    "lazybcast._reshape",
    "lazybcast._rules",
    "lazybcast._take",
    "lazybcast._view",
}

#: Importing it runs the command line.
SKIP = {"lazybcast.__main__"}


def _modules():
    names = ["lazybcast"]
    for info in pkgutil.iter_modules(lazybcast.__path__, "lazybcast."):
        if info.name not in SKIP:
            names.append(info.name)
    return sorted(set(names))  # a path extended to an installed copy may list a module twice


def test_readme():
    readme = ROOT / "README.md"
    result = doctest.testfile(str(readme), module_relative=False, optionflags=FLAGS, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0


def test_every_module_is_found():
    found = set(_modules())
    assert WITH_EXAMPLES <= found
    assert {"lazybcast._kernels", "lazybcast._view"} <= found


@pytest.mark.parametrize("name", _modules())
def test_module_doctests(name):
    try:
        module = importlib.import_module(name)
    except ImportError as e:  # a module behind an optional extra (e.g. dask)
        pytest.skip(f"{name} needs an optional dependency: {e}")
    result = doctest.testmod(module, optionflags=FLAGS, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {name}"
    if name in WITH_EXAMPLES:
        assert result.attempted > 0, f"no doctest ran in {name}"
