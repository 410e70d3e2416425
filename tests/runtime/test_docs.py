"""Every Python example in docs/runtime.md runs, offline, as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def examples() -> list[tuple[str, int, str]]:
    """(id, line, code) of each ```python block, named after the section it is in."""
    text = DOC.read_text(encoding="utf-8")
    found, counts = [], {}
    for match in _BLOCK.finditer(text):
        before = text[: match.start()]
        heading = re.findall(r"^## (.+)$", before, re.MULTILINE)
        section = re.sub(r"\W+", "-", heading[-1].lower()).strip("-") if heading else "intro"
        counts[section] = counts.get(section, 0) + 1
        name = section if counts[section] == 1 else f"{section}-{counts[section]}"
        found.append((name, before.count("\n") + 2, match.group(1)))
    return found


EXAMPLES = examples()


def test_the_documentation_has_an_example_per_feature():
    sections = {name.rsplit("-", 1)[0] if name[-1].isdigit() else name for name, _, _ in EXAMPLES}
    assert {
        "quick-start",
        "turns-steps-tools-and-events",
        "sending-while-busy",
        "continue_-and-the-pending-wake",
        "abort-interrupt-stop-wait-clear-set_model",
        "plugins",
        "state",
        "channel",
        "tool-choice-and-context",
        "turn-control",
        "steering-and-follow-up",
        "storage-and-resuming",
        "configuration",
        "caller-tools-and-to_model_output",
        "thinking-session-id-and-api-keys",
        "state-fields-sections-and-the-tool-loadout",
        "the-low-level-loop",
        "events-in-both-vocabularies",
    } <= sections


@pytest.mark.parametrize(
    ("line", "code"),
    [(line, code) for _, line, code in EXAMPLES],
    ids=[name for name, _, _ in EXAMPLES],
)
def test_example_runs(line: int, code: str) -> None:
    # padded so that a traceback points at the line in the document
    source = "\n" * (line - 1) + code
    exec(compile(source, str(DOC), "exec"), {"__name__": "__docs__"})
