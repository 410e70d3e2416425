"""What ``agent eval`` was asked: the options (``EvalOptions``), the kind of input, the
``--ctx`` file as the hooks' ``ctx``, and the checks that need nothing loaded (options one
message cannot take)."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path

from agentcli.assistant.identity import load_context_file as read_context_file
from agentcli.errors import ConfigError
from agentcli.eval.run.options import EvalOptions, given_flags
from agentcli.eval.run.services import EvalContext

__all__ = [
    "CASE_EXTENSIONS",
    "InputSpec",
    "classify_input",
    "load_context_file",
    "refuse_case_options",
]

CASE_EXTENSIONS = (".jsonl", ".json", ".yaml", ".yml")


@dataclass(slots=True)
class InputSpec:
    """What the input names: ``message`` text, a case ``file``, generated cases
    (``agents`` / ``scripts``), or ``script_tests``."""

    kind: str
    value: str
    path: Path | None = None


def classify_input(raw: str, cwd: Path) -> InputSpec:
    """Yao's input forms: ``@file``, a case-file path, ``agents:...``, ``scripts:...``,
    ``scripts.<assistant>.<module>``, else message text."""
    if raw.startswith("@"):
        name = raw[1:]
        if not name:
            raise ConfigError(
                "missing file path after @",
                hint="agent eval expense @assistants/expense/tests/inputs.jsonl",
            )
        path = _case_file(cwd / name, f" (resolved from {name!r})")
        return InputSpec("file", raw, path)
    if raw.startswith("agents:"):
        return InputSpec("agents", raw)
    if raw.startswith("scripts:"):
        return InputSpec("scripts", raw)
    if re.fullmatch(r"scripts\.[\w-]+(\.[\w-]+)+", raw):
        return InputSpec("script_tests", raw)
    if raw.lower().endswith(CASE_EXTENSIONS) and "\n" not in raw:
        return InputSpec("file", raw, _case_file(cwd / raw, "", hint="check the path"))
    return InputSpec("message", raw)


def _case_file(path: Path, origin: str, *, hint: str | None = None) -> Path:
    """The resolved case file ``path``; a ConfigError when it is missing, a directory or a
    name the system refuses (too long, a NUL byte)."""
    try:
        resolved = path.resolve()
        is_file, is_dir = resolved.is_file(), resolved.is_dir()
    except (OSError, ValueError) as exc:  # a name too long; ValueError: a NUL byte
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"cannot use case file {str(path)[:200]!r}: {reason}") from None
    if is_file:
        return resolved
    if is_dir:
        raise ConfigError(f"{resolved}{origin} is a directory, not a case file")
    raise ConfigError(f"file not found: {resolved}{origin}", hint=hint)


def load_context_file(path: Path) -> EvalContext:
    """The ``--ctx`` file at ``path`` as the ``ctx`` eval hooks get (read as ``agent run``
    reads it)."""
    context = read_context_file(path)
    return EvalContext(**{item.name: getattr(context, item.name) for item in fields(context)})


def refuse_case_options(options: EvalOptions) -> None:
    """An option of a run of cases (``message=False``) given with one message is bad input,
    not silently ignored: one message has no cases, results or runs to shape."""
    given = given_flags(options, lambda spec: not spec.message)
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise ConfigError(
            f"{', '.join(given)} {verb} to a file of cases, not to one message",
            hint="put the message in a case file: "
            '{"id": "T001", "input": "..."} in cases.jsonl, then agent eval NAME @cases.jsonl',
        )
