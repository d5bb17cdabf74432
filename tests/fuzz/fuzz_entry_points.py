"""atheris harness over every public entry point of lazybcast.

Each input is decoded by ``atheris.FuzzedDataProvider`` into one call (broadcast in every mode,
broadcast_to, broadcast_arrays, broadcast_shapes, view indexing, materialize with ``out=`` and
``threads=``, iter_batches, RowDataset, pickling) with well-formed or malformed arguments, and
checked by ``tests/hostile.py`` against NumPy or the documented mode rules: the call must return
the reference's values or raise ValueError/TypeError/IndexError. Anything else (another
exception, a wrong value, a crash) stops the run with the input saved as ``crash-*``.

Run it (the installed lazybcast, or ``PYTHONPATH=.`` for an in-place build)::

    python tests/fuzz/fuzz_entry_points.py -max_total_time=60     # seconds
    python tests/fuzz/fuzz_entry_points.py -atheris_runs=20000    # inputs
    python tests/fuzz/fuzz_entry_points.py crash-1234abcd          # replay one input

The Python modules of lazybcast (and the case generator) are instrumented for coverage; the
compiled kernels are not (that needs a clang ``-fsanitize=fuzzer`` build), so they are exercised
through the inputs the Python coverage finds. Without atheris installed, ``--random SECONDS``
drives the same cases from a seeded random generator instead.
"""

import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _random_run(seconds, seed):
    import random

    import hostile

    class RandomDrawer(hostile.Drawer):
        def __init__(self, rng):
            self._rng = rng

        def integer(self, lo, hi):
            return self._rng.randint(lo, hi)

    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    runs = 0
    while time.monotonic() < deadline:
        state = rng.getstate()
        try:
            hostile.run_case(RandomDrawer(rng))
        except BaseException:
            rng.setstate(state)
            print(f"failing case after {runs} runs (seed {seed}); replay with the same seed",
                  file=sys.stderr)
            raise
        runs += 1
    print(f"random fuzzing: {runs} cases in {seconds} s, no failure")


def main(argv):
    warnings.simplefilter("error")  # as in the test suite
    if len(argv) > 1 and argv[1] == "--random":
        seconds = float(argv[2]) if len(argv) > 2 else 30.0
        _random_run(seconds, int(os.environ.get("FUZZ_SEED", "0")))
        return
    import atheris

    with atheris.instrument_imports(include=["lazybcast", "hostile"]):
        import hostile
        import lazybcast  # noqa: F401 - instrumented for coverage

    def test_one_input(data):
        hostile.run_case(hostile.BytesDrawer(atheris.FuzzedDataProvider(data)))

    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
