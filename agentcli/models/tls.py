"""The TLS settings every OpenAI-compatible transport shares: which certificates are trusted.

``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set (and then they must name something), else the
system's store: OpenSSL's default paths on Linux, the OS's own store (through truststore,
when installed) on macOS and Windows. ``verify: false`` on a connector turns checking off.
"""

from __future__ import annotations

import functools
import os
import ssl
import sys

__all__ = ["TlsSettingsError", "tls_context"]


class TlsSettingsError(Exception):
    """``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name nothing usable: retrying cannot help."""


def tls_context(*, verify: bool = True) -> ssl.SSLContext:
    """The client context for the current environment (built once per setting: loading a
    store costs ~20 ms)."""
    if not verify:
        return _unverified()
    return _verifying(
        os.environ.get("SSL_CERT_FILE") or None, os.environ.get("SSL_CERT_DIR") or None
    )


@functools.cache
def _verifying(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    """A verifying context trusting ``cafile``/``capath``, else the system's store."""
    if cafile and not os.path.isfile(cafile):
        raise TlsSettingsError(f"SSL_CERT_FILE names no file: {cafile}")
    if capath and not cafile and not os.path.isdir(capath):
        raise TlsSettingsError(f"SSL_CERT_DIR names no folder: {capath}")
    if cafile or capath:
        return ssl.create_default_context(cafile=cafile, capath=None if cafile else capath)
    if sys.platform in ("darwin", "win32"):
        try:
            import truststore
        except ImportError:
            pass  # OpenSSL's default paths, as on Linux
        else:
            return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return ssl.create_default_context()


@functools.cache
def _unverified() -> ssl.SSLContext:
    """A context that checks neither the certificate nor the host name (``verify: false``)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
