"""An HTTP answer as the MCP transport reads it (:class:`Reply`): the body whole or by lines,
decompressed a step at a time, each bounded by a limit."""

from __future__ import annotations

import codecs
import zlib
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import httpx

from .http11_connection import Response, TooLarge

#: The most decompressed from a body at a time: a compression bomb is read in steps this large.
DECODE_STEP = 1024 * 1024
DECODABLE = frozenset({"gzip", "deflate", "identity"})
#: What ``str.splitlines`` splits at.
NEWLINES = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


class Reply:
    """An answer as the MCP transport reads it: the status, the headers by lower-case name,
    the body whole or by lines, decoded from gzip or deflate by :data:`DECODE_STEP` at most
    at a time. Made of an answer taken straight from the pool, or of an ``httpx.Response``
    opened with ``stream=True`` (its raw body decoded here; codings other than gzip and
    deflate by httpx).

    Reading raises the httpx exceptions :class:`Response` does, ``httpx.DecodingError`` for
    a body that does not decompress, and :class:`TooLarge` for a body (:meth:`aread`) or a
    line (:meth:`aiter_lines`) longer than the ``limit`` given: what was read is dropped
    and nothing more is read after :meth:`aclose`."""

    def __init__(self, response: Response | httpx.Response) -> None:
        self._response = response
        body: AsyncIterable[bytes]
        if type(response) is Response:
            self.status_code = response.status
            raw = response.headers
            body = response
        else:
            assert isinstance(response, httpx.Response)
            self.status_code = response.status_code
            raw = response.headers.raw
            body = response.aiter_raw()
        self.headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in raw}
        coding = self.headers.get("content-encoding", "identity").strip().lower()
        self._decoder: Any = None
        if coding == "gzip":
            self._decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif coding == "deflate":
            self._decoder = _Deflate()
        elif coding != "identity" and isinstance(response, httpx.Response):
            body = response.aiter_bytes()
        self._body = body

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        decoder = self._decoder
        async for chunk in self._body:
            if decoder is None:
                yield chunk
                continue
            try:
                chunk = decoder.decompress(chunk, DECODE_STEP)
                while True:
                    if chunk:
                        yield chunk
                    tail = decoder.unconsumed_tail
                    if not tail:
                        break
                    chunk = decoder.decompress(tail, DECODE_STEP)
            except zlib.error as exc:
                raise httpx.DecodingError(str(exc)) from None
        if decoder is not None:
            rest = decoder.flush()
            if rest:
                yield rest

    async def aread(self, limit: int | None = None) -> bytes:
        """The whole body; :class:`TooLarge` past ``limit`` bytes (decoded)."""
        response = self._response
        if self._decoder is None and type(response) is Response and response.complete:
            body = await response.read()  # it has all come (so it is small: the pool stops at HIGH_WATER)
            if limit is not None and len(body) > limit:
                raise TooLarge(limit)
            return body
        chunks, size = [], 0
        async for chunk in self.aiter_bytes():
            size += len(chunk)
            if limit is not None and size > limit:
                raise TooLarge(limit)
            chunks.append(chunk)
        return b"".join(chunks)

    async def aiter_lines(self, limit: int | None = None) -> AsyncIterator[str]:
        """The body's lines, decoded as UTF-8, split as httpx splits them (``str.splitlines``,
        a ``\r\n`` cut between two chunks kept whole); :class:`TooLarge` for a line longer
        than ``limit`` characters."""
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        buffer, trailing_cr = "", False
        async for chunk in self.aiter_bytes():
            piece = text.decode(chunk)
            if trailing_cr:
                piece, trailing_cr = "\r" + piece, False
            if piece.endswith("\r"):
                piece, trailing_cr = piece[:-1], True
            if not piece:
                continue
            lines = (buffer + piece).splitlines()
            buffer = "" if piece[-1] in NEWLINES else lines.pop()
            if limit is not None and len(buffer) > limit:
                raise TooLarge(limit)
            for line in lines:
                if limit is not None and len(line) > limit:
                    raise TooLarge(limit)
                yield line
        buffer += text.decode(b"", final=True)
        if buffer or trailing_cr:
            yield buffer

    async def aclose(self) -> None:
        await self._response.aclose()


class _Deflate:
    """``deflate`` as servers send it: zlib-wrapped, or raw (as httpx decodes it)."""

    def __init__(self) -> None:
        self._first = True
        self._decoder = zlib.decompressobj()

    @property
    def unconsumed_tail(self) -> bytes:
        return self._decoder.unconsumed_tail

    def decompress(self, data: bytes, max_length: int) -> bytes:
        was_first, self._first = self._first, False
        try:
            return self._decoder.decompress(data, max_length)
        except zlib.error:
            if not was_first:
                raise
            self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
            return self._decoder.decompress(data, max_length)

    def flush(self) -> bytes:
        return self._decoder.flush()
