"""The root of the errors toolwire raises: ``except toolwire.ToolwireError`` catches every one
of them (and no bug of Python's or of your own code).

Under it, the server's side (a server's author raises or catches these): :class:`ToolError`
(raise in a tool: an ``isError`` result), :class:`ResourceNotFound` (also a ``LookupError``),
:class:`CapabilityMissing`, :class:`ClientRequestFailed`, :class:`LifespanFailed`,
:class:`~toolwire.tasks.TaskStoreBusy` and :class:`~toolwire.tasks.TaskStoreUnusable`,
:class:`~toolwire.auth.InvalidToken` and :class:`~toolwire.auth.AuthError`, schema and
argument errors (also ``ValueError``), a missing extra (also ``ImportError``), an HTTP
address that cannot be listened on (also ``OSError``); the client's side:
:class:`~toolwire.client.ClientError` and all under it. :class:`~toolwire.ProtocolError`
(raise it to answer with a JSON-RPC error) belongs to the protocol package, which imports
nothing else of toolwire, and stands apart.
"""


class ToolwireError(Exception):
    """Base of every error toolwire raises of its own."""
