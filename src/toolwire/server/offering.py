"""Offering an extension on a server, all or nothing (:meth:`Server.add_extension
<toolwire.server.server.Server.add_extension>`), and taking one back.

An extension is put in place in steps: advertised in the capabilities, its hooks noted,
its ``install`` run (which may add methods, tools, resources, prompts, guards and further
extensions), its fields added to the tool definitions. If any step raises, every change
the others made is undone before the exception goes on: no method of it is answered, no
capability advertised, no item of it listed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .extensions import Extension, check_identifier, merge_definition, overrides

if TYPE_CHECKING:
    from .server import Server


def offer(server: Server, extension: Extension) -> Extension:
    """Offer ``extension`` on ``server`` (see the module's documentation); raises what a step
    raised, with nothing of the extension left. ``ValueError`` for a malformed identifier
    or one ``server`` offers already."""
    identifier = check_identifier(extension.id)
    if identifier in server.extensions:
        raise ValueError(f"this server offers the extension {identifier!r} already")
    before = _Before(server)
    dispatch = server.dispatch
    installing = dispatch.installing
    try:
        server.extensions[identifier] = extension
        server.identity.contributions.append(extension.capabilities)
        server.identity.changed()
        if overrides(extension, "claim_call"):
            server.call_claimers = (*server.call_claimers, extension)
        if overrides(extension, "listen"):
            server.listeners = (*server.listeners, extension)
        dispatch.installing = identifier
        extension.install(server)
        dispatch.installing = installing
        if overrides(extension, "tool_definition"):
            server.definers = (*server.definers, extension)
            tools = server.registry.all()
            for tool in tools:
                extend_definition(tool, extension)
            if tools:
                server.registry.refresh()
    except BaseException:
        dispatch.installing = installing
        before.restore()
        raise
    return extension


def withdraw(server: Server, identifier: str) -> None:
    """Stop offering the extension ``identifier`` on ``server``: its capabilities, its hooks,
    its methods (what it added otherwise, tools or resources, stays). Nothing if not offered."""
    extension = server.extensions.pop(identifier, None)
    if extension is None:
        return
    contributions = server.identity.contributions
    contributions[:] = [contribute for contribute in contributions if contribute != extension.capabilities]
    server.identity.changed()
    server.call_claimers = tuple(other for other in server.call_claimers if other is not extension)
    server.listeners = tuple(other for other in server.listeners if other is not extension)
    server.definers = tuple(other for other in server.definers if other is not extension)
    server.dispatch.remove_owned(identifier)


def extend_definition(tool: Any, extension: Extension) -> None:
    """Add to ``tool``'s definition what ``extension`` adds to it."""
    fields = extension.tool_definition(tool)
    if fields:
        tool.definition = merge_definition(tool.definition, fields)


class _Before:
    """What a server offered before an extension was added, to go back to."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.extensions = dict(server.extensions)
        self.capabilities = dict(server.identity.capabilities)
        self.contributions = list(server.identity.contributions)
        self.hooks = (server.call_claimers, server.listeners, server.definers)
        self.routes = dict(server.dispatch.routes)
        self.guards = list(server.guards)
        self.definitions = {tool.name: tool.definition for tool in server.registry.all()}
        self.items = {kind: set(catalog.by_key) for kind, catalog in _catalogs(server).items()}

    def restore(self) -> None:
        server = self.server
        server.extensions.clear()
        server.extensions.update(self.extensions)
        server.identity.capabilities.clear()
        server.identity.capabilities.update(self.capabilities)
        server.identity.contributions[:] = self.contributions
        server.identity.changed()
        server.call_claimers, server.listeners, server.definers = self.hooks
        server.dispatch.restore(self.routes)
        if server.guards != self.guards:
            server.guards[:] = self.guards
            server.recompose()
        for kind, catalog in _catalogs(server).items():
            for key in [key for key in catalog.by_key if key not in self.items[kind]]:
                if kind == "tools":
                    server.remove_tool(key)
                else:
                    catalog.remove(key)
        changed = False
        for tool in server.registry.all():
            definition = self.definitions.get(tool.name)
            if definition is not None and tool.definition is not definition:
                tool.definition = definition
                changed = True
        if changed:
            server.registry.refresh()


def _catalogs(server: Server) -> dict[str, Any]:
    return {
        "tools": server.registry,
        "resources": server.resources,
        "templates": server.resource_templates,
        "prompts": server.prompts,
    }
