"""Which proxy, if any, a request to an endpoint goes through, as the environment says.

``HTTP_PROXY`` / ``HTTPS_PROXY`` (by the endpoint's scheme), else ``ALL_PROXY``, unless
``NO_PROXY`` names the host; on macOS and Windows the system's settings too (as urllib and
httpx read them). Read once per client, not per request.
"""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit

__all__ = ["SOCKS_SCHEMES", "SocksUnsupported", "proxy_for"]

SOCKS_SCHEMES = frozenset({"socks4", "socks4a", "socks5", "socks5h"})


class SocksUnsupported(ImportError):
    """A SOCKS proxy applies, and the package that speaks SOCKS for the transport is missing."""

    def __init__(self, package: str) -> None:
        super().__init__(f"a SOCKS proxy needs the {package} package")
        self.package = package


def proxy_for(url: str) -> str | None:
    """The proxy URL configured for ``url``, or None. On Linux without any ``*_proxy``
    variable this reads nothing else."""
    system = sys.platform in ("darwin", "win32")
    if not system and not any(
        name.lower().endswith("_proxy") and value for name, value in os.environ.items()
    ):
        return None
    import urllib.request

    proxies = urllib.request.getproxies()
    parts = urlsplit(url)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    if "no" in proxies:
        # Not in typeshed, but urllib's own (NO_PROXY against the host and port).
        bypass = urllib.request.proxy_bypass_environment(parts.netloc, proxies)  # type: ignore[attr-defined]
    else:
        bypass = urllib.request.proxy_bypass(parts.hostname or "")
    return None if bypass else proxy
