"""Shared test fixtures: the loopback OpenAI server and a guard against real network use."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Make the repository's fixtures/ importable, and keep litellm from downloading its cost map.
REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from fixtures.openai_server import OpenAIServer  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    """Hide the pydantic warnings litellm's types raise on first use (not ours to fix)."""
    config.addinivalue_line("filterwarnings", "ignore:Item .* on TypedDict class:UserWarning")


class RealNetworkBlocked(RuntimeError):
    """A test tried to reach a host outside the loopback range."""


def _is_local(host: Any) -> bool:
    """True for loopback (and unspecified) addresses and ``localhost``."""
    if isinstance(host, bytes):
        host = host.decode()
    if host in (None, "", "localhost") or str(host).endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(str(host).split("%", 1)[0])
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


@pytest.fixture(scope="session", autouse=True)
def _block_real_network() -> Iterator[None]:
    """Fail loudly when a test reaches for a real provider instead of 127.0.0.1."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
            raise RealNetworkBlocked(f"tests may not connect to {address[0]!r}; use 127.0.0.1")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_local(host):
            raise RealNetworkBlocked(f"tests may not resolve {host!r}; use 127.0.0.1")
        return real_getaddrinfo(host, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", connect)
        patch.setattr(socket.socket, "connect_ex", connect_ex)
        patch.setattr(socket, "getaddrinfo", getaddrinfo)
        yield


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A fresh loopback OpenAI-compatible server (no latency); see fixtures/openai_server.py."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """No HTTP(S)/ALL proxy variables: loopback model calls go straight to the server."""
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
