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
    bench.add_argument("--json", metavar="FILE", help="save the results (and machine) as JSON")
    bench.add_argument("--plot", metavar="FILE.png",
                       help="chart throughput against output size (needs lazybcast[plot])")
    bench.add_argument("--markdown", metavar="FILE",
                       help="write the results table into FILE between its "
                            "<!-- bench:begin --> and <!-- bench:end --> markers")
    bench.add_argument("--threads", type=int, default=None, metavar="N",
                       help="pass threads=N to materialize() (default: its own choice)")
    bench.add_argument("-k", "--filter", metavar="TEXT",
                       help="only cases whose name or a tag contains TEXT")
    bench.add_argument("--max-bytes", type=int, default=None, metavar="N",
                       help="skip cases whose output is larger than N bytes")
    bench.add_argument("--scaling", action="store_true",
                       help="also time threads=1 against threads=2 for outputs >= 32 MiB")
    bench.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                       help="timing budget per case (default 1.0, 0.4 with --quick)")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "bench":
        from lazybcast._bench import run

        return run(quick=args.quick, json_path=args.json, plot_path=args.plot,
                   markdown_path=args.markdown, threads=args.threads, pattern=args.filter,
                   max_bytes=args.max_bytes, budget=args.budget, scaling=args.scaling,
                   command="python -m lazybcast " + " ".join(argv if argv is not None
                                                             else sys.argv[1:]))
    return 2


if __name__ == "__main__":
    sys.exit(main())
