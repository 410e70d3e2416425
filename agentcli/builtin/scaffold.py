"""``agent init``: a new assistant package from the templates in ``templates/``.

The package it writes runs and passes its own eval cases offline right away: a
package.yao, prompts for a real model, scripted rules for the offline connector, a Create
hook, a process tool with an input schema, and tests/cases.jsonl with several assertion
types and a dynamic case played by ``builtin.simulator``.

Templates render in Jinja2's sandbox with ``[[ ]]`` delimiters, because the files they make
hold ``{{ }}`` templates of their own (the scripted rules) that must be written as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentcli.errors import ConfigError

__all__ = ["Scaffold", "scaffold_package"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


@dataclass(slots=True, frozen=True)
class Scaffold:
    """A package written by ``agent init``: where, its id and the files written."""

    path: Path
    id: str
    files: tuple[Path, ...]


def _title(name: str) -> str:
    """``order-desk`` -> ``Order Desk``."""
    return " ".join(word.capitalize() for word in re.split(r"[-_]+", name) if word)


def scaffold_package(target: Path, *, shown: str, id: str, force: bool = False) -> Scaffold:
    """Write the package into folder ``target`` (``shown`` is how the user named it, for
    the commands in its comments); refuse to overwrite an existing file unless ``force``."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    name = target.name
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"invalid package name {name!r}",
            hint="start with a letter; use letters, digits, '-' and '_' (e.g. order-desk)",
        )
    templates = sorted(p for p in TEMPLATES.rglob("*.j2") if p.is_file())
    outputs = [target / p.relative_to(TEMPLATES).with_suffix("") for p in templates]
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target} exists and is not a folder", hint="pick another name")
    existing = [p for p in outputs if p.exists()]
    if existing and not force:
        raise ConfigError(
            f"{target} already has {', '.join(str(p.relative_to(target)) for p in existing[:3])}"
            f"{' ...' if len(existing) > 3 else ''}; nothing was written",
            hint="pick another name, or pass --force to overwrite these files",
        )
    env = SandboxedEnvironment(
        variable_start_string="[[",
        variable_end_string="]]",
        block_start_string="[%",
        block_end_string="%]",
        comment_start_string="[#",
        comment_end_string="#]",
        keep_trailing_newline=True,
        undefined=StrictUndefined,
        autoescape=False,
    )
    path = shown.rstrip("/")
    parent = path.rpartition("/")[0] or "."
    values = {"title": _title(name), "id": id, "path": path, "parent": parent}
    for template, output in zip(templates, outputs, strict=True):
        text = env.from_string(template.read_text(encoding="utf-8")).render(values)
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(text, encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"cannot write {output}: {error.strerror}") from None
    return Scaffold(path=target, id=id, files=tuple(outputs))
