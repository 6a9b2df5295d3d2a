"""Code mode: the model writes one short Python program that chains tool calls, instead of one
round trip per call.

With ``Host(code_mode=True)`` the model is offered one tool of the host's own, ``run_code``,
whose description lists the servers' tools as async Python functions (their signatures read
off the input schemas, one line each: :func:`signature`). The program runs in the sandbox
(:mod:`.sandbox`); each call it makes is decided, run and reported exactly as a direct call
of the model is (the conversation's approval path and events, with ids ``CALL.1``,
``CALL.2``...). Its value in the program is the tool's structured result if it has one,
otherwise its text; a refused or failed call raises ``ToolError`` there (with the text the
model would have read). The model reads what the program printed and its result, or its
error (:func:`outcome_text`).
"""

from __future__ import annotations

import keyword
import re
from typing import Any

import orjson

from ..client import CallToolResult, ToolInfo
from .model import ToolSpec
from .sandbox import ProgramOutcome, SandboxLimits

#: The name of the host's tool that runs a program (prefixed if a server took it).
RUN_CODE = "run_code"
_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "object": "dict", "null": "None"}
_DESCRIPTION_CHARS = 120


def function_names(exposed: list[str]) -> dict[str, str]:
    """Each tool's name as the model sees it, by the Python name of its function (the
    characters a name may not have become ``_``; clashes and keywords get a suffix)."""
    functions: dict[str, str] = {}
    for name in exposed:
        base = re.sub(r"\W", "_", name, flags=re.ASCII)
        base = f"_{base}" if base[:1].isdigit() else base
        base = f"{base}_" if keyword.iskeyword(base) or base == "ToolError" else base
        function, n = base, 2
        while function in functions:
            function, n = f"{base}_{n}", n + 1
        functions[function] = name
    return functions


def offered_code(
    tools: dict[str, ToolInfo], specs: list[ToolSpec], run_code: str, limits: SandboxLimits
) -> tuple[dict[str, str], list[ToolSpec]]:
    """What the model is offered in code mode: ``run_code`` (named ``run_code``) describing
    ``tools`` (by the model's names) as functions, and those of ``specs`` that are the host's
    own; with the tools' model names by function name."""
    functions = function_names(list(tools))
    signatures = [signature(function, tools[name]) for function, name in functions.items()]
    own = [spec for spec in specs if spec.name not in tools]
    return functions, [code_spec(run_code, signatures, limits), *own]


def type_hint(schema: Any) -> str:
    """The Python type of a JSON schema, as short as it can be said (``Any`` when unsure)."""
    if not isinstance(schema, dict):
        return "Any"
    if isinstance(schema.get("enum"), list):
        return f"Literal[{', '.join(repr(value) for value in schema['enum'])}]"
    choices = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(choices, list):
        return " | ".join(dict.fromkeys(type_hint(choice) for choice in choices))
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(type_hint({**schema, "type": one}) for one in kind)
    if kind == "array":
        return f"list[{type_hint(schema.get('items'))}]"
    return _TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"


def signature(function: str, tool: ToolInfo) -> str:
    """One line: ``name(*, a: int, b: str = None) -> dict  # what it does``; properties that
    are not Python names are passed as ``**{"odd-name": ...}``."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    required = required if isinstance(required, list) else []
    named, odd = [], []
    for key, property_schema in properties.items():
        hint = type_hint(property_schema) + ("" if key in required else " = None")
        if key.isidentifier() and not keyword.iskeyword(key):
            named.append(f"{key}: {hint}")
        else:
            odd.append(f"{key!r}: {hint}")
    named.sort(key=lambda argument: "=" in argument)  # the required first
    if odd:
        named.append("**{" + ", ".join(odd) + "}")
    returns = "dict" if tool.output_schema else "str"
    line = f"{function}({'*, ' if named else ''}{', '.join(named)}) -> {returns}"
    description = " ".join((tool.description or tool.display_name).split())
    if len(description) > _DESCRIPTION_CHARS:
        description = description[: _DESCRIPTION_CHARS - 1] + "…"
    return f"{line}  # {description}" if description else line


def code_spec(name: str, signatures: list[str], limits: SandboxLimits) -> ToolSpec:
    """The definition of the host's ``run_code`` tool, the tools' signatures in its description."""
    description = (
        "Run a short Python program that calls the tools below, and get back its result. The program is the "
        "body of an async function: call a tool with keyword arguments, `x = await name(arg=...)`, chain as "
        "many calls as the task needs, then `return` the result (or end with an expression); only the result "
        "and what it prints come back to you, not each call's. A tool gives its structured result (a dict) "
        "if it has one, else its text; a call that fails or is refused raises ToolError. The program runs "
        f"in a sandbox: the standard library, no network, no processes, files only in /scratch, "
        f"{limits.wall_seconds:g} s and {limits.memory_bytes // 2**20} MiB at most.\n\nTools:\n"
        + ("\n".join(signatures) or "(none)")
    )
    parameters = {
        "type": "object",
        "properties": {"program": {"type": "string", "description": "The Python program"}},
        "required": ["program"],
    }
    return ToolSpec(name, description, parameters)


def tool_value(result: CallToolResult, text: str) -> Any:
    """A tool's value in the program: its structured result, or ``text`` (what the model
    would have read) when it has none."""
    structured = result.raw.get("structuredContent")
    return structured if structured is not None else text


def outcome_text(outcome: ProgramOutcome) -> str:
    """What the model reads of a program's run: what it printed, then its result or error."""
    said = []
    if outcome.output or outcome.dropped:
        dropped = f"\n[{outcome.dropped} more characters were printed and not kept]" if outcome.dropped else ""
        said.append(f"Printed:\n{outcome.output}{dropped}")
    if outcome.error is not None:
        said.append(f"The program failed: {outcome.error}")
    else:
        value = outcome.value
        said.append("Result:\n" + (value if isinstance(value, str) else orjson.dumps(value, default=str).decode()))
    return "\n\n".join(said)
