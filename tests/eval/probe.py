"""Helpers to run cases against the probe fixture assistant (fixtures/assistants/probe)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.assistant.session import AssistantRegistry
from agentcli.eval.cases.model import Case
from agentcli.eval.cases.parse import parse_case
from agentcli.eval.results.model import CaseResult
from agentcli.eval.run.runner import EvalConfig, EvalRunner, RunEvent

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "fixtures" / "assistants" / "probe"


def cases(*objects: dict[str, Any]) -> list[Case]:
    """Cases parsed exactly as a case file would be."""
    return [
        parse_case(obj, source_file=PROBE / "tests" / "x.jsonl", line=i + 1, project_root=ROOT)
        for i, obj in enumerate(objects)
    ]


class Probe:
    """A runner over the probe assistant that records events and results."""

    def __init__(self, **config: Any) -> None:
        self.registry = AssistantRegistry(None, cwd=ROOT)
        self.assistant = self.registry.get(str(PROBE))
        self.config = EvalConfig(assistant=self.assistant, registry=self.registry, **config)
        self.events: list[RunEvent] = []
        self.results: list[CaseResult] = []
        self.runner = EvalRunner(
            self.config, on_event=self.events.append, on_result=self.results.append
        )

    async def run(self, *objects: dict[str, Any]) -> list[CaseResult]:
        """Run the cases and close the registry."""
        try:
            await self.runner.run(cases(*objects))
        finally:
            await self.registry.aclose()
        return self.results

    def by_id(self) -> dict[str, CaseResult]:
        """Results keyed by case id."""
        return {r.id: r for r in self.results}
