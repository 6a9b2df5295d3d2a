"""A server that tells its own command line, for the tests of toolwire run FILE -- ARGS."""

import sys

from toolwire import Server

server = Server("argv")
ARGS = sys.argv[1:]


@server.tool
def args() -> str:
    """The server's own command line."""
    return " ".join(ARGS)
