"""A pooled HTTP/1.1 client on asyncio streams: what a streamed chat-completions call needs.

Why not httpx for this path: through httpcore and anyio it spends ~1 ms of CPU on each
streamed call and yields to the event loop at every read, so in a latency-bound eval at
``--parallel 50`` every wave of answers is processed in lock step and the waves drift apart
(``bench/latency.py``). This client speaks only HTTP/1.1 to one origin: keep-alive
connections reused newest first, TLS trusting what httpx trusts (``SSL_CERT_FILE`` /
``SSL_CERT_DIR``, else the system's store), happy-eyeballs connects, ``Content-Length``,
chunked and read-to-close bodies, gzip/deflate, a connect timeout and a timeout on every
read and write. Proxies are not spoken here: when the environment (or, on macOS and
Windows, the system) names one for the origin, the model uses httpx (``proxy_applies``).

A request is never re-sent on its own: a POST that may have reached the server is the
caller's to retry (``retry_stream``), as with httpx.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import sys
import time
import zlib
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote, urlsplit

__all__ = [
    "Http11Client",
    "HttpResponse",
    "RemoteProtocolError",
    "TlsSettingsError",
    "proxy_applies",
]

# Seconds an idle connection is trusted: under the 5 s that uvicorn (vLLM) and many
# gateways keep one open, so the server does not close it as a request goes out.
KEEPALIVE_EXPIRY = 4.0
_MAX_LINE = 64 * 1024  # longest status, header or chunk-size line
_MAX_HEADERS = 200
_CHUNK = 64 * 1024  # read size, and the write size between two drains
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_KEEP_ALIVE_TIMEOUT = re.compile(r"timeout\s*=\s*(\d+)")
_NO_BODY = frozenset({204, 304})


class RemoteProtocolError(ConnectionError):
    """The server broke HTTP/1.1 or closed the connection mid-response."""


def proxy_applies(url: str) -> bool:
    """True when a proxy is configured for ``url``: ``HTTP(S)_PROXY``/``ALL_PROXY`` (with
    ``NO_PROXY``), and on macOS and Windows the system's settings, as httpx reads them.
    On Linux without any ``*_proxy`` variable this reads nothing else."""
    system = sys.platform in ("darwin", "win32")
    if not system and not any(
        name.lower().endswith("_proxy") and value for name, value in os.environ.items()
    ):
        return False
    import urllib.request

    proxies = urllib.request.getproxies()
    parts = urlsplit(url)
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    if "no" in proxies:
        return not urllib.request.proxy_bypass_environment(parts.netloc, proxies)
    return not urllib.request.proxy_bypass(parts.hostname or "")


class TlsSettingsError(Exception):
    """``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name nothing usable: retrying cannot help."""


@functools.cache
def _tls_context(cafile: str | None, capath: str | None) -> Any:
    """One verifying TLS context per CA setting (loading a store costs ~20 ms), built by
    httpcore so both transports trust the same certificates."""
    if cafile and not os.path.isfile(cafile):
        raise TlsSettingsError(f"SSL_CERT_FILE names no file: {cafile}")
    if capath and not cafile and not os.path.isdir(capath):
        raise TlsSettingsError(f"SSL_CERT_DIR names no folder: {capath}")
    from httpcore2 import default_ssl_context

    context = default_ssl_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


class _Connection:
    """One keep-alive connection, when it last went idle and how long it may stay so."""

    __slots__ = ("expiry", "idle_since", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.idle_since = 0.0
        self.expiry = KEEPALIVE_EXPIRY

    def usable(self, now: float) -> bool:
        """Still open, not closed by the server, not idle for too long, and with nothing
        unread: bytes that arrived while idle (a 408 before closing, a body longer than
        its Content-Length) would be taken for the next response."""
        return not (
            self.writer.is_closing()
            or self.reader.at_eof()
            or getattr(self.reader, "_buffer", None)  # asyncio has no public "buffered"
            or now - self.idle_since > self.expiry
        )

    def abort(self) -> asyncio.Future[None]:
        """Drop the connection at once (a broken or half-read response, or the end)."""
        self.writer.transport.abort()
        # The error that broke a connection also sits in the stream's "closed" future. When
        # a reference cycle (the error's traceback holds this connection) is collected in
        # the wrong order, asyncio logs "Future exception was never retrieved" for it;
        # awaiting ``wait_closed`` retrieves it.
        task = asyncio.ensure_future(_settle(self.writer))
        _closing.add(task)
        task.add_done_callback(_closing.discard)
        return task


_closing: set[asyncio.Future[None]] = set()  # strong references until the close is settled


async def _settle(writer: asyncio.StreamWriter) -> None:
    """Wait for a closed connection's end, whatever error ended it."""
    with contextlib.suppress(Exception):
        await writer.wait_closed()


class _Decoder:
    """``Content-Encoding`` gzip or deflate; deflate with or without its zlib header."""

    def __init__(self, encoding: str) -> None:
        self._raw_fallback = encoding == "deflate"
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 32)  # zlib or gzip header

    def decode(self, data: bytes) -> bytes:
        try:
            return self._zlib.decompress(data)
        except zlib.error:
            if self._raw_fallback:  # servers that send raw deflate streams
                self._raw_fallback = False
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.decode(data)
            raise RemoteProtocolError("the server sent a corrupt compressed body") from None

    def flush(self) -> bytes:
        try:
            return self._zlib.flush()
        except zlib.error:
            raise RemoteProtocolError("the server sent a corrupt compressed body") from None


class HttpResponse:
    """The status and headers of a response whose body is read as it arrives."""

    def __init__(
        self,
        connection: _Connection,
        status_code: int,
        headers: dict[str, str],
        *,
        keep_alive: bool,
        no_body: bool,
        timeout: float,
    ) -> None:
        self.status_code = status_code
        self.headers = headers  # names lower-cased
        self._connection = connection
        self._timeout = timeout
        self._keep_alive = keep_alive
        self._complete = no_body

    @property
    def reusable(self) -> bool:
        """The body was read to its end and the server keeps the connection open."""
        return self._complete and self._keep_alive

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, decoded from its transfer and content encodings, piece by piece."""
        if self._complete:
            return
        encoding = self.headers.get("content-encoding", "").strip().lower()
        decoder = _Decoder(encoding) if encoding in ("gzip", "deflate") else None
        async for data in self._raw_body():
            if decoder is not None:
                data = decoder.decode(data)
            if data:
                yield data
        if decoder is not None and (rest := decoder.flush()):
            yield rest

    async def aread(self) -> bytes:
        """The whole body."""
        return b"".join([data async for data in self.aiter_bytes()])

    def aiter_lines(self) -> AsyncIterator[str]:
        """The body's lines without their line breaks (``\\r\\n``, ``\\n`` or ``\\r``)."""
        from agentcli.models.streaming import lines

        return lines(self.aiter_bytes())

    async def _raw_body(self) -> AsyncIterator[bytes]:
        """The body's bytes as framed by ``Transfer-Encoding``/``Content-Length``."""
        reader, headers = self._connection.reader, self.headers
        if "chunked" in headers.get("transfer-encoding", "").lower():
            while True:
                line = (await self._read(reader.readuntil(b"\n"))).rstrip(b"\r\n")
                digits = line.split(b";", 1)[0].strip()
                if not _HEX.fullmatch(digits):
                    raise RemoteProtocolError("the server sent a malformed chunk size")
                size = int(digits, 16)
                if size == 0:
                    while (await self._read(reader.readuntil(b"\n"))).strip():
                        continue  # trailer fields: not used
                    break
                data = await self._read(reader.readexactly(size))
                if (await self._read(reader.readuntil(b"\n"))).strip():
                    raise RemoteProtocolError("the server sent a malformed chunk")
                yield data
        elif "content-length" in headers:
            remaining = _content_length(headers["content-length"])
            while remaining > 0:
                data = await self._read(reader.read(min(remaining, _CHUNK)))
                if not data:
                    raise RemoteProtocolError("the server closed the connection mid-response")
                remaining -= len(data)
                yield data
        else:
            # No framing: the body ends when the server closes the connection.
            self._keep_alive = False
            while data := await self._read(reader.read(_CHUNK)):
                yield data
        self._complete = True

    async def _read(self, pending: Any) -> Any:
        """Await one read, failing after ``timeout`` seconds without data."""
        try:
            async with asyncio.timeout(self._timeout):
                return await pending
        except asyncio.IncompleteReadError:
            raise RemoteProtocolError("the server closed the connection mid-response") from None
        except asyncio.LimitOverrunError:
            raise RemoteProtocolError("the server sent an over-long line") from None


def _content_length(value: str) -> int:
    """A Content-Length; repeated identical values (``10, 10``) are one, as httpx reads."""
    values = {part.strip() for part in value.split(",")}
    if len(values) != 1 or not (number := values.pop()).isascii() or not number.isdigit():
        raise RemoteProtocolError("the server sent a malformed Content-Length")
    return int(number)


class Http11Client:
    """Requests to one origin (``base_url``) over pooled HTTP/1.1 connections."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: dict[str, str],
        timeout: float,
        max_idle: int = 16,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.timeout = timeout
        self.max_idle = max_idle
        # Percent-encoded as httpx does: a space or a non-ASCII folder must not break the line.
        self._prefix = quote(parts.path.rstrip("/"), safe="/%:@!$&'()*+,;=~") + "/"
        self._query = f"?{parts.query}" if parts.query else ""  # e.g. ?api-version=...
        default_port = self.port == (443 if self.https else 80)
        host = f"[{self.host}]" if ":" in self.host else self.host
        fields = {
            "Host": host if default_port else f"{host}:{self.port}",
            "Accept": "application/json",
            "Accept-Encoding": "gzip, deflate",
            "Content-Type": "application/json",
            "User-Agent": "agentcli",
            **headers,
        }
        for name, value in fields.items():
            if "\r" in value or "\n" in value:
                # Named, never quoted: the value may be a key.
                raise ValueError(f"the {name} header contains a line break")
        self._head = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
        self._idle: deque[_Connection] = deque()
        self._closed = False

    @asynccontextmanager
    async def stream(
        self, method: str, path: str, *, json: Any = None, timeout: float | None = None
    ) -> AsyncIterator[HttpResponse]:
        """Send one request; the response's body is read inside the ``async with``."""
        timeout = self.timeout if timeout is None else timeout
        body = b"" if json is None else _json_bytes(json)
        request = (
            f"{method} {self._prefix}{path.lstrip('/')}{self._query} HTTP/1.1\r\n{self._head}"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode("latin-1") + body
        connection = await self._acquire(timeout)
        try:
            await self._send(connection.writer, request, timeout)
            response = await self._read_head(connection, timeout)
        except BaseException:
            connection.abort()
            raise
        try:
            yield response
        finally:
            self._release(connection, response)

    async def aclose(self) -> None:
        """Close the idle connections; connections still in use close when released."""
        self._closed = True
        idle, self._idle = list(self._idle), deque()
        if idle:
            await asyncio.wait([connection.abort() for connection in idle], timeout=1.0)

    async def _acquire(self, timeout: float) -> _Connection:
        """The newest idle connection still usable, else a new one."""
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if connection.usable(now):
                return connection
            connection.abort()
        ssl = (
            _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
            if self.https
            else None
        )
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(
                self.host,
                self.port,
                ssl=ssl,
                server_hostname=self.host if self.https else None,
                limit=_MAX_LINE,
                # A host whose first address drops packets (broken IPv6) must not cost
                # the whole timeout: try the next address after 250 ms, as httpx does.
                happy_eyeballs_delay=0.25,
                interleave=1,
            )
        return _Connection(reader, writer)

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, request: bytes, timeout: float) -> None:
        """Write the request; the timeout applies to each piece, so a large upload on a
        slow link fails only when it stops moving."""
        for start in range(0, len(request), _CHUNK):
            writer.write(request[start : start + _CHUNK])
            async with asyncio.timeout(timeout):
                await writer.drain()

    def _release(self, connection: _Connection, response: HttpResponse) -> None:
        """Back to the pool when the response ended cleanly, otherwise closed."""
        if response.reusable and not self._closed and len(self._idle) < self.max_idle:
            connection.idle_since = time.monotonic()
            # Honour a shorter ``Keep-Alive: timeout=N`` of the server, with a margin.
            hint = _KEEP_ALIVE_TIMEOUT.search(response.headers.get("keep-alive", ""))
            if hint:
                connection.expiry = min(KEEPALIVE_EXPIRY, max(0.0, int(hint.group(1)) - 1.0))
            self._idle.append(connection)
        else:
            connection.abort()

    async def _read_head(self, connection: _Connection, timeout: float) -> HttpResponse:
        """Read the status line and headers, skipping informational (1xx) answers."""
        while True:
            lines = await self._head_lines(connection.reader, timeout)
            status_line = lines[0]
            version, _, rest = status_line.partition(" ")
            code = rest[:3]
            if not version.startswith("HTTP/1.") or not (code.isascii() and code.isdigit()):
                raise RemoteProtocolError(f"not an HTTP/1.1 response: {status_line[:60]!r}")
            status = int(code)
            if 100 <= status < 200:
                continue
            headers: dict[str, str] = {}
            name = ""
            for line in lines[1:]:
                if line[:1] in (" ", "\t") and name:  # an obsolete folded continuation
                    headers[name] = f"{headers[name]} {line.strip()}"
                    continue
                name, colon, value = line.partition(":")
                if not colon or not name.strip():
                    raise RemoteProtocolError(f"a malformed header line: {line[:60]!r}")
                name, value = name.strip().lower(), value.strip()
                headers[name] = f"{headers[name]}, {value}" if name in headers else value
            keep_alive = (
                version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
            )
            return HttpResponse(
                connection,
                status,
                headers,
                keep_alive=keep_alive,
                no_body=status in _NO_BODY,
                timeout=timeout,
            )

    @staticmethod
    async def _head_lines(reader: asyncio.StreamReader, timeout: float) -> list[str]:
        """The status line and header lines, ending with \\r\\n or a bare \\n."""
        lines: list[str] = []
        try:
            async with asyncio.timeout(timeout):
                while len(lines) <= _MAX_HEADERS:
                    line = await reader.readuntil(b"\n")
                    if line in (b"\r\n", b"\n"):
                        if lines:
                            return lines
                        continue  # a stray blank line before the status line
                    lines.append(line.rstrip(b"\r\n").decode("latin-1"))
        except asyncio.IncompleteReadError as exc:
            what = "mid-headers" if lines or exc.partial else "without a response"
            raise RemoteProtocolError(f"the server closed the connection {what}") from None
        except asyncio.LimitOverrunError:
            raise RemoteProtocolError("the server sent over-long headers") from None
        raise RemoteProtocolError("the server sent over-long headers")


def _json_bytes(payload: Any) -> bytes:
    """Compact UTF-8 JSON, as httpx sends ``json=``."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
        "utf-8"
    )
