"""The tool world of a case as values: ``tools: {stubs, unmatched, faults}`` (on a case or
in a case file's ``defaults``); the fault plan itself is ``agentcli.faults.FaultPlan``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from agentcli.faults import FaultPlan

__all__ = ["UNMATCHED", "CaseTools", "ToolStub", "Unmatched"]

Unmatched = Literal["run", "error"]  # a call no stub answers: the real tool, or an error
UNMATCHED: tuple[Unmatched, ...] = get_args(Unmatched)


@dataclass(frozen=True, slots=True)
class ToolStub:
    """One canned answer: calls of the tool ``name`` whose arguments partially match
    ``arguments`` (``regex:``, ``$any``, ``$approx`` allowed) get ``result`` or ``error``,
    after ``delay`` seconds; ``once``: only the first such call."""

    name: str
    arguments: Any = None
    has_arguments: bool = False
    result: Any = None
    error: str | None = None
    delay: float = 0.0
    once: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The case-file form (defaults left out)."""
        data: dict[str, Any] = {"name": self.name}
        if self.has_arguments:
            data["arguments"] = self.arguments
        if self.error is not None:
            data["error"] = self.error
        else:
            data["result"] = self.result
        if self.delay:
            data["delay"] = self.delay
        if self.once:
            data["once"] = True
        return data


@dataclass(frozen=True, slots=True)
class CaseTools:
    """A case's ``tools``: its stubs (tried in order), what an unmatched call does (None:
    not said here, so ``run``), and its fault plan (None: the run's ``--faults``)."""

    stubs: tuple[ToolStub, ...] = ()
    unmatched: Unmatched | None = None
    faults: FaultPlan | None = None

    def over(self, defaults: CaseTools | None) -> CaseTools:
        """These tools over a case file's defaults: the case's stubs first, then the
        defaults'; ``unmatched`` and ``faults`` the case's when it gives them."""
        if defaults is None:
            return self
        return CaseTools(
            stubs=self.stubs + defaults.stubs,
            unmatched=self.unmatched if self.unmatched is not None else defaults.unmatched,
            faults=self.faults if self.faults is not None else defaults.faults,
        )

    def to_dict(self) -> dict[str, Any]:
        """The case-file form (what is not given left out)."""
        data: dict[str, Any] = {}
        if self.stubs:
            data["stubs"] = [stub.to_dict() for stub in self.stubs]
        if self.unmatched is not None:
            data["unmatched"] = self.unmatched
        if self.faults is not None:
            data["faults"] = self.faults.to_dict()
        return data
