"""Enterprise-managed authorization: an Identity Assertion JWT Authorization Grant (ID-JAG)
from the enterprise's identity provider, as the assertion of a ``jwt_bearer`` grant."""

from __future__ import annotations

from ...fetch import FetchFailed, fetch
from .errors import AuthorizationError, oauth_error

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


class IdJagExchange:
    """Enterprise-managed authorization: the assertion of a ``jwt_bearer`` grant obtained
    from the enterprise's identity provider, which trades the user's ID token for an
    Identity Assertion JWT Authorization Grant (ID-JAG) for the authorization server and the
    MCP server (RFC 8693 token exchange). ``client_id``/``client_secret``: this client at
    the identity provider. :class:`AuthorizationError` if it refuses."""

    def __init__(self, token_endpoint: str, id_token: str, client_id: str, client_secret: str | None = None) -> None:
        self.token_endpoint = token_endpoint
        self.id_token = id_token
        self.client_id = client_id
        self.client_secret = client_secret

    async def __call__(self, issuer: str, resource: str, scopes: list[str] | None) -> str:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": self.id_token,
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "audience": issuer,
            "resource": resource,
            "client_id": self.client_id,
        }
        if self.client_secret is not None:
            form["client_secret"] = self.client_secret
        if scopes:
            form["scope"] = " ".join(scopes)
        try:
            response = await fetch(
                self.token_endpoint,
                method="POST",
                data=form,
                headers={"Accept": "application/json"},
                timeout=30.0,
                follow_redirects=False,
            )
            answer = response.json()
        except (FetchFailed, ValueError) as exc:
            raise AuthorizationError(f"the identity provider did not answer: {type(exc).__name__}") from None
        if response.status != 200 or not isinstance(answer, dict) or not isinstance(answer.get("access_token"), str):
            raise AuthorizationError(
                f"the identity provider refused the exchange: {oauth_error(response.status, answer)}"
            )
        return str(answer["access_token"])
