"""Tool stub matching benchmark: what a case's tool world costs per tool call — finding the
stub that answers it (10 stubs, arguments with literals, ``regex:``, ``$approx``; the call
matched by the last one, or by none) and the seeded fault decision — timed on the world's
own methods. Each figure is the best of ``--repeat`` rounds of ``--number`` calls, in µs of
CPU time per call; the target is under 50 µs for ten stubs (a few µs a stub; a ``regex:``
argument costs the bounded matcher's ~3 µs), against the milliseconds of a real call.
Run: .venv/bin/python bench/stubs.py"""

from __future__ import annotations

import argparse
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.assistant.interception import InterceptedCall
from agentcli.eval.cases.world import CaseTools, ToolStub
from agentcli.eval.run.tool_world import ToolWorld
from agentcli.faults import FaultPlan

TARGET_US = 50.0
STUBS = 10


def stubs(profile: str) -> tuple[ToolStub, ...]:
    """Ten stubs of one tool, each for another city; the last matches Paris."""
    found = []
    for index in range(STUBS):
        city = "Paris" if index == STUBS - 1 else f"City{index}"
        if profile == "regex":
            city = f"regex:^{city}$"
        arguments: dict[str, object] = {"city": city}
        if profile == "approx":
            arguments["days"] = {"$approx": 3, "tol": 0.5}
        found.append(ToolStub("weather__get_forecast", arguments, True, {"summary": city}))
    return tuple(found)


def main() -> None:
    """Time stub lookup and fault decisions; print µs per call."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    hit = InterceptedCall("weather", "get_forecast", {"city": "Paris", "days": 3}, False)
    miss = InterceptedCall("weather", "get_forecast", {"city": "Oslo", "days": 3}, False)
    other = InterceptedCall("weather", "list_cities", {}, False)

    def timed(function: object) -> float:
        rounds = timeit.repeat(
            function,  # type: ignore[arg-type]
            timer=time.process_time,  # CPU time: other work on the machine does not count
            number=args.number,
            repeat=args.repeat,
        )
        return min(rounds) / args.number * 1e6

    print(f"tool world per call: µs, best of {args.repeat} rounds of {args.number}")
    print(f"  {'what':<42} {'µs':>6}")
    worst = 0.0
    for profile in ("literal", "regex", "approx"):
        world = ToolWorld(CaseTools(stubs(profile)), None, "case", 1)
        assert world.stub_for(hit) is not None and world.stub_for(miss) is None
        for label, call in (("10th stub matches", hit), ("no stub matches", miss),
                            ("other tool (names only)", other)):  # fmt: skip
            micros = timed(lambda c=call, w=world: w.stub_for(c))
            worst = max(worst, micros)
            print(f"  {profile + ': ' + label:<42} {micros:6.2f}")
    world = ToolWorld(CaseTools(), FaultPlan(0.2, seed=42), "case", 1)
    micros = timed(lambda: world._fault(hit))
    worst = max(worst, micros)
    print(f"  {'fault decision (seeded, per call)':<42} {micros:6.2f}")
    verdict = "within" if worst < TARGET_US else "over"
    print(f"slowest {worst:.2f} µs, {verdict} the {TARGET_US:g} µs target")


if __name__ == "__main__":
    main()
