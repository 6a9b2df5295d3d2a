"""``toolwire dev TARGET``: a web inspector for developing a server (see :mod:`toolwire.dev`)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from .common import UsageError, command_parser, one_target, split_command


def main(command: str, argv: list[str]) -> int:
    """``toolwire dev TARGET [options]`` (or ``-- COMMAND ...``); the exit status."""
    from ..protocol.versions import SUPPORTED_VERSIONS

    argv, server_command = split_command(argv)
    parser = command_parser(
        "dev",
        "toolwire dev TARGET [--port PORT] [--no-browser] [--protocol VERSION]\n"
        "       toolwire dev [options] -- COMMAND [ARG ...]",
        "Develop a server: a web inspector (on 127.0.0.1, a token in its address) to call its tools,\n"
        "read its resources, answer its questions and watch its traffic. A server file is restarted\n"
        "when it (or a file beside it) changes.",
        "TARGET: FILE.py[:OBJECT], a folder of tool files, an http(s) URL, or any server's command line after --.",
    )
    parser.add_argument("target", metavar="TARGET", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=_port, default=0, help="the inspector's port (default: a free one)")
    parser.add_argument(
        "--protocol",
        metavar="VERSION",
        choices=SUPPORTED_VERSIONS,
        help="the protocol version to start in (default: the newest the server speaks); the page's protocol menu"
        " switches to another",
    )
    parser.add_argument(
        "--no-browser",
        dest="browser",
        action="store_false",
        help="do not open the page in a browser (its address is printed either way)",
    )
    options = parser.parse_args(argv)
    target: str | list[str] = one_target("dev", options.target, server_command)
    file = None
    watched = ""
    if isinstance(target, str) and os.path.isdir(target):  # the folder reloads itself in place
        watched = f"; {target} is loaded again when a file in it changes"
        target = [sys.executable, "-m", "toolwire", "run", target, "--reload"]
    elif isinstance(target, str) and not target.startswith(("http://", "https://")):
        file = target.partition(":")[0]
        if not file.endswith(".py") or not os.path.isfile(file):
            raise UsageError(f"no such server file: {file}")
    from ..client import ClientError
    from ..dev.inspector import serve

    def ready(url: str) -> None:
        said = f"; it restarts {file} when it changes" if file else watched  # never right after the URL
        sys.stderr.write(f"toolwire: the inspector is at {url} (Ctrl-C stops it{said})\n")
        sys.stderr.flush()

    try:
        with contextlib.suppress(KeyboardInterrupt):
            serve(target, file, port=options.port, protocol=options.protocol, browser=options.browser, on_ready=ready)
    except ClientError as exc:
        sys.stderr.write(f"toolwire: {exc}\n")
        return 1
    except OSError as exc:
        sys.stderr.write(f"toolwire: cannot listen on 127.0.0.1:{options.port}: {exc.strerror or exc}\n")
        return 1
    return 0


def _port(value: str) -> int:
    if not (value.isascii() and value.isdigit()) or not 0 <= int(value) < 65536:
        raise argparse.ArgumentTypeError(f"expected a port number, not {value!r}")
    return int(value)
