"""Seeded fault injection as a value: ``FaultPlan`` (a rate of the tool calls, the ways
they fail, a seed) and its text form, ``rate=0.2,kinds=timeout|error|malformed,seed=42``,
as ``agent eval --faults`` and a case's ``tools.faults`` give it.

Kept light (the standard library only until a value is wrong): ``agent eval --help`` reads
it through the options module, as it reads ``durations``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

__all__ = [
    "FAULT_KINDS",
    "FaultKind",
    "FaultPlan",
    "fault_plan",
    "faults_from_text",
    "parse_faults",
]

FaultKind = Literal["timeout", "error", "malformed"]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
_FAULT_KEYS = ("rate", "kinds", "seed")


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """Which tool calls fail, and how: a ``rate`` (0-1) of the calls, each failing in one of
    ``kinds``, chosen by a generator seeded from ``seed``, the case, the run and the call."""

    rate: float
    kinds: tuple[FaultKind, ...] = FAULT_KINDS
    seed: int = 0

    @property
    def active(self) -> bool:
        """Whether any call can fail (``rate=0`` switches a case's faults off)."""
        return self.rate > 0

    def __str__(self) -> str:
        """The plan as ``--faults`` takes it: ``rate=0.2,kinds=timeout|error,seed=42``."""
        return f"rate={self.rate:g},kinds={'|'.join(self.kinds)},seed={self.seed}"

    def to_dict(self) -> dict[str, Any]:
        """The case-file form."""
        return {"rate": self.rate, "kinds": list(self.kinds), "seed": self.seed}


def parse_faults(text: str) -> FaultPlan:
    """``--faults`` text (``rate=0.2,kinds=timeout|error|malformed,seed=42``) as a plan; a
    ``ConfigError`` saying what is wrong otherwise."""
    try:
        return faults_from_text(text)
    except ValueError as error:
        from agentcli.errors import ConfigError

        raise ConfigError(
            f"--faults {text!r}: {error}",
            hint="e.g. --faults 'rate=0.2,kinds=timeout|error|malformed,seed=42'",
        ) from None


def faults_from_text(text: str) -> FaultPlan:
    """A plan from its text form; a ``ValueError`` saying what is wrong otherwise."""
    fields: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",")):
        key, equals, value = part.partition("=")
        key = key.strip()
        if not equals or key not in _FAULT_KEYS:
            raise ValueError(f"{part!r} is not one of rate=, kinds=, seed=")
        fields[key] = value.strip().split("|") if key == "kinds" else value.strip()
    return fault_plan(fields)


def fault_plan(fields: dict[str, Any]) -> FaultPlan:
    """A plan from ``{rate, kinds?, seed?}`` (numbers as numbers or text); a ``ValueError``
    naming the wrong field otherwise."""
    if "rate" not in fields:
        raise ValueError("rate is required (the fraction of tool calls that fail, 0-1)")
    try:
        rate = float(fields["rate"])
    except (TypeError, ValueError):
        raise ValueError(f"rate must be a number from 0 to 1, got {fields['rate']!r}") from None
    if isinstance(fields["rate"], bool) or not 0 <= rate <= 1:
        raise ValueError(f"rate must be a number from 0 to 1, got {fields['rate']!r}")
    kinds = fields.get("kinds", list(FAULT_KINDS))
    unknown = [kind for kind in kinds if kind not in FAULT_KINDS]
    if not kinds or unknown:
        import difflib

        close = difflib.get_close_matches(str(unknown[0]), FAULT_KINDS, n=1) if unknown else []
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        shown = unknown[0] if unknown else ""
        raise ValueError(f"kinds: {shown!r} is not one of {', '.join(FAULT_KINDS)}{hint}")
    seed = fields.get("seed", 0)
    try:
        whole = int(seed)
    except (TypeError, ValueError):
        raise ValueError(f"seed must be a whole number, got {seed!r}") from None
    if isinstance(seed, bool) or (isinstance(seed, float) and seed != whole):
        raise ValueError(f"seed must be a whole number, got {seed!r}")
    return FaultPlan(rate, tuple(dict.fromkeys(kinds)), whole)
