"""Both real transports (aiohttp, the openai SDK) against scripted raw-socket servers on
127.0.0.1: framing, keep-alive, broken servers, timeouts, a TLS server with a throwaway
CA, proxies. Every test runs on both; what differs is named in the test."""

from __future__ import annotations

import asyncio
import gc
import gzip
import json
import socket
import ssl
import struct
import sys
import zlib

import pytest

from agentcli.errors import ModelTimeout, ProviderError
from agentcli.models import proxies
from agentcli.models.base import collect
from agentcli.models.limiter import AdaptiveLimiter
from agentcli.models.openai_model import OpenAICompatModel
from agentcli.models.proxies import proxy_for
from agentcli.models.retry import RetryPolicy
from agentcli.models.transport import KEEPALIVE_EXPIRY
from tests.models.rawserver import RawServer

USER = [{"role": "user", "content": "hé"}]
ONCE = RetryPolicy(max_attempts=1)
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def sse(*texts: str) -> bytes:
    """The events of a stream that says ``texts`` and stops."""
    events = [{"choices": [{"index": 0, "delta": {"content": text}}]} for text in texts]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


def chunked(body: bytes, size: int = 7) -> bytes:
    """``body`` in chunked framing, ``size`` bytes a chunk."""
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


def answer(body: bytes, *head: str, kind: str = "text/event-stream") -> bytes:
    """A 200 answer with a Content-Length."""
    lines = ["HTTP/1.1 200 OK", f"Content-Type: {kind}", f"Content-Length: {len(body)}", *head]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


OK = answer(sse("one", "two"))


def then_close(data: bytes):
    """A RawServer answer: send ``data``, then hang up."""

    async def send_and_close(writer):
        writer.write(data)
        await writer.drain()
        return False

    return send_and_close


@pytest.fixture(params=["aiohttp", "sdk"])
def transport(request):
    return request.param


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def model_for(url: str, transport: str, **options) -> OpenAICompatModel:
    options.setdefault("api_key", "k-123")
    options.setdefault("retry", ONCE)
    options.setdefault("timeout", 2.0)
    return OpenAICompatModel("m", api_base=url, transport=transport, **options)


async def text_of(model: OpenAICompatModel) -> str:
    return (await collect(model, USER)).content


async def test_request_line_headers_and_json_body(transport):
    async with RawServer(OK) as server:
        model = model_for(server.url, transport)
        assert await text_of(model) == "onetwo"
        await model.aclose()
    head, body = server.requests[0].split(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
    fields = {
        name.lower(): value for name, _, value in (line.partition(": ") for line in lines[1:])
    }
    assert fields["host"] == f"127.0.0.1:{server.port}"
    assert fields["authorization"] == "Bearer k-123"
    assert fields["content-type"] == "application/json"
    assert json.loads(body)["messages"] == USER


async def test_keep_alive_reuses_one_connection_for_sequential_requests(transport):
    async with RawServer(OK, OK, OK) as server:
        model = model_for(server.url, transport)
        for _ in range(3):
            assert await text_of(model) == "onetwo"
        await model.aclose()
    assert server.connections == 1


async def test_the_pool_keeps_as_many_connections_as_the_run_allows(transport):
    async def slow(writer):
        await asyncio.sleep(0.05)
        writer.write(OK)
        return True

    async with RawServer(*[slow] * 8) as server:
        model = model_for(server.url, transport)
        model.limiter = AdaptiveLimiter(4)  # --parallel 4
        await asyncio.gather(*(text_of(model) for _ in range(4)))
        assert server.connections == 4
        await asyncio.gather(*(text_of(model) for _ in range(4)))
        assert server.connections == 4  # the four idle ones were reused
        await model.aclose()
    assert KEEPALIVE_EXPIRY < 5  # under uvicorn's (vLLM's) 5 s keep-alive


async def test_connection_close_and_http_1_0_are_not_reused(transport):
    body = sse("x")
    close = answer(body, "Connection: close")
    old = answer(body).replace(b"HTTP/1.1 200", b"HTTP/1.0 200", 1)
    async with RawServer(close, old, OK) as server:
        model = model_for(server.url, transport)
        assert [await text_of(model) for _ in range(3)] == ["x", "x", "onetwo"]
        await model.aclose()
    assert server.connections == 3


STREAM = sse("a\u2028é", "b")
FRAMINGS = {
    "length": answer(STREAM),
    "chunked": b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n" + chunked(STREAM),
    "chunk-extensions-and-trailers": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    + chunked(STREAM).replace(b"\r\n", b";name=x\r\n", 1)[:-2]
    + b"X-Trailer: 1\r\n\r\n",
    "crlf-events": answer(STREAM.replace(b"\n", b"\r\n")),
    "1xx-first": b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" + answer(STREAM),
    "to-close": b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + STREAM,
    "json-content-type": answer(STREAM, kind="application/json"),
}


@pytest.mark.parametrize("framing", FRAMINGS.values(), ids=FRAMINGS)
async def test_body_framings_and_line_breaks(transport, framing):
    async with RawServer(then_close(framing)) as server:
        model = model_for(server.url, transport)
        assert await text_of(model) == "a\u2028éb"
        await model.aclose()


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "pack"),
    [("gzip", gzip.compress), ("deflate", zlib.compress), ("deflate", raw_deflate)],
    ids=["gzip", "deflate", "raw-deflate"],
)
async def test_compressed_bodies_are_decoded(transport, encoding, pack):
    packed = answer(pack(sse("z" * 40, "y")), f"Content-Encoding: {encoding}")
    async with RawServer(packed, OK) as server:
        model = model_for(server.url, transport)
        assert await text_of(model) == "z" * 40 + "y"
        assert await text_of(model) == "onetwo"
        await model.aclose()
    assert server.connections == 1  # read to the end, so kept alive
    assert b"gzip" in server.requests[0].lower()  # the client asked for it


async def test_an_error_status_with_retry_after_is_rate_limited(transport):
    from agentcli.errors import RateLimited

    body = b'{"error": {"message": "slow down"}}'
    limited = (
        b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    async with RawServer(limited) as server:
        model = model_for(server.url, transport)
        with pytest.raises(RateLimited) as info:
            await text_of(model)
        await model.aclose()
    assert (info.value.status_code, info.value.retry_after) == (429, 3.0)
    assert "slow down" in info.value.message


async def test_an_idle_connection_closed_by_the_server_is_not_reused(transport):
    # The server hangs up after answering, without saying so.
    async with RawServer(then_close(answer(sse("ok"))), OK) as server:
        model = model_for(server.url, transport)
        assert await text_of(model) == "ok"
        await asyncio.sleep(0.05)  # the FIN arrives while the connection is idle
        assert await text_of(model) == "onetwo"  # no retry allowed: a fresh connection
        await model.aclose()
    assert server.connections == 2


@pytest.mark.parametrize(
    "extra",
    [
        b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        b"overflow",  # more body than the Content-Length said
    ],
    ids=["408", "overflow"],
)
async def test_bytes_that_arrive_while_idle_retire_the_connection(transport, extra):
    """aiohttp reads a 408 that arrives on an idle connection as the next request's answer
    (our own client looked for unread bytes first): the retry it costs goes to a fresh
    connection, so the call still succeeds."""

    async def answer_then_extra(writer):
        writer.write(answer(sse("ok")))
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(extra)  # without closing: only the unread bytes tell
        await writer.drain()
        await asyncio.sleep(0.5)
        return False

    async with RawServer(answer_then_extra, OK) as server:
        model = model_for(server.url, transport, retry=RetryPolicy(max_attempts=2, base_delay=0))
        assert await text_of(model) == "ok"
        await asyncio.sleep(0.1)
        assert await text_of(model) == "onetwo"
        await model.aclose()
    assert server.connections == 2


BROKEN = {
    "nothing": b"",
    "mid-headers": b"HTTP/1.1 200 OK\r\nContent-",
    "not-http": b"SMTP ready\r\n\r\n",
    "no-colon": b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    "short-body": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + sse("a")[:30],
    "bad-chunk-size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "bad-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n",
    "mid-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
    "bad-length": b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
    "huge-headers": b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000,
    "negative-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n",
    "two-lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd",
    "corrupt-gzip": b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope",
}


@pytest.mark.parametrize("broken", BROKEN.values(), ids=BROKEN)
async def test_broken_servers_are_provider_errors(transport, broken):
    async with RawServer(then_close(broken)) as server:
        model = model_for(server.url, transport)
        with pytest.raises(ProviderError) as info:
            await text_of(model)
        await model.aclose()
    error = info.value
    assert error.message.startswith("openai model 'm': "), error.message
    assert "unexpected" not in error.message, error.message  # each broken answer is named
    assert "\n" not in error.message


async def test_a_server_closing_mid_response_is_a_retryable_provider_error(transport):
    close_mid_body = then_close(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + sse("a")[:30])
    async with RawServer(close_mid_body, close_mid_body) as server:
        model = model_for(server.url, transport)
        with pytest.raises(ProviderError) as info:
            await text_of(model)
        await model.aclose()
    assert info.value.retryable
    assert info.value.message.startswith("openai model 'm': connection failed: ")


async def test_a_silent_server_times_out_on_the_head_and_mid_body(transport):
    async def never(writer):
        await asyncio.sleep(5)
        return False

    async def stall_mid_body(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + sse("a")[:30])
        await writer.drain()
        await asyncio.sleep(5)
        return False

    async with RawServer(never, stall_mid_body) as server:
        model = model_for(server.url, transport, timeout=0.2)
        for _ in range(2):
            with pytest.raises(ModelTimeout, match=r"no response within 0\.2s"):
                async with asyncio.timeout(3):
                    await text_of(model)
        await model.aclose()


async def test_an_api_key_with_a_line_break_is_refused_without_quoting_it(transport):
    model = model_for("http://127.0.0.1:9/v1", transport, api_key="sk-12345678\r\nX: y")
    with pytest.raises(
        ProviderError, match="the Authorization header contains a line break"
    ) as info:
        await text_of(model)
    assert "sk-12345678" not in str(info.value)
    assert not info.value.retryable


async def test_a_large_request_goes_out_whole(transport):
    async with RawServer(OK) as server:
        model = model_for(server.url, transport)
        response = await collect(model, [{"role": "user", "content": "x" * 500_000}])
        await model.aclose()
    assert response.content == "onetwo"
    assert len(server.requests[0]) > 500_000


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
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            return  # a client that did not trust us hung up
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        await reader.readexactly(length)
        writer.write(OK)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=server_context)
    return server, f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"


async def test_tls_with_a_trusted_ca(transport, tls_server_context, monkeypatch):
    server_context, bundle = tls_server_context
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    server, url = await start_tls_server(server_context)
    model = model_for(url, transport)
    assert await text_of(model) == "onetwo"
    await model.aclose()
    server.close()


async def test_tls_with_an_untrusted_certificate_is_a_clear_final_error(
    transport, tls_server_context, monkeypatch
):
    server_context, _ = tls_server_context
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    server, url = await start_tls_server(server_context)
    model = model_for(url, transport, retry=RetryPolicy(max_attempts=3, base_delay=0.001))
    with pytest.raises(ProviderError) as info:
        await text_of(model)
    await model.aclose()
    server.close()
    error = info.value
    assert not error.retryable and error.attempts == 1
    assert error.message.startswith("openai model 'm': the server's certificate is not trusted")
    assert error.hint == (
        "check the certificate's name and dates; for a private CA, set SSL_CERT_FILE to its bundle"
    )


async def test_verify_false_reaches_an_untrusted_server(transport, tls_server_context, monkeypatch):
    server_context, _ = tls_server_context
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    server, url = await start_tls_server(server_context)
    model = model_for(url, transport, verify=False)
    assert await text_of(model) == "onetwo"
    await model.aclose()
    server.close()


async def test_a_missing_ssl_cert_file_is_a_final_error_naming_it(transport, monkeypatch, tmp_path):
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "gone.pem"))
    model = model_for("https://127.0.0.1:9/v1", transport, retry=RetryPolicy(max_attempts=3))
    with pytest.raises(ProviderError) as info:
        await text_of(model)
    error = info.value
    assert not error.retryable and error.attempts == 1
    assert (
        error.message
        == f"openai model 'm': TLS settings: SSL_CERT_FILE names no file: {tmp_path / 'gone.pem'}"
    )


@pytest.mark.parametrize(
    ("env", "url", "proxy"),
    [
        ({}, "https://api.openai.com/v1", None),
        ({"HTTPS_PROXY": "http://proxy:3128"}, "https://api.openai.com/v1", "http://proxy:3128"),
        ({"https_proxy": "http://proxy:3128"}, "http://127.0.0.1:8000/v1", None),
        ({"HTTP_PROXY": "http://proxy:3128"}, "http://10.0.0.5:8000/v1", "http://proxy:3128"),
        ({"ALL_PROXY": "socks5://proxy:1080"}, "https://api.openai.com/v1", "socks5://proxy:1080"),
        (
            {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "openai.com,localhost"},
            "https://api.openai.com/v1",
            None,
        ),
        ({"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "*"}, "https://x.dev/v1", None),
    ],
)
def test_proxy_for(monkeypatch, env, url, proxy):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert proxy_for(url) == proxy


def test_system_proxy_settings_count_on_macos_and_windows(monkeypatch):
    import urllib.request

    monkeypatch.setattr(urllib.request, "getproxies", lambda: {"https": "http://proxy:3128"})
    monkeypatch.setattr(urllib.request, "proxy_bypass", lambda host: host == "intranet")
    monkeypatch.setattr(proxies.sys, "platform", "darwin")
    assert proxy_for("https://api.openai.com/v1") == "http://proxy:3128"
    assert proxy_for("https://intranet/v1") is None
    monkeypatch.setattr(proxies.sys, "platform", "linux")  # Linux: the environment only
    assert proxy_for("https://api.openai.com/v1") is None


async def test_requests_go_through_the_proxy_unless_no_proxy_names_the_host(transport, monkeypatch):
    async with RawServer(OK, OK) as proxy, RawServer(OK) as direct:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        # The endpoint's host is only ever named to the proxy: nothing listens there.
        model = model_for("http://api.invalid:8000/v1", transport)
        assert await text_of(model) == "onetwo"
        await model.aclose()
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        model = model_for(direct.url, transport)
        assert await text_of(model) == "onetwo"
        await model.aclose()
    assert proxy.requests[0].startswith(b"POST http://api.invalid:8000/v1/chat/completions ")
    assert len(proxy.requests) == 1 and len(direct.requests) == 1


@pytest.mark.parametrize(
    ("transport", "package"), [("aiohttp", "aiohttp-socks"), ("sdk", "socksio")]
)
async def test_a_socks_proxy_without_its_package_says_what_to_install(
    transport, package, monkeypatch
):
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    monkeypatch.setitem(sys.modules, package.replace("-", "_"), None)  # not installed
    model = model_for("http://10.1.2.3:8000/v1", transport)
    with pytest.raises(ProviderError) as info:
        await text_of(model)
    await model.aclose()
    assert info.value.message == (
        f"openai model 'm': a SOCKS proxy (from ALL_PROXY or HTTPS_PROXY) needs the {package} package"
    )
    assert info.value.hint == f"pip install {package}, or add this host to NO_PROXY"
    assert not info.value.retryable


async def test_a_failing_proxy_is_named_in_the_hint(transport, monkeypatch):
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")  # nothing listens there
    model = model_for("http://10.1.2.3:8000/v1", transport)
    with pytest.raises(ProviderError, match="connection failed") as info:
        await text_of(model)
    await model.aclose()
    assert "HTTP(S)_PROXY" in info.value.hint and "NO_PROXY" in info.value.hint
    assert info.value.retryable


def reset(writer) -> None:
    """Abort the connection with a TCP reset."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def test_connections_broken_mid_response_leave_no_unretrieved_exceptions(transport):
    """A reset's exception must not surface later as "Future exception was never
    retrieved" or "Unclosed ..." in the loop's handler (seen under load)."""

    async def reset_mid_body(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + sse("a")[:30])
        await writer.drain()
        await asyncio.sleep(0.01)
        reset(writer)
        return False

    loop = asyncio.get_running_loop()
    reported: list[dict] = []
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        async with RawServer(*[reset_mid_body] * 10) as server:
            model = model_for(server.url, transport)
            for _ in range(10):
                with pytest.raises(ProviderError):
                    await text_of(model)
            await asyncio.sleep(0.01)
            gc.collect()
            await asyncio.sleep(0.01)
            await model.aclose()
    finally:
        loop.set_exception_handler(None)
    assert [c["message"] for c in reported] == []


async def test_closing_after_an_idle_connection_was_reset_reports_nothing(transport):
    async def answer_then_reset(writer):
        writer.write(answer(sse("ok")))
        await writer.drain()
        await asyncio.sleep(0.05)
        reset(writer)  # a load balancer's RST while the client holds it idle
        return False

    loop = asyncio.get_running_loop()
    reported: list[dict] = []
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        async with RawServer(answer_then_reset) as server:
            model = model_for(server.url, transport)
            assert await text_of(model) == "ok"
            await asyncio.sleep(0.2)
            await model.aclose()
        await asyncio.sleep(0.05)
        gc.collect()
        await asyncio.sleep(0.05)
    finally:
        loop.set_exception_handler(None)
    assert [c["message"] for c in reported] == []


def test_a_model_moved_to_a_new_event_loop_leaves_no_unclosed_session(transport):
    """``agent chat`` and tests run calls on more than one loop: the transport bound to
    the old one is dropped without asyncio logging it as unclosed."""
    reported: list[dict] = []

    async def call(model):
        asyncio.get_running_loop().set_exception_handler(lambda _, c: reported.append(c))
        async with RawServer(OK) as server:
            model.api_base = server.url
            return await text_of(model)

    model = model_for("http://127.0.0.1:9/v1", transport)
    assert asyncio.run(call(model)) == "onetwo"
    assert asyncio.run(call(model)) == "onetwo"
    asyncio.run(model.aclose())
    gc.collect()
    assert [c["message"] for c in reported] == []


async def test_a_reset_mid_body_says_the_connection_broke(transport):
    async def reset_mid_body(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + sse("a")[:30])
        await writer.drain()
        await asyncio.sleep(0.05)
        reset(writer)
        return False

    async with RawServer(reset_mid_body) as server:
        model = model_for(server.url, transport)
        with pytest.raises(ProviderError) as info:
            await text_of(model)
        await model.aclose()
    assert info.value.retryable
    # httpx (the SDK's) does not say it was a reset, only that reading broke.
    words = {"aiohttp": "(reset by the server)", "sdk": "while reading the response"}
    assert info.value.message == (
        f"openai model 'm': connection failed: the connection broke {words[transport]}"
    )
