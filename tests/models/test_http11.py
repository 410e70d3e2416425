"""The pooled HTTP/1.1 client against scripted raw-socket servers on 127.0.0.1 (framing,
keep-alive, broken servers, timeouts), a TLS server with a throwaway CA, and proxy rules."""

from __future__ import annotations

import asyncio
import gzip
import ssl
import zlib

import pytest

from agentcli.errors import ProviderError
from agentcli.models import http11
from agentcli.models.errors_map import map_error
from agentcli.models.http11 import Http11Client, RemoteProtocolError, proxy_applies
from tests.models.rawserver import RawServer

OK_SSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"b\r\ndata: one\n\n\r\n"
    b"b\r\ndata: two\n\n\r\n"
    b"0\r\n\r\n"
)


def client_for(url: str, **options) -> Http11Client:
    options.setdefault("headers", {"Authorization": "Bearer k-123"})
    options.setdefault("timeout", 2.0)
    return Http11Client(url, **options)


async def lines_of(client: Http11Client, path: str = "chat/completions") -> list[str]:
    async with client.stream("POST", path, json={"q": "é"}) as response:
        assert response.status_code == 200
        return [line async for line in response.aiter_lines()]


async def test_request_line_headers_and_json_body():
    async with RawServer(OK_SSE) as server:
        client = client_for(server.url)
        assert await lines_of(client) == ["data: one", "", "data: two", ""]
        await client.aclose()
    head, body = server.requests[0].split(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
    assert f"Host: 127.0.0.1:{server.port}" in lines
    assert "Authorization: Bearer k-123" in lines
    assert "Content-Type: application/json" in lines
    assert body == '{"q":"é"}'.encode()


async def test_keep_alive_reuses_one_connection_for_sequential_requests():
    async with RawServer(OK_SSE, OK_SSE, OK_SSE) as server:
        client = client_for(server.url)
        for _ in range(3):
            assert await lines_of(client) == ["data: one", "", "data: two", ""]
        await client.aclose()
    assert server.connections == 1


async def test_parallel_requests_open_parallel_connections_and_keep_max_idle():
    async def slow(writer):
        await asyncio.sleep(0.05)
        writer.write(OK_SSE)
        return True

    async with RawServer(*[slow] * 6) as server:
        client = client_for(server.url, max_idle=2)
        await asyncio.gather(*(lines_of(client) for _ in range(4)))
        assert server.connections == 4
        assert len(client._idle) == 2  # the rest were closed, not kept
        await asyncio.gather(*(lines_of(client) for _ in range(2)))
        assert server.connections == 4  # the two idle ones were reused
        await client.aclose()


async def test_connection_close_and_http_1_0_are_not_reused():
    close = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 4\r\n\r\ndata"
    old = b"HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\ndata"
    async with RawServer(close, old, OK_SSE) as server:
        client = client_for(server.url)
        assert await lines_of(client) == ["data"]
        assert await lines_of(client) == ["data"]
        await lines_of(client)
        await client.aclose()
    assert server.connections == 3


@pytest.mark.parametrize(
    ("answer", "lines"),
    [
        # Content-Length body, \r\n line breaks
        (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\na\r\nb\r\n\r\nc", ["a", "b", "", "c"]),
        # chunk extensions and trailer fields; a \r\n split across two chunks
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"2;name=x\r\na\r\r\n1\r\n\n\r\n2\r\nb\n\r\n0\r\nX-Trailer: 1\r\n\r\n",
            ["a", "b"],
        ),
        # bare \r line breaks, and a 103 Early Hints answer first
        (
            b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nx\ry\rz",
            ["x", "y", "z"],
        ),
        # no framing: the body ends when the server closes
        (b"HTTP/1.1 200 OK\r\n\r\nall\nof it", ["all", "of it"]),
        # a UTF-8 character and U+2028 inside a line stay whole
        ("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nd:é\u2028z".encode(), ["d:é\u2028z"]),
        # a head with bare \n line breaks, a folded header, a repeated Content-Length
        (
            b"HTTP/1.1 200 OK\nX-Long: a\n  b\nContent-Length: 2\nContent-Length: 2\n\nhi",
            ["hi"],
        ),
        # bare \n inside chunked framing too
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nhi\n0\n\n", ["hi"]),
    ],
    ids=["length", "chunked", "cr-and-1xx", "to-close", "unicode", "lf-head", "lf-chunks"],
)
async def test_body_framings_and_line_breaks(answer, lines):
    async with RawServer(answer) as server:
        client = client_for(server.url)
        assert await lines_of(client) == lines
        await client.aclose()


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "pack"),
    [("gzip", gzip.compress), ("deflate", zlib.compress), ("deflate", raw_deflate)],
    ids=["gzip", "deflate", "raw-deflate"],
)
async def test_compressed_bodies_are_decoded(encoding, pack):
    data = b'data: {"a": 1}\n\n' * 50
    packed = pack(data)
    answer = (
        f"HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\nContent-Length: {len(packed)}\r\n\r\n"
    ).encode() + packed
    async with RawServer(answer, OK_SSE) as server:
        client = client_for(server.url)
        assert await lines_of(client) == ['data: {"a": 1}', ""] * 50
        await lines_of(client)
        await client.aclose()
    assert server.connections == 1  # read to the end, so kept alive


async def test_error_status_body_and_headers_are_readable():
    answer = (
        b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nX-A: 1\r\nX-A: 2\r\n"
        b'Content-Length: 13\r\n\r\n{"error": {}}'
    )
    async with RawServer(answer) as server:
        client = client_for(server.url)
        async with client.stream("POST", "chat/completions", json={}) as response:
            assert response.status_code == 429
            assert response.headers["retry-after"] == "3"
            assert response.headers["x-a"] == "1, 2"
            assert await response.aread() == b'{"error": {}}'
        await client.aclose()


async def test_leaving_before_the_end_of_the_body_closes_the_connection():
    async with RawServer(OK_SSE, OK_SSE) as server:
        client = client_for(server.url)
        async with client.stream("POST", "chat/completions", json={}) as response:
            async for _ in response.aiter_lines():
                break
        assert not client._idle
        await lines_of(client)
        await client.aclose()
    assert server.connections == 2


async def test_an_idle_connection_closed_by_the_server_is_not_reused():
    async def answer_then_close(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        return False  # the server hangs up after answering, without saying so

    async with RawServer(answer_then_close, OK_SSE) as server:
        client = client_for(server.url)
        assert await lines_of(client) == ["ok"]
        await asyncio.sleep(0.05)  # the FIN arrives while the connection is idle
        assert await lines_of(client) == ["data: one", "", "data: two", ""]
        await client.aclose()
    assert server.connections == 2


async def test_an_expired_idle_connection_is_replaced():
    async with RawServer(OK_SSE, OK_SSE, OK_SSE) as server:
        client = client_for(server.url)
        await lines_of(client)
        client._idle[0].idle_since -= http11.KEEPALIVE_EXPIRY - 0.5  # still fresh
        await lines_of(client)
        client._idle[0].idle_since -= http11.KEEPALIVE_EXPIRY + 0.5  # now too old
        await lines_of(client)
        await client.aclose()
    assert server.connections == 2
    assert http11.KEEPALIVE_EXPIRY < 5  # under uvicorn's (vLLM's) 5 s keep-alive


async def test_a_shorter_keep_alive_timeout_of_the_server_is_honoured():
    short = b"HTTP/1.1 200 OK\r\nKeep-Alive: timeout=2, max=100\r\nContent-Length: 2\r\n\r\nok"
    async with RawServer(short, OK_SSE) as server:
        client = client_for(server.url)
        assert await lines_of(client) == ["ok"]
        assert client._idle[0].expiry == 1.0  # the server's 2 s, less a second of margin
        client._idle[0].idle_since -= 1.5
        await lines_of(client)
        await client.aclose()
    assert server.connections == 2


@pytest.mark.parametrize(
    "extra",
    [
        b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        b"overflow",  # more body than the Content-Length said
    ],
    ids=["408", "overflow"],
)
async def test_bytes_that_arrive_while_idle_retire_the_connection(extra):
    async def answer_then_extra(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(extra)  # without closing: only the unread bytes tell
        await writer.drain()
        await asyncio.sleep(0.5)
        return False

    async with RawServer(answer_then_extra, OK_SSE) as server:
        client = client_for(server.url)
        assert await lines_of(client) == ["ok"]
        await asyncio.sleep(0.1)
        assert await lines_of(client) == ["data: one", "", "data: two", ""]
        await client.aclose()
    assert server.connections == 2


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"", "closed the connection without a response"),
        (b"HTTP/1.1 200 OK\r\nContent-", "closed the connection mid-headers"),
        (b"SMTP ready\r\n\r\n", "not an HTTP/1.1 response"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "a malformed header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "mid-response"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n", "malformed chunk"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "mid-response"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", "malformed Content-Length"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000, "over-long headers"),
        ("HTTP/1.1 2\u00b20 OK\r\n\r\n".encode(), "not an HTTP/1.1 response"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n", "malformed chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1_0\r\n", "malformed chunk size"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd", "malformed Content-Length"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope",
            "corrupt compressed body",
        ),
    ],
)
async def test_broken_servers_raise_remote_protocol_errors(answer, message):
    async def send_and_close(writer):
        writer.write(answer)
        await writer.drain()
        return False

    async with RawServer(send_and_close) as server:
        client = client_for(server.url)
        with pytest.raises(RemoteProtocolError, match=message):
            await lines_of(client)
        assert not client._idle
        await client.aclose()


async def test_a_protocol_error_maps_to_a_retryable_provider_error():
    error = map_error(
        RemoteProtocolError("the server closed the connection mid-response"),
        provider="openai",
        model="m",
    )
    assert type(error) is ProviderError and error.retryable
    assert error.message == (
        "openai model 'm': connection failed: the server closed the connection mid-response"
    )


async def test_a_silent_server_times_out_on_the_head_and_mid_body():
    async def never(writer):
        await asyncio.sleep(5)
        return False

    async def stall_mid_body(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        await writer.drain()
        await asyncio.sleep(5)
        return False

    async with RawServer(never, stall_mid_body) as server:
        client = client_for(server.url, timeout=0.2)
        with pytest.raises(TimeoutError):
            await lines_of(client)
        with pytest.raises(TimeoutError):
            await lines_of(client)
        await client.aclose()


async def test_refused_connection_is_an_os_error():
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    client = client_for(f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ConnectionRefusedError):
        await lines_of(client)


def test_header_values_with_line_breaks_are_refused_without_quoting_them():
    with pytest.raises(ValueError, match="the Authorization header contains a line break") as info:
        client_for("http://127.0.0.1:9/v1", headers={"Authorization": "Bearer sk-1\r\nX: y"})
    assert "sk-1" not in str(info.value)


@pytest.mark.parametrize("url", ["ftp://host/v1", "http:///v1", "127.0.0.1:8000"])
def test_non_http_urls_are_refused(url):
    with pytest.raises(ValueError, match="not an http"):
        client_for(url)


async def test_the_query_of_the_base_url_is_kept():
    async with RawServer(OK_SSE) as server:
        client = client_for(server.url.rstrip("/") + "?api-version=2024-10-21")
        await lines_of(client)
        await client.aclose()
    assert server.requests[0].startswith(
        b"POST /v1/chat/completions?api-version=2024-10-21 HTTP/1.1\r\n"
    )


async def test_a_large_request_goes_out_in_pieces():
    async with RawServer(OK_SSE) as server:
        client = client_for(server.url)
        async with client.stream("POST", "chat/completions", json={"q": "x" * 500_000}) as r:
            assert r.status_code == 200
            await r.aread()
        await client.aclose()
    assert len(server.requests[0]) > 500_000


def test_host_header_for_default_ports_and_ipv6():
    assert "Host: api.example.com\r\n" in client_for("https://api.example.com/v1")._head
    assert "Host: [::1]:8080\r\n" in client_for("http://[::1]:8080/v1")._head


@pytest.fixture
def tls_server_context(tmp_path):
    """A throwaway CA, its bundle written to a file, and a server context for 127.0.0.1."""
    import trustme

    authority = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(server_context)
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    return server_context, bundle


async def start_tls_server(server_context) -> tuple[asyncio.Server, str]:
    async def serve(reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        await reader.readexactly(length)
        writer.write(OK_SSE)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=server_context)
    return server, f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"


async def test_tls_with_a_trusted_ca(tls_server_context, monkeypatch):
    server_context, bundle = tls_server_context
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    server, url = await start_tls_server(server_context)
    client = client_for(url)
    assert await lines_of(client) == ["data: one", "", "data: two", ""]
    await client.aclose()
    server.close()


async def test_tls_with_an_untrusted_certificate_is_a_clear_final_error(
    tls_server_context, monkeypatch
):
    server_context, _ = tls_server_context
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    server, url = await start_tls_server(server_context)
    client = client_for(url)
    with pytest.raises(ssl.SSLCertVerificationError) as info:
        await lines_of(client)
    server.close()
    error = map_error(info.value, provider="openai", model="m")
    assert type(error) is ProviderError and not error.retryable
    assert error.message.startswith("openai model 'm': the server's certificate is not trusted")
    assert error.hint == (
        "check the certificate's name and dates; for a private CA, set SSL_CERT_FILE to its bundle"
    )


@pytest.mark.parametrize(
    ("env", "url", "applies"),
    [
        ({}, "https://api.openai.com/v1", False),
        ({"HTTPS_PROXY": "http://proxy:3128"}, "https://api.openai.com/v1", True),
        ({"https_proxy": "http://proxy:3128"}, "http://127.0.0.1:8000/v1", False),
        ({"HTTP_PROXY": "http://proxy:3128"}, "http://10.0.0.5:8000/v1", True),
        ({"ALL_PROXY": "socks5://proxy:1080"}, "https://api.openai.com/v1", True),
        (
            {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "openai.com,localhost"},
            "https://api.openai.com/v1",
            False,
        ),
        ({"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "*"}, "https://x.dev/v1", False),
    ],
)
def test_proxy_applies(monkeypatch, env, url, applies):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert proxy_applies(url) is applies


async def test_connections_broken_mid_response_leave_no_unretrieved_exceptions(monkeypatch):
    """A reset's exception sits in the stream's "closed" future too. The protocol's own
    finalizer retrieves it, unless a reference cycle is collected future first; then
    asyncio logs "Future exception was never retrieved" (seen under load). Disabling
    that finalizer makes the unlucky order certain."""
    import gc
    import socket
    import struct

    async def reset_mid_body(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        await writer.drain()
        await asyncio.sleep(0.01)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        return False

    monkeypatch.setattr(asyncio.StreamReaderProtocol, "__del__", lambda self: None)
    loop = asyncio.get_running_loop()
    reported: list[dict] = []
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        async with RawServer(*[reset_mid_body] * 20) as server:
            client = client_for(server.url)
            for _ in range(20):
                with pytest.raises(ConnectionResetError):
                    await lines_of(client)
            await asyncio.sleep(0.01)
            gc.collect()
            await asyncio.sleep(0.01)
            await client.aclose()
    finally:
        loop.set_exception_handler(None)
    assert [c["message"] for c in reported] == []


async def test_closing_after_an_idle_connection_was_reset_reports_nothing():
    import socket
    import struct

    async def answer_then_reset(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        await asyncio.sleep(0.05)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()  # a load balancer's RST while the client holds it idle
        return False

    loop = asyncio.get_running_loop()
    reported: list[dict] = []
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        async with RawServer(answer_then_reset) as server:
            client = client_for(server.url)
            assert await lines_of(client) == ["ok"]
            await asyncio.sleep(0.2)
            await client.aclose()
        await asyncio.sleep(0.05)
        import gc

        gc.collect()
        await asyncio.sleep(0.05)
    finally:
        loop.set_exception_handler(None)
    assert [c["message"] for c in reported] == []


def test_system_proxy_settings_count_on_macos_and_windows(monkeypatch):
    import urllib.request

    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setattr(urllib.request, "getproxies", lambda: {"https": "http://proxy:3128"})
    monkeypatch.setattr(urllib.request, "proxy_bypass", lambda host: host == "intranet")
    monkeypatch.setattr(http11.sys, "platform", "darwin")
    assert proxy_applies("https://api.openai.com/v1")
    assert not proxy_applies("https://intranet/v1")
    monkeypatch.setattr(http11.sys, "platform", "linux")  # Linux: the environment only
    assert not proxy_applies("https://api.openai.com/v1")


async def test_a_missing_ssl_cert_file_is_a_final_error_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "gone.pem"))
    client = client_for("https://127.0.0.1:9/v1")
    with pytest.raises(http11.TlsSettingsError) as info:
        await lines_of(client)
    error = map_error(info.value, provider="openai", model="m")
    assert type(error) is ProviderError and not error.retryable
    assert (
        error.message
        == f"openai model 'm': TLS settings: SSL_CERT_FILE names no file: {tmp_path / 'gone.pem'}"
    )
