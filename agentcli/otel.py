"""OpenTelemetry spans for runs, cases, turns, model calls and tool calls (``--otel``).

Off (the default) every ``span(...)`` is one shared no-op object and the OpenTelemetry
packages are never imported. On, the SDK (``pip install 'agentcli[otel]'``) exports over
OTLP/HTTP to ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT`` (the
SDK's own variables; default ``http://localhost:4318/v1/traces``), in batches from a
background thread, so a slow collector never holds up a case; ``stop`` flushes within a
bounded time.

Spans follow the GenAI semantic conventions where they name something (``gen_ai.system``,
``gen_ai.request.model``, ``gen_ai.usage.input_tokens``, ``gen_ai.tool.name``...); the rest
are ``agentcli.*``. No prompt or output text is recorded; every text attribute and status
message passes through secret redaction.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from agentcli.errors import ConfigError

__all__ = ["SpanHandle", "enabled", "span", "start", "stop", "wanted"]

AttributeValue = str | bool | int | float | Sequence[str]
_tracer: Any = None  # an opentelemetry Tracer while telemetry is on
_provider: Any = None
_STATUS_LIMIT = 500  # characters of an error message kept as a span's status
_SDK_LOGGER = "opentelemetry"  # where the SDK and its exporter log (unconfigured: to stderr)
_told: logging.Handler | None = None


class _ExportProblems(logging.Handler):
    """The SDK's complaints while exporting (a collector that is down: a retry line per
    attempt, then "Failed to export") as one warning line on stderr, once a run, so the
    run's output stays readable."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.told = False

    def emit(self, record: logging.LogRecord) -> None:
        if self.told:
            return
        self.told = True
        from agentcli.secrets import redact_text

        message = record.getMessage().strip()
        first = message.splitlines()[0] if message else ""
        reason = redact_text(first if len(first) <= 200 else first[:199] + "…")
        sys.stderr.write(
            f"warning: OpenTelemetry: spans are not exported ({reason}); check "
            "OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is up\n"
        )


def wanted(flag: bool) -> bool:
    """Telemetry is wanted with ``--otel``, or when an OTLP endpoint is set in the environment."""
    return flag or bool(
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def enabled() -> bool:
    """True while spans are being exported."""
    return _tracer is not None


def start(*, required: bool, version: str = "") -> bool:
    """Turn telemetry on; False (with nothing imported) when the SDK is missing and it was
    not ``required`` (an endpoint in the environment alone). ``--otel`` without the SDK is
    a ConfigError saying what to install."""
    global _tracer, _provider, _told
    if _tracer is not None:
        return True
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        if not required:
            return False
        raise ConfigError(
            "--otel needs the OpenTelemetry SDK, which is not installed",
            hint="pip install 'agentcli[otel]'",
        ) from None
    resource = Resource.create({"service.name": "agentcli", "service.version": version})
    _provider = TracerProvider(resource=resource)
    # A collector that does not answer costs at most this per export attempt.
    _provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(timeout=5)))
    _tracer = _provider.get_tracer("agentcli", version)
    _told = _ExportProblems()
    sdk_logger = logging.getLogger(_SDK_LOGGER)
    sdk_logger.addHandler(_told)
    sdk_logger.propagate = False
    return True


def stop(timeout_s: float = 5.0) -> None:
    """Flush what is buffered (within ``timeout_s``) and turn telemetry off."""
    global _tracer, _provider, _told
    provider, _provider, _tracer = _provider, None, None
    if provider is None:
        return
    try:
        provider.force_flush(timeout_millis=int(timeout_s * 1000))
    finally:
        provider.shutdown()
        told, _told = _told, None
        if told is not None:  # the SDK's logger as it was, for an in-process caller
            sdk_logger = logging.getLogger(_SDK_LOGGER)
            sdk_logger.removeHandler(told)
            sdk_logger.propagate = True


class SpanHandle:
    """What instrumented code may do with its span (no-ops when telemetry is off)."""

    __slots__ = ("_span",)

    def __init__(self, real: Any = None) -> None:
        self._span = real

    def set(self, key: str, value: AttributeValue | None) -> None:
        """Set attribute ``key`` (``None`` is left out; text is redacted)."""
        if self._span is not None and value is not None:
            self._span.set_attribute(key, _clean(value))

    def update(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Set several attributes."""
        for key, value in attributes.items():
            self.set(key, value)

    def fail(self, message: str, error_type: str | None = None) -> None:
        """Mark the span failed, with a (redacted, shortened) message."""
        if self._span is None:
            return
        from opentelemetry.trace import Status, StatusCode

        self._span.set_status(Status(StatusCode.ERROR, _redacted(message)[:_STATUS_LIMIT]))
        if error_type:
            self._span.set_attribute("error.type", error_type)

    def ids(self) -> dict[str, str] | None:
        """``{trace_id, span_id}`` in hex, as the results file records them; None when off."""
        if self._span is None:
            return None
        context = self._span.get_span_context()
        return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}


_NOOP_HANDLE = SpanHandle()


class _Span:
    """A span as a context manager; the error that leaves the block marks it failed."""

    __slots__ = ("_attributes", "_handle", "_manager", "_name")

    def __init__(self, name: str, attributes: Mapping[str, AttributeValue | None]) -> None:
        self._name, self._attributes = name, attributes
        self._manager: Any = None
        self._handle = _NOOP_HANDLE

    def __enter__(self) -> SpanHandle:
        if _tracer is None:  # turned off after the span was made
            return _NOOP_HANDLE
        attributes = {k: _clean(v) for k, v in self._attributes.items() if v is not None}
        self._manager = _tracer.start_as_current_span(
            self._name,
            attributes=attributes,
            record_exception=False,  # a traceback could carry secrets; the message is redacted
            set_status_on_exception=False,
        )
        self._handle = SpanHandle(self._manager.__enter__())
        return self._handle

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        manager = self._manager
        if manager is None:
            return
        if error is not None:
            self._handle.fail(str(error) or type(error).__name__, type(error).__name__)
        manager.__exit__(kind, error, traceback)


class _NoSpan:
    """The span of disabled telemetry: one shared object, entered for nothing."""

    __slots__ = ()

    def __enter__(self) -> SpanHandle:
        return _NOOP_HANDLE

    def __exit__(self, *exc: object) -> None:
        return None


_NO_SPAN = _NoSpan()


def span(name: str, attributes: Mapping[str, AttributeValue | None] | None = None) -> Any:
    """A context manager opening span ``name`` (a child of the current one) and giving its
    ``SpanHandle``; with telemetry off, a shared no-op."""
    if _tracer is None:
        return _NO_SPAN
    return _Span(name, attributes or {})


def _redacted(text: str) -> str:
    """``text`` with the secrets agentcli knows replaced."""
    from agentcli.secrets import redact_text

    return redact_text(text)


def _clean(value: AttributeValue) -> AttributeValue:
    """An attribute value with secrets redacted from its text."""
    if isinstance(value, str):
        return _redacted(value)
    if isinstance(value, bool | int | float):
        return value
    return [_redacted(str(item)) for item in value]
