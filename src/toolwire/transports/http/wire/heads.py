"""The bytes of answers' heads: status lines, the ``date`` header, and whole refusals."""

from __future__ import annotations

import email.utils
import time

_REASONS = {
    100: "Continue", 200: "OK", 201: "Created", 202: "Accepted", 204: "No Content",
    301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
    307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
    403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
    408: "Request Timeout", 409: "Conflict", 413: "Content Too Large", 415: "Unsupported Media Type",
    421: "Misdirected Request", 422: "Unprocessable Content", 429: "Too Many Requests",
    431: "Request Header Fields Too Large", 500: "Internal Server Error", 501: "Not Implemented",
    502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported",
}  # fmt: skip
_STATUS_LINES: dict[int, bytes] = {}


def status_line(status: int) -> bytes:
    line = _STATUS_LINES.get(status)
    if line is None:
        line = f"HTTP/1.1 {status} {_REASONS.get(status, '')}\r\n".encode()
        if len(_STATUS_LINES) < 512:
            _STATUS_LINES[status] = line
    return line


def refusal(status: int, why: str) -> bytes:
    """A whole plain-text answer that closes the connection."""
    body = f"{status} {_REASONS.get(status, '')}: {why}\n".encode()
    return (
        status_line(status) + b"content-type: text/plain; charset=utf-8\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body) + body
    )


class Clock:
    """The ``date`` header, made once a second."""

    def __init__(self) -> None:
        self._second = 0
        self.header = b""

    def date(self) -> bytes:
        now = int(time.time())
        if now != self._second:
            self._second = now
            self.header = b"date: " + email.utils.formatdate(now, usegmt=True).encode() + b"\r\n"
        return self.header
