"""``toolwire card URL [--json]``, run as a real process against a server serving its card
over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.clirun import failed, toolwire, toolwire_all
from tests.support.httpserve import toolwire_http

CARDED = str(Path(__file__).parents[1] / "servers" / "carded.py")
BASIC = str(Path(__file__).parents[1] / "servers" / "basic.py")


def test_card_shows_a_table_or_the_document() -> None:
    with toolwire_http(CARDED) as (url, _process):
        table, document, endpoint = toolwire_all(["card", url + "/server-card"], ["card", url, "--json"], ["card", url])
    assert table.returncode == 0 and table.stderr == ""
    assert table.stdout == endpoint.stdout  # the endpoint's URL finds the same card
    for shown in (
        "com.example/weather 1.4.2",
        "Weather",
        "Forecasts and alerts for any city.",
        "https://weather.example.com",
        "https://github.com/example/weather [github]",  # text, not rich markup
        f"streamable-http {url}",
        "protocol 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05",
        "header X-Units (one of metric, imperial): metric or imperial",
    ):
        assert shown in table.stdout, shown
    assert document.returncode == 0
    card = json.loads(document.stdout)
    assert card["name"] == "com.example/weather" and card["remotes"][0]["url"] == url


def test_card_says_why_there_is_none() -> None:
    with toolwire_http(BASIC) as (url, _process):
        missing = toolwire("card", url)
    assert failed(missing, 1) == (  # the endpoint refuses a GET that does not accept SSE
        f"toolwire: no server card at {url}: HTTP 406, nor at {url}/server-card: HTTP 404"
    )
    assert failed(toolwire("card", "weather.example.com"), 2) == (
        "toolwire: a server card is read from an http(s) URL, not 'weather.example.com' (see toolwire card -h)"
    )
    assert failed(toolwire("card"), 2) == "toolwire: the following arguments are required: URL (see toolwire card -h)"
