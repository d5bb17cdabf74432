"""Build the compiled modules of lazybcast.

Environment switches (all off by default):

* ``LAZYBCAST_BOUNDSCHECK=1``: Cython bounds and wraparound checks back on (debug build).
* ``LAZYBCAST_ASAN=1``: compile and link with AddressSanitizer (``-fsanitize=address``).
* ``LAZYBCAST_NATIVE=1``: tune for the build machine (``-march=native``); not for wheels.
"""

import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup


def _flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


debug_checks = _flag("LAZYBCAST_BOUNDSCHECK")
asan = _flag("LAZYBCAST_ASAN")

compile_args = []
link_args = []
if sys.platform != "win32":
    compile_args += ["-O3", "-fno-strict-aliasing"]
    if _flag("LAZYBCAST_NATIVE"):
        compile_args.append("-march=native")
    if asan:
        compile_args += ["-fsanitize=address", "-fno-omit-frame-pointer", "-g", "-O1"]
        link_args += ["-fsanitize=address"]

directives = {
    "language_level": 3,
    "boundscheck": debug_checks,
    "wraparound": debug_checks,
    "initializedcheck": debug_checks,
    "cdivision": True,
    "embedsignature": True,
    "freethreading_compatible": True,
}

macros = [("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")]


# The parts of the _kernels extension (see the map in its docstring).
KERNEL_PARTS = [
    "lazybcast/_kernels.pxd",
    "lazybcast/_kernels_simd.h",
    "lazybcast/_kernels_simd_fill.h",
    "lazybcast/_kernels_simd_fill_odd.h",
    "lazybcast/_kernels_simd_packed.h",
    "lazybcast/_kernels_simd_layout.h",
    "lazybcast/_kernels_simd_reverse.h",
    "lazybcast/_kernels_simd_tiles.h",
    "lazybcast/_kernels_simd_repeat.h",
    "lazybcast/_kernels_team.h",
    "lazybcast/_kernels_pool.h",
    "lazybcast/_kernels_pool_hooks.h",
    "lazybcast/_kernels_binary.h",
] + [f"lazybcast/_kernels_{unit}.pxi" for unit in
     ("machine", "calibrate", "plan", "rows", "tiles", "walk", "job", "gather", "binary",
      "overlap")]


VIEW_PARTS = [f"lazybcast/_view_{part}.pxi" for part in
              ("fields", "materialize", "operators", "methods", "pickling", "iteration",
               "basic_key", "gather_key")]


def build_jobs(extensions):
    """Extensions compiled at once: one per usable CPU, at most one per extension; one on
    Windows (MSVC sets itself up on the first compile, once). The C compiler takes most of a
    build (~80 s serial, ~46 s with two jobs on a 2-core VM). ``build_ext -j N`` on the
    command line, or ``[build_ext] parallel = N`` in a file named by ``DIST_EXTRA_CONFIG``
    (for ``pip install .``), still decides."""
    if sys.platform == "win32":
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, len(extensions)))


def extension(name, suffix=".pyx"):
    return Extension(
        f"lazybcast.{name}",
        [f"lazybcast/{name}{suffix}"],
        include_dirs=[np.get_include()],
        define_macros=macros,
        extra_compile_args=compile_args,
        extra_link_args=link_args,
        depends={"_kernels": KERNEL_PARTS, "_view": VIEW_PARTS}.get(name, []),
    )


EXTENSIONS = [
    extension("_kernels"),
    extension("_view"),
    # Pure-Python modules on the wrapping and indexing paths, compiled for speed; the .py stays the
    # readable source (and what runs from a source checkout without a build).
    extension("_rules", ".py"),
    extension("_api", ".py"),
    extension("_indexing", ".py"),
    extension("_gather", ".py"),
]

setup(
    ext_modules=cythonize(EXTENSIONS, compiler_directives=directives),
    options={"build_ext": {"parallel": build_jobs(EXTENSIONS)}},
)
