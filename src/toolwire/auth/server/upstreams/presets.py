"""Presets for the identity providers people have: where each one's endpoints are, the scopes
to ask, and which claims name the person and their groups. :func:`resolve_upstream` turns
what an operator wrote (a discovery URL, or a preset's name and its parameters) into an
:class:`~..upstream.Upstream`. What to register at each provider is in
docs/auth-providers/."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from ..upstream import Upstream
from .github import GitHubUpstream
from .oidc import OIDCUpstream


def oidc(client_id: str, client_secret: str | None, *, discovery_url: str, **options: Any) -> OIDCUpstream:
    """Any OpenID provider by its discovery URL or issuer (Authing: ``https://APP.authing.cn/oidc``;
    Casdoor: its origin, ``https://door.example.com``)."""
    return OIDCUpstream(discovery_url, client_id, client_secret, **options)


def github(client_id: str, client_secret: str | None, **options: Any) -> GitHubUpstream:
    """GitHub (an OAuth app or a GitHub App); ``orgs=True`` for the organizations as groups,
    ``base_url`` and ``api_url`` for a GitHub Enterprise Server."""
    return GitHubUpstream(client_id, client_secret, **options)


def google(client_id: str, client_secret: str | None, **options: Any) -> OIDCUpstream:
    """Google accounts; ``access_type=offline`` so that Google issues a refresh token. Google
    names no groups (a Workspace account's domain is the ``hd`` claim)."""
    defaults: dict[str, Any] = {
        "name": "google",
        "groups_claim": None,
        "extra_authorization_parameters": {"access_type": "offline", "prompt": "consent"},
    }
    return OIDCUpstream("https://accounts.google.com", client_id, client_secret, **{**defaults, **options})


def entra(client_id: str, client_secret: str | None, *, tenant: str, **options: Any) -> OIDCUpstream:
    """Microsoft Entra ID, ``tenant`` its id or domain (``organizations`` or ``common`` for
    several tenants: then anyone's organization may sign in). The person is their ``oid``
    (the same in every application of the tenant), the groups their app ``roles``; the
    user-info endpoint (Microsoft Graph's) is not used: the ID token says it all."""
    defaults: dict[str, Any] = {
        "name": "entra",
        "scopes": ("openid", "email", "profile", "offline_access"),
        "subject_claim": "oid",
        "groups_claim": "roles",
        "userinfo": False,
    }
    url = f"https://login.microsoftonline.com/{quote(tenant, safe='')}/v2.0"
    return OIDCUpstream(url, client_id, client_secret, **{**defaults, **options})


def auth0(
    client_id: str, client_secret: str | None, *, domain: str, audience: str | None = None, **options: Any
) -> OIDCUpstream:
    """An Auth0 tenant at ``domain`` (``example.eu.auth0.com`` or a custom domain). Auth0
    puts roles in an ID token only as a namespaced claim an Action adds: name it with
    ``groups_claim`` (``"https://example.com/roles"``). ``audience``: an API of the tenant
    its access tokens are to be for."""
    defaults: dict[str, Any] = {
        "name": "auth0",
        "scopes": ("openid", "email", "profile", "offline_access"),
        "groups_claim": None,
    }
    if audience is not None:
        defaults["extra_authorization_parameters"] = {"audience": audience}
    return OIDCUpstream(f"https://{_host(domain)}/", client_id, client_secret, **{**defaults, **options})


def okta(
    client_id: str,
    client_secret: str | None,
    *,
    domain: str,
    authorization_server_id: str | None = "default",
    **options: Any,
) -> OIDCUpstream:
    """An Okta organization at ``domain``, through its custom authorization server
    ``authorization_server_id`` (``None``: the organization's own). Groups are the
    ``groups`` claim, which the authorization server must be told to add."""
    defaults: dict[str, Any] = {
        "name": "okta",
        "scopes": ("openid", "email", "profile", "offline_access"),
        "groups_claim": "groups",
    }
    url = f"https://{_host(domain)}"
    if authorization_server_id is not None:
        url += f"/oauth2/{quote(authorization_server_id, safe='')}"
    return OIDCUpstream(url, client_id, client_secret, **{**defaults, **options})


def keycloak(client_id: str, client_secret: str | None, *, base_url: str, realm: str, **options: Any) -> OIDCUpstream:
    """A Keycloak realm: ``base_url`` is where Keycloak answers (``https://sso.example.com``,
    with ``/auth`` for versions before 17). The groups are the realm roles
    (``realm_access.roles``), which Keycloak puts in the ID token once the ``roles`` client
    scope's "realm roles" mapper says so (docs/auth-providers/keycloak.md)."""
    defaults: dict[str, Any] = {"name": "keycloak", "groups_claim": ("realm_access", "roles")}
    url = f"{base_url.rstrip('/')}/realms/{quote(realm, safe='')}"
    return OIDCUpstream(url, client_id, client_secret, **{**defaults, **options})


#: The presets by name, each a function of (client_id, client_secret, **parameters).
PRESETS: dict[str, Callable[..., Upstream]] = {
    "oidc": oidc,
    "github": github,
    "google": google,
    "entra": entra,
    "auth0": auth0,
    "okta": okta,
    "keycloak": keycloak,
}


def resolve_upstream(spec: str, client_id: str, client_secret: str | None, **options: Any) -> Upstream:
    """The upstream ``spec`` names: an OpenID provider's discovery URL (or its issuer URL),
    or a preset's name (:data:`PRESETS`) with its parameters, in ``options`` or written after
    the name as on a command line (``keycloak:base_url=https://sso.example.com,realm=staff``,
    ``github:orgs=true``); other options go to the upstream (``scopes``, ``groups_claim``...).
    ``ValueError`` for an unknown preset or a missing parameter, naming what is needed."""
    if spec.startswith(("https://", "http://")):
        return OIDCUpstream(spec, client_id, client_secret, **options)
    name, _, written = spec.partition(":")
    preset = PRESETS.get(name.lower())
    if preset is None:
        raise ValueError(
            f"unknown identity provider {name!r}: give a discovery URL or one of {', '.join(sorted(PRESETS))}"
        )
    try:
        return preset(client_id, client_secret, **{**_parameters(written), **options})
    except TypeError as exc:  # a parameter missing or not the preset's
        raise ValueError(f"the {name.lower()} preset: {exc}".replace(f"{preset.__name__}() ", "")) from None


def _parameters(written: str) -> dict[str, Any]:
    """``key=value,key=value`` as keyword arguments (``true``/``false`` as booleans)."""
    parameters: dict[str, Any] = {}
    for pair in filter(None, written.split(",")):
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"{pair!r}: a preset's parameters are written key=value, separated by commas")
        parameters[key.strip()] = {"true": True, "false": False}.get(value.strip().lower(), value.strip())
    return parameters


def _host(domain: str) -> str:
    """A domain given with or without its scheme, as a host."""
    return domain.removeprefix("https://").rstrip("/")
