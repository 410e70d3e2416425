"""The default transport: streamed chat completions over a pooled aiohttp session.

One session per model and event loop; its connector keeps as many connections alive as
calls may run at once (``Endpoint.pool_size``, the run's ``--parallel``), each trusted for
``KEEPALIVE_EXPIRY`` seconds. aiohttp is imported when the first call is made, never by
``agent --help`` or an offline run.

The environment is read once, here, not by aiohttp on every request (its ``trust_env``
looks up the proxy and ``~/.netrc`` in a thread per request, and would send a netrc
password to the API host): the proxy comes from ``proxies.proxy_for`` (``HTTP(S)_PROXY``,
``ALL_PROXY``, ``NO_PROXY``), the certificates from ``tls.tls_context``. A SOCKS proxy
needs the ``aiohttp-socks`` package.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from agentcli.models.proxies import SOCKS_SCHEMES, SocksUnsupported
from agentcli.models.tls import tls_context
from agentcli.models.transport import KEEPALIVE_EXPIRY, Endpoint, HttpChatTransport

if TYPE_CHECKING:
    import aiohttp

__all__ = ["AiohttpTransport"]


class _Response:
    """An aiohttp response as ``HttpResponse``: the body read as it arrives."""

    __slots__ = ("_response",)

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    @property
    def status_code(self) -> int:
        return self._response.status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        return self._response.content.iter_any()


class AiohttpTransport(HttpChatTransport):
    """``HttpChatTransport`` over one ``aiohttp.ClientSession``."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        import aiohttp
        from yarl import URL

        self._aiohttp = aiohttp
        self.proxy = endpoint.proxy
        self._url = URL(endpoint.base_url + "chat/completions").with_query(endpoint.query)
        self._headers = endpoint.headers()
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        self._session = aiohttp.ClientSession(
            connector=self._connector(),
            headers=self._headers,
            trust_env=False,  # read once above, see the module doc
            auto_decompress=True,
            skip_auto_headers=("User-Agent",),
        )
        # An http(s) proxy is named on each request; a SOCKS one is the connector itself.
        self._request_proxy = (
            endpoint.proxy
            if endpoint.proxy and endpoint.proxy.split(":", 1)[0].lower() not in SOCKS_SCHEMES
            else None
        )

    def _connector(self) -> aiohttp.BaseConnector:
        """A connector that keeps ``pool_size`` connections, through a SOCKS proxy if one
        applies."""
        endpoint = self.endpoint
        options: dict[str, Any] = {
            "limit": endpoint.pool_size,
            "limit_per_host": 0,
            "keepalive_timeout": KEEPALIVE_EXPIRY,
            "ssl": tls_context(verify=endpoint.verify)
            if endpoint.base_url.startswith("https:")
            else False,
        }
        proxy = endpoint.proxy
        if proxy and proxy.split(":", 1)[0].lower() in SOCKS_SCHEMES:
            try:
                from aiohttp_socks import ProxyConnector  # type: ignore[import-not-found]
            except ImportError:
                raise SocksUnsupported("aiohttp-socks") from None
            return ProxyConnector.from_url(proxy, rdns=True, **options)  # type: ignore[no-any-return]
        return self._aiohttp.TCPConnector(**options)

    def _timeout(self, seconds: float) -> aiohttp.ClientTimeout:
        """aiohttp's timeouts for a call: ``seconds`` without data while the body is read
        (the wait for the head is bounded in ``post``)."""
        timeout = self._timeouts.get(seconds)
        if timeout is None:
            timeout = self._timeouts[seconds] = self._aiohttp.ClientTimeout(
                total=None, connect=None, sock_connect=None, sock_read=seconds
            )
        return timeout

    @asynccontextmanager
    async def post(self, body: bytes, timeout: float) -> AsyncIterator[_Response]:
        """POST one request; connecting, sending and the head each within ``timeout``."""
        context = self._session.post(
            self._url,
            data=body,
            proxy=self._request_proxy,
            timeout=self._timeout(timeout),
            allow_redirects=False,  # a redirect says the api_base is wrong: tell, not follow
        )
        async with asyncio.timeout(timeout):
            response = await context.__aenter__()
        try:
            yield _Response(response)
        except BaseException as exc:
            await context.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        await context.__aexit__(None, None, None)

    async def aclose(self) -> None:
        """Close the session and its connections."""
        await self._session.close()

    def abandon(self) -> None:
        """Forget the session without awaiting its close (its event loop is gone)."""
        connector = self._session.connector
        self._session.detach()
        if connector is not None:
            # Its connections belong to the closed loop; closing them there is all that
            # is left, and asyncio would log the connector as unclosed otherwise.
            connector._close()  # aiohttp's synchronous close, as its own __del__ uses
