"""A folder of tool files served by one server: ``server.add_folder("tools/")``, or
``toolwire run tools/``.

What a file holds
-----------------
Each ``.py`` file under the folder (at any depth; names starting with ``_`` or ``.`` are
left out, so ``_helpers.py`` is a module the others may import) is a tool file as
``toolwire run FILE`` serves one: it defines a :class:`~toolwire.Server` (named ``server``,
``mcp`` or ``app``, or the only one) with its tools, resources, resource templates,
prompts and skills, mounted servers included. The folder's server serves all of those
under their own names; each tool still runs as its file made it. Only the items are taken:
a file's server options, guards and lifespan are not (set those on the folder's server).

Problems are reported, one line each (in :attr:`Folder.problems` and the log), and never
stop the rest from being served: a file that fails to import (its exception), a file with
no Server or several, a name two files define (the first file in path order keeps it, the
line names both), a name the folder's server has already.

Reloading
---------
With ``reload=True`` the folder is watched while the server serves (its ``.py`` files'
modification times, polled: :mod:`toolwire.dev.watch`). On a change every file is imported
again into a new set, off the event loop; then, on the loop and without yielding, the old
items are removed and the new added, so no request ever sees a half-loaded folder; clients
are told the lists changed (``notifications/tools/list_changed`` and those of resources and
prompts). Modules the files import from elsewhere (``_helpers.py`` too) are not reloaded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..logs import get_logger

if TYPE_CHECKING:
    import asyncio
    import os

    from .server import Server

log = get_logger("toolwire")

#: Seconds between two looks at a watched folder.
POLL_SECONDS = 0.25
#: The kinds of item a file contributes, as catalogs name them, and one of each in messages.
KINDS = {
    "tools": "tool",
    "resources": "resource",
    "resourceTemplates": "resource template",
    "prompts": "prompt",
    "skills": "skill",
}
_generations = itertools.count(1)

#: What loading a folder found: per kind, each key's item and the file (relative) it came from.
Found = dict[str, dict[str, tuple[Any, str]]]


def servers_of(module: ModuleType) -> list[Server]:
    """The Servers a module offers to be served: those named ``server``, ``mcp`` or ``app``,
    else every Server it defines (one is what ``toolwire run FILE`` serves)."""
    from .server import Server

    conventional = (getattr(module, name, None) for name in ("server", "mcp", "app"))
    candidates = [value for value in conventional if isinstance(value, Server)]
    return candidates or [value for value in vars(module).values() if isinstance(value, Server)]


class Folder:
    """The tool files of ``path`` served by ``server`` (see the module). ``ValueError`` if
    ``path`` is not a folder."""

    def __init__(self, server: Server, path: str | os.PathLike[str], reload: bool = False) -> None:
        self.path = Path(path).resolve()
        if not self.path.is_dir():
            raise ValueError(f"{path} is not a folder")
        self.server = server
        self.reload = reload
        #: What the last load could not serve, one line each.
        self.problems: list[str] = []
        self._served: dict[str, list[str]] = {kind: [] for kind in KINDS}
        self._modules: list[str] = []
        self._watching: asyncio.Task[None] | None = None
        self._users = 0

    def load(self) -> None:
        """Import every file and serve what they define, in place of what was served."""
        self._swap(*self._collect())

    def files(self) -> list[Path]:
        """The tool files, in path order."""
        return sorted(
            file
            for file in self.path.rglob("*.py")
            if not any(part.startswith(("_", ".")) for part in file.relative_to(self.path).parts)
        )

    def _collect(self) -> tuple[Found, list[str], list[str]]:
        """Import every file as a new module: what they define (see :data:`Found`), the
        problems, and the names of the modules made."""
        found: Found = {kind: {} for kind in KINDS}
        problems: list[str] = []
        modules: list[str] = []
        if str(self.path) not in sys.path:
            sys.path.insert(0, str(self.path))  # a file may import its neighbours (_helpers.py)
        generation = next(_generations)
        for file in self.files():
            where = file.relative_to(self.path).as_posix()
            name = f"_toolwire_folder_{generation}_{len(modules)}"
            try:
                module = _imported(name, file)
            except (Exception, SystemExit) as exc:
                problems.append(f"{where} failed to import, so nothing of it is served: {type(exc).__name__}: {exc}")
                continue
            modules.append(name)
            servers = servers_of(module)
            if len(servers) != 1:
                what = "no Server" if not servers else "several Servers (name one server)"
                problems.append(f"{where} defines {what}, so nothing of it is served")
                continue
            for kind, items in _items(servers[0]).items():
                for key, item in items.items():
                    first = found[kind].get(key)
                    if first is not None:
                        said = f"the {KINDS[kind]} {key!r} is defined by both {first[1]} and {where}"
                        problems.append(f"{said}: {first[1]}'s is served")
                        continue
                    found[kind][key] = (item, where)
        return found, problems, modules

    def _swap(self, found: Found, problems: list[str], modules: list[str]) -> None:
        """Serve ``found`` instead of what was served (synchronously: no request sees a mix)."""
        server = self.server
        for kind, keys in self._served.items():
            for key in keys:
                with contextlib.suppress(KeyError):  # removed from the server by hand meanwhile
                    _remove(server, kind, key)
        self._served = {kind: [] for kind in KINDS}
        for kind, items in found.items():
            for key, (item, where) in items.items():
                try:
                    _add(server, kind, item)  # refused when the server has that name
                except ValueError:
                    problems.append(f"the {KINDS[kind]} {key!r} of {where} is not served: the server has one already")
                    continue
                self._served[kind].append(key)
        for name in self._modules:
            sys.modules.pop(name, None)
        self._modules = modules
        self.problems = problems
        for problem in problems:
            log.warning("%s: %s", self.path.name, problem)

    # -- watching --------------------------------------------------------------------------

    def start(self) -> None:
        """Watch the folder from now on when asked to (``reload``), on the running loop
        (counted: each :meth:`start` is matched by a :meth:`stop`)."""
        import asyncio  # not at import: serving over stdio imports the event loop late

        self._users += 1
        if self.reload and self._watching is None:
            self._watching = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        """Stop watching once the last who started it stops."""
        self._users -= 1
        watching = self._watching
        if watching is not None and self._users <= 0:
            import asyncio

            self._watching = None
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)

    async def _watch(self) -> None:
        import asyncio

        from ..dev.watch import Watch

        watch = Watch(self.path)
        while True:
            await asyncio.sleep(POLL_SECONDS)  # polling the files' times, not waiting for an event of ours
            if watch.changed():
                try:
                    collected = await asyncio.to_thread(self._collect)
                except OSError as exc:  # the folder went away or cannot be read: serve what was loaded
                    log.warning("%s: not reloaded: %s", self.path.name, exc)
                    continue
                self._swap(*collected)
                log.info("%s: reloaded", self.path.name)


def _imported(name: str, file: Path) -> ModuleType:
    """``file`` run as the module ``name``; raises what it raises."""
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"{file} cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and type hints look their module up there
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _items(server: Server) -> dict[str, Mapping[str, Any]]:
    """What ``server`` serves, per kind, by key; a skill's files are its skill's, not resources."""
    from ..protocol.versions import SKILLS_EXTENSION

    extension = server.extensions.get(SKILLS_EXTENSION)
    skills: dict[str, Any] = getattr(extension, "skills", {})
    files = {skill.file_uri(relative) for skill in skills.values() for relative in skill.files}
    resources = {uri: item for uri, item in server.resources.by_key.items() if uri not in files}
    return {
        "tools": server.registry.by_key,
        "resources": resources,
        "resourceTemplates": server.resource_templates.by_key,
        "prompts": server.prompts.by_key,
        "skills": skills,
    }


def _add(server: Server, kind: str, item: Any) -> None:
    if kind == "tools":
        server.add_tool(item)
    elif kind == "resources":
        server.add_resource_object(item)
    elif kind == "resourceTemplates":
        server.add_resource_template_object(item)
    elif kind == "prompts":
        server.add_prompt(item)
    else:
        server._skills().add(item)


def _remove(server: Server, kind: str, key: str) -> None:
    if kind == "tools":
        server.remove_tool(key)
    elif kind == "prompts":
        server.remove_prompt(key)
    elif kind == "skills":
        server._skills().remove(key)
    else:
        server.remove_resource(key)
