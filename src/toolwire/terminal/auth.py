"""``toolwire auth login|logout|status``: the OAuth tokens the terminal commands keep.

    toolwire auth login https://mcp.example.com/mcp     authorize now (the browser opens)
    toolwire auth status [URL]                          what is stored, never the tokens
    toolwire auth logout https://mcp.example.com/mcp    forget the server's tokens

``toolwire tools|call|... https://…`` authorize the same way the first time a server asks,
and keep the tokens in the system keyring when ``keyring`` is installed and finds one, else
in ``~/.config/toolwire/oauth.json`` (readable by the user alone; ``$XDG_CONFIG_HOME`` moves
it), so later commands do not ask again until a token can no longer be refreshed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import sys
import time

from ..auth.client.errors import AuthorizationError
from ..auth.client.oauth import TOKENS_PREFIX, OAuth, tokens_key
from ..auth.client.tokenstore import user_store
from ..cli.common import Parser, command_parser


def terminal_oauth() -> OAuth:
    """OAuth for the terminal's commands: the browser, a loopback redirect, the user's store."""
    return OAuth(client_name="toolwire", store=user_store())


def main(argv: list[str]) -> int:
    """Run ``toolwire auth ARGV...``; the exit status (2 for a usage error, 1 for a failure)."""
    try:
        options = _parser().parse_args(argv)
        if options.action == "status":
            return status(options.url)
        return asyncio.run(login(options.url)) if options.action == "login" else logout(options.url)
    except KeyboardInterrupt:
        return 130


def _parser() -> Parser:
    parser = command_parser(
        "auth",
        "toolwire auth login URL | toolwire auth logout URL | toolwire auth status [URL]",
        "The OAuth tokens the terminal's commands keep for servers that ask for authorization.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True, prog="toolwire auth")
    for action, said in (
        ("login", "authorize with the server now (the browser opens)"),
        ("logout", "forget the server's tokens"),
        ("status", "what is stored (issuer, scopes, expiry; never a token), for URL or every server"),
    ):
        sub = actions.add_parser(action, help=said, description=said[0].upper() + said[1:] + ".", allow_abbrev=False)
        sub.add_argument("url", metavar="URL", type=_url, nargs="?" if action == "status" else None)
    return parser


def _url(text: str) -> str:
    if not text.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"expected an http(s) URL, not {text!r}")
    return text


async def login(url: str) -> int:
    from ..client import Client, ClientError

    store = user_store()
    store.delete(tokens_key(url))  # a login asks anew
    try:
        async with Client(url, auth=OAuth(client_name="toolwire", store=store)) as client:
            await client.list_tools()
    except (ClientError, AuthorizationError) as exc:
        sys.stderr.write(f"toolwire: {exc}\n")
        return 1
    record = store.load(tokens_key(url))
    if record is None:
        sys.stdout.write(f"{url} did not ask for authorization: nothing stored\n")
    else:
        sys.stdout.write(f"authorized at {url} — {describe(record)}\n")
    return 0


def logout(url: str) -> int:
    store = user_store()
    if store.load(tokens_key(url)) is None:
        sys.stdout.write(f"nothing stored for {url}\n")
        return 0
    store.delete(tokens_key(url))
    sys.stdout.write(f"forgot the tokens of {url}\n")
    return 0


def status(url: str | None) -> int:
    store = user_store()
    shown = 0
    for key in store.names():
        if not key.startswith(TOKENS_PREFIX) or (url is not None and key != tokens_key(url)):
            continue
        record = store.load(key)
        if record is not None:
            sys.stdout.write(f"{key[len(TOKENS_PREFIX) :]} — {describe(record)}\n")
            shown += 1
    if not shown:
        sys.stdout.write(f"no tokens stored{f' for {url}' if url else ''} (in {store!r})\n")
    return 0


def describe(record: dict[str, object]) -> str:
    """A token record in words: scopes, expiry, refresh, issuer (last: no punctuation after
    its address, which terminals would take into the link); never the tokens."""
    parts = []
    if record.get("scope"):
        parts.append(f"scopes {record['scope']}")
    expires = record.get("expires_at")
    if isinstance(expires, int | float):
        when = datetime.datetime.fromtimestamp(expires).strftime("%Y-%m-%d %H:%M")
        parts.append(f"{'expired' if expires < time.time() else 'expires'} {when}")
    parts.append("refreshable" if record.get("refresh_token") else "not refreshable")
    if record.get("dpop_key"):
        parts.append("DPoP-bound")
    return f"{', '.join(parts)}, issued by {record.get('issuer')}"
