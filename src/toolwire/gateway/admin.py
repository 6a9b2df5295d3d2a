"""The gateway's admin page: ``/admin`` beside the MCP endpoint (HTTP only, off by default).

    [admin]
    enabled = true
    token_env = "TOOLWIRE_ADMIN_TOKEN"      # the default

It shows, live (the page asks ``/admin/api/state`` every second), each upstream and its state
(``stopped``, ``starting``, ``up``, ``down``: restarting after a delay) with its last error,
its restarts, the protocol version it speaks and its tools; the legacy sessions connected
(subject, client, protocol version, since when; 2026-07-28 clients keep no session and are
not listed); and the last tool calls (who, tool, outcome, duration): read from the end of
the ``[audit]`` file when there is one, else counted by the page's own guard (this
process's calls).

Its secret is the environment variable ``token_env`` names: a request carries it as
``Authorization: Bearer TOKEN``, or the login form (``POST /admin/login``) exchanges it for an
HttpOnly, ``SameSite=Strict`` cookie holding a digest of it (never the token itself). Both
are compared in constant time. Without either, the page is the login form and the API
answers 401. Nothing it shows changes state; the login refuses a cross-site ``Origin`` (403).
No secret reaches the page: an upstream is shown by its program's name or its URL without
credentials or query, and every value of its ``env``, ``headers`` and credential variables
(and the admin token) is replaced by ``***`` wherever it would appear (an error message).
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from ..guards.seam import Call, Next, Result
from .config import ConfigError

if TYPE_CHECKING:
    from .gateway import Gateway

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

DEFAULT_TOKEN_ENV = "TOOLWIRE_ADMIN_TOKEN"
COOKIE = "toolwire_admin"
#: Tool calls the page keeps (the newest).
CALLS_KEPT = 100
#: Bytes read from the end of the audit file at each look.
AUDIT_TAIL = 256 * 1024
#: The largest login form read (bytes).
MAX_FORM = 4096
STATIC = {"admin.js": "text/javascript", "admin.css": "text/css"}
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; style-src 'self'; frame-ancestors 'none'; form-action 'self'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # the login form's POST carries its Origin
    (b"cache-control", b"no-store"),
]


@dataclass(frozen=True)
class AdminConfig:
    """``[admin]``: whether ``/admin`` is served, and where its secret is read from."""

    enabled: bool = False
    token_env: str = DEFAULT_TOKEN_ENV


def admin_config(table: Mapping[str, Any]) -> AdminConfig:
    """The ``[admin]`` table read; :class:`ConfigError` (one line) for an unknown key or a wrong type."""
    for key in table:
        if key not in ("enabled", "token_env"):
            raise ConfigError(f"gateway.toml: [admin] {key!r} is not a known key (known: enabled, token_env)")
    enabled = table.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ConfigError(f"gateway.toml: [admin] 'enabled' must be true or false, not {enabled!r}")
    token_env = table.get("token_env", DEFAULT_TOKEN_ENV)
    if not (isinstance(token_env, str) and token_env):
        raise ConfigError(f"gateway.toml: [admin] 'token_env' must be a variable's name, not {token_env!r}")
    return AdminConfig(enabled, token_env)


def admin_page(gateway: Gateway, environ: Mapping[str, str] = os.environ) -> AdminPage | None:
    """The gateway's admin page if ``[admin] enabled = true`` (else ``None``);
    :class:`ConfigError` when its token's variable is unset or empty."""
    config = admin_config(gateway.config.admin_table)
    if not config.enabled:
        return None
    token = environ.get(config.token_env, "")
    if not token:
        raise ConfigError(
            f"gateway.toml: [admin] is enabled but {config.token_env} is not set: "
            "set it to the admin page's secret (or enabled = false)"
        )
    return AdminPage(gateway, token)


class CallLog:
    """A guard keeping the last :data:`CALLS_KEPT` tool calls as :func:`audited_calls` gives them."""

    def __init__(self) -> None:
        self.calls: collections.deque[dict[str, Any]] = collections.deque(maxlen=CALLS_KEPT)

    async def __call__(self, call: Call, next: Next) -> Result:
        if call.method != "tools/call":
            return await next(call)
        began = time.perf_counter()
        outcome = "error"
        try:
            result = await next(call)
            outcome = "tool_error" if result.get("isError") else "ok"
            return result
        finally:
            client = call.client or {}
            self.calls.append(
                {
                    "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "caller": call.caller,
                    "client": client.get("name"),
                    "tool": call.name,
                    "outcome": outcome,
                    "ms": round((time.perf_counter() - began) * 1000, 2),
                }
            )


def audited_calls(path: Path) -> list[dict[str, Any]]:
    """The last :data:`CALLS_KEPT` tool calls of the audit file ``path`` (its start and end
    records joined by ``id``), newest first; none when the file cannot be read. Only the
    newest :data:`AUDIT_TAIL` bytes are read; lines that are not records are skipped."""
    try:
        with path.open("rb") as file:
            file.seek(max(file.seek(0, os.SEEK_END) - AUDIT_TAIL, 0))
            lines = file.read().splitlines()
    except OSError:
        return []
    calls: dict[str, dict[str, Any]] = {}
    for line in lines:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # the first line, cut by the tail, or a line being written
        if not isinstance(record, dict):
            continue
        if record.get("phase") == "start" and record.get("method") == "tools/call":
            calls[str(record.get("id"))] = {
                "time": record.get("time"),
                "caller": record.get("caller"),
                "client": str(record.get("client") or "").rsplit("/", 1)[0] or None,
                "tool": record.get("name"),
                "outcome": "running",
                "ms": None,
            }
        elif record.get("phase") == "end" and str(record.get("id")) in calls:
            calls[str(record.get("id"))].update(outcome=record.get("outcome"), ms=record.get("ms"))
    return list(reversed(list(calls.values())[-CALLS_KEPT:]))


class AdminPage:
    """The ASGI application of ``/admin`` (see the module), guarded by ``token``; without an
    audit file it adds a :class:`CallLog` to the gateway's server."""

    def __init__(self, gateway: Gateway, token: str) -> None:
        self.gateway = gateway
        self._token = token.encode()
        self._cookie = hmac.new(self._token, b"toolwire admin cookie", hashlib.sha256).hexdigest().encode()
        file = gateway.config.audit_table.get("file")
        folder = gateway.config.path.parent if gateway.config.path is not None else Path.cwd()
        #: The audit file the calls are read from (``None``: they are counted by :attr:`calls`).
        self.audit_file = folder / file if isinstance(file, str) and file else None
        self.calls = CallLog()
        if self.audit_file is None:
            gateway.add_guards([self.calls])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").rstrip("/")
        method = scope.get("method")
        if not (path == "/admin" or path.startswith("/admin/")):
            await _respond(send, 404, b"Not found", "text/plain; charset=utf-8")
            return
        if path == "/admin/login":
            if method != "POST":
                await _respond(send, 405, b"Use the form at /admin", "text/plain; charset=utf-8", [(b"allow", b"POST")])
                return
            await self._login(scope, receive, send)
            return
        if method != "GET":
            await _respond(send, 405, b"The admin page is read-only", "text/plain; charset=utf-8", [(b"allow", b"GET")])
            return
        name = path.removeprefix("/admin/static/")
        if name in STATIC:
            await _respond(send, 200, _static(name), STATIC[name])
            return
        signed_in = self._signed_in(scope)
        if path == "/admin":
            await _respond(send, 200, _static("admin.html" if signed_in else "login.html"), "text/html; charset=utf-8")
        elif path == "/admin/api/state":
            if signed_in:
                await _respond(send, 200, orjson.dumps(self.state(scope.get("app"))), "application/json")
            else:
                await _respond(send, 401, b'{"error":"sign in at /admin"}', "application/json")
        else:
            await _respond(send, 404, b"Not found", "text/plain; charset=utf-8")

    def _signed_in(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"authorization" and value[:7].lower() == b"bearer ":
                return hmac.compare_digest(value[7:].strip(), self._token)
            if name == b"cookie":
                for part in value.split(b";"):
                    key, _, given = part.strip().partition(b"=")
                    if key == COOKIE.encode() and hmac.compare_digest(given, self._cookie):
                        return True
        return False

    async def _login(self, scope: Scope, receive: Receive, send: Send) -> None:
        asked = {name: value for name, value in scope.get("headers", ())}
        origin = asked.get(b"origin")
        if origin is not None and urlsplit(origin.decode("latin-1")).netloc.encode() != asked.get(b"host"):
            await _respond(send, 403, b"Forbidden: a login from another site", "text/plain; charset=utf-8")
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_FORM:
                await _respond(send, 413, b"The login form is too large", "text/plain; charset=utf-8")
                return
            if not message.get("more_body"):
                break
        given = dict(parse_qsl(body.decode("utf-8", "replace"))).get("token", "").encode()
        if not hmac.compare_digest(given, self._token):
            await _respond(send, 401, _static("login.html").replace(b"<!--wrong-->", b"Wrong token."), "text/html")
            return
        cookie = COOKIE.encode() + b"=" + self._cookie + b"; Path=/admin; HttpOnly; SameSite=Strict"
        if scope.get("scheme") == "https":
            cookie += b"; Secure"
        await _respond(send, 303, b"", "text/plain", [(b"location", b"/admin"), (b"set-cookie", cookie)])

    def state(self, endpoint: Any = None) -> dict[str, Any]:
        """What the page shows, secrets replaced by ``***`` (see the module). ``endpoint``:
        the gateway's :class:`~toolwire.transports.http.app.StreamableHTTP`, for its sessions."""
        gateway = self.gateway
        tools: dict[str, list[dict[str, Any]]] = {}
        separator = gateway.config.separator
        for tool in gateway.server.registry.all():
            namespace = tool.name.partition(separator)[0]
            tools.setdefault(namespace, []).append({"name": tool.name, "description": tool.description or ""})
        upstreams = [
            {
                "name": runner.name,
                "namespace": runner.config.namespace,
                "target": _target(runner.config.command, runner.config.url),
                "state": runner.state,
                "error": runner.error,
                "restarts": runner.restarts,
                "version": runner.version,
                "tools": tools.get(runner.config.namespace, []) if runner.state == "up" else [],
            }
            for runner in gateway.runners.values()
        ]
        sessions = endpoint.sessions.sessions.values() if endpoint is not None else ()
        state = {
            "gateway": gateway.config.name,
            "upstreams": upstreams,
            "sessions": [_session(legacy) for legacy in sessions],
            "calls": audited_calls(self.audit_file) if self.audit_file else list(reversed(self.calls.calls)),
            "calls_from": f"the audit file {self.audit_file.name}" if self.audit_file else "this process",
        }
        shown: dict[str, Any] = _redacted(state, self._secrets())
        return shown

    def _secrets(self) -> list[str]:
        """Every value that must not be shown: upstreams' env, headers, credentials, the token."""
        secrets = [self._token.decode()]
        for runner in self.gateway.runners.values():
            config = runner.config
            secrets += config.env.values()
            secrets += config.headers.values()
            names = [config.bearer_env, config.oauth.client_secret_env if config.oauth is not None else None]
            secrets += (os.environ.get(name, "") for name in names if name)
            if config.url is not None:
                parts = urlsplit(config.url)
                secrets += [parts.password or "", parts.query]
        return sorted({secret for secret in secrets if len(secret) >= 4}, key=len, reverse=True)


def _target(command: tuple[str, ...] | None, url: str | None) -> str:
    """An upstream as shown: its program's name (not its arguments), or its URL's origin and path."""
    if command is not None:
        return PurePath(command[0]).name
    parts = urlsplit(url or "")
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _session(legacy: Any) -> dict[str, Any]:
    connection = legacy.session.connection
    info = connection.client_info if isinstance(connection.client_info, dict) else {}
    return {
        "subject": legacy.owner,
        "client": info.get("name"),
        "version": connection.legacy.version if connection.legacy is not None else None,
        "since": legacy.opened,
    }


def _redacted(value: Any, secrets: list[str]) -> Any:
    """``value`` with each of ``secrets`` replaced by ``***`` in every string it holds."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "***")
        return value
    if isinstance(value, dict):
        return {key: _redacted(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, secrets) for item in value]
    return value


def _static(name: str) -> bytes:
    return (resources.files(__package__) / "static" / name).read_bytes()


async def _respond(
    send: Send, status: int, body: bytes, kind: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})
