"""A server with one tool and no skills of its own: the tests serve skills with ``--skills``."""

from toolwire import Server

server = Server("skilled")


@server.tool
def echo(text: str) -> str:
    """Say it back."""
    return text
