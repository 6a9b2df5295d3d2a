"""An upstream over HTTP whose tool answers as many characters as asked (the gateway's
hostile tests: a result larger than a client takes)."""

from toolwire import Server

server = Server("big")


@server.tool
def huge(size: int) -> str:
    """``size`` characters of text."""
    return "y" * size
