"""GitHub's OAuth endpoints and the REST API's user endpoints, as GitHub documents them, on
127.0.0.1 for the tests of the GitHub upstream (there is no network here).

    python github_api.py PORT

- ``GET /login/oauth/authorize``: the person (the ``login`` parameter, GitHub's "suggest an
  account"; else octocat) has authorized the app before, so GitHub redirects at once to
  ``redirect_uri`` with ``code`` and ``state``; PKCE's ``code_challenge`` (S256) is kept.
- ``POST /login/oauth/access_token``: the code (or ``grant_type=refresh_token``) for a token,
  the client in the form; JSON when asked with ``Accept: application/json``, else a form,
  and errors with status 200, as GitHub answers. The OAuth app (``Ov23-oauth-app``, secret
  ``oauth-secret``) gets tokens that never expire; the GitHub App (``Iv23-github-app``,
  secret ``app-secret``) gets tokens for 8 hours with a refresh token for 6 months, rotated
  on each refresh.
- ``GET /api/user``, ``/api/user/emails`` (needs ``user:email``; 404 without),
  ``/api/user/orgs`` (the memberships only with ``read:org``): with ``Authorization: Bearer``;
  401 ``Bad credentials`` for anything else. A GitHub App's token may read all three.
- ``GET /stats`` (the tests' own, not GitHub's): ``{"refreshes": N}``, the refreshes granted.
"""

import base64
import hashlib
import secrets
import sys
from typing import Any
from urllib.parse import urlencode

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

CLIENTS = {"Ov23-oauth-app": "oauth-secret", "Iv23-github-app": "app-secret"}
USERS: dict[str, dict[str, Any]] = {
    "octocat": {
        "user": {"login": "octocat", "id": 583231, "name": "The Octocat", "email": None, "type": "User"},
        "emails": [
            {"email": "octocat@github.com", "primary": True, "verified": True, "visibility": "public"},
            {"email": "octo@example.com", "primary": False, "verified": True, "visibility": None},
        ],
        "orgs": ["github", "octo-org"],
    },
    "hubot": {
        "user": {"login": "hubot", "id": 480938, "name": None, "email": None, "type": "User"},
        "emails": [{"email": "hubot@example.com", "primary": True, "verified": False, "visibility": None}],
        "orgs": [],
    },
}
CODES: dict[str, dict[str, Any]] = {}  # code -> what the authorization said
TOKENS: dict[str, dict[str, Any]] = {}  # access token -> {login, scopes}
REFRESH: dict[str, dict[str, Any]] = {}  # refresh token -> {login, scopes, client_id}
STATS = {"refreshes": 0}


async def authorize(request: Request) -> Response:
    query = request.query_params
    if query.get("client_id") not in CLIENTS:
        return PlainTextResponse("Not Found", status_code=404)
    code = secrets.token_hex(10)
    CODES[code] = {
        "client_id": query["client_id"],
        "login": query.get("login", "octocat"),
        "redirect_uri": query.get("redirect_uri"),
        "scopes": set(query.get("scope", "").replace(",", " ").split()),
        "challenge": query.get("code_challenge"),
    }
    return RedirectResponse(f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query.get('state', '')})}")


async def access_token(request: Request) -> Response:
    form = await request.form()
    as_json = "application/json" in request.headers.get("accept", "")
    client_id = str(form.get("client_id", ""))
    if CLIENTS.get(client_id) != form.get("client_secret"):
        return _error(
            as_json, "incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect."
        )
    if form.get("grant_type") == "refresh_token":
        grant = REFRESH.pop(str(form.get("refresh_token", "")), None)
        if grant is None or grant["client_id"] != client_id:
            return _error(as_json, "bad_refresh_token", "The refresh token passed is incorrect or expired.")
        STATS["refreshes"] += 1
        return _issue(as_json, client_id, grant["login"], grant["scopes"])
    grant = CODES.pop(str(form.get("code", "")), None)
    if grant is None or grant["client_id"] != client_id:
        return _error(as_json, "bad_verification_code", "The code passed is incorrect or expired.")
    if form.get("redirect_uri") not in (None, grant["redirect_uri"]):
        return _error(as_json, "redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL.")
    if grant["challenge"] is not None:
        verifier = str(form.get("code_verifier", ""))
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if digest != grant["challenge"]:
            return _error(as_json, "bad_verification_code", "The code_verifier does not match the code_challenge.")
    return _issue(as_json, client_id, grant["login"], grant["scopes"])


def _issue(as_json: bool, client_id: str, login: str, scopes: set[str]) -> Response:
    app = client_id.startswith("Iv")
    token = ("ghu_" if app else "gho_") + secrets.token_hex(18)
    TOKENS[token] = {"login": login, "scopes": scopes, "app": app}
    answer: dict[str, Any] = {
        "access_token": token,
        "token_type": "bearer",
        "scope": "" if app else ",".join(sorted(scopes)),
    }
    if app:
        refresh = "ghr_" + secrets.token_hex(30)
        REFRESH[refresh] = {"login": login, "scopes": scopes, "client_id": client_id}
        answer.update(expires_in=28800, refresh_token=refresh, refresh_token_expires_in=15897600)
    return _answer(as_json, answer)


def _error(as_json: bool, error: str, description: str) -> Response:
    docs = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors"
    return _answer(as_json, {"error": error, "error_description": description, "error_uri": docs})


def _answer(as_json: bool, answer: dict[str, Any]) -> Response:
    if as_json:
        return JSONResponse(answer)
    return PlainTextResponse(urlencode(answer), media_type="application/x-www-form-urlencoded")


def _caller(request: Request) -> dict[str, Any] | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return TOKENS.get(token) if scheme.lower() in ("bearer", "token") else None


def _api(handler: Any) -> Any:
    async def endpoint(request: Request) -> Response:
        caller = _caller(request)
        if caller is None:
            return JSONResponse(
                {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"},
                status_code=401,
            )
        return handler(caller, USERS[caller["login"]])

    return endpoint


def user(caller: dict[str, Any], person: dict[str, Any]) -> Response:
    return JSONResponse(person["user"])


def emails(caller: dict[str, Any], person: dict[str, Any]) -> Response:
    if not (caller["app"] or {"user", "user:email"} & caller["scopes"]):
        return JSONResponse({"message": "Not Found", "status": "404"}, status_code=404)
    return JSONResponse(person["emails"])


def orgs(caller: dict[str, Any], person: dict[str, Any]) -> Response:
    visible = caller["app"] or "read:org" in caller["scopes"]
    return JSONResponse([{"login": org, "id": index + 1} for index, org in enumerate(person["orgs"]) if visible])


async def stats(request: Request) -> Response:
    return JSONResponse(STATS)


app = Starlette(
    routes=[
        Route("/stats", stats),
        Route("/login/oauth/authorize", authorize),
        Route("/login/oauth/access_token", access_token, methods=["POST"]),
        Route("/api/user", _api(user)),
        Route("/api/user/emails", _api(emails)),
        Route("/api/user/orgs", _api(orgs)),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
