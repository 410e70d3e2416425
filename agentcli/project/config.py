"""``ProjectConfig``: the project's settings, each a ``Setting`` holding its value and where
it came from. Precedence: flags (applied by the command) > environment > the config file >
built-in defaults. Outside a project (no config file found) only the environment and the
defaults speak, and a run writes its results beside its case file as it always did."""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from agentcli.errors import ConfigError
from agentcli.project.files import CONFIG_FILE, RawConfig, find_config_file, read_config

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_RUNS_FOLDER",
    "KEYS",
    "OUTPUT_MODES",
    "ProjectConfig",
    "Setting",
    "Suite",
    "load_project",
]

T = TypeVar("T")

DEFAULT_RUNS_FOLDER = Path(".agentcli") / "runs"
OutputMode = Literal["runs", "beside-cases"]
OUTPUT_MODES: tuple[OutputMode, ...] = ("runs", "beside-cases")
_WORD = re.compile(r"[^\s,]+")
_SUITE_NAME = re.compile(r"[\w.-]+")


@dataclass(frozen=True, slots=True)
class Setting(Generic[T]):
    """One resolved value and its source: ``agentcli.yml:4``, ``env AGENT_PARALLEL``,
    ``default`` (a command that applies a flag over it says ``--parallel``)."""

    value: T
    source: str = "default"


@dataclass(frozen=True, slots=True)
class Suite:
    """A named set of case files: glob patterns relative to the project root."""

    name: str
    patterns: tuple[str, ...]
    source: str

    def case_files(self, root: Path) -> list[Path]:
        """The case files the patterns match, sorted, each once; a pattern that matches
        none is bad input naming the line that gives it."""
        from agentcli.project.suites import expand_suite

        return expand_suite(self, root)


@dataclass(frozen=True, slots=True)
class ProjectConfig:
    """The resolved project settings. ``path`` is the config file (None: no project) and
    ``root`` the folder holding it (relative paths in the file are relative to it)."""

    path: Path | None
    root: Path | None
    assistants: Setting[Path | None] = field(default_factory=lambda: Setting(None))
    connectors: Setting[Path | None] = field(default_factory=lambda: Setting(None))
    assistant: Setting[str | None] = field(default_factory=lambda: Setting(None))
    suites: Setting[dict[str, Suite]] = field(default_factory=lambda: Setting({}))
    parallel: Setting[int | None] = field(default_factory=lambda: Setting(None))
    timeout: Setting[float | None] = field(default_factory=lambda: Setting(None))
    retries: Setting[int | None] = field(default_factory=lambda: Setting(None))
    runs_folder: Setting[Path | None] = field(default_factory=lambda: Setting(None))
    output: Setting[OutputMode] = field(default_factory=lambda: Setting("beside-cases"))
    simulator: Setting[str | None] = field(default_factory=lambda: Setting(None))
    judge_connector: Setting[str | None] = field(default_factory=lambda: Setting(None))
    exclude_tags: Setting[tuple[str, ...]] = field(default_factory=lambda: Setting(()))

    @property
    def found(self) -> bool:
        """Whether a project config file was found."""
        return self.path is not None

    def settings(self) -> list[tuple[str, Setting[Any]]]:
        """Every setting by its key, in the documented order."""
        return [(key, getattr(self, key)) for key in KEYS]

    def cite(self, key: str) -> str:
        """Where setting ``key`` was given, to begin an error about its value the way the
        file's own errors begin: ``agentcli.yml:3: judge_connector``, or
        ``env AGENT_JUDGE_CONNECTOR``."""
        source = getattr(self, key).source
        return source if source.startswith("env ") else f"{source}: {key}"

    def suite(self, name: str) -> Suite:
        """The suite called ``name``; an unknown name is bad input with a did-you-mean."""
        suites = self.suites.value
        if name in suites:
            return suites[name]
        where = f" in {self.path}" if self.path else ""
        if not suites:
            raise ConfigError(
                f"--suite {name}: no suites are defined{where}",
                hint=f"add suites: {{{name}: 'tests/*.jsonl'}} to {CONFIG_FILE}",
            )
        close = difflib.get_close_matches(name, list(suites), n=1)
        also = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(
            f"--suite {name}: no such suite{where}{also}",
            hint=f"the suites: {', '.join(suites)} (agent config lists them)",
        )


# ------------------------------------------------------------------ keys and their parsing

Parse = Callable[[Any, str, Path], Any]


def _text(value: Any, where: str, base: Path) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected text, got {_kind(value)}")
    if not value.strip():
        raise ConfigError(f"{where}: must not be empty")
    return value.strip()


def _path(value: Any, where: str, base: Path) -> Path:
    return (base / Path(_text(value, where, base)).expanduser()).absolute()


def _folder(value: Any, where: str, base: Path) -> Path:
    path = _path(value, where, base)
    if not path.is_dir():
        raise ConfigError(f"{where}: {value} is not a folder ({path})")
    return path


def _runs(value: Any, where: str, base: Path) -> Path:
    """A folder that may not exist yet (the first run makes it), but not a file, nor under one."""
    path = _path(value, where, base)
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        what = "is" if existing == path else f"is under {existing}, which is"
        raise ConfigError(
            f"{where} {value} {what} not a folder",
            hint="name a folder for the results files (it is made on the first run), or "
            "leave runs_folder out: .agentcli/runs",
        )
    return path


def _file(value: Any, where: str, base: Path) -> Path:
    path = _path(value, where, base)
    if not path.is_file():
        raise ConfigError(f"{where}: {value} is not a file ({path})")
    return path


def _whole(minimum: int) -> Parse:
    def parse(value: Any, where: str, base: Path) -> int:
        # only the environment's text gets here as digits: the file's "4" was refused
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected a whole number, got {_kind(value)}")
        if value < minimum:
            raise ConfigError(f"{where}: must be {minimum} or more, got {value}")
        return value

    return parse


def _duration(value: Any, where: str, base: Path) -> float:
    from agentcli.durations import parse_duration

    try:
        return parse_duration(value)
    except ConfigError as error:
        raise ConfigError(f"{where}: {error.message}") from None


def _output(value: Any, where: str, base: Path) -> str:
    text = _text(value, where, base)
    if text not in OUTPUT_MODES:
        close = difflib.get_close_matches(text, OUTPUT_MODES, n=1)
        also = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{where} {text!r}: use runs or beside-cases{also}")
    return text


def _tags(value: Any, where: str, base: Path) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        raise ConfigError(f"{where}: expected a tag or a list of tags, got {_kind(value)}")
    others = [item for item in items if not isinstance(item, str)]
    if others:
        raise ConfigError(f"{where}: a tag must be text, got {_kind(others[0])}")
    tags = [item.strip() for item in items if item.strip()]
    bad = [tag for tag in tags if not _WORD.fullmatch(tag)]
    if bad:
        raise ConfigError(f"{where}: tag {bad[0]!r} is not one word (no spaces or commas)")
    return tuple(dict.fromkeys(tags))


_NUMBER_TEXT = re.compile(r"[-+]?\d+(?:\.\d+)?")


def _typed_number(key: str, value: Any, where: str) -> None:
    """A number of the file must be written as one: YAML and TOML type their values, and
    the rest of our config (package.yao, case files) refuses ``"4"`` for 4, so a quoted
    number is refused here too rather than quietly converted. (The environment is text by
    nature: ``AGENT_PARALLEL=4`` is read as the number it spells.)"""
    if isinstance(value, str) and _NUMBER_TEXT.fullmatch(value.strip()):
        number = value.strip()
        also = f", or a duration such as {number}s" if key == "timeout" else ""
        raise ConfigError(
            f"{where}: expected a number, got text {json.dumps(value)}: write {number} "
            f"without quotes{also}"
        )


@dataclass(frozen=True, slots=True)
class Key:
    """A config key: how its value parses, the variable that overrides it, its help, and
    whether the file must give it as a number (not a quoted one)."""

    parse: Parse
    env: str | None
    help: str
    number: bool = False


KEYS: dict[str, Key] = {
    "assistants": Key(_folder, "AGENT_ROOT", "assistants root folder (--root)"),
    "connectors": Key(_file, "AGENT_CONNECTORS", "connectors file (connectors.yml)"),
    "assistant": Key(_text, "AGENT_ASSISTANT", "assistant the suites' cases run against"),
    "suites": Key(lambda v, w, b: v, None, "named globs of case files (--suite NAME)"),
    "parallel": Key(_whole(1), "AGENT_PARALLEL", "cases run at once (--parallel)", number=True),
    "timeout": Key(
        _duration, "AGENT_TIMEOUT", "per-case timeout in seconds (--timeout)", number=True
    ),
    "retries": Key(
        _whole(0), "AGENT_RETRIES", "re-runs of a case that errored (--retries)", number=True
    ),
    "runs_folder": Key(_runs, "AGENT_RUNS_FOLDER", "where results files go in a project"),
    "output": Key(_output, "AGENT_OUTPUT", "runs (the runs folder) or beside-cases"),
    "simulator": Key(_text, "AGENT_SIMULATOR", "default simulator of dynamic cases"),
    "judge_connector": Key(
        _text, "AGENT_JUDGE_CONNECTOR", "connector of judges whose assertion names none"
    ),
    "exclude_tags": Key(_tags, "AGENT_EXCLUDE_TAGS", "tags left out unless --tag names them"),
}


def _kind(value: Any) -> str:
    """What a YAML/TOML value is, in words."""
    if value is None:
        return "nothing"
    names = {bool: "true/false", int: "a number", float: "a number", str: "text"}
    names.update({list: "a list", dict: "a mapping"})
    return names.get(type(value), type(value).__name__)


# ------------------------------------------------------------------------------ loading


def load_project(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> ProjectConfig:
    """The project of ``cwd`` (its config file found walking up), resolved with ``env``;
    every problem of the file is one ConfigError naming its ``file:line``."""
    cwd = cwd or Path.cwd()
    env = os.environ if env is None else env
    path = find_config_file(cwd)
    raw = read_config(path) if path is not None else None
    root = path.parent.absolute() if path is not None else None
    values: dict[str, Setting[Any]] = {}
    if raw is not None:
        _check_keys(raw)
        assert root is not None
        for key, value in raw.table.items():
            where = raw.where(key)
            if key == "suites":
                values[key] = Setting(_suites(value, raw), where)
            else:  # messages name the key: two keys may share a line ({parallel: x, ...})
                spec = KEYS[key]
                if spec.number:
                    _typed_number(key, value, f"{where}: {key}")
                values[key] = Setting(spec.parse(value, f"{where}: {key}", root), where)
    for key, spec in KEYS.items():  # the environment over the file
        text = env.get(spec.env) if spec.env else None
        if text:
            assert spec.env is not None
            source = f"env {spec.env}"
            values[key] = Setting(spec.parse(text, source, cwd.absolute()), source)
    if root is not None and "runs_folder" not in values:
        values["runs_folder"] = Setting((root / DEFAULT_RUNS_FOLDER).absolute(), "default")
    if root is not None and "output" not in values:
        values["output"] = Setting("runs", "default")
    return ProjectConfig(path=path, root=root, **values)


def _check_keys(raw: RawConfig) -> None:
    """Unknown keys (with a did-you-mean) and keys without a value, all at once."""
    problems = []
    for key in raw.table:
        if key not in KEYS:
            close = difflib.get_close_matches(str(key), list(KEYS), n=1, cutoff=0.6)
            also = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"{raw.where(str(key))}: unknown key {key!r}{also}")
    if problems:
        raise ConfigError("; ".join(problems), hint=f"the keys of {CONFIG_FILE}: {', '.join(KEYS)}")


def _suites(value: Any, raw: RawConfig) -> dict[str, Suite]:
    """``suites: {name: glob | [globs]}``, each name one word."""
    where = raw.where("suites")
    if not isinstance(value, dict):
        raise ConfigError(
            f"{where}: suites must map names to case-file globs, got {_kind(value)}",
            hint="suites: {smoke: 'assistants/*/tests/smoke.jsonl'}",
        )
    suites: dict[str, Suite] = {}
    for name, patterns in value.items():
        at = raw.where("suites", str(name))
        if not isinstance(name, str) or not _SUITE_NAME.fullmatch(name):
            raise ConfigError(f"{at}: suite name {name!r} must be one word (letters, digits, -_.)")
        items = [patterns] if isinstance(patterns, str) else patterns
        if not isinstance(items, list):
            raise ConfigError(
                f"{at}: suite {name!r} must be a glob or a list of globs, got {_kind(patterns)}"
            )
        if not items:
            raise ConfigError(f"{at}: suite {name!r} has no globs: give at least one")
        bad = next((item for item in items if not isinstance(item, str) or not item.strip()), 0)
        if bad != 0:
            what = "an empty text" if isinstance(bad, str) else _kind(bad)
            raise ConfigError(f"{at}: suite {name!r}: each glob must be text, got {what}")
        suites[name] = Suite(name, tuple(item.strip() for item in items), at)
    return suites


def assistants_root(cwd: Path | None = None) -> Path | None:
    """The assistants root the project of ``cwd`` names (``assistants:``, or $AGENT_ROOT),
    for the commands that take ``--root``; None outside a project or when it names none."""
    value = load_project(cwd).assistants.value
    return value if isinstance(value, Path) else None
