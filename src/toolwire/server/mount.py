"""Composition: one server's tools, resources and prompts served by another under a prefix.

``parent.mount(child, "weather")`` shows the child's tool ``forecast`` as
``weather_forecast``, its prompt ``brief`` as ``weather_brief``, its resource
``data://today`` as ``data://weather/today`` and its template ``data://{city}`` as
``data://weather/{city}`` (the prefix transform, :func:`.prefix.prefixed`). They are the
child's own objects under new names: the same
functions, schemas, annotations, task support and scopes. When the child's lists change
(a tool added, removed, disabled), the parent's follow, and the parent's clients are told.
The child's lifespan starts and stops with the parent's; its tools reach their own server's
lifespan through ``ctx.lifespan``. The parent's guards (timeouts, limits, audit) apply to
what it serves; the child's own guards do not.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..logs import get_logger
from .prefix import prefixed

if TYPE_CHECKING:
    from .server import Server

log = get_logger("toolwire")

PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class Mount:
    """``child`` served by ``parent`` under ``prefix``, kept in step with the child."""

    def __init__(self, parent: Server, child: Server, prefix: str) -> None:
        if not PREFIX.fullmatch(prefix):
            raise ValueError(f"invalid mount prefix {prefix!r}: letters, digits, '_', '-' and '.'")
        if child is parent:
            raise ValueError("a server cannot be mounted into itself")
        self.parent = parent
        self.child = child
        self.prefix = prefix
        self._added: dict[str, list[str]] = {"tools": [], "resources": [], "templates": [], "prompts": []}
        self._stops: list[Callable[[], object]] = []

    def attach(self) -> None:
        """Copy the child's items in (``ValueError`` if a name is taken: nothing is left
        half-mounted) and follow its changes."""
        try:
            self.sync(strict=True)
        except ValueError:
            self._clear()
            raise
        child = self.child
        self._stops = [
            catalog.on_change(self._changed)
            for catalog in (child.registry, child.resources, child.resource_templates, child.prompts)
        ]

    def _changed(self) -> None:
        self.sync(strict=False)

    def sync(self, strict: bool) -> None:
        """Replace what was copied with the child's items as they are now. ``strict``: a
        taken name is a ``ValueError``; otherwise it is skipped with a warning."""
        self._clear()
        parent, child, prefix = self.parent, self.child, self.prefix
        for tool in child.registry.all():
            renamed = prefixed(tool, prefix)
            if renamed.owner is None:
                renamed.owner = child
            self._add("tools", renamed.name, parent.add_tool, renamed, strict)
        for resource in child.resources.all():
            moved = prefixed(resource, prefix)
            self._add("resources", moved.uri, parent.add_resource_object, moved, strict)
        for template in child.resource_templates.all():
            moved_template = prefixed(template, prefix)
            key = moved_template.uri_template
            self._add("templates", key, parent.add_resource_template_object, moved_template, strict)
        for prompt in child.prompts.all():
            renamed_prompt = prefixed(prompt, prefix)
            self._add("prompts", renamed_prompt.name, parent.add_prompt, renamed_prompt, strict)

    def _add(self, kind: str, key: str, add: Callable[[Any], Any], item: Any, strict: bool) -> None:
        try:
            add(item)
        except ValueError:
            if strict:
                raise
            log.warning("mounting %r: %s %r is taken in the parent server, so it is not served", self.prefix, kind, key)
            return
        self._added[kind].append(key)

    def _clear(self) -> None:
        parent = self.parent
        catalogs: dict[str, Any] = {
            "tools": parent.registry,
            "resources": parent.resources,
            "templates": parent.resource_templates,
            "prompts": parent.prompts,
        }
        for kind, keys in self._added.items():
            for key in keys:
                if key in catalogs[kind]:
                    catalogs[kind].remove(key)
            keys.clear()

    def detach(self) -> None:
        """Stop following the child and take its items out of the parent."""
        for stop in self._stops:
            stop()
        self._stops = []
        self._clear()
