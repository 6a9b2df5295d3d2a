"""The prefix transform: a tool, prompt, resource or resource template served under a
prefix, as :meth:`Server.mount <toolwire.Server.mount>` serves another server's (and as a
program may, for items of its own: ``server.add_tool(prefixed(tool, "v2"))``).
"""

from __future__ import annotations

import copy
from typing import TypeVar

from ..resources.uri_template import UriTemplate
from ..tools.tool import Tool, check_name

T = TypeVar("T")


def prefixed(item: T, prefix: str, separator: str = "_") -> T:
    """``item`` (a tool, prompt, resource or resource template) under ``prefix``: the tool
    ``forecast`` as ``weather_forecast`` (``separator`` between them), the resource ``data://today`` as
    ``data://weather/today`` (a URI without ``://``: ``weather/uri``). The same object's
    copy: its function, schemas and options unchanged (a tool's definition too, with the
    fields its server's extensions added). ``ValueError`` for a tool whose new name MCP does
    not allow (longer than 128 characters); ``TypeError`` for anything else."""
    from ..prompts.prompt import Prompt
    from ..resources.resource import Resource, ResourceTemplate

    moved = copy.copy(item)
    if isinstance(moved, Tool):
        moved.name = check_name(f"{prefix}{separator}{moved.name}")
        moved.definition = {**moved.definition, "name": moved.name}  # with the fields extensions added
    elif isinstance(moved, Prompt):
        moved.name = f"{prefix}{separator}{moved.name}"
    elif isinstance(moved, Resource):
        named_by_uri = moved.name == moved.uri
        moved.uri = prefixed_uri(prefix, moved.uri)
        if named_by_uri:
            moved.name = moved.uri
    elif isinstance(moved, ResourceTemplate):
        named_by_uri = moved.name == moved.uri_template
        moved.uri_template = prefixed_uri(prefix, moved.uri_template)
        moved.template = UriTemplate(moved.uri_template)
        if named_by_uri:
            moved.name = moved.uri_template
    else:
        raise TypeError(f"cannot prefix {type(item).__name__}: a tool, prompt, resource or template")
    return moved


def prefixed_uri(prefix: str, uri: str) -> str:
    """``scheme://rest`` as ``scheme://prefix/rest`` (a URI without ``://``: ``prefix/uri``)."""
    scheme, separator, rest = uri.partition("://")
    return f"{scheme}://{prefix}/{rest}" if separator else f"{prefix}/{uri}"
