"""The command line: ``python -m lazybcast {bench,info} ...``."""

import argparse
import sys

__all__ = ["main"]


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m lazybcast",
        description="lazybcast: broadcasting as lazy views, materialized by nogil kernels.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{bench,info}")
    bench = sub.add_parser("bench", help="time materialize() against NumPy",
                           description="Time view.materialize(out=) against "
                                       "np.copyto(out, np.broadcast_to(...)) and print ratios.")
    bench.add_argument("--quick", action="store_true", help="a handful of cases, under ~30 s")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "bench":
        from lazybcast._bench import run

        return run(quick=args.quick)
    return 2


if __name__ == "__main__":
    sys.exit(main())
