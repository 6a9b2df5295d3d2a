"""The gateway: many MCP servers behind one endpoint, per user (see docs/gateway.md).

:mod:`.policy` (who may see and call what, argument constraints), :mod:`.approval` (asking
the caller before an ``ask`` rule's calls), :mod:`.limits` (per-caller rate and concurrency),
:mod:`.audit` (the ``[audit]`` table): guards a :class:`~toolwire.Server` takes.
"""
