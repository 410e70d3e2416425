"""``--estimate``: the model calls a run plans and what they would cost, before any runs.

The method, shown with the figures so nobody mistakes them for a bill:

- calls: one agent call per turn (a single-turn case has one turn, a dynamic case
  ``max_turns``); tool loops add calls the plan cannot know, so this is a floor. One
  simulator call per dynamic turn; one judge call per ``agent`` assertion and per judged
  checkpoint. All of it times ``--runs``.
- input tokens: counted with tiktoken's ``o200k_base`` encoding (the bundled copy litellm
  ships, so no download) over the system prompts and the case input; a dynamic turn ``k``
  also re-sends the ``k - 1`` exchanges before it. Tool schemas are not counted.
- output tokens: ``ASSUMED_OUTPUT_TOKENS`` per agent and simulator call, ``ASSUMED_VERDICT_TOKENS``
  per verdict.
- cost: each call's tokens at its connector's price (connectors.yml, else litellm's cost
  map); calls to a connector with no known price are counted but not costed.
- a connector matrix: each column is estimated as the run of every case on its connector
  (``matrix_lines``), and the total is the columns' sum.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.eval.checks.matching import output_text
from agentcli.models.pricing import Price, format_usd, price_of
from agentcli.words import counted

if TYPE_CHECKING:
    from agentcli.eval.cases.model import Assertion, Case
    from agentcli.eval.run.runner import EvalConfig

__all__ = [
    "ASSUMED_OUTPUT_TOKENS",
    "ASSUMED_VERDICT_TOKENS",
    "Estimate",
    "estimate_run",
    "matrix_lines",
]

ASSUMED_OUTPUT_TOKENS = 256
ASSUMED_VERDICT_TOKENS = 64
# tiktoken caches a downloaded encoding under the SHA-1 of its URL; with that file present
# it never goes to the network (its download has no timeout: it is never attempted here).
_O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
_O200K_FILE = hashlib.sha1(_O200K_URL.encode()).hexdigest()


@dataclass(slots=True)
class RoleEstimate:
    """The planned calls of one role (agent, judge, simulator) and their tokens."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    unpriced: set[str] = field(default_factory=set)  # connectors without a known price

    def add(
        self,
        calls: int,
        input_tokens: int,
        output_tokens: int,
        price: Price | None,
        connector: str,
    ) -> None:
        """Count ``calls`` calls of these total token counts on ``connector``."""
        self.calls += calls
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        if price is None:
            self.unpriced.add(connector)
        else:
            self.cost += price.cost(input_tokens, output_tokens)


@dataclass(slots=True)
class Estimate:
    """The whole run's estimate, by role, and the tokenizer that counted it."""

    cases: int = 0
    runs: int = 1
    tokenizer: str = ""
    roles: dict[str, RoleEstimate] = field(default_factory=dict)

    def role(self, name: str) -> RoleEstimate:
        """The estimate of role ``name`` (created empty)."""
        return self.roles.setdefault(name, RoleEstimate())

    @property
    def cost(self) -> float:
        """The estimated cost of every priced call."""
        return sum(role.cost for role in self.roles.values())

    def lines(self) -> list[str]:
        """The figures and the method, as the console shows them."""
        return [self.method_line(), *self.role_lines(), f"Estimated cost: ~{format_usd(self.cost)}"]

    def method_line(self, columns: int = 1) -> str:
        """What was counted and how: the cases, runs (and matrix columns), the tokenizer and
        the output assumed."""
        across = f" x {counted(columns, 'connector')}" if columns > 1 else ""
        return (
            f"{counted(self.cases, 'case')} x {counted(self.runs, 'run')}{across}; tokens by "
            f"{self.tokenizer}, "
            f"{ASSUMED_OUTPUT_TOKENS} output tokens assumed per reply, "
            f"{ASSUMED_VERDICT_TOKENS} per verdict; tool loops not foreseen (calls are a floor)"
        )

    def role_lines(self, prefix: str = "") -> list[str]:
        """A line per role that makes calls: ``agent: 6 calls, ~12 input + ...``."""
        shown = []
        for name, role in self.roles.items():
            if not role.calls:
                continue
            unpriced = f"; no price for {', '.join(sorted(role.unpriced))}" if role.unpriced else ""
            shown.append(
                f"{prefix}{name}: {counted(role.calls, 'call')}, ~{role.input_tokens:,} input + "
                f"~{role.output_tokens:,} output tokens, ~{format_usd(role.cost)}{unpriced}"
            )
        return shown

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``--json``)."""
        return {
            "cases": self.cases,
            "runs": self.runs,
            "tokenizer": self.tokenizer,
            "cost": round(self.cost, 6),
            "roles": {
                name: {
                    "calls": role.calls,
                    "input_tokens": role.input_tokens,
                    "output_tokens": role.output_tokens,
                    "cost": round(role.cost, 6),
                    "unpriced": sorted(role.unpriced),
                }
                for name, role in self.roles.items()
            },
        }


def estimate_run(config: EvalConfig, cases: Iterable[Case], connector: str) -> Estimate:
    """The estimate of running ``cases`` on ``connector`` as ``config`` says."""
    count, tokenizer = token_counter()
    registry, package = config.registry, config.assistant.package
    estimate = Estimate(runs=config.runs, tokenizer=tokenizer)
    helpers: dict[str, tuple[Price | None, str, int]] = {}

    def helper(ref: str) -> tuple[Price | None, str, int]:
        """The price, connector and prompt tokens of helper assistant ``ref``."""
        if ref not in helpers:
            helper_package = registry.get(ref).package
            spec = helper_package.connector or connector
            price = price_of(registry.model(spec, package=helper_package))
            helpers[ref] = (price, spec, _prompt_tokens(helper_package, count))
        return helpers[ref]

    agent_price = price_of(registry.model(connector, package=package)) if connector else None
    system = _prompt_tokens(package, count)
    for case in cases:
        estimate.cases += 1
        runs = config.runs
        # The messages are the input made model-ready (a text input is one user message).
        sent = case.messages or [{"content": case.input}]
        case_input = sum(count(_text(message)) for message in sent)
        turns = case.max_turns if case.is_dynamic else 1
        spec = config.connector or case.options.connector or connector
        price = (
            agent_price if spec == connector else price_of(registry.model(spec, package=package))
        )
        exchange = case_input + ASSUMED_OUTPUT_TOKENS
        agent_in = sum(system + case_input + (turn - 1) * exchange for turn in range(1, turns + 1))
        estimate.role("agent").add(
            runs * turns, runs * agent_in, runs * turns * ASSUMED_OUTPUT_TOKENS, price, spec
        )
        if case.is_dynamic:
            ref = _simulator_ref(case, config.simulator)
            if ref is not None:
                sim_price, sim_spec, sim_prompt = helper(ref)
                sim_in = sum(sim_prompt + turn * exchange for turn in range(1, turns + 1))
                sim_out = runs * turns * ASSUMED_OUTPUT_TOKENS
                estimate.role("simulator").add(
                    runs * turns, runs * sim_in, sim_out, sim_price, sim_spec
                )
        for assertion in _judged(case):
            ref = (assertion.use or "").removeprefix("agents:")
            if not ref:
                continue
            judge_price, judge_spec, judge_prompt = helper(ref)
            criteria = count(_text(assertion.value))
            judge_in = judge_prompt + criteria + case_input + ASSUMED_OUTPUT_TOKENS
            estimate.role("judge").add(
                runs, runs * judge_in, runs * ASSUMED_VERDICT_TOKENS, judge_price, judge_spec
            )
    return estimate


def matrix_lines(columns: dict[str, Estimate]) -> list[str]:
    """The console lines of a connector matrix's estimate: the method once, each column's
    roles named by its connector (``gpt-4o · agent: ...``), and the total with what each
    column costs, as a matrix run's summary shows it (``by connector: ...``)."""
    first = next(iter(columns.values()))
    shown = [first.method_line(len(columns))]
    for name, estimate in columns.items():
        shown += estimate.role_lines(f"{name} · ")
    total = sum(estimate.cost for estimate in columns.values())
    each = " · ".join(f"{name} ~{format_usd(e.cost)}" for name, e in columns.items())
    shown.append(f"Estimated cost: ~{format_usd(total)} (by connector: {each})")
    return shown


def _judged(case: Case) -> list[Assertion]:
    """The case's ``agent`` assertions, its checkpoints' included."""
    found = [a for a in case.effective_assertions() if a.type == "agent"]
    for checkpoint in case.checkpoints:
        found += [a for a in checkpoint.assert_ if a.type == "agent"]
    return found


def _simulator_ref(case: Case, default: str | None) -> str | None:
    """The simulator assistant a dynamic case talks to (the shipped one by default)."""
    from agentcli.builtin import DEFAULT_SIMULATOR

    use = case.simulator.use if case.simulator is not None else None
    return (use or default or DEFAULT_SIMULATOR).removeprefix("agents:")


def _prompt_tokens(package: Any, count: Callable[[str], int]) -> int:
    """The tokens of a package's default prompts."""
    from agentcli.assistant.prompts import load_prompts

    return sum(count(message.get("content") or "") for message in load_prompts(package))


def _text(value: Any) -> str:
    """A case input or message as the text the model would read."""
    if isinstance(value, dict) and "content" in value:
        value = value["content"]
    text = output_text(value)
    return text if isinstance(text, str) else json.dumps(value, ensure_ascii=False, default=str)


def token_counter() -> tuple[Callable[[str], int], str]:
    """A function counting a text's tokens, and its name: tiktoken ``o200k_base`` from the
    files litellm bundles (never downloaded), else four characters a token."""
    try:
        import tiktoken

        encoding = _bundled_encoding(tiktoken)
    except Exception:  # no tiktoken, or no local copy of its files: the rule of thumb
        return (lambda text: (len(text) + 3) // 4), "4 characters a token"
    return (lambda text: len(encoding.encode(text, disallowed_special=()))), ("tiktoken o200k_base")


def _bundled_encoding(tiktoken: Any) -> Any:
    """``o200k_base`` from a local copy: the user's TIKTOKEN_CACHE_DIR, else litellm's
    bundled files (the variable set only while it loads). No copy: LookupError."""
    folders = [os.environ["TIKTOKEN_CACHE_DIR"]] if os.environ.get("TIKTOKEN_CACHE_DIR") else []
    spec = importlib.util.find_spec("litellm")
    for folder in list(spec.submodule_search_locations or []) if spec is not None else []:
        folders.append(str(Path(folder) / "litellm_core_utils" / "tokenizers"))
    found = next((f for f in folders if (Path(f) / _O200K_FILE).is_file()), None)
    if found is None:
        raise LookupError("no local copy of tiktoken's o200k_base encoding")
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = found
    try:
        return tiktoken.get_encoding("o200k_base")
    finally:
        if before is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before
