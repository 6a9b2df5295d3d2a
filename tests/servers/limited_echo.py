"""A server whose ``echo`` may be called twice a minute by each caller (the default key:
the authenticated caller, else the client's address over HTTP), for the per-client tests."""

from toolwire import Server
from toolwire.guards import RateLimit

server = Server("limited-echo", guards=[RateLimit("2/minute", burst=2)])


@server.tool
async def echo(text: str) -> str:
    """Echo."""
    return text
