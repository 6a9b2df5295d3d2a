"""An upstream as the gateway reaches it: what to connect to, with which credentials.

An upstream is a command (served over stdio, with its ``env`` added to the gateway's
environment and its ``cwd``) or a URL (Streamable HTTP; the old HTTP+SSE found when the
server refuses the first, or forced with ``transport = "sse"``). A URL's credentials are the
gateway's own, never its callers': static ``headers``, a bearer token read from the
environment variable ``bearer_env``, or OAuth client credentials (the client's
:class:`~toolwire.auth.client.OAuth`). Nothing a caller sends (its ``Authorization`` above all)
reaches an upstream. Each start makes a fresh :func:`~toolwire.proxy.proxy` of the upstream,
read from the environment at that moment (a rotated secret is used at the next restart).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..errors import ToolwireError
from ..proxy import proxy
from ..server.server import Server
from .config import OAuthCredentials, UpstreamConfig

#: ``transport`` in the configuration, as the HTTP transport's ``legacy_sse``.
LEGACY_SSE = {"auto": None, "http": False, "sse": True}


class UpstreamUnusable(ToolwireError):
    """The upstream cannot be started as configured (an environment variable missing); the
    message names the upstream and what to set."""


def upstream_proxy(config: UpstreamConfig, on_closed: Callable[[str], Any] | None = None) -> Server:
    """A fresh proxy Server of ``config``'s upstream (not connected yet: it connects when it
    starts). ``on_closed(reason)`` is called when the upstream's connection ends without the
    gateway closing it (its process exited, its server went away). :class:`UpstreamUnusable`
    for credentials missing from the environment."""
    options: dict[str, Any] = {"call_timeout": config.timeout}
    if on_closed is not None:
        options["on_close"] = on_closed
    if config.command is not None:
        target: Any = list(config.command)
        options["env"] = dict(config.env) or None
        options["cwd"] = str(config.cwd) if config.cwd is not None else None
    else:
        from ..client.http import StreamableHttpTransport

        assert config.url is not None
        auth = _oauth(config.name, config.oauth) if config.oauth is not None else None
        legacy_sse = LEGACY_SSE[config.transport]
        target = StreamableHttpTransport(config.url, _headers(config), auth=auth, legacy_sse=legacy_sse)
    return proxy(target, name=config.name, **options)


def _headers(config: UpstreamConfig) -> dict[str, str]:
    headers = dict(config.headers)
    if config.bearer_env is not None:
        headers["Authorization"] = f"Bearer {_environment(config.name, config.bearer_env, 'bearer_env')}"
    return headers


def _oauth(upstream: str, credentials: OAuthCredentials) -> Any:
    from ..auth.client.discovery import Discovered
    from ..auth.client.oauth import OAuth

    class AtTokenEndpoint(OAuth):
        """OAuth whose tokens come from the configured ``token_url``, without discovery."""

        async def _discover(self, target: str, challenge: dict[str, str], takes_dpop: bool) -> Discovered:
            assert credentials.token_url is not None
            metadata = {"issuer": credentials.token_url, "token_endpoint": credentials.token_url}
            return Discovered(target, credentials.token_url, metadata, None)

    secret = None
    if credentials.client_secret_env is not None:
        secret = _environment(upstream, credentials.client_secret_env, "oauth.client_secret_env")
    kind = AtTokenEndpoint if credentials.token_url is not None else OAuth
    return kind(
        client_id=credentials.client_id,
        client_secret=secret,
        scopes=list(credentials.scopes) or None,
        grant="client_credentials",
    )


def _environment(upstream: str, variable: str, key: str) -> str:
    value = os.environ.get(variable)
    if not value:
        raise UpstreamUnusable(
            f"upstream {upstream!r}: the environment variable {variable} ({key}) is not set: set it before starting"
        )
    return value
