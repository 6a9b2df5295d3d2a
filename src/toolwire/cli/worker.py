"""``toolwire worker FILE[:OBJECT] --redis URL --queue URL``: run the tasks that replicas in
queue mode (``toolwire run FILE --http ... --redis URL --queue URL``) put on the queue, with
the same file's tools, until SIGTERM or Ctrl-C (see docs/workers.md)."""

from __future__ import annotations

import argparse
import sys

from .common import Parser, UsageError, command_parser, split_command

USAGE = (
    "toolwire worker FILE[:OBJECT] --redis URL --queue URL [--concurrency N] [--grace SECONDS] [--lease SECONDS] "
    "[-v] [-- ARG ...]"
)


def _parser() -> Parser:
    parser = command_parser(
        "worker",
        USAGE,
        "Run the tasks of FILE's server that its replicas queued: the tools declared with task=,\n"
        "called by clients of the replicas, run here; their progress, questions and results go\n"
        "through the replicas' task store in Redis. SIGTERM or Ctrl-C stops it: it takes no more\n"
        "tasks, lets those running finish for --grace seconds and hands the rest back.",
        "Words after -- are the file's own command line (its sys.argv[1:]).",
    )
    parser.add_argument("file", metavar="FILE[:OBJECT]", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--redis", metavar="URL", help="the Redis the replicas keep their tasks in (needed)")
    parser.add_argument("--queue", metavar="URL", help="the task queue the replicas fill (a redis:// URL; needed)")
    parser.add_argument("--concurrency", metavar="N", type=int, default=10, help="tasks run at once (default 10)")
    parser.add_argument(
        "--grace", metavar="SECONDS", type=float, default=30.0, help="how long running tasks may finish on SIGTERM"
    )
    parser.add_argument(
        "--lease",
        metavar="SECONDS",
        type=float,
        default=30.0,
        help="how long a worker that stopped answering keeps its tasks before another takes them (default 30)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    return parser


def main(command: str, argv: list[str]) -> int:
    """``toolwire worker``: run queued tasks until SIGTERM or Ctrl-C."""
    from .run import set_verbosity

    argv, own = split_command(argv)
    options = _parser().parse_args(argv)
    if options.file is None:
        raise UsageError(f"worker needs a FILE: {USAGE}")
    if options.redis is None or options.queue is None:
        raise UsageError("worker needs --redis URL (the task store) and --queue URL (the task queue)")
    if options.concurrency < 1:
        raise UsageError("--concurrency must be 1 or more")
    if not options.lease > 0 or options.grace < 0:
        raise UsageError("--lease must be above 0 seconds, and --grace 0 or more")
    from ..extras import require
    from .common import load_server

    require("workers", "toolwire worker")
    sys.argv = [options.file.partition(":")[0], *(own or [])]
    set_verbosity(options.verbose)
    server = load_server(options.file)
    server.use_redis(options.redis)
    try:
        server.use_queue(options.queue, lease=options.lease)
    except ValueError as exc:
        raise UsageError(f"--queue: {exc}") from None
    server.run_worker(concurrency=options.concurrency, grace=options.grace)
    return 0
