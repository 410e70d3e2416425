"""A case's ``state.before`` seeded into the run's state, and the ``state`` assertion's
view of it (``RunState``): memory in the state folder's store, rows in the data models'
database.

Seeding memory sets the keys given (others stay); seeding a model empties its table and
inserts the rows, so the case starts from exactly them. The state is the run's, shared by
its cases: cases that seed or check the same table or key run one at a time
(``--parallel 1``) or use their own ids.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcli.assistant.memory import Namespace
from agentcli.errors import AgentCliError, CaseFileError
from agentcli.threads import in_own_thread

if TYPE_CHECKING:
    from agentcli.assistant.data.methods import DataModel
    from agentcli.assistant.session import Assistant, AssistantRegistry
    from agentcli.eval.cases.model import StateFixture

__all__ = ["RunState", "data_model", "seed_state"]


class RunState:
    """The run's state as the ``state`` assertion reads it (``StateView``)."""

    def __init__(self, registry: AssistantRegistry, assistant: Assistant) -> None:
        self.registry = registry
        self.assistant = assistant

    async def memory(self) -> dict[str, Any]:
        """Memory as ``{namespace: {owner: {key: value}}}``."""
        snapshot: dict[str, Any] = await in_own_thread(self.registry.memory_store.snapshot)
        return snapshot

    async def sql(self, query: str) -> list[dict[str, Any]]:
        """The rows of ``query`` over the data models' database (rolled back after)."""
        store = self.registry.data_store
        if store is None:
            raise AgentCliError(
                f"{self.assistant.id} has no data models to query (models/*.mod.yao)"
            )
        from agentcli.jsonsafe import json_safe

        try:
            rows = await in_own_thread(store.query, query)
        except Exception as error:
            import sqlalchemy as sa

            if isinstance(error, sa.exc.SQLAlchemyError):
                detail = str(getattr(error, "orig", None) or error).strip().splitlines()[0]
                raise AgentCliError(f"state query failed: {detail}") from None
            raise
        return [json_safe(row) for row in rows]

    async def rows(self, model: str, query: dict[str, Any]) -> list[dict[str, Any]]:
        """What ``Get(query)`` of ``model`` answers."""
        found = data_model(self.registry, self.assistant, model)
        rows: list[dict[str, Any]] = await in_own_thread(found.Get, query)
        return rows


def data_model(registry: AssistantRegistry, assistant: Assistant, name: str) -> DataModel:
    """The data model ``name`` (the assistant's own, or ``agents.<id>.<model>``); an
    AgentCliError when there is none (the preflight asks before the run, seeding again)."""
    store = registry.data_store
    if store is None:
        raise AgentCliError(f"{assistant.id} has no data models (models/*.mod.yao)")
    return store.model(name, assistant=assistant.id)


async def seed_state(
    registry: AssistantRegistry, assistant: Assistant, fixture: StateFixture
) -> None:
    """Put ``fixture`` into the run's state before its case (a problem: ``CaseFileError``)."""
    await in_own_thread(_seed, registry, assistant, fixture)


def _seed(registry: AssistantRegistry, assistant: Assistant, fixture: StateFixture) -> None:
    for kind, owners in fixture.memory.items():
        for owner, values in owners.items():
            namespace = Namespace(registry.memory_store, kind, owner)
            for key, value in values.items():
                namespace.set(key, value)
    if not fixture.models:
        return
    try:
        models = {name: data_model(registry, assistant, name) for name in fixture.models}
    except AgentCliError as error:
        raise CaseFileError([f"state.before.models: {error.message}"]) from None
    store = registry.data
    with store.engine.begin() as connection:
        # Related tables are emptied first and filled after, in one transaction.
        for model in models.values():
            model.clear(connection)
        for name, model in models.items():
            try:
                model.insert_rows(connection, fixture.models[name])
            except AgentCliError as error:
                raise CaseFileError([f"state.before.models.{name}: {error.message}"]) from None
