"""Reading a server card: the typed value, and every problem named at its place."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cards.schema import CARDS as OFFICIAL
from toolwire.cards import CARD_SCHEMA, CardInvalid, Header, Input, Remote, Repository, parse_card

FULL: dict[str, Any] = {
    "$schema": CARD_SCHEMA,
    "name": "com.example/notes",
    "version": "2.1.0-beta.1",
    "description": "Notes you can search.",
    "title": "Notes",
    "websiteUrl": "https://notes.example.com",
    "repository": {"url": "https://github.com/example/notes", "source": "github", "id": "42"},
    "icons": [{"src": "data:image/png;base64,AAAA", "theme": "dark"}],
    "remotes": [
        {
            "type": "streamable-http",
            "url": "https://{tenant}.notes.example.com/mcp",
            "variables": {"tenant": {"isRequired": True, "default": "acme"}},
            "headers": [
                {
                    "name": "X-Key",
                    "isSecret": True,
                    "value": "Key {key}",
                    "variables": {"key": {"isRequired": True, "isSecret": True, "format": "string"}},
                }
            ],
            "supportedProtocolVersions": ["2025-11-25"],
        },
        {"type": "sse", "url": "https://notes.example.com/sse"},
    ],
    "_meta": {"com.example/plan": "team"},
    "futureField": {"kept": True},
}


def test_a_whole_card_reads_into_typed_fields() -> None:
    assert list(OFFICIAL.iter_errors(FULL)) == []
    card = parse_card(FULL)
    assert (card.name, card.version, card.title) == ("com.example/notes", "2.1.0-beta.1", "Notes")
    assert card.repository == Repository("https://github.com/example/notes", "github", None, "42")
    assert card.icons == ({"src": "data:image/png;base64,AAAA", "theme": "dark"},)
    first, second = card.remotes
    assert first.variables == {"tenant": Input(is_required=True, default="acme")}
    assert first.headers == (
        Header(
            name="X-Key",
            is_secret=True,
            value="Key {key}",
            variables={"key": Input(is_required=True, is_secret=True, format="string")},
        ),
    )
    assert first.supported_protocol_versions == ("2025-11-25",)
    assert second == Remote("sse", "https://notes.example.com/sse")
    assert card.meta == {"com.example/plan": "team"}
    assert card.raw["futureField"] == {"kept": True}  # cards are open: what is unknown stays


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server.schema.json"}, "$schema: is 'https://"),
        ({"name": "no-slash"}, "name: 'no-slash' is not 'namespace/name'"),
        ({"name": 7}, "name: must be a string, not a number"),
        ({"version": "1.x"}, "version: '1.x' is a range"),
        ({"version": ">=1.2.3"}, "version: '>=1.2.3' is a range"),
        ({"description": ""}, "description: must not be empty"),
        ({"title": "t" * 101}, "title: has 101 characters, more than 100"),
        ({"websiteUrl": "notes.example.com"}, "websiteUrl: 'notes.example.com' is not an http(s) URL"),
        ({"repository": {"url": "https://x"}}, "repository.source: is required"),
        ({"icons": [{"theme": "blue"}]}, "icons[0].src: is required"),
        ({"icons": [{"src": "x", "theme": "blue"}]}, "icons[0].theme: is 'light' or 'dark', not 'blue'"),
        ({"remotes": [{"type": "websocket", "url": "wss://x"}]}, "remotes[0].type: is 'streamable-http' or 'sse'"),
        ({"remotes": [{"type": "sse", "url": "wss://x"}]}, "remotes[0].url: 'wss://x' does not start"),
        (
            {"remotes": [{"type": "sse", "url": "https://x", "headers": [{"name": "A", "isSecret": "yes"}]}]},
            "remotes[0].headers[0].isSecret: must be true or false",
        ),
        (
            {"remotes": [{"type": "sse", "url": "https://x", "variables": {"v": {"format": "date"}}}]},
            "remotes[0].variables.v.format: is one of",
        ),
        (
            {"remotes": [{"type": "sse", "url": "https://x", "supportedProtocolVersions": "2025-11-25"}]},
            "remotes[0].supportedProtocolVersions: must be a list of strings",
        ),
        ({"_meta": []}, "_meta: must be an object, not a list"),
    ],
)
def test_each_problem_is_named_at_its_place(change: dict[str, Any], problem: str) -> None:
    document = {**FULL, **change}
    assert list(OFFICIAL.iter_errors(document)) or "version" in change  # the schema agrees (ranges: prose only)
    with pytest.raises(CardInvalid) as caught:
        parse_card(document)
    assert any(said.startswith(problem) for said in caught.value.problems), caught.value.problems


def test_every_problem_is_said_at_once() -> None:
    with pytest.raises(CardInvalid) as caught:
        parse_card({"remotes": [{}]}, "the card in hand")
    assert str(caught.value).startswith("the card in hand is not valid: $schema: is missing")
    assert caught.value.problems == [
        f"$schema: is missing; a v1 card says {CARD_SCHEMA!r}",
        "name: is required",
        "version: is required",
        "description: is required",
        "remotes[0].type: is 'streamable-http' or 'sse', not None",
        "remotes[0].url: is required",
    ]


@pytest.mark.parametrize("document", [None, [], "card", 3])
def test_a_card_is_an_object(document: Any) -> None:
    with pytest.raises(CardInvalid, match="a server card is a JSON object"):
        parse_card(document)
