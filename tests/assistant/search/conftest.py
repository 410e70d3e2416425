"""Packages with search for the tests: written into a temp assistants root, run by a
registry whose state folder (where the kb index lives) is the test's own. The
PostgreSQL fixtures of the data-model tests are shared here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from agentcli.assistant.memory import MemoryStore
from agentcli.assistant.session import AssistantRegistry
from agentcli.assistant.state import StateDir
from tests.assistant.data.conftest import database_url, postgres_cluster  # noqa: F401
from tests.assistant.test_context import write

FAQ = {
    "kb/faq/password.md": "# Resetting your password\n\nOpen Settings, choose Security and "
    "press Reset password. A reset link is mailed to you; it expires after 30 minutes.\n",
    "kb/faq/billing.md": "# Billing\n\nInvoices are sent on the first day of each month. "
    "Change the card used for billing under Settings, Billing.\n",
    "kb/faq/shipping.txt": "Shipping takes three to five working days. Orders over 50 euros "
    "ship for free.\n",
    "kb/faq/plans.json": '[{"title": "Free plan", "content": "One project, community support."},'
    ' {"title": "Team plan", "content": "Unlimited projects, password policies, SSO."}]',
}


@pytest.fixture(autouse=True)
def _fresh_index_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every search looks at the files (not once a second): tests change them between
    two searches."""
    from agentcli.assistant.search import kb

    monkeypatch.setattr(kb, "RECHECK_SECONDS", 0.0)


@pytest.fixture
def assistants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    root = tmp_path / "assistants"
    root.mkdir()
    return root


@pytest.fixture
async def make_registry(
    tmp_path: Path, assistants: Path
) -> AsyncIterator[Callable[..., AssistantRegistry]]:
    made: list[AssistantRegistry] = []

    def make(env: dict[str, str] | None = None) -> AssistantRegistry:
        registry = AssistantRegistry(
            assistants,
            cwd=tmp_path,
            state=StateDir(tmp_path / "state", "dir"),
            memory_store=MemoryStore(tmp_path / f"memory{len(made)}.sqlite3"),
            env=env if env is not None else {},
        )
        made.append(registry)
        return registry

    yield make
    for registry in made:
        await registry.aclose()


def package(root: Path, name: str, yao: str, files: dict[str, str] | None = None) -> Path:
    """A package ``name`` with ``package.yao`` text and more files."""
    return write(root / name, {"package.yao": yao, **(files or {})})
