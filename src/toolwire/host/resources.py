"""The host's ``list_resources`` tool: what resources a server has, for the model.

A model learns of a server's resources only when a tool links one, unless it can list
them: with ``Host(list_resources=True)`` (the default) every conversation offers, beside
``read_resource``, a ``list_resources`` tool whenever a connected server has resources.
A call lists one server's resources and resource templates (``resources/list`` and
``resources/templates/list`` through its client, every page), at most :data:`MAX_LISTED`
of them, saying how many more there are. Its approval name is ``SERVER/resources/list``
(read-only, like ``SERVER/resources/read``); a call naming no server when several have
resources is refused saying which to choose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..client import ToolInfo
from .model import ToolSpec

if TYPE_CHECKING:
    from ..client import ResourceInfo, ResourceTemplateInfo

#: The name of the host's own tool that lists a server's resources.
LIST_RESOURCES = "list_resources"
#: The approval name of listing resources: ``SERVER/resources/list`` in patterns.
LIST_RESOURCES_TOOL = ToolInfo.from_dict({"name": "resources/list", "annotations": {"readOnlyHint": True}})
#: Resources and templates one listing shows at most.
MAX_LISTED = 100


def lister_spec(name: str, readers: list[str]) -> ToolSpec:
    """The definition the model sees: ``server`` one of ``readers`` (needed when several)."""
    parameters = {
        "type": "object",
        "properties": {
            "server": {"type": "string", "enum": readers, "description": "Which server's resources to list"},
        },
    }
    return ToolSpec(
        name, "List the resources (URIs to read with read_resource) and URI templates of an MCP server.", parameters
    )


def listed_text(server: str, resources: list[ResourceInfo], templates: list[ResourceTemplateInfo]) -> str:
    """The listing as the model reads it: a line per resource, then per template."""
    lines = [f"{entry.uri}: {_about(entry)}" for entry in resources]
    lines += [f"{entry.uri_template} (a template: fill in the {{variables}}): {_about(entry)}" for entry in templates]
    if not lines:
        return f"The server {server!r} lists no resources."
    shown = "\n".join(lines[:MAX_LISTED])
    more = len(lines) - MAX_LISTED
    return f"Resources of {server!r}:\n{shown}" + (f"\n... and {more} more, not shown." if more > 0 else "")


def _about(entry: ResourceInfo | ResourceTemplateInfo) -> str:
    about = entry.title or entry.name
    return (
        about
        + (f" ({entry.mime_type})" if entry.mime_type else "")
        + (f" - {entry.description}" if entry.description else "")
    )
