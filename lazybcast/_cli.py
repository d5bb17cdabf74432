"""The command line: ``python -m lazybcast {bench,info} ...``."""

import argparse
import re
import sys

__all__ = ["main"]


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m lazybcast",
        description="lazybcast: broadcasting as lazy views, materialized by nogil kernels.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{bench,info}")
    bench = sub.add_parser(
        "bench", help="time materialize() against NumPy, torch and the write limit",
        description="Time view.materialize(out=) against np.copyto(out, np.broadcast_to(...)), "
                    "the torch equivalent with 1 and 2 threads (n/a without torch) and the "
                    "write limit (memset of a non-zero byte, or memcpy for sources as large "
                    "as the output), and print the machine line, ratios and summary.",
        epilog=_BENCH_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench.add_argument("--quick", action="store_true",
                       help="the cases tagged quick, short budget (about 20 s)")
    bench.add_argument("--json", metavar="FILE", help="save the results (and machine) as JSON")
    bench.add_argument("--plot", metavar="FILE.png",
                       help="draw the chart (needs matplotlib: lazybcast[plot]; skipped with a "
                            "note without it)")
    bench.add_argument("--markdown", metavar="FILE", action="append", default=[],
                       help="write the results between FILE's <!-- bench:begin --> / "
                            "<!-- bench:end --> markers and the short summary between its "
                            "<!-- bench-summary:begin --> / <!-- bench-summary:end --> "
                            "markers (repeatable)")
    bench.add_argument("--threads", type=_positive_int, default=None, metavar="N",
                       help="pass threads=N to materialize() (default: its own choice)")
    bench.add_argument("-k", "--filter", metavar="TEXT",
                       help="only cases whose name or a tag contains TEXT")
    bench.add_argument("--max-bytes", type=int, default=None, metavar="N",
                       help="skip cases whose output is larger than N bytes")
    bench.add_argument("--scaling", action="store_true",
                       help="also time threads=1 against threads=2 (and torch) for outputs "
                            ">= 4 MiB")
    bench.add_argument("--no-torch", action="store_true",
                       help="leave torch out (its columns say n/a)")
    bench.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                       help="timing budget per case (default 1.0, 0.4 with --quick)")
    _add_info_parser(sub)
    return parser


def main(argv=None):
    """main(argv=None)

    Run the command line on ``argv`` (default: ``sys.argv[1:]``) and return the exit code.

    Examples
    --------
    >>> main(["info", "--data-shape", "3", "--target", "2,3", "--dtype", "int16"])
    broadcast(data, (2, 3), mode='numpy')
      data shape    (3,), dtype int16 (2 B per item)
      output shape  (2, 3)
      strides       (0, 2) (bytes; 0 on broadcast axes)
    <BLANKLINE>
      axis       size data axis data size     stride
         0          2         -         1          0  broadcast (new axis)
         1          3         0         3          2
    <BLANKLINE>
      broadcast axes  0
      logical bytes   12 B
      bytes held      6 B (2.0x smaller than logical)
    0
    """
    args = _parser().parse_args(argv)
    if args.command == "bench":
        from lazybcast._bench import run

        return run(quick=args.quick, json_path=args.json, plot_path=args.plot,
                   markdown_paths=args.markdown, threads=args.threads, pattern=args.filter,
                   max_bytes=args.max_bytes, budget=args.budget, scaling=args.scaling,
                   torch=not args.no_torch,
                   command="python -m lazybcast " + " ".join(argv if argv is not None
                                                             else sys.argv[1:]))
    if args.command == "info":
        return _info(args)
    return 2


_BENCH_EXAMPLE = """\
examples:
  python -m lazybcast bench --quick
  python -m lazybcast bench -k transposed --scaling
  python -m lazybcast bench --scaling --json benchmarks/results.json \\
      --plot benchmarks/throughput.png --markdown benchmarks/RESULTS.md --markdown README.md

The last one regenerates benchmarks/RESULTS.md, results.json, the chart and the README's
summary (a few minutes on a quiet 2-core machine).
"""


# -- info -------------------------------------------------------------------------------------

_INFO_EXAMPLE = """\
example:
  python -m lazybcast info --data-shape 16 --target 1,16,50,50 --mode explicit --axes 1

Shapes are comma- or space-separated integers ("" or "()" for a scalar); write a value that
starts with a minus sign as --target=-1,2. Nothing is allocated: the data is a zero-stride
stand-in of the given shape and dtype, so any size can be explained.
"""


def _positive_int(text):
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _shape_arg(text):
    """argparse type: "1,16,50,50", "1 16 50 50", "(1, 16, 50, 50)" or "" -> tuple of int."""
    body = text.strip().strip("()[]").strip()
    if not body:
        return ()
    parts = [p for p in re.split(r"[,\s]+", body) if p]
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers such as 1,16,50,50, got {text!r}"
        ) from None


def _add_info_parser(sub):
    info = sub.add_parser(
        "info",
        help="explain a broadcast without allocating it",
        description="Explain lazybcast.broadcast(data, target_shape, axes_mapping, mode=, axis=) "
                    "for data of a given shape and dtype: the output shape, the stride map, "
                    "which axes are broadcast, and logical bytes against the bytes held. An "
                    "invalid request prints the error the library raises (exit code 2).",
        epilog=_INFO_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    info.add_argument("--data-shape", required=True, type=_shape_arg, metavar="SHAPE",
                      help="shape of the data, e.g. 16 or 16,1,1")
    info.add_argument("--target", required=True, type=_shape_arg, metavar="SHAPE",
                      help="target_shape, e.g. 1,16,50,50")
    info.add_argument("--mode", default="numpy",
                      help="numpy (default), explicit, bidirectional or pdpd")
    info.add_argument("--axes", type=_shape_arg, default=None, metavar="AXES",
                      help="axes_mapping for --mode explicit, e.g. 1 or 1,2")
    info.add_argument("--axis", type=int, default=-1,
                      help="for --mode pdpd: the output axis of data axis 0 (default -1: "
                           "right-aligned)")
    info.add_argument("--dtype", default="float32",
                      help="NumPy dtype of the data (default float32)")


def _data_axes(mode, data_ndim, out_ndim, axes_mapping, axis):
    """Output axis of each data axis, for display: where the rules of ``mode`` put it."""
    if mode == "explicit":
        return list(axes_mapping)[:data_ndim]
    if mode == "pdpd" and axis >= 0:
        return [axis + i for i in range(data_ndim)]
    return [out_ndim - data_ndim + i for i in range(data_ndim)]


def _bytes(n):
    from lazybcast._view import _format_bytes

    return f"{n:,} B" if n < 1000 else f"{n:,} B ({_format_bytes(n)})"


def _info(args):
    import numpy as np

    import lazybcast
    from lazybcast._rules import as_shape, check_size, normalize_mode, plan

    try:
        try:
            dtype = np.dtype(args.dtype)
        except TypeError as exc:
            raise TypeError(f"dtype {args.dtype!r} is not a NumPy dtype: {exc}") from None
        data_shape = args.data_shape
        for i, n in enumerate(data_shape):
            if n < 0:
                raise ValueError(f"data shape {data_shape}: size {n} at axis {i} is negative; "
                                 f"sizes are >= 0")
        check_size(data_shape, dtype.itemsize, "data shape")
        # A zero-stride stand-in: costs one item whatever the data shape.
        data = np.broadcast_to(np.empty((), dtype), data_shape)
        view = lazybcast.broadcast(data, args.target, args.axes, mode=args.mode, axis=args.axis)
    except (ValueError, TypeError) as exc:
        print(f"python -m lazybcast info: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    mode = normalize_mode(args.mode)
    target = as_shape(args.target)
    axes = None if args.axes is None else as_shape(args.axes, "axes_mapping",
                                                   allow_negative=True)
    out_shape, aligned = plan(data_shape, target, axes, mode, args.axis)
    # The stride map of a view of C-contiguous data: the data's strides with the aligned
    # shape's size-1 axes inserted, 0 wherever the output axis is broadcast.
    c_strides = []
    step = dtype.itemsize
    for n in reversed(aligned):
        c_strides.append(step)
        step *= max(n, 1)
    c_strides.reverse()
    strides = tuple(c if a == n and n != 1 else 0
                    for a, n, c in zip(aligned, out_shape, c_strides))
    broadcast = [d for d, (a, n) in enumerate(zip(aligned, out_shape)) if a == 1 and n != 1]
    placed = {o: i for i, o in enumerate(
        _data_axes(mode, len(data_shape), len(out_shape), axes or (), args.axis))}
    held = int(np.prod(data_shape, dtype=object)) * dtype.itemsize
    logical = view.nbytes

    call = f"broadcast(data, {target}"
    if axes is not None:
        call += f", {axes}"
    call += f", mode={mode!r}" + (f", axis={args.axis}" if mode == "pdpd" else "") + ")"
    print(call)
    print(f"  data shape    {data_shape}, dtype {dtype} ({dtype.itemsize} B per item)")
    print(f"  output shape  {out_shape}")
    print(f"  strides       {strides} (bytes; 0 on broadcast axes)")
    print()
    print(f"  {'axis':>4} {'size':>10} {'data axis':>9} {'data size':>9} {'stride':>10}")
    for d, (n, a, st) in enumerate(zip(out_shape, aligned, strides)):
        src = placed.get(d)
        note = ""
        if d in broadcast:
            note = "  broadcast" + (" (new axis)" if src is None else f" (size {a} -> {n})")
        print(f"  {d:>4} {n:>10} {'-' if src is None else src:>9} {a:>9} {st:>10}{note}")
    print()
    print(f"  broadcast axes  {', '.join(map(str, broadcast)) if broadcast else 'none'}")
    print(f"  logical bytes   {_bytes(logical)}")
    ratio = ""
    if held and logical > held:
        factor = logical / held
        ratio = f" ({factor:,.0f}x" if factor >= 10 else f" ({factor:.1f}x"
        ratio += " smaller than logical)"
    print(f"  bytes held      {_bytes(held)}{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
