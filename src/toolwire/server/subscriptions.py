"""``subscriptions/listen`` (2026-07-28): a handler of the dispatch table.

The request stays open as the subscription: it is acknowledged at once with what the
server honours of what was asked (list changes of what it offers, resource updates, and
what extensions add: the tasks extension's ``taskIds``), then the session sends each
change on it (see :meth:`ServerSession.list_changed` and
:meth:`ServerSession.resource_updated`) until the client cancels it or the session
closes, which answers it. A malformed filter is ``-32602``; an extension may refuse the
subscription (the tasks extension: ``-32021`` for task notifications without declaring it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol.errors import INVALID_PARAMS, ProtocolError
from ..protocol.incoming import Request
from ..protocol.versions import META_SUBSCRIPTION_ID

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
    listeners = session.server.listeners
    for extension in listeners:
        refused = extension.listen(session, request, wanted, honoured)
        if refused is not None:
            session.unwatch(request.id)
            return session.fail(request, refused)
    uris = wanted.get("resourceSubscriptions")
    if uris is not None:
        if type(uris) is not list or not all(type(uri) is str for uri in uris):
            session.unwatch(request.id)
            return session.fail(
                request, ProtocolError(INVALID_PARAMS, 'Invalid params: "resourceSubscriptions" must list URIs')
            )
        if "resources" in offered:
            honoured["resourceSubscriptions"] = uris
    session.subscriptions[request.id] = (request, honoured)
    ack = {"_meta": {META_SUBSCRIPTION_ID: request.id}, "notifications": honoured}
    session.send_for(request, "notifications/subscriptions/acknowledged", ack)
    for extension in listeners:
        extension.acknowledged(session, honoured)
    return None
