"""``toolwire card URL [--json]``: a server's card (SEP-2127), read without connecting.

URL is the card's own URL, or the server's MCP endpoint (its card is then looked for at
``URL/server-card``, the place the SEP reserves). The card is shown as a table (who the
server is, then each remote: transport, URL, protocol versions, the headers and variables a
connection needs), or with ``--json`` as the document it is. A card that is not valid is
refused with every problem named; exit status 1 then, or when no card could be read.
"""

from __future__ import annotations

import asyncio
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..cards.document import CardInvalid, Header, Input, Remote, ServerCard
from ..cli.common import UsageError, command_parser
from ..client.cards import CardUnavailable, fetch_card
from .output import printable, write_json


def main(argv: list[str]) -> int:
    """Run ``toolwire card ARGV...``; the exit status (2 for a usage error, 1 for no card)."""
    parser = command_parser(
        "card",
        "toolwire card URL [--json]",
        "Show a server's card (SEP-2127): who it is and how to connect, read before connecting.\n"
        "URL is the card's, or the server's MCP endpoint (its card is at URL/server-card).",
    )
    parser.add_argument("url", metavar="URL")
    parser.add_argument("--json", action="store_true", dest="as_json", help="print the card as the server wrote it")
    options = parser.parse_args(argv)
    if not options.url.startswith(("http://", "https://")):
        raise UsageError(f"a server card is read from an http(s) URL, not {options.url!r}")
    try:
        card = asyncio.run(fetch_card(options.url))
    except (CardUnavailable, CardInvalid) as exc:
        sys.stderr.write(f"toolwire: {printable(str(exc))}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    if options.as_json:
        write_json(card.raw)
    else:
        print_card(card)
    return 0


def print_card(card: ServerCard) -> None:
    """The card as a table of its fields, titled by the server's name and version (what the
    card says shown as text, never as markup)."""
    table = Table(title=Text(printable(f"{card.name} {card.version}")), show_header=False, show_lines=True)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for label, value in (
        ("title", card.title),
        ("description", card.description),
        ("website", card.website_url),
        ("repository", _repository(card)),
        ("icons", "\n".join(str(icon.get("src", "")) for icon in card.icons)),
    ):
        if value:
            table.add_row(label, Text(printable(value)))
    for number, remote in enumerate(card.remotes, 1):
        table.add_row(f"remote {number}" if len(card.remotes) > 1 else "remote", Text(printable(_remote(remote))))
    if not card.remotes:
        table.add_row("remote", "none: the card says nothing of where to connect")
    if card.meta:
        table.add_row("_meta", Text(printable(", ".join(card.meta))))
    Console(highlight=False).print(table)


def _repository(card: ServerCard) -> str | None:
    repository = card.repository
    if repository is None:
        return None
    where = f" ({repository.subfolder})" if repository.subfolder else ""
    return f"{repository.url}{where} [{repository.source}]"


def _remote(remote: Remote) -> str:
    lines = [f"{remote.type} {remote.url}"]
    if remote.supported_protocol_versions:
        lines.append("protocol " + ", ".join(remote.supported_protocol_versions))
    lines += [_header(header) for header in remote.headers]
    lines += [_input(f"{{{name}}}", spec) for name, spec in remote.variables.items()]
    return "\n".join(lines)


def _header(header: Header) -> str:
    said = _input(f"header {header.name}", header)
    return said + "".join("\n  " + _input(f"{{{name}}}", spec) for name, spec in header.variables.items())


def _input(label: str, spec: Input) -> str:
    marks = [word for word, on in (("required", spec.is_required), ("secret", spec.is_secret)) if on]
    said = label + (f" ({', '.join(marks)})" if marks else "")
    if spec.value is not None:
        said += f" = {spec.value}"
    elif spec.default is not None:
        said += f" [default {spec.default}]"
    if spec.choices:
        said += f" (one of {', '.join(spec.choices)})"
    return said + (f": {spec.description}" if spec.description else "")
