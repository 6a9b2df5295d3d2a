"""Who may call the gateway over HTTP: ``[auth]`` as a protected resource.

Without ``[auth]`` anyone who reaches the endpoint may call (bind it to 127.0.0.1, or put it
behind something that checks). With it, every HTTP request needs a bearer token: a JWT from
``issuer`` (its keys found by discovery, or at ``jwks_url``), or any token the authorization
server's ``introspection_url`` says is active (the gateway authenticating there as
``client_id`` with the secret in ``client_secret_env``). Tokens must name ``audience`` (by
default ``public_url``, by default the address served). The caller's identity goes to the
gateway's guards (``call.identity``); the token itself goes nowhere, upstreams least of all.
Over stdio there is no caller to check: the one who started the gateway is its user.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .config import AuthConfig, ConfigError

if TYPE_CHECKING:
    from ..auth.server.resource import ProtectedResource


def protected_resource(auth: AuthConfig, served_url: str) -> ProtectedResource:
    """The protected resource ``auth`` describes, for a gateway served at ``served_url``;
    :class:`~.config.ConfigError` for a secret missing from the environment,
    :class:`~toolwire.extras.ExtraMissing` without the ``auth`` extra (JWTs)."""
    from ..auth.server.resource import ProtectedResource
    from ..auth.server.verifiers import IntrospectionVerifier, JWTVerifier, TokenVerifier

    resource = auth.public_url or served_url
    audience = auth.audience or resource
    issuers = [auth.issuer] if auth.issuer is not None else []
    verifier: TokenVerifier
    if auth.introspection_url is not None:
        secret = None
        if auth.client_secret_env is not None:
            secret = os.environ.get(auth.client_secret_env)
            if not secret:
                raise ConfigError(
                    f"gateway.toml: [auth] the environment variable {auth.client_secret_env} (client_secret_env)"
                    " is not set: set it before starting"
                )
        verifier = IntrospectionVerifier(
            auth.introspection_url, client_id=auth.client_id, client_secret=secret, audience=audience
        )
    else:
        assert auth.issuer is not None  # the configuration checks it
        verifier = JWTVerifier(auth.issuer, audience, jwks_url=auth.jwks_url)
    return ProtectedResource(resource, issuers, verifier)
