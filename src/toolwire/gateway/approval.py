"""Approval: a call an ``ask`` rule names runs only once the calling user accepts it.

The gateway asks the caller's own client through elicitation (form mode), before the call
reaches the upstream: the form says what the tool does (its description and annotations)
and shows its inputs in full, and the user accepts or declines. On a 2025-11-25 (or older)
connection the question is a request to the client, answered within the call; on
2026-07-28 it ends the call's round with an ``InputRequiredResult``, and the client's retry
carrying the answer runs the call. A decline or cancel is a refusal the model reads. A
client that does not declare elicitation cannot be asked: the call is refused with a tool
error saying so and what would allow it. Every call an ``ask`` rule names is asked about
(nothing is remembered, as in the host).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ..guards.seam import Call, Next, Result, refusal
from ..server.context import CapabilityMissing, ClientRequestFailed, Context, InputRequired
from ..server.request_state import answers, input_required
from ..tools.validation import ArgumentsInvalid

if TYPE_CHECKING:
    from .policy import Target

#: The 2026-07-28 input request's key for the gateway's question.
KEY = "gateway-approval"
#: The form: nothing to fill in, accept or decline.
FORM: dict[str, Any] = {"type": "object", "properties": {}}


class Approval:
    """The guard asking the caller about the calls :class:`~.policy.PolicyCheck` marked
    ``ask`` (see the module's description)."""

    async def __call__(self, call: Call, next: Next) -> Result:
        verdict = call.extra.get("gateway.verdict")
        if verdict is None or verdict.action != "ask":
            return await next(call)
        target: Target = call.extra["gateway.target"]
        name = target.name
        who = call.extra["gateway.grant"].who
        arguments = _validated(call)  # the round's state is bound to the call itself
        session: Any = call.session  # a ServerSession: the one that can ask the client
        context = Context(session, call.request, answers(session, call.request, call.name or "", arguments))
        try:
            answer = await context.elicit(question(target, who, verdict.rule), FORM, key=KEY)
        except InputRequired as exc:  # 2026-07-28: this round ends with the question
            result: dict[str, Any] = input_required(session, call.name or "", arguments, context, exc)
            return result
        except CapabilityMissing:
            return refusal(
                f"{name} needs the approval of {who} ({verdict.rule} in the gateway's policy), asked through"
                " elicitation, but this client does not support elicitation. Use a client that declares the"
                " elicitation capability, or ask the gateway's administrator for an allow rule."
            )
        except ClientRequestFailed as exc:
            return refusal(f"{name} was not run: asking {who} for approval failed ({exc}).")
        if not answer.accepted:
            said = "declined" if answer.action == "decline" else "cancelled"
            return refusal(f"{name} was not run: {who} {said} it when the gateway asked for approval.")
        return await next(call)


def _validated(call: Call) -> dict[str, Any]:
    """The arguments as the tool will see them (the 2026-07-28 state is bound to those)."""
    arguments = call.arguments or {}
    if call.tool is None:
        return arguments
    try:
        return call.tool.validate_arguments(arguments)
    except ArgumentsInvalid:
        return arguments


def question(target: Target, who: str, rule: str) -> str:
    """What the user is asked: the tool, what it does, its annotations, its inputs in full."""
    tool = target.tool
    lines = [f"The gateway asks {who} before running {target.name} ({rule} in its policy)."]
    description = tool.description if tool is not None else None
    lines.append(f"What it does: {description}" if description else "What it does: the tool gives no description.")
    annotations = tool.annotations if tool is not None else None
    if annotations:
        lines.append("Annotations: " + ", ".join(f"{key}: {value}" for key, value in annotations.items()))
    inputs = orjson.dumps(target.arguments, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    lines.append(f"Inputs:\n{inputs}")
    lines.append("Accept to run it, decline to refuse it.")
    return "\n".join(lines)
