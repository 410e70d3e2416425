"""Turn an exception from the openai SDK, litellm or a transport (aiohttp's, httpx's, the
socket's) into our ``ModelError``s.

litellm's exceptions subclass the openai SDK's, so one mapping serves both; it is keyed
on the SDK's classes and status codes, with litellm's finer classes recognised by name so
litellm (nor aiohttp) is never imported here. Messages are one line, name the provider and model, and
never carry an API key: the caller's secrets and anything shaped like a key or a bearer
token are redacted.
"""

from __future__ import annotations

import errno
import json
import re
import sys
from collections.abc import Iterable
from typing import Any, Protocol

from agentcli.errors import (
    AuthenticationError,
    BadRequestError,
    ModelError,
    ModelTimeout,
    ProviderError,
    RateLimited,
)
from agentcli.models.retry import parse_retry_after, seconds
from agentcli.secrets import REDACTED, redact_text

__all__ = ["HttpStatusError", "map_error", "not_a_stream", "redact"]

_MAX_DETAIL = 300
# Beyond what redact_text knows: long mixed letter-and-digit runs, the opaque keys of
# providers we do not know by prefix (a provider's error may quote one).
_OPAQUE_KEY = re.compile(r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{32,}\b")
# Wrapper prefixes litellm and the SDK stack in front of the provider's own words.
_PREFIX = re.compile(
    r"^(?:litellm\.\w+:\s*|\w+(?:Error|Exception|Timeout):\s*|\w+Exception\s*-\s*|"
    r"Error code:\s*\d+\s*-\s*)"
)
_CONTEXT_WORDS = ("context length", "context window", "maximum context", "too many tokens")
_CONTEXT_CODES = {"context_length_exceeded", "string_above_max_length"}
_CONTENT_CODES = {"content_filter", "content_policy_violation"}
_KEY_HINT = "check the API key configured for this connector"
# litellm reports a client that could not be built for want of a key as a 500.
_MISSING_KEY_WORDS = ("missing credentials", "api_key client option must be set")
# httpx's transport errors often carry no message: say what broke instead of nothing.
_TRANSPORT_WORDS = {
    "ConnectError": "could not connect",
    "ReadError": "the connection broke while reading the response",
    "WriteError": "the connection broke while sending the request",
    "RemoteProtocolError": "the server closed the connection mid-response",
}
# aiohttp and httpx say these in their own words ("Server disconnected", "Response payload
# is not completed: <ContentLengthError: 400, ...>"): ours are the same on every transport.
_LIBRARY_WORDS = {
    "ServerDisconnectedError": "the server closed the connection without a complete response",
    "ClientPayloadError": "the server closed the connection mid-response",
    "DecodingError": "the server sent a corrupt compressed body",
}
# What a transport's connection errors are called, beyond OSError's subclasses (aiohttp
# reports an answer that breaks HTTP as a ClientResponseError).
_TRANSPORT_ERRORS = {
    "TransportError",
    "StreamError",
    "ClientConnectionError",
    "ClientPayloadError",
    "ClientResponseError",
    "DecodingError",
}
_PROXY_HINT = (
    "the request went through the proxy named by HTTP(S)_PROXY/ALL_PROXY: check it, or add "
    "this host to NO_PROXY"
)
# Failures to reach the server at all: the message names where it tried.
_CONNECT_ERRORS = {
    "ConnectError",
    "ConnectionRefusedError",
    "gaierror",
    "ConnectTimeout",
    "ClientConnectorError",
}
# The socket's own errors, by errno (aiohttp wraps them in its ClientOSError, which keeps
# the errno): "[Errno 104] ..." says little.
_SOCKET_WORDS: dict[int, str] = {
    errno.ECONNRESET: "the connection broke (reset by the server)",
    errno.ECONNABORTED: "the connection broke (aborted)",
    errno.EPIPE: "the connection broke while sending the request",
    errno.ECONNREFUSED: "could not connect (connection refused)",
}
_SOCKET_ERROR_NAMES = {
    "ConnectionResetError": errno.ECONNRESET,
    "ConnectionAbortedError": errno.ECONNABORTED,
    "BrokenPipeError": errno.EPIPE,
}
_NOT_A_STREAM_HINT = "check the api_base: it should be the API root, usually ending in /v1"


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Replace the given secrets and anything shaped like a key or token."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    return _OPAQUE_KEY.sub(REDACTED, redact_text(text))


class HttpStatusError(Exception):
    """An HTTP error answer of an OpenAI-compatible server, read without the SDK."""

    def __init__(self, status_code: int, message: str, *, code: str | None, headers: Any) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.code = code
        self.headers = headers

    @classmethod
    def from_body(cls, status_code: int, body: bytes, headers: Any) -> HttpStatusError:
        """From an error response body (OpenAI's ``{"error": {...}}`` or anything else)."""
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            payload = None
        if isinstance(payload, dict):
            return cls.from_payload(status_code, payload, headers)
        text = body.decode("utf-8", "replace").strip()
        return cls(status_code, text or f"HTTP {status_code}", code=None, headers=headers)

    @classmethod
    def from_payload(
        cls, status_code: int, payload: dict[str, Any], headers: Any
    ) -> HttpStatusError:
        """From a parsed ``{"error": {"message", "code", "type"}}`` object."""
        error = payload.get("error")
        if isinstance(error, dict):
            message = str(error.get("message") or error.get("type") or f"HTTP {status_code}")
            code = error.get("code") or error.get("type")
            return cls(status_code, message, code=str(code) if code else None, headers=headers)
        message = str(error or payload.get("message") or f"HTTP {status_code}")
        return cls(status_code, message, code=None, headers=headers)


def not_a_stream(label: str, status: int, kind: str, location: str | None) -> ProviderError:
    """The error for an answer that is no chat-completions stream (an HTML page, a
    redirect): it says what came back, and is final."""
    what = f"HTTP {status}" + (f" {kind}" if kind else "") + (f" to {location}" if location else "")
    return ProviderError(
        redact_text(f"{label}: the server answered {what}, not a chat-completions stream"),
        retryable=False,
        hint=_NOT_A_STREAM_HINT,
    )


class _Build(Protocol):
    """``build(cls, summary, detail, **kwargs)``: a ``ModelError`` labelled and key-free."""

    def __call__(
        self, cls: type[ModelError], summary: str, detail: str = "", **kwargs: Any
    ) -> ModelError: ...


def map_error(
    exc: BaseException,
    *,
    provider: str,
    model: str,
    secrets: Iterable[str | None] = (),
    timeout: float | None = None,
    endpoint: str | None = None,
    via_proxy: bool = False,
) -> ModelError:
    """The ``ModelError`` for ``exc``, with a one-line, key-free message; ``endpoint``
    (``host:port``) is named when a connection could not be made, and a connection that
    went through a proxy says so in the hint."""
    if isinstance(exc, ModelError):
        return exc
    secrets = list(secrets)
    label = f"{provider} model {model!r}"

    def build(cls: type[ModelError], summary: str, detail: str = "", **kwargs: Any) -> ModelError:
        text = f"{label}: {summary}" + (f": {detail}" if detail else "")
        return cls(_one_line(redact(text, secrets)), **kwargs)

    if _missing_key(_detail(exc).lower()):
        return build(AuthenticationError, "no API key", hint=_KEY_HINT)
    openai = sys.modules.get("openai")
    names = {klass.__name__ for klass in type(exc).__mro__}
    if isinstance(exc, HttpStatusError) or (
        openai is not None and isinstance(exc, openai.APIStatusError)
    ):
        return _from_status(exc, build, names, label)
    if (openai is not None and isinstance(exc, openai.APITimeoutError)) or (
        names & {"TimeoutError", "TimeoutException"}
    ):
        within = f" within {timeout:g}s" if timeout else ""
        return build(ModelTimeout, f"no response{within}", hint="raise the timeout or retry later")
    if "TlsSettingsError" in names:
        return build(
            ProviderError,
            "TLS settings",
            _detail(exc),
            retryable=False,
            hint="point SSL_CERT_FILE at a PEM bundle of trusted CAs, or unset it",
        )
    if isinstance(exc, ImportError) and "socks" in str(exc).lower():
        # aiohttp speaks SOCKS through aiohttp-socks, httpx (the SDK) through socksio.
        package = getattr(exc, "package", None) or "socksio"
        return build(
            ProviderError,
            f"a SOCKS proxy (from ALL_PROXY or HTTPS_PROXY) needs the {package} package",
            retryable=False,
            hint=f"pip install {package}, or add this host to NO_PROXY",
        )
    if "SSLCertVerificationError" in names or "CERTIFICATE_VERIFY_FAILED" in _cause(exc):
        # Retrying cannot make a certificate trusted.
        return build(
            ProviderError,
            "the server's certificate is not trusted",
            _detail(exc),
            retryable=False,
            hint="check the certificate's name and dates; for a private CA, set SSL_CERT_FILE "
            "to its bundle",
        )
    if openai is not None and isinstance(exc, openai.APIConnectionError):
        detail = _cause(exc)
        cause = exc.__cause__ or exc.__context__
        if (
            endpoint
            and cause is not None
            and {k.__name__ for k in type(cause).__mro__} & _CONNECT_ERRORS
        ):
            detail = f"{detail} (to {endpoint})"
        hint = _PROXY_HINT if via_proxy else None
        return build(ProviderError, "connection failed", detail, retryable=True, hint=hint)
    if isinstance(exc, OSError) or names & _TRANSPORT_ERRORS:
        detail = _transport_detail(exc, names)
        if "ClientProxyConnectionError" in names:  # aiohttp names the proxy it tried
            endpoint = f"the proxy {getattr(exc, 'host', '?')}:{getattr(exc, 'port', '?')}"
        if endpoint and detail.startswith("could not connect"):
            detail = detail.replace("could not connect", f"could not connect to {endpoint}", 1)
        elif endpoint and names & _CONNECT_ERRORS:
            detail = f"{detail} (to {endpoint})"
        hint = _PROXY_HINT if via_proxy else None
        return build(ProviderError, "connection failed", detail, retryable=True, hint=hint)
    if isinstance(exc, json.JSONDecodeError):
        return build(ProviderError, "the response is not valid JSON", _detail(exc), retryable=True)
    if openai is not None and isinstance(exc, openai.APIError):
        return build(ProviderError, "the provider reported an error", _detail(exc), retryable=True)
    return build(ProviderError, f"unexpected {type(exc).__name__}", _detail(exc), retryable=False)


def _from_status(exc: BaseException, build: _Build, names: set[str], label: str) -> ModelError:
    """Map an HTTP status error (openai ``APIStatusError`` or a litellm subclass)."""
    status = int(getattr(exc, "status_code", 0) or 0)
    detail = _detail(exc)
    code = str(getattr(exc, "code", None) or "").lower()
    lowered = detail.lower()
    kwargs: dict[str, Any] = {"status_code": status}
    http = f"(HTTP {status})"
    if 300 <= status < 400:  # the SDK's client does not follow redirects either
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None) or getattr(exc, "headers", None) or {}
        kind = str(headers.get("content-type") or "").split(";")[0].strip().lower()
        error = not_a_stream(label, status, kind, headers.get("location"))
        error.status_code = status
        return error
    if status == 429 or "RateLimitError" in names:
        return build(
            RateLimited, f"rate limited {http}", detail, retry_after=_retry_after(exc), **kwargs
        )
    if status in (401, 403) or "AuthenticationError" in names:
        what = "authentication failed" if status != 403 else "permission denied"
        return build(
            AuthenticationError,
            f"{what} {http}",
            detail,
            hint=_KEY_HINT,
            **kwargs,
        )
    if (
        "ContextWindowExceededError" in names
        or code in _CONTEXT_CODES
        or any(w in lowered for w in _CONTEXT_WORDS)
    ):
        return build(
            BadRequestError,
            f"the conversation exceeds the model's context window {http}",
            detail,
            hint="shorten the conversation or use a model with a larger context",
            **kwargs,
        )
    if "ContentPolicyViolationError" in names or code in _CONTENT_CODES:
        return build(
            BadRequestError, f"blocked by the provider's content filter {http}", detail, **kwargs
        )
    if status == 408:
        return build(ModelTimeout, f"the provider timed out {http}", detail, **kwargs)
    if status == 404:
        return build(
            BadRequestError,
            f"not found {http}",
            detail,
            hint="check the model name and api_base",
            **kwargs,
        )
    if status >= 500 or status == 409 or not status:
        return build(
            ProviderError,
            f"server error {http}",
            detail,
            retryable=True,
            retry_after=_retry_after(exc),
            **kwargs,
        )
    return build(BadRequestError, f"request rejected {http}", detail, **kwargs)


def _missing_key(lowered_detail: str) -> bool:
    """True when the error says no API key was given at all."""
    return any(words in lowered_detail for words in _MISSING_KEY_WORDS)


def _retry_after(exc: Any) -> float | None:
    """Seconds from the error's ``retry-after-ms`` or ``Retry-After`` header, if any."""
    headers: Any = getattr(getattr(exc, "response", None), "headers", None) or getattr(
        exc, "headers", None
    )
    if not headers:
        return None
    getter = headers.get
    millis = seconds(getter("retry-after-ms") or getter("Retry-After-Ms"))
    if millis is not None:
        return millis / 1000
    return parse_retry_after(getter("retry-after") or getter("Retry-After"))


def _detail(exc: BaseException) -> str:
    """The provider's own words, without the wrappers stacked in front of them."""
    text = str(getattr(exc, "message", None) or exc or "")
    # litellm repeats the whole chain after this marker.
    text = text.split(" Original exception:", 1)[0].strip()
    while (stripped := _PREFIX.sub("", text, count=1)) != text:
        text = stripped.strip()
    return text


def _transport_detail(exc: BaseException, names: set[str]) -> str:
    """What broke, in words: socket errors by kind and without their errno (under
    aiohttp's wrapper too), aiohttp's and httpx's (often empty) errors by class name."""
    inner = getattr(exc, "os_error", None)  # aiohttp's ClientConnectorError holds it
    if isinstance(inner, OSError):
        exc = inner
    if isinstance(exc, OSError) and exc.errno in _SOCKET_WORDS:
        return _SOCKET_WORDS[exc.errno]
    if isinstance(exc, OSError) and exc.errno is not None and exc.strerror:
        return exc.strerror  # e.g. "Name or service not known"
    if "ClientPayloadError" in names:
        # aiohttp names what ended the body only in its message ("... .
        # ConnectionResetError(104, ...)", "... decompress ..."): read it from there.
        text = str(exc)
        for cause, number in _SOCKET_ERROR_NAMES.items():
            if cause in text:
                return _SOCKET_WORDS[number]
        if "decompress" in text.lower():
            return _LIBRARY_WORDS["DecodingError"]
    for name, words in _LIBRARY_WORDS.items():
        if name in names:
            return words
    name = type(exc).__name__
    return _detail(exc) or _TRANSPORT_WORDS.get(name, name)


def _cause(exc: BaseException) -> str:
    """The transport error under an SDK connection error, by type name."""
    cause = exc.__cause__ or exc.__context__
    detail = _detail(exc)
    if cause is None:
        return detail
    own = str(cause).strip()
    return f"{detail} ({type(cause).__name__}{': ' + own if own else ''})"


def _one_line(text: str) -> str:
    """Collapse whitespace and cap the length."""
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 1] + "…"
