"""``requestState`` for 2026-07-28 multi round-trip requests, sealed with an HMAC.

When a tool asks the user or the model something on a modern request, the server answers
``InputRequiredResult`` and forgets the call; the client retries with the answers and the
``requestState`` it was given. The state carries the answers of earlier rounds, and is bound
to the tool, a digest of its arguments, the caller's principal (when there is one) and an
expiry, all under an HMAC-SHA256 with the server's key. A state that was altered, expired, or
presented with another tool or other arguments is refused with ``-32602``.

Run several server processes behind one endpoint? Give them the same key
(``Server(state_key=...)`` or the ``TOOLWIRE_STATE_KEY`` environment variable). To rotate
it, give the new key first and the old ones after (a list, or the variable's keys separated
by commas): states are sealed with the first and accepted under any of them, so those handed
out before the rotation stay valid until they expire.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import TYPE_CHECKING, Any

import orjson

from ..protocol import tokens
from ..protocol.errors import INVALID_PARAMS, ProtocolError

if TYPE_CHECKING:
    from ..protocol.incoming import Request
    from .context import Context, InputRequired
    from .session import ServerSession

#: Longer states are refused before they are decoded (a state carries earlier rounds' answers).
MAX_STATE_CHARS = 4 * 1024 * 1024


def binding(tool: str, arguments: Any, principal: str | None) -> str:
    """What a state is bound to: the tool, a digest of its arguments and the principal."""
    digest = hashlib.sha256(orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return f"{tool}\x00{digest}\x00{principal or ''}"


def seal(key: bytes, bound_to: str, answers: dict[str, Any], ttl_seconds: float) -> str:
    """A ``requestState`` carrying ``answers``, valid for ``ttl_seconds``."""
    payload = orjson.dumps({"b": bound_to, "e": int(time.time() + ttl_seconds), "r": answers})
    mac = hmac.new(key, payload, hashlib.sha256).digest()
    return f"{tokens.encode(payload)}.{tokens.encode(mac)}"


def unseal(keys: list[bytes], bound_to: str, state: Any) -> dict[str, Any]:
    """The answers in ``state``, sealed under any of ``keys``; ``ProtocolError(-32602)`` if
    it fails any check. Only the exact string :func:`seal` made is taken: another spelling
    of the same bytes (padding, other trailing bits, spaces, characters outside base64url)
    is refused before its MAC is compared (in constant time)."""
    if type(state) is not str:
        raise _refused("it is not a requestState this server issued")
    body, _, tag = state.partition(".")
    payload = tokens.decode(body, MAX_STATE_CHARS)
    mac = tokens.decode(tag, 43)  # 32 bytes: an HMAC-SHA256
    if payload is None or mac is None or len(mac) != 32:
        raise _refused("it is not a requestState this server issued")
    if not any(hmac.compare_digest(hmac.new(key, payload, hashlib.sha256).digest(), mac) for key in keys):
        raise _refused("it failed verification")
    data = orjson.loads(payload)
    if data["b"] != bound_to:
        raise _refused("it was issued for another tool, other arguments or another caller")
    if data["e"] < time.time():
        raise _refused("it has expired: call the tool again without it")
    answers: dict[str, Any] = data["r"]
    return answers


def _refused(why: str) -> ProtocolError:
    return ProtocolError(INVALID_PARAMS, f"Invalid params: requestState refused because {why}")


def answers(session: ServerSession, request: Request, subject: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """2026-07-28 retries: the answers of earlier rounds plus ``request``'s responses (``None``
    for a request that carries no state, or is not 2026-07-28).

    ``subject`` names what is asking (a tool's name, ``prompts/get NAME``...): a state is
    accepted only back for the same subject, arguments and caller (``-32602`` otherwise)."""
    state = request.params.get("requestState")
    if not request.codec.modern or state is None:
        return None
    bound = binding(subject, arguments, session.caller_name(request))
    data = unseal(session.server.state_keys, bound, state)
    answered: dict[str, Any] = data["answers"]
    responses = request.params.get("inputResponses")
    if type(responses) is dict:
        answered.update({key: responses[key] for key in data["pending"] if key in responses})
    return answered


def input_required(
    session: ServerSession, subject: str, arguments: dict[str, Any], context: Context, exc: InputRequired
) -> dict[str, Any]:
    """The ``InputRequiredResult`` ending this round of ``context``'s request, its state sealed
    for ``subject``, its arguments and its caller."""
    bound = binding(subject, arguments, session.caller_name(context.request))
    state = seal(
        session.server.state_keys[0],
        bound,
        {"answers": context.answers, "pending": list(exc.requests)},
        session.server.state_ttl,
    )
    return {"resultType": "input_required", "inputRequests": exc.requests, "requestState": state}
