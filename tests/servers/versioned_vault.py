"""A tool whose older version needs the scope ``admin`` and whose newest needs none, for
tests/server/test_hostile_visibility.py."""

from toolwire import Server

server = Server("versioned-vault")


@server.tool(name="rotate_keys", version="1", scopes=["admin"])
def rotate_keys_v1() -> str:
    """Rotate every key, the old way."""
    return "every key rotated"


@server.tool(name="rotate_keys", version="2")
def rotate_keys_v2() -> str:
    """Rotate your own key."""
    return "your key rotated"
