"""Mapping SDK and transport exceptions to ModelErrors, with keys redacted."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

from agentcli.errors import (
    AuthenticationError,
    BadRequestError,
    ModelTimeout,
    ProviderError,
    RateLimited,
)
from agentcli.models.errors_map import map_error, redact

REQUEST = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def status_error(cls, status, message="boom", headers=None, body=None):
    response = httpx2.Response(status, headers=headers or {}, request=REQUEST)
    return cls(message, response=response, body=body)


def mapped(exc, **kwargs):
    return map_error(exc, provider="openai", model="gpt-x", **kwargs)


@pytest.mark.parametrize(
    ("exc", "kind", "status"),
    [
        (status_error(openai.RateLimitError, 429), RateLimited, 429),
        (status_error(openai.AuthenticationError, 401), AuthenticationError, 401),
        (status_error(openai.PermissionDeniedError, 403), AuthenticationError, 403),
        (status_error(openai.NotFoundError, 404), BadRequestError, 404),
        (status_error(openai.UnprocessableEntityError, 422), BadRequestError, 422),
        (status_error(openai.InternalServerError, 500), ProviderError, 500),
        (status_error(openai.APIStatusError, 503), ProviderError, 503),
        (status_error(openai.APIStatusError, 408), ModelTimeout, 408),
    ],
)
def test_status_codes(exc, kind, status):
    error = mapped(exc)
    assert type(error) is kind
    assert error.status_code == status
    assert f"HTTP {status}" in error.message
    assert error.message.startswith("openai model 'gpt-x': ")


def test_server_errors_are_retryable_and_client_errors_are_not():
    assert mapped(status_error(openai.InternalServerError, 502)).retryable
    assert not mapped(status_error(openai.BadRequestError, 400)).retryable
    assert not mapped(status_error(openai.AuthenticationError, 401)).retryable


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({}, None),
    ],
)
def test_retry_after_comes_from_headers(headers, seconds):
    error = mapped(status_error(openai.RateLimitError, 429, headers=headers))
    assert error.retry_after == seconds


def test_context_length_and_content_filter():
    by_code = mapped(
        status_error(openai.BadRequestError, 400, body={"code": "context_length_exceeded"})
    )
    by_words = mapped(status_error(openai.BadRequestError, 400, "maximum context length is 8k"))
    filtered = mapped(status_error(openai.BadRequestError, 400, body={"code": "content_filter"}))
    for error in (by_code, by_words):
        assert type(error) is BadRequestError
        assert "context window" in error.message and error.hint
    assert type(filtered) is BadRequestError and "content filter" in filtered.message


def test_transport_failures():
    timeout = mapped(openai.APITimeoutError(request=REQUEST), timeout=2.5)
    assert type(timeout) is ModelTimeout and "within 2.5s" in timeout.message
    try:
        raise openai.APIConnectionError(request=REQUEST) from httpx2.ReadError("reset by peer")
    except openai.APIConnectionError as exc:
        connection = mapped(exc)
    assert type(connection) is ProviderError and connection.retryable
    assert "ReadError: reset by peer" in connection.message
    assert type(mapped(ConnectionResetError("gone"))) is ProviderError


@pytest.mark.parametrize(
    ("exc", "detail"),
    [
        (
            ConnectionResetError(104, "Connection reset by peer"),
            "the connection broke (reset by the server)",
        ),
        (
            ConnectionRefusedError(111, "Connection refused"),
            "could not connect (connection refused)",
        ),
        (BrokenPipeError(32, "Broken pipe"), "the connection broke while sending the request"),
        (OSError(-2, "Name or service not known"), "Name or service not known"),
        (httpx2.ReadError(""), "the connection broke while reading the response"),
    ],
)
def test_socket_errors_are_said_in_words_without_errno(exc, detail):
    error = mapped(exc)
    assert type(error) is ProviderError and error.retryable
    assert error.message == f"openai model 'gpt-x': connection failed: {detail}"


def test_untrusted_certificates_are_final_with_a_hint():
    import ssl

    error = mapped(ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] self-signed"))
    assert type(error) is ProviderError and not error.retryable
    assert error.hint == (
        "check the certificate's name and dates; for a private CA, set SSL_CERT_FILE to its bundle"
    )
    try:
        raise httpx2.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    except httpx2.ConnectError as exc:
        assert not mapped(exc).retryable  # the same through httpx


def test_timeouts_and_invalid_json():
    assert type(mapped(TimeoutError())) is ModelTimeout
    assert type(mapped(httpx2.ReadTimeout("slow"))) is ModelTimeout
    invalid = mapped(json.JSONDecodeError("Expecting value", "x", 0))
    assert invalid.retryable and "not valid JSON" in invalid.message


def test_unexpected_errors_are_not_retryable():
    error = mapped(ValueError("weird"))
    assert type(error) is ProviderError and not error.retryable
    assert "unexpected ValueError: weird" in error.message


def test_model_errors_pass_through():
    original = RateLimited("already ours")
    assert mapped(original) is original


def test_litellm_style_prefixes_are_stripped():
    message = (
        "litellm.RateLimitError: RateLimitError: OpenAIException - too many requests "
        "Original exception: the whole chain again"
    )
    error = mapped(status_error(openai.RateLimitError, 429, message))
    assert error.message == "openai model 'gpt-x': rate limited (HTTP 429): too many requests"


def test_messages_are_one_line_and_capped():
    error = mapped(status_error(openai.InternalServerError, 500, "line one\nline two " + "x" * 900))
    assert "\n" not in error.message and "line one line two" in error.message
    assert len(error.message) <= 300


@pytest.mark.parametrize(
    "text",
    [
        "Incorrect API key provided: sk-proj-abcdefghij0123456789",
        "header Authorization: Bearer abc.def-ghi_123",
        "url ?key=AIzaSyA0123456789abcdefghijklmnopq",
        'body {"api_key": "hunter2-very-secret"}',
        "opaque token 0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f",
    ],
)
def test_redact_hides_key_shaped_text(text):
    out = redact(text)
    assert "[redacted]" in out
    for secret in ("sk-proj-abc", "abc.def-ghi", "AIzaSy", "hunter2", "0a1b2c3d4e5f6a7b"):
        assert secret not in out


def test_redact_hides_given_secrets_and_keeps_plain_words():
    assert redact("the key is plainpassword1", ["plainpassword1"]) == "the key is [redacted]"
    assert redact("model gpt-4o-mini said no") == "model gpt-4o-mini said no"
    error = mapped(
        status_error(openai.BadRequestError, 400, "bad key xyz-secret"), secrets=["xyz-secret"]
    )
    assert "xyz-secret" not in error.message


def test_missing_key_is_an_authentication_error():
    # litellm wraps the SDK's "no key" complaint in a 500.
    message = "Missing credentials. Please pass an `api_key`, or set OPENAI_API_KEY"
    error = mapped(status_error(openai.InternalServerError, 500, message))
    assert type(error) is AuthenticationError
    assert error.message == "openai model 'gpt-x': no API key"
    assert not error.retryable
    sdk = mapped(openai.OpenAIError("The api_key client option must be set either by ..."))
    assert type(sdk) is AuthenticationError


def test_a_socks_proxy_without_socksio_says_what_to_install():
    exc = ImportError(
        "Using SOCKS proxy, but the 'socksio' package is not installed. Make sure to install "
        "httpx using `pip install httpx[socks]`."
    )
    error = mapped(exc)
    assert type(error) is ProviderError and not error.retryable
    assert error.message == (
        "openai model 'gpt-x': a SOCKS proxy (from ALL_PROXY or HTTPS_PROXY) needs the "
        "socksio package"
    )
    assert error.hint == "pip install socksio, or add this host to NO_PROXY"
