"""The one HTTP call of search (web providers, embeddings): aiohttp, bounded in time and
size, every failure a ``SearchError`` that says what happened and what to do — never the
key that was sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from agentcli.errors import SearchError

__all__ = ["MAX_BODY_BYTES", "request_json"]

MAX_BODY_BYTES = 8 * 1024 * 1024


async def request_json(
    method: str,
    url: str,
    *,
    label: str,
    timeout: float,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    body: Any = None,
    key_hint: str = "",
) -> Any:
    """The JSON answer of one request; ``label`` names the service in errors,
    ``key_hint`` says where its key comes from (for a 401/403)."""
    import aiohttp

    client_timeout = aiohttp.ClientTimeout(total=timeout)
    try:
        async with (
            aiohttp.ClientSession(timeout=client_timeout, trust_env=True) as session,
            session.request(
                method, url, headers=dict(headers or {}), params=params, json=body
            ) as response,
        ):
            data = await response.content.read(MAX_BODY_BYTES + 1)
            status = response.status
            retry_after = response.headers.get("Retry-After")
    except TimeoutError:
        raise SearchError(
            f"{label}: no answer within {timeout:g}s",
            hint="the service is slow or unreachable; raise search.web.timeout or retry",
        ) from None
    except aiohttp.ClientError as error:
        raise SearchError(f"{label}: cannot reach {_origin(url)} ({error})") from None
    except asyncio.CancelledError:
        raise
    if len(data) > MAX_BODY_BYTES:
        raise SearchError(f"{label}: answer larger than {MAX_BODY_BYTES // 1024 // 1024} MB")
    if status in (401, 403):
        raise SearchError(
            f"{label}: the API key was refused (HTTP {status})",
            hint=key_hint or "check the key",
        )
    if status == 429:
        wait = f", retry after {retry_after}s" if retry_after else ""
        raise SearchError(f"{label}: rate limited (HTTP 429{wait})", hint="retry later")
    if status >= 400:
        raise SearchError(f"{label}: HTTP {status}: {_detail(data)}")
    try:
        return json.loads(data)
    except ValueError:
        raise SearchError(f"{label}: the answer is not JSON: {_detail(data)}") from None


def _origin(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _detail(data: bytes) -> str:
    """A short, one-line view of an error body (its ``error``/``message`` when JSON)."""
    text = data.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        found = parsed.get("error") or parsed.get("message") or parsed.get("detail")
        if isinstance(found, dict):
            found = found.get("message") or found.get("detail") or found
        if found:
            text = str(found)
    from agentcli.secrets import redact_text

    text = redact_text(" ".join(text.split()))  # an error body may quote the key it refused
    return text[:200] or "(empty body)"
