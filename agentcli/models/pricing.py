"""What a connector's tokens cost: a price from ``connectors.yml`` or litellm's cost map.

litellm ships its cost map as a JSON file inside the package
(``model_prices_and_context_window_backup.json``, some 5,000 models). It is read here as
data, without importing litellm (2-3 s), once per process and only when a network model
finished a response that no configured price covers; offline models are free.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from agentcli.errors import ConfigError

__all__ = ["FREE", "Price", "PriceSource", "format_usd", "litellm_price", "parse_price", "price_of"]

PriceSource = Literal["connectors.yml", "litellm", "offline"]
_MAP_FILE = "model_prices_and_context_window_backup.json"


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million input and output tokens, and where the figures came from."""

    input_per_mtok: float
    output_per_mtok: float
    source: PriceSource = "connectors.yml"

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """The cost of a response with these token counts."""
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6

    def describe(self) -> str:
        """``$2.5 / $10 per M tokens (litellm)`` for the console."""
        return f"${self.input_per_mtok:g} / ${self.output_per_mtok:g} per M tokens ({self.source})"


FREE = Price(0.0, 0.0, "offline")
"""The price of the offline models (echo, scripted, python:): they cost nothing."""


def format_usd(amount: float) -> str:
    """``$0.0123`` (four decimals below a dollar, cents above)."""
    return f"${amount:.4f}" if abs(amount) < 1 else f"${amount:,.2f}"


def parse_price(value: Any, where: str) -> Price:
    """A ``price: {input_per_mtok, output_per_mtok}`` of connectors.yml, checked."""
    example = "price: {input_per_mtok: 2.5, output_per_mtok: 10}"
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: price must be a mapping", hint=f"e.g. {example}")
    unknown = sorted(str(key) for key in value if key not in ("input_per_mtok", "output_per_mtok"))
    if unknown:
        raise ConfigError(
            f"{where}: price: unknown field(s) {', '.join(unknown)}",
            hint=f"a price has input_per_mtok and output_per_mtok (US$ per million tokens): {example}",
        )
    figures: dict[str, float] = {}
    for key in ("input_per_mtok", "output_per_mtok"):
        figure = value.get(key)
        if isinstance(figure, bool) or not isinstance(figure, int | float):
            raise ConfigError(
                f"{where}: price.{key} must be a number of US$ per million tokens, got {figure!r}",
                hint=f"e.g. {example}",
            )
        if not math.isfinite(figure) or figure < 0:
            raise ConfigError(f"{where}: price.{key} must be a finite number >= 0, got {figure}")
        figures[key] = float(figure)
    return Price(figures["input_per_mtok"], figures["output_per_mtok"])


@cache
def litellm_price(model: str) -> Price | None:
    """The price litellm's cost map gives ``model`` (``openai/gpt-4o`` or ``gpt-4o``), or
    None when the map does not know it (or litellm is not installed). Remembered per model."""
    candidates = [model]
    prefix, slash, bare = model.partition("/")
    if slash:
        candidates.append(bare)
    text = _cost_map_text()
    # A name the file never spells, quoted, is none of its keys: answered without parsing
    # the map (~1 MB; 20-30 ms that a local model would otherwise pay in its first call).
    if not any(spelling in text for key in candidates for spelling in _quoted(key)):
        return None
    table = _cost_map()
    for key in candidates:
        entry = table.get(key)
        if not isinstance(entry, dict):
            continue
        if slash and key == bare and entry.get("litellm_provider") not in (None, prefix):
            continue  # the bare name of another provider's model: not this one's price
        per_input, per_output = (
            entry.get("input_cost_per_token"),
            entry.get("output_cost_per_token"),
        )
        if isinstance(per_input, int | float) and isinstance(per_output, int | float):
            return Price(per_input * 1e6, per_output * 1e6, "litellm")
    return None


def _quoted(key: str) -> set[str]:
    """``key`` as a JSON string, each way a writer may spell it (escaped, or as UTF-8)."""
    return {json.dumps(key), json.dumps(key, ensure_ascii=False)}


@cache
def _cost_map() -> dict[str, Any]:
    """litellm's bundled cost map, parsed once; empty when litellm or the file is missing."""
    try:
        data = json.loads(_cost_map_text())
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


@cache
def _cost_map_text() -> str:
    """The text of litellm's bundled cost map, read once; "" when litellm or the file is
    missing."""
    spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return ""
    for folder in spec.submodule_search_locations:
        try:
            return (Path(folder) / _MAP_FILE).read_text(encoding="utf-8")
        except OSError:
            continue
    return ""


def price_of(model: object) -> Price | None:
    """The price a model (or a wrapper around one) charges; None when it is not known."""
    known = getattr(model, "known_price", None)
    if callable(known):
        found = known()
        return found if isinstance(found, Price) else None
    price = getattr(model, "price", None)
    return price if isinstance(price, Price) else None
