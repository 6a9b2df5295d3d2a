"""The tokens a server hands out and takes back (``requestState``, list cursors of tools,
tasks and skills, task and session ids) are taken back only as handed out: other spellings
of the same bytes (padding, other trailing bits, spaces, line breaks, characters outside
base64url), digits that are not ASCII, endless or huge cursors are ``-32602`` with a message
a person can act on, never a traceback. Properties over every decoder (hypothesis), then a
real server process over stdio."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.rawclient import RawClient, modern_meta, toolwire_command
from tests.support.skills import write_skill
from toolwire.protocol import tokens
from toolwire.protocol.errors import INVALID_PARAMS, ProtocolError
from toolwire.server.request_state import seal, unseal
from toolwire.skills.extension import _cursor as skills_cursor
from toolwire.tasks.cursors import read_cursor as tasks_cursor

SERVER = str(Path(__file__).resolve().parents[1] / "servers" / "handed_out.py")
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def other_trailing_bits(token: str) -> str | None:
    """``token`` with its last character's unused low bits set otherwise: the same bytes to
    a lenient decoder (``None`` when the last character has no unused bits)."""
    if len(token) % 4 == 0:
        return None
    last = ALPHABET.index(token[-1])
    return token[:-1] + ALPHABET[last ^ 1]


def respellings(token: str) -> list[str]:
    """Other spellings of ``token`` that a lenient base64 decoder reads as the same bytes (or
    nearly): padding, trailing bits, whitespace, a character outside the alphabet, ``+``/``/``."""
    variants = [token + "=", token + "==", token + "=" * (-len(token) % 4 or 4), token + "!", token + "\n"]
    variants += [token[: len(token) // 2] + sep + token[len(token) // 2 :] for sep in (" ", "\n", "\t", "\r\n")]
    variants += [" " + token, token.replace("-", "+").replace("_", "/")]
    trailing = other_trailing_bits(token)
    if trailing is not None:
        variants.append(trailing)
    return [variant for variant in variants if variant != token]


def lenient(token: str) -> bytes:
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


# -- properties of every decoder -------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_a_token_decodes_to_its_bytes_and_no_other_spelling_does(data: bytes) -> None:
    token = tokens.encode(data)
    assert tokens.decode(token, 1000) == data
    trailing = other_trailing_bits(token)
    if trailing is not None:
        assert lenient(trailing) == data  # the same bytes to a lenient decoder...
    for variant in respellings(token):
        assert tokens.decode(variant, 1000) is None, variant  # ...but not to ours
    assert tokens.decode(token, len(token) - 1) is None or not token


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=80), st.text(alphabet=ALPHABET + "=+/ \n", max_size=80)))
def test_whatever_decodes_is_exactly_what_encoding_makes(text: str) -> None:
    decoded = tokens.decode(text, 1000)
    assert decoded is None or tokens.encode(decoded) == text


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), st.integers(0, 10**15).map(lambda n: tokens.offset_cursor("skills", n))))
def test_offset_cursors_are_read_only_as_handed_out(text: str) -> None:
    offset = tokens.read_offset(text, "skills")
    assert offset is None or (offset > 0 and tokens.offset_cursor("skills", offset) == text)
    assert tokens.read_offset(text, "tools") is None or tokens.read_offset(text, "skills") is None


def refused(call: Callable[[], Any]) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        call()
    assert caught.value.code == INVALID_PARAMS
    return caught.value


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=5), st.integers(-(2**63), 2**63 - 1), max_size=3))
def test_a_request_state_is_taken_back_only_as_sealed(answers: dict[str, int]) -> None:
    key = b"k" * 32
    state = seal(key, "tool", answers, 60)
    assert unseal([key], "tool", state) == answers
    body, _, tag = state.partition(".")
    for variant in [*(f"{b}.{tag}" for b in respellings(body)), *(f"{body}.{t}" for t in respellings(tag))]:
        error = refused(lambda variant=variant: unseal([key], "tool", variant))
        assert "requestState refused" in str(error)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=100), st.binary(max_size=60).map(tokens.encode), st.integers(), st.none()))
@example("0" * 13 + "\x1f" * 8 + "\U0001093a" * 19)  # quoted, 40 characters take 277
def test_task_and_skill_cursors_are_a_position_or_invalid_params(cursor: Any) -> None:
    for read in (lambda: tasks_cursor(cursor), lambda: skills_cursor(cursor, 1000)):
        try:
            read()
        except ProtocolError as exc:
            assert exc.code == INVALID_PARAMS and "cursor" in str(exc) and len(str(exc)) < 300


def test_ids_are_recognised_only_as_spelled() -> None:
    made = tokens.new_id()
    assert tokens.is_id(made)
    assert not any(tokens.is_id(variant) for variant in respellings(made))
    assert not tokens.is_id(made[:-1]) and not tokens.is_id(made + "A") and not tokens.is_id(None)


# -- a real server ---------------------------------------------------------------------------

#: Cursors no server handed out: digits that are not ASCII, endless digits, huge, made up.
ARABIC_50, FULLWIDTH_50, SQUARED = "\u0665\u0660", "\uff15\uff10", "\u00b2"
MADE_UP = [ARABIC_50, FULLWIDTH_50, SQUARED, "9" * 5000, "x" * (1 << 20), "0", "-1", "", "bm90IG91cnM", "dG9vbHM6Mg=="]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawClient]:
    skills = tmp_path_factory.mktemp("skills")
    for number in range(52):
        write_skill(skills, f"skill-{number:02}")
    command = toolwire_command(SERVER)
    with RawClient(command, env={**os.environ, "HANDED_OUT_SKILLS": str(skills)}) as client:
        client.initialize("2025-11-25", {"tasks": {}})
        yield client
    assert not any("Traceback" in line for line in client.stderr_lines), "".join(client.stderr_lines)[-3000:]


def error_of(server: RawClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    answer = server.request(method, params)
    assert "error" in answer, (method, str(params)[:100], answer)
    error: dict[str, Any] = answer["error"]
    return error


def first_cursor(server: RawClient, method: str, params: dict[str, Any]) -> str:
    cursor: str = server.request(method, params)["result"]["nextCursor"]
    return cursor


@pytest.mark.parametrize(
    ("method", "params"),
    [("tools/list", {}), ("skills/list", {}), ("tasks/list", {}), ("resources/directory/read", {"uri": "x"})],
)
def test_cursors_not_handed_out_are_invalid_params(server: RawClient, method: str, params: dict[str, Any]) -> None:
    if method == "tasks/list":
        for _ in range(3):
            task = {"name": "job", "arguments": {}, "task": {}}
            assert "task" in server.request("tools/call", task)["result"]
    handed = [first_cursor(server, method, params)] if method != "resources/directory/read" else []
    for cursor in [*MADE_UP, *(variant for real in handed for variant in respellings(real))]:
        error = error_of(server, method, {**params, "cursor": cursor})
        assert error["code"] == -32602, (method, cursor[:50], error)
        assert "cursor" in error["message"] and len(error["message"]) < 300
    for real in handed:
        assert "result" in server.request(method, {**params, "cursor": real})


def test_task_ids_not_handed_out_are_not_found(server: RawClient) -> None:
    created = server.request("tools/call", {"name": "job", "arguments": {}, "task": {}})["result"]["task"]["taskId"]
    for variant in [*respellings(created), ARABIC_50, "x" * (1 << 20)]:
        error = error_of(server, "tasks/get", {"taskId": variant})
        assert error["code"] == -32602 and "not found" in error["message"]
    assert server.request("tasks/get", {"taskId": created})["result"]["taskId"] == created


def test_a_request_state_spelled_otherwise_is_refused(server: RawClient) -> None:
    meta = modern_meta({"elicitation": {}})
    call = {"name": "ask", "arguments": {}, "_meta": meta}
    first = server.request("tools/call", call)["result"]
    assert first["resultType"] == "input_required"
    [key] = first["inputRequests"]
    retry = {**call, "inputResponses": {key: {"action": "accept", "content": {"name": "Lin"}}}}
    state = first["requestState"]
    body, _, tag = state.partition(".")
    for variant in [*(f"{b}.{tag}" for b in respellings(body)), *(f"{body}.{t}" for t in respellings(tag))]:
        error = error_of(server, "tools/call", {**retry, "requestState": variant})
        assert error["code"] == -32602 and "requestState refused" in error["message"], variant
    done = server.request("tools/call", {**retry, "requestState": state})["result"]
    assert done["content"][0]["text"] == "Hello, Lin"
