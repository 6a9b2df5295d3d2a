"""Calling the API: a request built by :mod:`.request` goes to the upstream, its answer becomes
a tool result (or a resource's contents).

:class:`Upstream` holds what every call to one API shares: the ``httpx.AsyncClient`` (the
user's, or one made for the base URL), the upstream credentials configured for the server
(static headers, a bearer token read from an environment variable, an ``httpx.Auth`` such as
:class:`~toolwire.auth.OAuth` with client credentials) and the limits:

- one deadline for the whole exchange (connecting, redirects, every byte of the answer);
- a cap on the answer's size, checked on a declared ``Content-Length`` and as it arrives;
- redirects followed (at most :data:`~toolwire.fetch.MAX_REDIRECTS`) only within the API's
  origin; one that leaves it is not followed and the call fails naming its target, so
  that the upstream credentials never reach another host.

Nothing of the MCP request reaches the upstream but the validated arguments: the caller's
own ``Authorization`` header (its token for *this* server) is never forwarded, since the
MCP specification forbids passing a token through to an API it was not issued for.

The answer: JSON becomes structured content (wrapped as ``{"result": ...}`` where the
operation's output schema is) with its text beside it; other text is text; an image or audio
is that block; other bytes an embedded resource. An upstream ``4xx``/``5xx`` (and an answer
that does not fit the output schema) is a tool execution error (``isError``) carrying the
status and the start of the body, which the model can act on. Upstream failures (no answer in
time, unreachable, too large, a redirect elsewhere) raise :class:`~toolwire.ToolError`, an
execution error too.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from ..fetch import MAX_REDIRECTS, FetchFailed, origin_of, read_body, shown
from ..resources.resource import ResourceContents, ResourceNotFound, resource_contents
from ..tools.content import audio, embedded_resource, image
from ..tools.results import ToolError, error_result
from ..tools.validation import ArgumentsInvalid, Validator
from .document import OpenAPIError
from .mapping import is_json
from .operation import Operation
from .request import Outgoing, RequestInvalid, build_request

#: Seconds a call may take in all, by default.
DEFAULT_TIMEOUT = 30.0
#: The largest answer read, by default (bytes).
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024
#: How much of an error's body the model is shown (characters).
MAX_ERROR_TEXT = 2_000
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class Answer:
    """The upstream's answer, read whole (within the cap)."""

    status: int
    reason: str
    content_type: str
    body: bytes
    url: str


class Upstream:
    """Where the calls of one API go, with what credentials, within what limits (see the
    module). ``base_url``: the API's root (``https://api.example.com/v1``); may be ``None``
    only with a ``client`` that has a ``base_url`` of its own. ``headers``: sent with every
    request (they win over header arguments of the same name). ``bearer_env``: the name of an
    environment variable holding a token sent as ``Authorization: Bearer``, read now.
    ``auth``: an ``httpx.Auth`` run on every request. ``transport``: what the client made for
    the calls sends through (``httpx.ASGITransport`` for an application in process); a given
    ``client`` is its owner's to close, one made here is closed by :meth:`aclose`.
    :class:`OpenAPIError` for no base URL, or a ``bearer_env`` that is not set."""

    def __init__(
        self,
        base_url: str | None,
        client: httpx.AsyncClient | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        bearer_env: str | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        if not timeout > 0:
            raise ValueError("timeout must be a number of seconds above 0")
        if max_response_bytes < 1:
            raise ValueError("max_response_bytes must be 1 or more")
        if base_url is None and (client is None or not str(client.base_url)):
            raise OpenAPIError(
                "no base URL for the API: the document has no 'servers' entry that can be used; "
                "give base_url= (--base-url on the command line)"
            )
        if base_url is not None and not base_url.startswith(("http://", "https://")):
            raise OpenAPIError(f"the API's base URL {shown(base_url)} is not an http(s) URL: give base_url=")
        self.base_url = base_url.rstrip("/") if base_url is not None else None
        self._client = client
        self._owned = client is None
        self._transport = transport
        self.headers = dict(headers or {})
        if bearer_env is not None:
            token = os.environ.get(bearer_env)
            if not token:
                raise OpenAPIError(f"the environment variable {bearer_env} (the upstream's bearer token) is not set")
            self.headers["Authorization"] = f"Bearer {token}"
        self._configured = {name.lower() for name in self.headers}
        self.auth = auth
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self._validators: dict[str, Validator] = {}

    @property
    def client(self) -> httpx.AsyncClient:
        """The client calls go through (made at the first call when none was given)."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout, transport=self._transport)
        return self._client

    async def aclose(self) -> None:
        """Close the client made for the calls, if any (a given one stays open); the next
        call makes a new one."""
        if self._owned and self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def call(self, operation: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool result of calling ``operation`` with validated ``arguments`` (see the
        module); :class:`~toolwire.ToolError` when there is no answer to give."""
        answer = await self.send(_built(operation, arguments))
        return self.result(operation, answer)

    async def send(self, outgoing: Outgoing) -> Answer:
        """The answer to ``outgoing``, redirects within the origin followed;
        :class:`~toolwire.ToolError` saying what failed."""
        url = httpx.URL(self.base_url + outgoing.target if self.base_url else outgoing.target)
        shown_target = f"{outgoing.method} {shown(outgoing.target.partition('?')[0])}"
        try:
            async with asyncio.timeout(self.timeout):
                return await self._follow(outgoing, url)
        except TimeoutError:
            raise ToolError(f"{shown_target}: the API did not answer in full within {self.timeout:g} s") from None
        except FetchFailed as exc:
            raise ToolError(f"{shown_target}: {exc}") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"{shown_target}: cannot reach the API ({type(exc).__name__}: {exc})") from None

    async def _follow(self, outgoing: Outgoing, url: httpx.URL) -> Answer:
        client = self.client
        headers = [(name, value) for name, value in outgoing.headers if name.lower() not in self._configured]
        headers.extend(self.headers.items())
        if outgoing.content is not None:
            headers.append(("Content-Type", outgoing.media_type or "application/json"))
        request = client.build_request(outgoing.method, url, headers=headers, timeout=self.timeout, **_body(outgoing))
        origin = origin_of(request.url)
        for _ in range(MAX_REDIRECTS + 1):
            auth = self.auth if self.auth is not None else httpx.USE_CLIENT_DEFAULT
            response = await client.send(request, auth=auth, follow_redirects=False)
            try:
                following = response.next_request if response.status_code in _REDIRECTS else None
                if following is None:
                    body = await read_body(response, self.max_response_bytes)
                    content_type = response.headers.get("content-type", "")
                    reason = httpx.codes.get_reason_phrase(response.status_code)  # the same from every server
                    return Answer(response.status_code, reason, content_type, body, str(response.url))
            finally:
                await response.aclose()
            if origin_of(following.url) != origin:
                raise FetchFailed(
                    f"the API redirected to {shown(str(following.url))}, another origin: not followed "
                    "(the upstream credentials stay with the API's origin)"
                )
            request = following
        raise FetchFailed(f"the API redirected more than {MAX_REDIRECTS} times")

    def result(self, operation: Operation, answer: Answer) -> dict[str, Any]:
        """The tool result for ``answer`` (see the module)."""
        where = f"{operation.method} {operation.path}"
        if answer.status >= 300:
            return error_result(f"{where} failed: HTTP {answer.status} {answer.reason}{_excerpt(answer)}".rstrip())
        if is_json(answer.content_type) and answer.body.strip():
            try:
                value = orjson.loads(answer.body)
            except orjson.JSONDecodeError as exc:
                return error_result(f"{where} answered invalid JSON ({exc}){_excerpt(answer)}")
            text = answer.body.decode()
            if operation.output_schema is None:
                return {"content": [{"type": "text", "text": text}]}
            structured = {"result": value} if operation.output_wrapped else value
            problem = self._unfit(operation, structured)
            if problem is not None:
                return error_result(f"{where} answered JSON that does not fit its documented schema: {problem}\n{text}")
            return {"content": [{"type": "text", "text": text}], "structuredContent": structured}
        if operation.output_schema is not None:
            what = answer.content_type or "no content type"
            return error_result(
                f"{where} answered HTTP {answer.status} with {shown(what)}, not the JSON its document describes"
                + _excerpt(answer)
            )
        return {"content": _blocks(answer)}

    def _unfit(self, operation: Operation, structured: Any) -> str | None:
        """Why ``structured`` breaks the operation's output schema (``None``: it fits)."""
        validator = self._validators.get(operation.name)
        if validator is None:
            assert operation.output_schema is not None
            validator = self._validators[operation.name] = Validator(operation.output_schema)
        try:
            validator.check(structured, "")
        except ArgumentsInvalid as exc:
            return str(exc).lstrip(": ")
        return None

    async def read(self, operation: Operation, arguments: dict[str, Any], uri: str) -> ResourceContents:
        """What the resource at ``uri``, served by ``operation``, holds: the body as text
        (JSON as it came) or bytes, of the type the answer says. :class:`ResourceNotFound`
        for an answer ``404`` or ``410``; :class:`~toolwire.ToolError` for another failure
        or an answer that is not 2xx."""
        answer = await self.send(_built(operation, arguments))
        if answer.status in (404, 410):
            raise ResourceNotFound(uri, f"the API answered HTTP {answer.status}{_excerpt(answer)}")
        if answer.status >= 300:
            raise ToolError(
                f"{operation.method} {operation.path} failed: HTTP {answer.status} {answer.reason}{_excerpt(answer)}"
            )
        text = _decoded(answer)
        mime_type = answer.content_type.split(";")[0].strip() or None
        return resource_contents(text if text is not None else answer.body, mime_type=mime_type)


def _built(operation: Operation, arguments: dict[str, Any]) -> Outgoing:
    try:
        return build_request(operation, arguments)
    except RequestInvalid as exc:
        raise ToolError(f"{operation.name}: {exc}") from None


def _body(outgoing: Outgoing) -> dict[str, Any]:
    """The body keywords of ``httpx``'s ``build_request`` for ``outgoing``."""
    if outgoing.media_type is None:
        return {}
    if outgoing.form is None:
        return {"content": outgoing.content}
    if outgoing.media_type == "multipart/form-data":  # fields without a file name: no files
        return {"files": [(name, (None, value)) for name, value in outgoing.form]}
    return {"data": _form_data(outgoing.form)}


def _form_data(fields: list[tuple[str, str]]) -> dict[str, str | list[str]]:
    data: dict[str, str | list[str]] = {}
    for name, value in fields:
        held = data.get(name)
        if held is None:
            data[name] = value
        elif isinstance(held, list):
            held.append(value)
        else:
            data[name] = [held, value]
    return data


def _decoded(answer: Answer) -> str | None:
    """The body as text when it is text (JSON, ``text/*``, a declared charset, or UTF-8 with
    no content type), else ``None``."""
    kind = answer.content_type.split(";")[0].strip().lower()
    textual = is_json(kind) or kind.startswith("text/") or "charset=" in answer.content_type.lower()
    textual = textual or kind in ("", "application/xml", "application/yaml", "application/x-yaml")
    if not textual:
        return None
    try:
        return answer.body.decode()
    except UnicodeDecodeError:
        return None if kind else answer.body.decode("latin-1")


def _blocks(answer: Answer) -> list[dict[str, Any]]:
    """The content of a successful answer without an output schema."""
    text = _decoded(answer)
    if text is not None:
        return [{"type": "text", "text": text}] if text else []
    kind = answer.content_type.split(";")[0].strip().lower()
    if kind.startswith("image/"):
        return [image(answer.body, kind)]
    if kind.startswith("audio/"):
        return [audio(answer.body, kind)]
    return [embedded_resource(answer.url, blob=answer.body, mime_type=kind or "application/octet-stream")]


def _excerpt(answer: Answer) -> str:
    """``": "`` and the start of the body (at most :data:`MAX_ERROR_TEXT` characters), for a
    message; ``""`` for an empty body."""
    text = _decoded(answer)
    if text is None:
        return f": {len(answer.body)} bytes of {shown(answer.content_type)}" if answer.body else ""
    text = "".join(c if c.isprintable() or c in "\n\t" else " " for c in text.strip())
    if len(text) > MAX_ERROR_TEXT:
        text = text[:MAX_ERROR_TEXT] + f"... ({len(text) - MAX_ERROR_TEXT} more characters)"
    return f": {text}" if text else ""
