"""builtin.validator offline: a ``python:`` model that judges a response against criteria.

Input (the last user message, JSON): ``{output, criteria, input?}``. Output (JSON text):
``{passed, reason}``. Without a model it checks what can be read from the criteria:

- quoted phrases (``'A-1001'``, ``"shipped"``) must appear in the output;
- a few words map to patterns: friendly/polite (a greeting or thanks), question (a ``?``),
  apologise, confirm, steps, JSON (the output parses), Chinese;
- criteria with none of these pass when the output is non-empty and not an error.

It is a cheap, deterministic stand-in for CI; give the helper a real model (``-c`` with
``--connector-all``, or the assertion's ``options.connector``) for real judgement.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ERROR = re.compile(r"(?i)\btraceback\b|^\s*error\b|\[scripted\] no rule")
_QUOTED = re.compile(r"[\"“'‘]([^\"”'’]{2,})[\"”'’]")
# (words in the criteria, what the output must match, what that means)
_CHECKS: tuple[tuple[str, str, str], ...] = (
    (
        r"friendl|greet|polite|welcom",
        r"(?i)\b(hello|hi|hey|welcome|glad|happy to|thank)",
        "is friendly",
    ),
    (r"question|asks?\b", r"\?", "asks a question"),
    (r"apolog|sorry", r"(?i)sorry|apolog", "apologises"),
    (r"confirm", r"(?i)confirm", "confirms"),
    (r"step", r"(?im)^\s*(\d+[.)]|step\b|first\b)|\bthen\b", "gives steps"),
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
    text, rules = _as_text(output).strip(), _as_text(criteria)
    if not text:
        return False, "the response is empty"
    if _ERROR.search(text):
        return False, "the response is an error message"
    held: list[str] = []
    missed: list[str] = []
    for phrase in _QUOTED.findall(rules):
        (held if phrase.lower() in text.lower() else missed).append(f"contains {phrase!r}")
    for words, pattern, meaning in _CHECKS:
        if re.search(words, rules, re.IGNORECASE):
            (held if re.search(pattern, text) else missed).append(meaning)
    if re.search(r"(?i)\bjson\b", rules):
        try:
            json.loads(text)
            held.append("is JSON")
        except ValueError:
            missed.append("is JSON")
    if missed:
        return False, "the response does not satisfy: " + ", ".join(missed)
    if held:
        return True, "the response " + ", ".join(held)
    return True, "offline check: the response is non-empty and not an error"


def reply(messages: list[dict[str, Any]], tools: list[Any], settings: dict[str, Any]) -> str:
    """``{"passed": bool, "reason": str}`` for the request in the last user message."""
    request = _request(messages)
    passed, reason = judge(request.get("output"), request.get("criteria"))
    return json.dumps({"passed": passed, "reason": reason}, ensure_ascii=False)
