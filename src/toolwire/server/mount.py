"""Composition: one server's tools, resources and prompts served by another under a prefix.

``parent.mount(child, "weather")`` shows the child's tool ``forecast`` as
``weather_forecast``, its prompt ``brief`` as ``weather_brief``, its resource
``data://today`` as ``data://weather/today`` and its template ``data://{city}`` as
``data://weather/{city}`` (the prefix transform, :func:`.prefix.prefixed`). They are the
child's own objects under new names: the same
functions, schemas, annotations, task support and scopes. When the child's lists change
(a tool added, removed, disabled), the parent's follow, and the parent's clients are told.
What the child hides from everyone (``disable_tool``, ``include_tags``/``exclude_tags``,
its ``visibility.everyone`` rules) the parent does not serve. The child's lifespan starts
and stops with the parent's; its tools reach their own server's lifespan through
``ctx.lifespan``. The parent's guards (timeouts, limits, audit) apply to what it serves;
the child's own guards do not.

The child's extensions come through: a mounted tool's
definition keeps the fields they added (MCP Apps' ``_meta.ui``, its view's URI prefixed as
the view's ``ui://`` resource is), and the parent offers in its place what each one's
:meth:`~toolwire.server.extensions.Extension.mount_into` puts there: by default what
:meth:`~toolwire.server.extensions.Extension.mounted` says, unless the parent offers that
identifier itself: MCP Apps (its capability), an extension with methods (the same
identifier, capabilities and methods, answered by the child's handlers). Skills join the
parent's own: ``skills/list``, ``skills/get`` and ``resources/directory/read`` give the
child's skills at ``PREFIX/PATH``, where their ``skill://`` files are served. Task tools run
as tasks of the parent (it offers tasks for them: ``tasks/get``, ``tasks/result``,
``tasks/cancel`` answer there). The parent's Server Card is its own: a card lists no tools,
resources or extensions of anyone's. An extension the child offers once mounted comes
through with the child's next list change (a skill's files, a tool shown in a view, a
proxy's first lists). Unmounting withdraws what the mount offered.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..logs import get_logger
from .extensions import Extension, register_methods
from .prefix import prefixed

if TYPE_CHECKING:
    from .server import Server

log = get_logger("toolwire")

PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class Mount:
    """``child`` served by ``parent`` under ``prefix`` (``separator`` between the prefix and
    a tool's or prompt's name), kept in step with the child. ``strict``: see :meth:`attach`."""

    def __init__(self, parent: Server, child: Server, prefix: str, separator: str = "_", strict: bool = True) -> None:
        if not PREFIX.fullmatch(prefix):
            raise ValueError(f"invalid mount prefix {prefix!r}: letters, digits, '_', '-' and '.'")
        if child is parent:
            raise ValueError("a server cannot be mounted into itself")
        self.parent = parent
        self.child = child
        self.prefix = prefix
        self.separator = separator
        self.strict = strict
        self._added: dict[str, list[str]] = {"tools": [], "resources": [], "templates": [], "prompts": []}
        self._stops: list[Callable[[], object]] = []
        self._withdrawals: list[Callable[[], None]] = []
        self._carried: set[str] = set()  # the child's extensions offered here (or offering nothing)

    def attach(self) -> None:
        """Copy the child's items in, offer its extensions (``ValueError`` if a name or a
        method is taken, or a tool's name is too long once prefixed: nothing is left
        half-mounted; unless not ``strict``: then those are left out with a warning) and
        follow its changes."""
        try:
            self.sync(strict=self.strict)
            self._offer_extensions(strict=self.strict)
        except BaseException:
            self._withdraw_extensions()
            self._clear()
            raise
        child = self.child
        self._stops = [
            catalog.on_change(self._changed)
            for catalog in (child.registry, child.resources, child.resource_templates, child.prompts)
        ]

    def _changed(self) -> None:
        self.sync(strict=False)
        self._offer_extensions(strict=False)

    def sync(self, strict: bool) -> None:
        """Replace what was copied with the child's items as they are now (the parent's
        clients told once). ``strict``: a taken name is a ``ValueError``; otherwise it is
        skipped with a warning."""
        with _batched(self.parent):
            self._copy(strict)

    def _copy(self, strict: bool) -> None:
        self._clear()
        parent, child, prefix = self.parent, self.child, self.prefix
        rules = child.visibility.everyone.rules  # what the child hides from everyone stays hidden
        extensions = list(child.extensions.values())
        for tool in child.registry.all():
            if rules is not None and not rules.shows("tools", tool.name, tool):
                continue
            try:
                renamed = prefixed(tool, prefix, self.separator)
            except ValueError as exc:  # a name too long once prefixed
                if strict:
                    raise
                log.warning("mounting %r: the tool %r is not served: %s", prefix, tool.name, exc)
                continue
            for extension in extensions:
                renamed.definition = extension.prefixed_definition(renamed.definition, prefix)
            if renamed.owner is None:
                renamed.owner = child
            self._add("tools", renamed.name, parent.add_tool, renamed, strict)
        for resource in child.resources.all():
            if rules is None or rules.shows("resources", resource.uri, resource):
                moved = prefixed(resource, prefix)
                self._add("resources", moved.uri, parent.add_resource_object, moved, strict)
        for template in child.resource_templates.all():
            if rules is None or rules.shows("resourceTemplates", template.uri_template, template):
                moved_template = prefixed(template, prefix)
                key = moved_template.uri_template
                self._add("templates", key, parent.add_resource_template_object, moved_template, strict)
        for prompt in child.prompts.all():
            if rules is None or rules.shows("prompts", prompt.name, prompt):
                renamed_prompt = prefixed(prompt, prefix, self.separator)
                self._add("prompts", renamed_prompt.name, parent.add_prompt, renamed_prompt, strict)

    def _offer_extensions(self, strict: bool = True) -> None:
        """Offer in the parent what each of the child's extensions not carried yet says it
        offers there. ``strict``: a method taken is a ``ValueError``; otherwise the extension
        is skipped with a warning."""
        for identifier, extension in list(self.child.extensions.items()):
            if identifier in self._carried:
                continue
            self._carried.add(identifier)
            try:
                withdraw = extension.mount_into(self.parent, self.prefix)
            except ValueError as exc:
                if strict:
                    raise
                log.warning("mounting %r: the extension %r is not offered: %s", self.prefix, identifier, exc)
                continue
            if withdraw is not None:
                self._withdrawals.append(withdraw)

    def _withdraw_extensions(self) -> None:
        for withdraw in reversed(self._withdrawals):
            withdraw()
        self._withdrawals = []
        self._carried = set()

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
        self._withdraw_extensions()
        with _batched(self.parent):
            self._clear()


@contextlib.contextmanager
def _batched(server: Server) -> Iterator[None]:
    """``server``'s four catalogs batched: each tells its listeners once, at the end."""
    with contextlib.ExitStack() as stack:
        for catalog in (server.registry, server.resources, server.resource_templates, server.prompts):
            stack.enter_context(catalog.batched())
        yield


class MountedExtension(Extension):
    """A mounted server's extension as its parent offers it (the default of
    :meth:`Extension.mounted <toolwire.server.extensions.Extension.mounted>`): the same
    identifier, capabilities and methods, answered by the mounted extension's handlers."""

    def __init__(self, mounted: Extension) -> None:
        self.id = mounted.id
        self.mounted_extension = mounted

    def capabilities(self, version: str) -> dict[str, Any]:
        return self.mounted_extension.capabilities(version)

    def install(self, server: Server) -> None:
        register_methods(self.mounted_extension, self.id, server)

    def mounted(self, prefix: str) -> Extension | None:
        return self.mounted_extension.mounted(prefix)  # mounted again, one level up
