"""``subscriptions/listen`` (2026-07-28): a handler of the dispatch table.

The request stays open as the subscription: it is acknowledged at once with what the
server honours of what was asked (list changes of what it offers, resource updates,
notifications of tasks the caller may see), then the session sends each change on it
(see :meth:`ServerSession.list_changed` and :meth:`ServerSession.resource_updated`) until
the client cancels it or the session closes, which answers it. A malformed filter is
``-32602``; asking for task notifications without declaring the tasks extension is
``-32021``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol.connection import Request
from ..protocol.errors import INVALID_PARAMS, ProtocolError
from ..protocol.versions import META_SUBSCRIPTION_ID, TASKS_EXTENSION
from .dispatch import declares, extension_missing

if TYPE_CHECKING:
    from .session import ServerSession


def listen(session: ServerSession, request: Request) -> None:
    session.start_listening()
    wanted = request.params.get("notifications")
    if wanted is not None and type(wanted) is not dict:
        return session.fail(request, ProtocolError(INVALID_PARAMS, 'Invalid params: "notifications" must be an object'))
    wanted = wanted or {}
    offered = session.server.identity.capabilities
    honoured: dict[str, Any] = {}
    for kind in ("tools", "prompts", "resources"):
        key = f"{kind}ListChanged"
        if wanted.get(key) is True and kind in offered:
            honoured[key] = True
    task_ids = wanted.get("taskIds")
    if task_ids is not None:
        refused = _watch_tasks(session, request, task_ids, honoured)
        if refused is not None:
            return session.fail(request, refused)
    uris = wanted.get("resourceSubscriptions")
    if uris is not None:
        if type(uris) is not list or not all(type(uri) is str for uri in uris):
            return session.fail(
                request, ProtocolError(INVALID_PARAMS, 'Invalid params: "resourceSubscriptions" must list URIs')
            )
        if "resources" in offered:
            honoured["resourceSubscriptions"] = uris
    session.subscriptions[request.id] = (request, honoured)
    ack = {"_meta": {META_SUBSCRIPTION_ID: request.id}, "notifications": honoured}
    session.send_for(request, "notifications/subscriptions/acknowledged", ack)
    for task_id in honoured.get("taskIds", ()):  # where each stands now, then each change
        session.server.tasks.tell(task_id)
    return None


def _watch_tasks(
    session: ServerSession, request: Request, task_ids: Any, honoured: dict[str, Any]
) -> ProtocolError | None:
    """Listen for ``notifications/tasks`` of the tasks named (those running here that the
    caller may see: what the acknowledgement lists); the error to answer with, if any."""
    if type(task_ids) is not list or not all(type(task_id) is str for task_id in task_ids):
        return ProtocolError(INVALID_PARAMS, 'Invalid params: "taskIds" must list task ids')
    if not declares(request, TASKS_EXTENSION):
        return extension_missing(TASKS_EXTENSION, f"task notifications need the {TASKS_EXTENSION} extension")
    meta = {META_SUBSCRIPTION_ID: request.id}

    def tell(task: dict[str, Any]) -> None:
        session.send_for(request, "notifications/tasks", {**task, "_meta": meta})

    watched = []
    if "tasks" in session.server.identity.capabilities:
        owner = session.caller_name(request)
        for task_id in task_ids:
            remover = session.server.tasks.watch(task_id, owner, tell)
            if remover is not None:
                watched.append(task_id)
                session.task_watches.setdefault(request.id, []).append(remover)
    honoured["taskIds"] = watched
    return None
