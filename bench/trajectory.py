"""Trajectory matching benchmark: one ``trajectory`` assertion on a 50-call trace, in every
mode and arguments mode, timed through the assertion's own checker (what a case pays).
Each figure is the best of ``--repeat`` rounds of ``--number`` assertions, in µs of CPU
time per assertion; the target is under 100 µs. Run: .venv/bin/python bench/trajectory.py"""

from __future__ import annotations

import argparse
import random
import sys
import time
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.eval.cases.model import Assertion
from agentcli.eval.checks.assertions import ASSERTIONS, AssertionEnv, Subject
from agentcli.eval.results.model import ToolCall

CALLS = 50
TOOLS = ("search", "get_item", "add_to_cart", "checkout", "notify")
TARGET_US = 100.0


def trace(seed: int = 7) -> list[ToolCall]:
    """Fifty calls over five tools, each with a few arguments and a small result."""
    rng = random.Random(seed)
    calls = []
    for index in range(CALLS):
        tool = TOOLS[index % len(TOOLS)]
        arguments = {"query": f"item {index}", "limit": rng.randint(1, 9), "price": index * 1.5}
        calls.append(
            ToolCall(
                id=f"c{index}",
                server="shop",
                tool=tool,
                arguments=arguments,
                result={"ok": True, "id": index},
            )
        )
    return calls


PROFILES = ("literal", "approx", "regex")


def expected(calls: list[ToolCall], arguments_mode: str, profile: str) -> list[dict[str, object]]:
    """The expected calls of a passing trajectory: literal arguments, or the price as an
    ``$approx`` matcher, or the query as a ``regex:`` pattern (each call's)."""
    items: list[dict[str, object]] = []
    for call in calls:
        arguments = dict(call.arguments)
        if profile == "approx":
            arguments["price"] = {"$approx": arguments["price"], "tol": 0.01}
        elif profile == "regex":
            arguments["query"] = "regex:^item \\d+$"
        if arguments_mode == "partial":
            del arguments["limit"]
        items.append({"name": call.tool, "arguments": arguments})
    return items


def cases(calls: list[ToolCall], profile: str) -> list[tuple[str, Assertion]]:
    """One passing assertion per mode (partial arguments), and per arguments mode (exact)."""
    found = []
    for mode in ("exact", "in_order", "any_order", "superset", "subset"):
        value = expected(calls, "partial", profile)
        if mode == "any_order":
            random.Random(11).shuffle(value)  # the pairing must look past the first candidate
        found.append((f"{mode}, partial", Assertion("trajectory", value=value, mode=mode)))
    for arguments_mode in ("exact", "ignore"):
        value = expected(calls, "exact", profile)
        assertion = Assertion("trajectory", value=value, arguments_mode=arguments_mode)
        found.append((f"exact, {arguments_mode}", assertion))
    return found


def failing(calls: list[ToolCall]) -> list[tuple[str, Assertion]]:
    """One failing assertion per mode: the 26th expected call's query differs, so each one
    also builds its aligned failure message (for reading; the target is for matching)."""
    found = []
    for mode in ("exact", "in_order", "any_order", "superset", "subset"):
        value = expected(calls, "partial", "literal")
        if mode == "any_order":
            random.Random(11).shuffle(value)
        value[25] = {**value[25], "arguments": {"query": "no such item"}}
        found.append((mode, Assertion("trajectory", value=value, mode=mode)))
    return found


def timed(
    check: Any, assertion: Assertion, subject: Subject, env: AssertionEnv, args: Any
) -> float:
    """µs of CPU time per check of ``assertion``, best of ``args.repeat`` rounds."""
    rounds = timeit.repeat(
        lambda: check(assertion, subject, env),
        timer=time.process_time,  # CPU time: other work on the machine does not count
        number=args.number,
        repeat=args.repeat,
    )
    return min(rounds) / args.number * 1e6


def main() -> None:
    """Time each case and print µs per assertion."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    calls = trace()
    subject = Subject.of("done", tool_calls=calls)
    env = AssertionEnv()
    check = ASSERTIONS["trajectory"]
    worst: dict[str, float] = {}
    print(f"trajectory assertion on a {CALLS}-call trace: µs per assertion, best of {args.repeat}")
    print(f"  {'mode, arguments_mode':<22} {'literal':>8} {'approx':>8} {'regex':>8}")
    rows: dict[str, list[float]] = {}
    for profile in PROFILES:
        for label, assertion in cases(calls, profile):
            outcome = check(assertion, subject, env)
            assert getattr(outcome, "passed", False), (label, getattr(outcome, "message", ""))
            micros = timed(check, assertion, subject, env, args)
            rows.setdefault(label, []).append(micros)
            worst[profile] = max(worst.get(profile, 0.0), micros)
    for label, figures in rows.items():
        print(f"  {label:<22} " + " ".join(f"{f:8.1f}" for f in figures))
    for profile in PROFILES:
        verdict = "within" if worst[profile] < TARGET_US else "over"
        print(f"{profile}: slowest {worst[profile]:.1f} µs, {verdict} the {TARGET_US:g} µs target")
    figures = []
    for mode, assertion in failing(calls):
        assert not check(assertion, subject, env).passed, mode
        figures.append(f"{mode} {timed(check, assertion, subject, env, args):.0f}")
    print("failing, with the aligned message (µs): " + ", ".join(figures))


if __name__ == "__main__":
    main()
