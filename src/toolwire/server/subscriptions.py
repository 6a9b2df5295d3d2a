"""``subscriptions/listen`` (2026-07-28): a handler of the dispatch table.

The request stays open as the subscription: it is acknowledged at once with what the
server honours of what was asked (list changes of what it offers, resource updates, and
what extensions add: the tasks extension's ``taskIds``), then the session sends each
change on it (:func:`tell_list_changed` and :func:`tell_resource_updated`, which also tell
legacy clients, for :meth:`ServerSession.list_changed` and
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


def tell_list_changed(session: ServerSession, kind: str, caller: str | None) -> None:
    """Send ``notifications/{kind}/list_changed`` to a legacy client (unless ``caller`` is
    given and did not open the session) and on each subscription that asked for it (of
    ``caller``, if given). On the session's loop."""
    method = f"notifications/{kind}/list_changed"
    if session.connection.legacy is not None and (caller is None or caller == session.owner):
        session.send(session.connection.notify(None, method, {}))
    key = f"{kind}ListChanged"
    for request, honoured in list(session.subscriptions.values()):
        if honoured.get(key) and (caller is None or caller == session.caller_name(request)):
            session.send_for(request, method, {"_meta": {META_SUBSCRIPTION_ID: request.id}})


def tell_resource_updated(session: ServerSession, uri: str) -> None:
    """Send ``notifications/resources/updated`` for ``uri`` to a legacy client that
    subscribed to it and on each subscription that watches it. On the session's loop."""
    method = "notifications/resources/updated"
    if uri in session.resource_subscriptions:
        session.send(session.connection.notify(None, method, {"uri": uri}))
    for request, honoured in list(session.subscriptions.values()):
        if uri in honoured.get("resourceSubscriptions", ()):
            session.send_for(request, method, {"_meta": {META_SUBSCRIPTION_ID: request.id}, "uri": uri})
