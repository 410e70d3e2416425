"""An offline judge: a ``python:`` model that answers the validator contract.

Input (the last user message, JSON): ``{output, criteria, input?}``. Output (JSON text):
``{passed, reason}``. It cannot understand criteria the way a model does, so it checks what
it can read from them: quoted phrases must appear in the output, and a few common words
(friendly, confirm, step by step, JSON, question, size, ...) map to patterns the output must
match. Criteria with none of these pass when the output is non-empty and not an error.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ERROR = re.compile(r"(?i)\btraceback\b|\bexception\b|^error\b|\[scripted\] no rule")
# (words in the criteria, pattern the output must match, what it means)
_CHECKS: tuple[tuple[str, str, str], ...] = (
    (
        r"friendl|greet|polite|welcom",
        r"(?i)\b(hello|hi|welcome|glad|happy to|thank)",
        "is friendly",
    ),
    (r"confirm", r"(?i)confirm", "asks for or gives a confirmation"),
    (r"step", r"(?im)^\s*(\d+[.)]|step\b|first\b)|\bthen\b", "gives steps"),
    (r"question|ask", r"\?", "asks a question"),
    (r"\bsize\b", r"(?i)\bsize\b", "mentions the size"),
    (r"apolog|sorry", r"(?i)sorry|apolog", "apologises"),
    (r"submit|creat|record", r"(?i)submitted|created|recorded", "confirms the submission"),
    (r"set ?up|setup|ready", r"(?i)set ?up.*complete|ready", "reports the setup"),
    (r"chinese|中文", r"[\u4e00-\u9fff]", "is in Chinese"),
)


def _request(messages: list[dict[str, Any]]) -> dict[str, Any]:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            try:
                data = json.loads(content if isinstance(content, str) else "")
            except ValueError:
                return {"output": content, "criteria": ""}
            return data if isinstance(data, dict) else {"output": data, "criteria": ""}
    return {}


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def judge(output: Any, criteria: Any) -> tuple[bool, str]:
    """Whether ``output`` meets ``criteria``, and why."""
    text = _as_text(output).strip()
    rules = _as_text(criteria)
    if not text:
        return False, "the response is empty"
    if _ERROR.search(text):
        return False, "the response is an error message"
    failed: list[str] = []
    passed: list[str] = []
    for phrase in re.findall(r"[\"“']([^\"”']{2,})[\"”']", rules):
        (passed if phrase.lower() in text.lower() else failed).append(f"contains {phrase!r}")
    for words, pattern, meaning in _CHECKS:
        if re.search(words, rules, re.IGNORECASE):
            (passed if re.search(pattern, text) else failed).append(meaning)
    if re.search(r"(?i)\bjson\b", rules):
        try:
            json.loads(text)
            passed.append("is JSON")
        except ValueError:
            failed.append("is JSON")
    if failed:
        return False, "the response does not satisfy: " + ", ".join(failed)
    if passed:
        return True, "the response " + ", ".join(passed)
    return True, "offline check: the response is non-empty and not an error"


def reply(messages: list[dict[str, Any]], tools: list[Any], settings: dict[str, Any]) -> str:
    """``{"passed": bool, "reason": str}`` for the request in the last user message."""
    request = _request(messages)
    passed, reason = judge(request.get("output"), request.get("criteria"))
    return json.dumps({"passed": passed, "reason": reason}, ensure_ascii=False)
