"""Elicitation and sampling from inside a tool: server requests (legacy), MRTR (2026-07-28)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.helpers import MODERN, open_peer
from toolwire import CapabilityMissing, Context, Server


@dataclass
class Booking:
    seats: int
    name: str


def make_server(**options: Any) -> Server:
    server = Server("ask", **options)
    server.side_effects = []  # type: ignore[attr-defined]

    @server.tool
    async def book(flight: str, ctx: Context) -> str:
        """Book seats on a flight, asking the user how many."""
        answer = await ctx.elicit(f"How many seats on {flight}?", Booking)
        if not answer.accepted:
            return f"booking {answer.action}ed"
        confirm = await ctx.elicit(
            "Confirm?", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        )
        if not confirm.data["ok"]:
            return "not confirmed"
        server.side_effects.append((flight, answer.data))  # type: ignore[attr-defined]
        return f"booked {answer.data.seats} for {answer.data.name} on {flight}"

    @server.tool
    async def summarize(text: str, ctx: Context) -> str:
        reply = await ctx.sample(f"Summarize: {text}", max_tokens=50, system_prompt="Be brief.")
        return f"summary: {reply['content']['text']}"

    @server.tool
    async def polite(ctx: Context) -> str:
        try:
            await ctx.elicit("Name?", {"type": "object", "properties": {"n": {"type": "string"}}})
        except CapabilityMissing:
            return "asked nobody"
        return "asked"

    return server


async def answer_server_request(peer: Any, reply: Any) -> dict[str, Any]:
    request = await peer.connection.receive()
    await peer.connection.send({"jsonrpc": "2.0", "id": request["id"], "result": reply})
    return request  # type: ignore[no-any-return]


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_legacy_elicitation_is_a_request_to_the_client(version: str) -> None:
    server = make_server()
    peer = await open_peer(server, version, {"elicitation": {}})
    id = await peer.send("tools/call", {"name": "book", "arguments": {"flight": "CA981"}})
    first = await answer_server_request(peer, {"action": "accept", "content": {"seats": 2, "name": "Ada"}})
    assert first["method"] == "elicitation/create"
    assert first["params"]["message"] == "How many seats on CA981?"
    assert first["params"]["requestedSchema"]["required"] == ["seats", "name"]
    assert ("mode" in first["params"]) == (version >= "2025-11-25")
    await answer_server_request(peer, {"action": "accept", "content": {"ok": True}})
    result = (await peer.answer(id))["result"]
    assert result["content"][0]["text"] == "booked 2 for Ada on CA981"
    assert server.side_effects == [("CA981", Booking(2, "Ada"))]  # type: ignore[attr-defined]


async def test_legacy_elicitation_decline_and_invalid_content() -> None:
    peer = await open_peer(make_server(), "2025-11-25", {"elicitation": {}})
    id = await peer.send("tools/call", {"name": "book", "arguments": {"flight": "X"}})
    await answer_server_request(peer, {"action": "decline"})
    assert (await peer.answer(id))["result"]["content"][0]["text"] == "booking declineed"
    id = await peer.send("tools/call", {"name": "book", "arguments": {"flight": "X"}})
    await answer_server_request(peer, {"action": "accept", "content": {"seats": "many"}})
    result = (await peer.answer(id))["result"]
    assert result["isError"] and "not valid" in result["content"][0]["text"]


async def test_legacy_client_error_answer_becomes_an_error_result() -> None:
    peer = await open_peer(make_server(), "2025-11-25", {"elicitation": {}})
    id = await peer.send("tools/call", {"name": "book", "arguments": {"flight": "X"}})
    request = await peer.connection.receive()
    await peer.connection.send(
        {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "user closed the dialog"}}
    )
    result = (await peer.answer(id))["result"]
    assert result["isError"] and "user closed the dialog" in result["content"][0]["text"]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", MODERN])
async def test_missing_capability(version: str) -> None:
    peer = await open_peer(make_server(), version)
    answer = await peer.call("book", {"flight": "X"})
    if version == MODERN:
        assert answer["error"]["code"] == -32021
        assert answer["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}
    else:
        assert answer["result"]["isError"] is True
        assert "elicitation" in answer["result"]["content"][0]["text"]
    assert (await peer.call("polite"))["result"]["content"][0]["text"] == "asked nobody"


async def test_legacy_sampling() -> None:
    peer = await open_peer(make_server(), "2025-11-25", {"sampling": {}})
    id = await peer.send("tools/call", {"name": "summarize", "arguments": {"text": "long text"}})
    request = await answer_server_request(
        peer, {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m", "stopReason": "endTurn"}
    )
    assert request["method"] == "sampling/createMessage"
    assert request["params"]["maxTokens"] == 50 and request["params"]["systemPrompt"] == "Be brief."
    assert request["params"]["messages"][0]["content"]["text"] == "Summarize: long text"
    assert (await peer.answer(id))["result"]["content"][0]["text"] == "summary: short"


async def modern_round(
    peer: Any, arguments: dict[str, Any], state: str | None, responses: dict[str, Any] | None
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "book", "arguments": arguments}
    if state is not None:
        params["requestState"] = state
    if responses is not None:
        params["inputResponses"] = responses
    return await peer.request("tools/call", params)


async def test_modern_elicitation_is_multi_round_trip_with_the_same_tool_code() -> None:
    server = make_server()
    peer = await open_peer(server, MODERN, {"elicitation": {}})
    args = {"flight": "MU5101"}
    first = (await modern_round(peer, args, None, None))["result"]
    assert first["resultType"] == "input_required"
    [(key, request)] = first["inputRequests"].items()
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "form"
    second = (
        await modern_round(
            peer, args, first["requestState"], {key: {"action": "accept", "content": {"seats": 1, "name": "Lin"}}}
        )
    )["result"]
    assert second["resultType"] == "input_required"
    [(key2, request2)] = second["inputRequests"].items()
    assert key2 != key and request2["params"]["message"] == "Confirm?"
    assert server.side_effects == []  # type: ignore[attr-defined]  # nothing happens before every answer is in
    final = (
        await modern_round(peer, args, second["requestState"], {key2: {"action": "accept", "content": {"ok": True}}})
    )["result"]
    assert final["resultType"] == "complete"
    assert final["content"][0]["text"] == "booked 1 for Lin on MU5101"
    assert server.side_effects == [("MU5101", Booking(1, "Lin"))]  # type: ignore[attr-defined]


async def test_modern_missing_or_invalid_answers_are_asked_again() -> None:
    peer = await open_peer(make_server(), MODERN, {"elicitation": {}})
    args = {"flight": "X"}
    first = (await modern_round(peer, args, None, None))["result"]
    again = (await modern_round(peer, args, first["requestState"], {}))["result"]
    assert again["resultType"] == "input_required" and again["inputRequests"] == first["inputRequests"]
    [key] = first["inputRequests"]
    invalid = (
        await modern_round(peer, args, first["requestState"], {key: {"action": "accept", "content": {"seats": "x"}}})
    )["result"]
    assert invalid["resultType"] == "input_required" and list(invalid["inputRequests"]) == [key]


async def test_request_state_is_bound_verified_and_expires() -> None:
    peer = await open_peer(make_server(), MODERN, {"elicitation": {}})
    args = {"flight": "X"}
    first = (await modern_round(peer, args, None, None))["result"]
    state = first["requestState"]
    [key] = first["inputRequests"]
    ok = {key: {"action": "accept", "content": {"seats": 1, "name": "A"}}}
    body, _, tag = state.partition(".")
    tampered = body[:-2] + ("AA" if body[-2:] != "AA" else "BB") + "." + tag
    for bad_state, arguments, why in [
        (tampered, args, "verification"),
        ("not-a-state", args, "not a requestState this server issued"),
        (state, {"flight": "Y"}, "another tool, other arguments"),
    ]:
        answer = await modern_round(peer, arguments, bad_state, ok)
        assert answer["error"]["code"] == -32602
        assert why in answer["error"]["message"]
    other_server = await open_peer(make_server(), MODERN, {"elicitation": {}})  # another random key
    assert (await modern_round(other_server, args, state, ok))["error"]["code"] == -32602
    expiring = await open_peer(make_server(state_ttl=-1), MODERN, {"elicitation": {}})
    old = (await modern_round(expiring, args, None, None))["result"]["requestState"]
    answer = await modern_round(expiring, args, old, ok)
    assert "expired" in answer["error"]["message"]


async def test_shared_state_key_lets_another_process_finish_the_call() -> None:
    first_server = make_server(state_key="shared-secret")
    second_server = make_server(state_key="shared-secret")
    a = await open_peer(first_server, MODERN, {"elicitation": {}})
    b = await open_peer(second_server, MODERN, {"elicitation": {}})
    args = {"flight": "X"}
    r1 = (await modern_round(a, args, None, None))["result"]
    [k1] = r1["inputRequests"]
    r2 = (
        await modern_round(
            b, args, r1["requestState"], {k1: {"action": "accept", "content": {"seats": 3, "name": "B"}}}
        )
    )["result"]
    [k2] = r2["inputRequests"]
    r3 = (await modern_round(a, args, r2["requestState"], {k2: {"action": "accept", "content": {"ok": True}}}))[
        "result"
    ]
    assert r3["content"][0]["text"] == "booked 3 for B on X"


async def test_a_rotated_key_still_accepts_states_sealed_with_the_old_one() -> None:
    before = make_server(state_key="old-secret")
    after = make_server(state_key=["new-secret", "old-secret"])  # rotated: the new one seals
    retired = make_server(state_key="new-secret")  # the old key dropped once its states expired
    args = {"flight": "Y"}
    a = await open_peer(before, MODERN, {"elicitation": {}})
    r1 = (await modern_round(a, args, None, None))["result"]
    [k1] = r1["inputRequests"]
    answer = {k1: {"action": "accept", "content": {"seats": 1, "name": "R"}}}
    b = await open_peer(after, MODERN, {"elicitation": {}})
    r2 = (await modern_round(b, args, r1["requestState"], answer))["result"]
    assert "inputRequests" in r2  # accepted: the next question
    c = await open_peer(retired, MODERN, {"elicitation": {}})
    refused = await modern_round(c, args, r1["requestState"], answer)
    assert "failed verification" in refused["error"]["message"]
    sealed_new = r2["requestState"]  # sealed with the new key: the retired server takes it
    [k2] = r2["inputRequests"]
    done = (await modern_round(c, args, sealed_new, {k2: {"action": "accept", "content": {"ok": True}}}))["result"]
    assert done["content"][0]["text"] == "booked 1 for R on Y"


def test_keys_from_the_environment_are_separated_by_commas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_STATE_KEY", "new,old")
    assert Server("keys").state_keys == [b"new", b"old"]


async def test_modern_sampling_round_trip() -> None:
    peer = await open_peer(make_server(), MODERN, {"sampling": {}})
    params = {"name": "summarize", "arguments": {"text": "t"}}
    first = (await peer.request("tools/call", params))["result"]
    [(key, request)] = first["inputRequests"].items()
    assert request["method"] == "sampling/createMessage" and request["params"]["maxTokens"] == 50
    reply = {"role": "assistant", "content": {"type": "text", "text": "s"}, "model": "m"}
    final = (
        await peer.request(
            "tools/call", {**params, "requestState": first["requestState"], "inputResponses": {key: reply}}
        )
    )["result"]
    assert final["content"][0]["text"] == "summary: s"


async def test_legacy_server_requests_fail_cleanly_when_the_connection_closes() -> None:
    peer = await open_peer(make_server(), "2025-11-25", {"elicitation": {}})
    await peer.send("tools/call", {"name": "book", "arguments": {"flight": "X"}})
    assert (await peer.connection.receive())["method"] == "elicitation/create"
    await asyncio.wait_for(peer.connection.close(grace=1), 3)
    assert not peer.connection.session._tasks


async def test_roots_are_asked_for_in_either_era() -> None:
    from toolwire.client import Client, ServerError

    server = Server("roots")

    @server.tool
    async def workspace(ctx: Context) -> str:
        roots = await ctx.list_roots(key="client_roots")
        return ", ".join(root["uri"] for root in roots)

    offered = [{"uri": "file:///home/ada/project", "name": "Project"}]
    for protocol in ("2025-11-25", MODERN):
        async with Client(server, protocol=protocol, roots=offered) as client:
            assert (await client.call_tool("workspace")).text == "file:///home/ada/project"
    async with Client(server, protocol="2025-11-25") as client:
        refused = await client.call_tool("workspace")
        assert refused.is_error and "does not offer roots" in refused.text
    async with Client(server, protocol=MODERN) as client:
        with pytest.raises(ServerError) as missing:
            await client.call_tool("workspace")
        assert missing.value.code == -32021 and missing.value.data == {"requiredCapabilities": {"roots": {}}}
    peer = await open_peer(server, MODERN, {"roots": {"listChanged": True}})
    first = (await peer.call("workspace"))["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {"client_roots": {"method": "roots/list", "params": {}}}
